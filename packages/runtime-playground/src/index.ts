/** Public API of @wp-codebox/runtime-playground: the WordPress Playground backend. */
export { createPlaygroundBackend, defaultPolicy, SUPPORTED_PHP_VERSIONS, DEFAULT_PHP_VERSION } from "./playground-backend.js";
export type { PlaygroundBackendOptions } from "./playground-backend.js";
export { PlaygroundRuntime } from "./playground-runtime.js";
export { listWordPressBuilds, findWordPressBuild } from "./wordpress-builds.js";
export type { WordPressBuild } from "./wordpress-builds.js";
export { resolveCacheDir } from "./cache-dir.js";
export { findChromium, SYSTEM_CHROMIUM_PATHS } from "./browser/find-chromium.js";
export type { ChromiumLocation, ChromiumSource, FindChromiumOptions } from "./browser/find-chromium.js";
export { launchBrowser, CHROMIUM_LAUNCH_ARGS } from "./browser/launch-browser.js";
export type { LaunchBrowserOptions } from "./browser/launch-browser.js";
export { runBrowserInteractionScript } from "./browser/run-browser-script.js";
export type { RunBrowserScriptOptions, BrowserCookie } from "./browser/run-browser-script.js";
export type * from "./browser/browser-script-outcome.js";
export { resolveWpCliPhar, splitCommandLine } from "./commands/wp-cli.js";
export type { WpCliPharSource } from "./commands/wp-cli.js";
export { ensureWordPressTree } from "./wordpress-builds.js";
export { ensureInstalledSite } from "./installed-site.js";
export { PLAYGROUND_OBSERVATION_TYPES } from "./observations.js";
