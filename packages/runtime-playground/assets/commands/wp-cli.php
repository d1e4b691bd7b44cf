<?php
/**
 * wordpress.wp-cli: runs WP-CLI's phar as if from a command line. The caller defines
 * $wp_codebox_argv (the full argv, starting with "wp") and $wp_codebox_phar (the phar's sandbox path).
 */
$GLOBALS['argv'] = $_SERVER['argv'] = $wp_codebox_argv;
$GLOBALS['argc'] = $_SERVER['argc'] = count($GLOBALS['argv']);
$argv = $GLOBALS['argv']; $argc = $GLOBALS['argc'];
// php-wasm's run() is not a CLI process: give WP-CLI the stream constants a CLI run has.
if (!defined('STDIN')) { define('STDIN', fopen('php://stdin', 'r')); }
if (!defined('STDOUT')) { define('STDOUT', fopen('php://stdout', 'w')); }
if (!defined('STDERR')) { define('STDERR', fopen('php://stderr', 'w')); }
require $wp_codebox_phar;
