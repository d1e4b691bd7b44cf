/**
 * Public API of @wp-codebox/commands: the catalog commands written once against `CommandContext`,
 * which each backend implements (Playground's worker threads, the native backend's confined PHP).
 * Handlers by command id are in `COMMAND_HANDLERS`; a backend adds its own (wp-cli) and runs them.
 */
import type { CommandHandler } from "./commands/command-context.js";
import { ability } from "./commands/ability.js";
import { browserActions, browserProbe } from "./commands/browser-actions.js";
import { httpRequest } from "./commands/http-request.js";
import { inspectMountedInputs } from "./commands/inspect-mounted-inputs.js";
import { phpunit } from "./commands/phpunit.js";
import { pluginCheck } from "./commands/plugin-check.js";
import { restRequest } from "./commands/rest-request.js";
import { runPhp } from "./commands/run-php.js";
import { stateExport } from "./state-export/state-export-command.js";

/** The backend-neutral handlers by catalog command id (`wordpress.wp-cli` is each backend's own). */
export const COMMAND_HANDLERS: Readonly<Record<string, CommandHandler>> = Object.freeze({
  "wordpress.run-php": runPhp,
  "wordpress.http-request": httpRequest,
  "wordpress.rest-request": restRequest,
  "inspect-mounted-inputs": inspectMountedInputs,
  "wordpress.browser-actions": browserActions,
  "wordpress.browser-probe": browserProbe,
  "wordpress.state-export": stateExport,
  "wordpress.phpunit": phpunit,
  "wordpress.check": pluginCheck,
  "wordpress.ability": ability,
});

export type { Actor, ActorAuth, CommandContext, CommandHandler, CommandOutcome, TestDatabase, WpCliPharSource } from "./commands/command-context.js";
export { parseJsonMaybe, text } from "./commands/command-context.js";
export type { CappedStream, DbError, PhpFatal, PhpHttpResult, PhpRunResult } from "./commands/php-results.js";
export { FATAL_RECORDER, STDIO_CONSTANTS, outcomeFromRun, phpFatalError, phpWrapper, runPhp, withFatalRecorder, withoutShebang } from "./commands/run-php.js";
export { ability, listAbilities } from "./commands/ability.js";
export { browserActions, browserProbe, browserAllowedHosts, browserArtifactFiles, browserOutcome, runScriptInSandbox } from "./commands/browser-actions.js";
export { httpRequest, httpStatusOutcome } from "./commands/http-request.js";
export { inspectMountedInputs } from "./commands/inspect-mounted-inputs.js";
export { actionSummaryFile, assertionsBlock, mergeBundleFiles, testsBlock } from "./commands/evidence-blocks.js";
export type { AssertionsBlock } from "./commands/evidence-blocks.js";
export { phpunit, resolvePhpunit, summaryCounts } from "./commands/phpunit.js";
export { pluginCheck } from "./commands/plugin-check.js";
export { restRequest } from "./commands/rest-request.js";
export { stateExport } from "./state-export/state-export-command.js";
export { exportWordPressState, ABILITIES_UNAVAILABLE_NOTE } from "./state-export/export-wordpress-state.js";
export type { WordPressStateExportResult } from "./state-export/export-wordpress-state.js";
export { observeRuntime } from "./observations/observations.js";
export type { ObservationHost, RuntimeObservation } from "./observations/observations.js";
export { phpValue, assertPhpData } from "./php-source/php-value.js";
export type { PhpData } from "./php-source/php-value.js";
export { phpAssets, phpAsset, phpProgram, COMMAND_ASSETS_URL } from "./php-source/php-assets.js";
export type { PhpAssets } from "./php-source/php-assets.js";
export { missingExtensionHint } from "./php-source/php-extension-hint.js";
export { findChromium, SYSTEM_CHROMIUM_PATHS } from "./browser/find-chromium.js";
export type { ChromiumLocation, ChromiumSource, FindChromiumOptions } from "./browser/find-chromium.js";
export { launchBrowser, CHROMIUM_LAUNCH_ARGS } from "./browser/launch-browser.js";
export type { LaunchBrowserOptions } from "./browser/launch-browser.js";
export { runBrowserInteractionScript } from "./browser/run-browser-script.js";
export type { RunBrowserScriptOptions, BrowserCookie } from "./browser/run-browser-script.js";
export type * from "./browser/browser-script-outcome.js";
export { browserBaselinePath, browserDiffPath, browserScreenshotPath, PHP_FATAL_HEADER } from "./browser/browser-script-outcome.js";
