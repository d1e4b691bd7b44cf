/**
 * PHP programs the sandbox runs inside WordPress for its self-calls, WP-Cron and the theme pattern cache (sources in
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
 * Must-use plugin of every sandbox worker that keeps WordPress 6.4/6.5's parsed theme block
 * patterns from one request to the next (in `/internal/wp-codebox/theme-patterns`, per worker),
 * as WordPress 6.6 does in a transient: without it every request re-reads every pattern file.
 * An entry is used only while the theme, its version and every pattern file's name, size, mtime
 * and inode are unchanged. Does nothing on other WordPress versions.
 */
export function themePatternsMuPlugin(): string {
  return phpAsset("site/theme-patterns-mu-plugin.php");
}

/**
 * Must-use plugin of every sandbox worker that keeps PHP's messages on stderr when WP_DEBUG is on
 * and WP_DEBUG_DISPLAY false (the sandbox default): WordPress itself would turn display off.
 */
export function debugDisplayMuPlugin(): string {
  return phpAsset("site/debug-display-mu-plugin.php");
}

/**
 * Preload of every sandbox worker (after Playground's `0-sqlite.php`) that keeps the SQLite
 * integration's built MySQL grammar from one request to the next (in
 * `/internal/shared/opcache/wp-codebox/sqlite-grammar`, OPcache's file-cache folder, so the
 * installed site's OPcache seed carries it, compiled, to every worker it boots), instead of
 * building it at every request's first query. Does nothing with another database integration or an integration that no longer
 * keeps the grammar in `WP_MySQL_On_SQLite::$mysql_grammar`.
 */
export function sqliteGrammarPreload(): string {
  return phpAsset("site/sqlite-grammar-preload.php");
}

/**
 * Builds the grammar entry `sqliteGrammarPreload` keeps, without loading WordPress, when the
 * SQLite integration is the one that preload knows (prints nothing; does nothing otherwise):
 * part of the OPcache seed a sandbox saves.
 */
export const PRIME_SQLITE_GRAMMAR_PHP = "<?php if (isset($GLOBALS['wpdb']) && is_object($GLOBALS['wpdb']) && method_exists($GLOBALS['wpdb'], 'prime_grammar')) $GLOBALS['wpdb']->prime_grammar();";


/**
 * Must-use plugin of the installer's worker (installed-site.ts), active only while WordPress
 * installs: answers 'siteurl' and 'home' from the WP_SITEURL/WP_HOME constants that override them
 * anyway (get_option() queries the database on every read while installing), and fails the
 * installer's HTTP self-tests and its e-mail at once, which fail in the installer regardless.
 * The installed site is the same as without it.
 */
export function installerMuPlugin(): string {
  return phpAsset("site/installer-mu-plugin.php");
}

/**
 * Moves recurring events that are overdue in the installed-site cache to their next run after now
 * (PDO, without loading WordPress). Prints `{"moved": N}`.
 */
export function fastForwardCronPhp(): string {
  return phpAsset("site/fast-forward-cron.php");
}

/**
 * Compiles the scripts and folders named in `/internal/wp-codebox/opcache-compile.json`
 * (`{"files": [...], "dirs": [...]}`) into OPcache without running them; prints how many compiled.
 */
export function opcacheCompilePhp(): string {
  return phpAsset("site/opcache-compile.php");
}
