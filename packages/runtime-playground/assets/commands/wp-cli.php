<?php
/**
 * wordpress.wp-cli: runs WP-CLI's phar as if from a command line. The caller defines
 * $wp_codebox_argv (the full argv, starting with "wp") and $wp_codebox_phar (the phar's sandbox path).
 *
 * The phar is not `require`d: its stub starts with a `#!/usr/bin/env php` line that only PHP's
 * command line skips, and an include would print it before WP-CLI's output. WP-CLI's stub maps
 * itself as "wp-cli.phar" and includes php/boot-phar.php; this does the same through
 * Phar::loadPhar. A file that is not a phar (or not laid out like WP-CLI's) is still required,
 * with a leading #! line kept out of the output.
 */
$GLOBALS['argv'] = $_SERVER['argv'] = $wp_codebox_argv;
$GLOBALS['argc'] = $_SERVER['argc'] = count($GLOBALS['argv']);
$argv = $GLOBALS['argv']; $argc = $GLOBALS['argc'];
// php-wasm's run() is not a CLI process: give WP-CLI the stream constants a CLI run has.
if (!defined('STDIN')) { define('STDIN', fopen('php://stdin', 'r')); }
if (!defined('STDOUT')) { define('STDOUT', fopen('php://stdout', 'w')); }
if (!defined('STDERR')) { define('STDERR', fopen('php://stderr', 'w')); }
$wp_codebox_boot = null;
try {
	if (Phar::loadPhar($wp_codebox_phar, 'wp-cli.phar') && file_exists('phar://wp-cli.phar/php/boot-phar.php')) {
		$wp_codebox_boot = 'phar://wp-cli.phar/php/boot-phar.php';
	}
} catch (Throwable $e) {
	// Not a phar (e.g. a plain PHP script): required below.
}
if ($wp_codebox_boot !== null) {
	unset($e);
	include $wp_codebox_boot;
} else {
	$wp_codebox_head = (string) file_get_contents($wp_codebox_phar, false, null, 0, 2);
	if ($wp_codebox_head === '#!') {
		// Drop the first output line only, exactly as PHP's command line skips it.
		$wp_codebox_skipping = true;
		ob_start(function ($chunk) use (&$wp_codebox_skipping) {
			if (!$wp_codebox_skipping) { return $chunk; }
			$nl = strpos($chunk, "\n");
			if ($nl === false) { return ''; }
			$wp_codebox_skipping = false;
			return (string) substr($chunk, $nl + 1);
		}, 1);
	}
	require $wp_codebox_phar;
}
