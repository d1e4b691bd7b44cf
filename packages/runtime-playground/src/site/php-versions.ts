/**
 * Facts about php-wasm's PHP builds that code on both sides of the worker thread needs, in a module
 * that imports nothing (the executable reads it before it loads the rest of the CLI).
 */

/** PHP version of a sandbox when the caller names none. */
export const DEFAULT_PHP_VERSION = "8.3";

/**
 * The PHP versions whose php-wasm build has PHP's own stack check (`zend.max_allowed_stack_size`,
 * added in PHP 8.3; `ini_get()` gives false for it in php-wasm's 8.4 and 8.5 builds).
 */
export const PHP_VERSIONS_WITH_STACK_CHECK: ReadonlySet<string> = new Set(["8.3"]);
