<?php
/**
 * wordpress.wp-cli: runs WP-CLI's phar as if from a command line. The caller defines
 * $wp_codebox_argv (the full argv, starting with "wp") and $wp_codebox_phar (the phar's sandbox path).
 *
 * The phar is not `require`d: its stub starts with a `#!/usr/bin/env php` line that only PHP's
 * command line skips, and an include would print it before WP-CLI's output. WP-CLI's stub maps
 * itself as "wp-cli.phar" and includes php/boot-phar.php; this does the same through
 * Phar::loadPhar. A file that is not a phar (or not laid out like WP-CLI's) is still required,
 * from a copy without its #! line.
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
	$wp_codebox_src = (string) file_get_contents($wp_codebox_phar);
	if (strncmp($wp_codebox_src, '#!', 2) === 0) {
		// A plain script with a #! line: run a copy without that line (as run-php does), since an
		// included file would print it, and a declare(strict_types=1) after it would be fatal.
		$wp_codebox_nl = strpos($wp_codebox_src, "\n");
		$wp_codebox_rest = $wp_codebox_nl === false ? '' : substr($wp_codebox_src, $wp_codebox_nl + 1);
		if (strncmp($wp_codebox_rest, '<?php', 5) === 0) { $wp_codebox_rest = "<?php\n" . substr($wp_codebox_rest, 5); }
		$wp_codebox_phar .= '.script.php';
		file_put_contents($wp_codebox_phar, $wp_codebox_rest);
	}
	unset($wp_codebox_src);
	require $wp_codebox_phar;
}
