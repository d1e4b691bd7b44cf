<?php
/**
 * Compiles scripts into OPcache without running them (a worker's `precompile`, and the seed a
 * sandbox's worker saves): the paths listed in /internal/wp-codebox/opcache-compile.json, and the
 * `.php` files under each folder listed there. Prints how many compiled. A script with a syntax
 * error is skipped; a compile-time fatal error (a function declared twice) ends the request, and
 * the worker boots on (php-worker.ts). Either is reported where it belongs when the script is
 * included later.
 */
$wp_codebox_list = json_decode((string) file_get_contents('/internal/wp-codebox/opcache-compile.json'), true);
$wp_codebox_compiled = 0;
// The scripts that ran in this request (the preloads): cached already, and compiling one again
// would declare its functions a second time, a fatal error. opcache_is_script_cached() alone does
// not say so where OPcache has only its file cache (php-wasm's PHP 7.4 and 8.0): it is false there.
$wp_codebox_ran = array_flip(get_included_files());
$wp_codebox_compile = static function ($path) use (&$wp_codebox_compiled, $wp_codebox_ran) {
	if (isset($wp_codebox_ran[$path]) || opcache_is_script_cached($path)) {
		++$wp_codebox_compiled;
		return;
	}
	try {
		if (@opcache_compile_file($path)) {
			++$wp_codebox_compiled;
		}
	} catch (Throwable $e) {
		// A parse error: left for the include that needs the script.
	}
};
foreach ((array) ($wp_codebox_list['files'] ?? array()) as $wp_codebox_path) {
	$wp_codebox_compile((string) $wp_codebox_path);
}
foreach ((array) ($wp_codebox_list['dirs'] ?? array()) as $wp_codebox_dir) {
	if (!is_dir((string) $wp_codebox_dir)) {
		continue;
	}
	$wp_codebox_files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator((string) $wp_codebox_dir, FilesystemIterator::SKIP_DOTS));
	foreach ($wp_codebox_files as $wp_codebox_file) {
		if ($wp_codebox_file->isFile() && substr($wp_codebox_file->getFilename(), -4) === '.php') {
			$wp_codebox_compile($wp_codebox_file->getPathname());
		}
	}
}
echo $wp_codebox_compiled;
