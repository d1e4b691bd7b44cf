/**
 * Every default limit in one place. All times are milliseconds, all sizes bytes.
 * Resolution order everywhere: call option → runtime/episode default → these constants.
 */

/** Wall-clock limit for one command, in ms (`ExecutionSpec.timeoutMs`). `0` means none. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/** Output cap per stream (stdout, stderr), in bytes: 10 MiB. */
export const DEFAULT_OUTPUT_CAP_BYTES = 10 * 1024 * 1024;

/** Longest PHP output a boot failure's message quotes as its cause, in characters (the rest is cut with "…"). */
export const BOOT_FAILURE_CAUSE_MAX_CHARS = 2000;

/**
 * Largest artifact file read back on its own, in bytes (5 MiB): the control protocol's
 * `read-artifact` and the screenshots an MCP tool result carries as image content. Smaller than
 * the output cap because an image goes base64-encoded into one protocol message, and model APIs
 * commonly refuse images over 5 MB; a larger file is still in the bundle.
 */
export const ARTIFACT_READ_CAP_BYTES = 5 * 1024 * 1024;

/** Per-step browser timeout, in ms (the `step-timeout` arg). */
export const DEFAULT_BROWSER_STEP_TIMEOUT_MS = 15_000;

/** Total budget of one `wordpress.browser-actions` command, in ms (the `timeout` arg). */
export const DEFAULT_BROWSER_TOTAL_TIMEOUT_MS = 120_000;

/**
 * Default wall-clock limit of `wordpress.check` in ms (10 min): it makes one request per surface
 * the plugin added, and with `browser=true` opens each admin page in Chromium.
 */
export const DEFAULT_CHECK_TIMEOUT_MS = 600_000;

/**
 * Default limit of one surface of `wordpress.check` in ms (the `surface-timeout` arg): an admin
 * page, a REST route, a front-end visit or a cron hook that takes longer is a `timeout` finding,
 * and the check goes on with the next surface instead of spending its whole limit on one hang.
 */
export const DEFAULT_CHECK_SURFACE_TIMEOUT_MS = 60_000;

/**
 * Default limit of one request to a sandbox's site, in ms (`serve --site-request-timeout`,
 * `RuntimeCreateSpec.siteRequestTimeoutMs`): a page, REST call or admin-ajax request from a
 * browser, or one PHP makes to its own site (WP-Cron's spawn). PHP cannot be interrupted from
 * inside, so a request that takes longer gets a 504 and its PHP worker is replaced; without the
 * limit a request that never ends would keep the worker, and the commands waiting for it, forever.
 * 30 s is PHP's own `max_execution_time` default, which php-wasm does not enforce; it is below
 * `DEFAULT_COMMAND_TIMEOUT_MS`, so a command sent while a request hangs runs on the replacement
 * worker within its own deadline instead of being blamed for the hang. `0` means none.
 */
export const DEFAULT_SITE_REQUEST_TIMEOUT_MS = 30_000;

/** Default wall-clock limit of a test suite (`wordpress.phpunit`) in ms: 10 minutes. */
export const DEFAULT_PHPUNIT_TIMEOUT_MS = 600_000;

/**
 * Extra wall-clock time a browser command gets beyond its own total budget, in ms, so that the
 * command's own timeout (with its failure screenshot) fires before the outer deadline does.
 */
export const BROWSER_COMMAND_TIMEOUT_MARGIN_MS = 15_000;

/** How long Chromium may take to start, in ms. */
export const DEFAULT_BROWSER_LAUNCH_TIMEOUT_MS = 30_000;

/** Limit of each clean-up task after a browser script (failure screenshot, title, close), in ms. */
export const BROWSER_CLEANUP_TIMEOUT_MS = 5_000;

/** Browser viewport when the caller names none, in CSS pixels. */
export const DEFAULT_BROWSER_VIEWPORT = Object.freeze({ width: 1280, height: 720 });

/**
 * Body cap of one loopback HTTP response served to the browser or to PHP, in bytes (512 MiB):
 * page loads are not command output, so they get far more room than `DEFAULT_OUTPUT_CAP_BYTES`.
 */
export const SITE_HTTP_RESPONSE_CAP_BYTES = 512 * 1024 * 1024;

/** How long dispose waits for extra PHP workers still booting, so it can stop them, in ms. */
export const WORKER_BOOT_GRACE_MS = 20_000;

/** How long an interrupted run waits for a boot in flight to finish, so it can dispose it, in ms. */
export const INTERRUPTED_BOOT_GRACE_MS = 30_000;

/**
 * How long an interrupted run waits for the command it stopped to hand back its result (with what
 * PHP printed until the signal), in ms. The command is stopped at once; this covers replacing the
 * stopped PHP worker. Past it, the result is recorded without the output.
 */
export const INTERRUPTED_COMMAND_GRACE_MS = 15_000;

/**
 * Observation payloads whose canonical JSON is larger than this many bytes (UTF-8) are stored as
 * `files/observations/<observation-id>.json` and referenced by digest: 64 KiB.
 */
export const EPISODE_OBSERVATION_INLINE_LIMIT_BYTES = 64 * 1024;

/**
 * PHP workers a sandbox may start, beyond the ones it is configured with, to serve requests PHP
 * makes to its own site while the worker that made them waits (nested self-calls). A self-call
 * deeper than this waits for a worker and, like on a real site with a full PHP pool, fails at
 * its own HTTP timeout instead of hanging.
 */
export const MAX_SELF_CALL_WORKERS = 3;

/**
 * How long a command waits, after its PHP finished, for the self-calls it started (a WP-Cron run
 * spawned by a page load) before its result is returned, in ms. Within the command's own timeout.
 */
export const SELF_CALL_SETTLE_TIMEOUT_MS = 30_000;

/**
 * Shortest timeout of a blocking WordPress HTTP API request to the sandbox's own site, in ms: the
 * worker that answers it may have to boot first.
 */
export const SELF_CALL_MIN_TIMEOUT_MS = 60_000;

/**
 * Shortest secret, in characters (code points), whose transformed forms are redacted too: base64,
 * base64url, hex and other letter cases. These forms use a small alphabet, so for a shorter value
 * they turn up by chance in unrelated text; the value itself and its escaped forms (JSON, URL,
 * HTML) are redacted at any length.
 */
export const SECRET_ENCODED_FORMS_MIN_CHARS = 8;

/**
 * Longest secret, in UTF-16 units (4 KiB: a PEM private key fits), whose every combination of
 * forms is redacted (HTML and URL escapes, three JSON layers, each escape variant). A longer value
 * is redacted as is, URL-encoded, HTML-escaped the usual way, as base64 and hex and in any letter
 * case, each JSON-escaped once: the combinations grow with the value's size (a 1 MiB value took
 * 100 s to prepare), and a value that long is rarely printed through several escapers.
 */
export const SECRET_ALL_FORMS_MAX_CHARS = 4096;
