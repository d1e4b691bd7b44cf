/**
 * Every default limit in one place. All times are milliseconds, all sizes bytes.
 * Resolution order everywhere: call option → runtime/episode default → these constants.
 */

/** Wall-clock limit for one command, in ms (`ExecutionSpec.timeoutMs`). `0` means none. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/** Output cap per stream (stdout, stderr), in bytes: 10 MiB. */
export const DEFAULT_OUTPUT_CAP_BYTES = 10 * 1024 * 1024;

/** Per-step browser timeout, in ms (the `step-timeout` arg). */
export const DEFAULT_BROWSER_STEP_TIMEOUT_MS = 15_000;

/** Total budget of one `wordpress.browser-actions` command, in ms (the `timeout` arg). */
export const DEFAULT_BROWSER_TOTAL_TIMEOUT_MS = 120_000;

/**
 * Default wall-clock limit of `wordpress.check` in ms (10 min): it makes one request per surface
 * the plugin added, and with `browser=true` opens each admin page in Chromium.
 */
export const DEFAULT_CHECK_TIMEOUT_MS = 600_000;

/** Default wall-clock limit of a test suite (`wordpress.phpunit`) in ms: 10 minutes. */
export const DEFAULT_PHPUNIT_TIMEOUT_MS = 600_000;

/**
 * Extra wall-clock time a browser command gets beyond its own total budget, in ms, so that the
 * command's own timeout (with its failure screenshot) fires before the outer deadline does.
 */
export const BROWSER_COMMAND_TIMEOUT_MARGIN_MS = 15_000;
