<?php
/**
 * wp-config.php of a native sandbox. Its values come from config.json beside it (written by the
 * runtime, in /etc/wp-codebox beside the copy bound here), so no value is ever spliced into PHP source.
 */
$wp_codebox_config = json_decode((string) file_get_contents('/etc/wp-codebox/config.json'), true);
foreach ($wp_codebox_config['constants'] as $wp_codebox_name => $wp_codebox_value) {
	if (!defined($wp_codebox_name)) {
		define($wp_codebox_name, $wp_codebox_value);
	}
}
unset($wp_codebox_name, $wp_codebox_value);
$table_prefix = 'wp_';
if (!defined('ABSPATH')) {
	define('ABSPATH', '/wordpress/');
}
unset($wp_codebox_config);
require_once ABSPATH . 'wp-settings.php';
