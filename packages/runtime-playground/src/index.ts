/** Public API of @wp-codebox/runtime-playground: the WordPress Playground backend. */
export { createPlaygroundBackend, defaultPolicy, SUPPORTED_PHP_VERSIONS, DEFAULT_PHP_VERSION } from "./playground-backend.js";
export type { PlaygroundBackendOptions } from "./playground-backend.js";
export { PlaygroundRuntime } from "./sandbox/playground-runtime.js";
export { DEFAULT_EVIDENCE_MEMORY_BYTES } from "./evidence/evidence-spill.js";
export { listWordPressBuilds, findWordPressBuild } from "./site/wordpress-builds.js";
export type { WordPressBuild } from "./site/wordpress-builds.js";
export { resolveCacheDir } from "./site/cache-dir.js";
export { availablePhpExtensions, resolvePhpExtensions, DEFAULT_PHP_EXTENSIONS } from "./site/php-extensions.js";
// The browser executor moved to @wp-codebox/commands; re-exported for existing importers.
export { findChromium, SYSTEM_CHROMIUM_PATHS, launchBrowser, CHROMIUM_LAUNCH_ARGS, runBrowserInteractionScript, browserBaselinePath, browserDiffPath, browserScreenshotPath, PHP_FATAL_HEADER } from "@wp-codebox/commands";
export type {
  ChromiumLocation, ChromiumSource, FindChromiumOptions, LaunchBrowserOptions, RunBrowserScriptOptions, BrowserCookie,
  BrowserStepErrorCode, BrowserPhpFatal, BrowserStepError, BrowserScriptError, BrowserStepRecord, BrowserScreenshotComparison,
  BrowserAssertionResult, BrowserAssertions, BrowserScreenshot, BrowserConsoleEntry, BrowserPageError, BrowserNetworkEntry, BrowserScriptOutcome,
} from "@wp-codebox/commands";
export { resolveWpCliPhar, splitCommandLine } from "./commands/wp-cli.js";
export type { WpCliPharSource } from "./commands/wp-cli.js";
export { installWpCli, latestWpCliVersion, listCachedWpCli, newestCachedWpCli, wpCliMirror, wpCliPharUrl, DEFAULT_WP_CLI_MIRROR, WP_CLI_VERSION_PATTERN } from "./site/wp-cli-releases.js";
export type { CachedWpCli, WpCliInstallOptions } from "./site/wp-cli-releases.js";
export { ensureWordPressTree } from "./site/wordpress-builds.js";
export { ensureInstalledSite } from "./sandbox/installed-site.js";
export { PLAYGROUND_OBSERVATION_TYPES } from "./sandbox/playground-runtime.js";
export { ensureWordPressRelease, isBundledWordPress, wordpressMirror, releaseZipName, zipWordPressRelease, listCachedReleases, cachedLatestCheck, DEFAULT_WORDPRESS_MIRROR, WORDPRESS_VERSION_PATTERN } from "./site/wordpress-releases.js";
export type { CachedReleaseEntry } from "./site/wordpress-releases.js";
export { resolveDefaultWordPress, pinnedDefaultWordPress, MIRROR_CHECK_TIMEOUT_MS, BUNDLED_DEFAULT } from "./site/wordpress-default.js";
export type { CachedRelease, WordPressReleaseOptions } from "./site/wordpress-releases.js";
export { resolvePhpunit, summaryCounts } from "@wp-codebox/commands";
export { isSandboxSelf } from "./worker/sandbox-origin.js";
export type { SandboxOrigin } from "./worker/sandbox-origin.js";
export { resolveWordPressTree } from "./site/wordpress-source.js";
export type { WordPressTreeOptions, WordPressSourceRecord } from "./site/wordpress-source.js";
