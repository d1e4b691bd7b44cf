/**
 * PHP programs the sandbox runs inside WordPress for its self-calls and WP-Cron (sources in
 * `assets/site/`). Plain PHP, no values spliced in: the self-call plugin reads its inputs from
 * constants that Playground defines from JSON.
 */
import { phpAsset } from "./php-assets.js";

/** In-memory folder (per worker) where PHP leaves the `blocking => false` requests it made to its own site. */
export const DEFERRED_REQUESTS_DIR = "/internal/wp-codebox/deferred";

/**
 * Must-use plugin of every sandbox worker, for WordPress HTTP API requests to the sandbox's own
 * site (host:port in the constant `WP_CODEBOX_SELF_HOSTS`, from `selfHostPorts`): `blocking =>
 * false` ones are written as JSON files (`{ method, url, headers, body: base64 | null }`) to
 * `WP_CODEBOX_DEFERRED_DIR` (= `DEFERRED_REQUESTS_DIR`) instead of being sent, for the worker to
 * hand to the runtime when the PHP work ends; blocking ones get a timeout of at least
 * `WP_CODEBOX_SELF_CALL_TIMEOUT` seconds (the worker that answers may have to boot first).
 */
export function selfCallMuPlugin(): string {
  return phpAsset("site/self-calls-mu-plugin.php");
}

/**
 * Moves recurring events that are overdue in the installed-site cache to their next run after now
 * (PDO, without loading WordPress). Prints `{"moved": N}`.
 */
export function fastForwardCronPhp(): string {
  return phpAsset("site/fast-forward-cron.php");
}
