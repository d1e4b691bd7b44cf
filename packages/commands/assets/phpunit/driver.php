<?php
/**
 * wordpress.phpunit: runs PHPUnit inside the sandbox, the way `php vendor/bin/phpunit` would from
 * the plugin's folder. The caller defines $wp_codebox_phpunit (encoded with the project's PHP value
 * encoder) and requires this file from top-level code, so WordPress, when loaded here, lives in
 * the global scope as it does on a real site.
 *
 * $wp_codebox_phpunit keys:
 *   pluginDir     the plugin's folder in the sandbox; the working directory of the run
 *   entry         sandbox path of the PHPUnit entry script to read (vendor/phpunit/phpunit/phpunit,
 *                 /usr/bin/phpunit, …)
 *   entryFile     the path __FILE__ stands for in that script (where it really lives)
 *   runFile       where the prepared copy of the entry script is written
 *   argv          PHPUnit's argv, argv[0] included
 *   includePaths  directories put in front of PHP's include_path (Debian: /usr/share/php)
 *   bootstrap     "plugin" (the config's own bootstrap) or "wordpress" (WordPress loaded here first)
 *   userId        current user for bootstrap=wordpress
 *   env           environment variables for the tests (WP_TESTS_DIR, WP_PHPUNIT__TESTS_CONFIG, …)
 *   testsConfig   the wp-tests-config.php the sandbox wrote for the WordPress core test library
 */
$wp_codebox_cfg = $wp_codebox_phpunit;
unset($wp_codebox_phpunit);

foreach ($wp_codebox_cfg['env'] as $wp_codebox_k => $wp_codebox_v) {
	putenv($wp_codebox_k . '=' . $wp_codebox_v);
	$_ENV[$wp_codebox_k] = $wp_codebox_v;
	$_SERVER[$wp_codebox_k] = $wp_codebox_v;
}
if (!defined('WP_TESTS_CONFIG_FILE_PATH')) {
	define('WP_TESTS_CONFIG_FILE_PATH', $wp_codebox_cfg['testsConfig']);
}
if ($wp_codebox_cfg['includePaths']) {
	set_include_path(implode(PATH_SEPARATOR, $wp_codebox_cfg['includePaths']) . PATH_SEPARATOR . get_include_path());
}
// php-wasm's run() is not a CLI process: give PHPUnit the stream constants and argv a CLI run has.
if (!defined('STDIN')) { define('STDIN', fopen('php://stdin', 'r')); }
if (!defined('STDOUT')) { define('STDOUT', fopen('php://stdout', 'w')); }
if (!defined('STDERR')) { define('STDERR', fopen('php://stderr', 'w')); }
if (!ini_get('date.timezone')) { ini_set('date.timezone', 'UTC'); }
chdir($wp_codebox_cfg['pluginDir']);

if ($wp_codebox_cfg['bootstrap'] === 'wordpress') {
	require_once '/wordpress/wp-load.php';
	require_once ABSPATH . 'wp-admin/includes/plugin.php';
	wp_set_current_user($wp_codebox_cfg['userId']);
}

// PHP skips a "#!" line only in the script it was started with, never in an included file, and a
// `declare(strict_types=1)` after it is then a fatal error. So the entry script runs from a copy
// without that line, with __FILE__ and __DIR__ pinned to where the original lives.
$wp_codebox_src = file_get_contents($wp_codebox_cfg['entry']);
if ($wp_codebox_src === false) {
	fwrite(STDERR, 'wp-codebox: cannot read the PHPUnit entry script ' . $wp_codebox_cfg['entry'] . "\n");
	exit(2);
}
if (strncmp($wp_codebox_src, '#!', 2) === 0) {
	$wp_codebox_nl = strpos($wp_codebox_src, "\n");
	$wp_codebox_src = $wp_codebox_nl === false ? '' : substr($wp_codebox_src, $wp_codebox_nl + 1);
}
$wp_codebox_out = '';
foreach (token_get_all($wp_codebox_src) as $wp_codebox_t) {
	if (is_array($wp_codebox_t) && $wp_codebox_t[0] === T_DIR) {
		$wp_codebox_out .= var_export(dirname($wp_codebox_cfg['entryFile']), true);
	} elseif (is_array($wp_codebox_t) && $wp_codebox_t[0] === T_FILE) {
		$wp_codebox_out .= var_export($wp_codebox_cfg['entryFile'], true);
	} else {
		$wp_codebox_out .= is_array($wp_codebox_t) ? $wp_codebox_t[1] : $wp_codebox_t;
	}
}
if (!is_dir(dirname($wp_codebox_cfg['runFile']))) { mkdir(dirname($wp_codebox_cfg['runFile']), 0777, true); }
file_put_contents($wp_codebox_cfg['runFile'], $wp_codebox_out);

$argv = $wp_codebox_cfg['argv'];
$argc = count($argv);
$_SERVER['argv'] = $GLOBALS['argv'] = $argv;
$_SERVER['argc'] = $GLOBALS['argc'] = $argc;
$_SERVER['SCRIPT_NAME'] = $_SERVER['SCRIPT_FILENAME'] = $_SERVER['PHP_SELF'] = $wp_codebox_cfg['entryFile'];
$wp_codebox_run_file = $wp_codebox_cfg['runFile'];
// Keep this driver's own frames out of PHPUnit's failure traces (PHPUnit 9 honours this list).
$GLOBALS['__PHPUNIT_ISOLATION_EXCLUDE_LIST'] = array_merge($GLOBALS['__PHPUNIT_ISOLATION_EXCLUDE_LIST'] ?? [], [$wp_codebox_run_file, __FILE__, '/internal/eval.php']);
unset($wp_codebox_src, $wp_codebox_out, $wp_codebox_t, $wp_codebox_nl, $wp_codebox_k, $wp_codebox_v, $wp_codebox_cfg);
// PHPUnit ends with exit(<0 passed | 1 failures or errors | 2 could not run>); the runtime reads
// that exit code and the JUnit log it wrote.
require $wp_codebox_run_file;
