<?php
/**
 * wordpress.phpunit: installs WordPress for the WordPress core test library, the way the library's
 * bootstrap does with `php includes/install.php <wp-tests-config.php> [run_ms_tests]` in a
 * subprocess. php-wasm cannot start processes, so the runtime runs that same script here, in a
 * request of its own, before PHPUnit starts (and tells the bootstrap WP_TESTS_SKIP_INSTALL=1).
 * The caller defines $wp_codebox_install (encoded with the project's PHP value encoder) and
 * requires this file from top-level code, so the library's install script runs in the global
 * scope as it does in its own process.
 *
 * $wp_codebox_install keys:
 *   script     the library's includes/install.php (sandbox path)
 *   config     the wp-tests-config.php the sandbox wrote
 *   multisite  true to install a network (the library's run_ms_tests argument)
 *   pluginDir  working directory, as for the PHPUnit run
 *   env        environment variables, as for the PHPUnit run
 */
$wp_codebox_cfg = $wp_codebox_install;
unset($wp_codebox_install);

foreach ($wp_codebox_cfg['env'] as $wp_codebox_k => $wp_codebox_v) {
	putenv($wp_codebox_k . '=' . $wp_codebox_v);
	$_ENV[$wp_codebox_k] = $wp_codebox_v;
	$_SERVER[$wp_codebox_k] = $wp_codebox_v;
}
if (!defined('STDIN')) { define('STDIN', fopen('php://stdin', 'r')); }
if (!defined('STDOUT')) { define('STDOUT', fopen('php://stdout', 'w')); }
if (!defined('STDERR')) { define('STDERR', fopen('php://stderr', 'w')); }
if (!ini_get('date.timezone')) { ini_set('date.timezone', 'UTC'); }
chdir($wp_codebox_cfg['pluginDir']);

$argv = [$wp_codebox_cfg['script'], $wp_codebox_cfg['config']];
if ($wp_codebox_cfg['multisite']) { $argv[] = 'run_ms_tests'; }
$argc = count($argv);
$_SERVER['argv'] = $GLOBALS['argv'] = $argv;
$_SERVER['argc'] = $GLOBALS['argc'] = $argc;
$_SERVER['SCRIPT_NAME'] = $_SERVER['SCRIPT_FILENAME'] = $_SERVER['PHP_SELF'] = $wp_codebox_cfg['script'];
$wp_codebox_script = $wp_codebox_cfg['script'];
unset($wp_codebox_cfg, $wp_codebox_k, $wp_codebox_v);
require $wp_codebox_script;
