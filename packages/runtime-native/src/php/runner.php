<?php
/**
 * Runs one `wordpress.run-php` request of a native sandbox: records a fatal error's message, file
 * and line, loads WordPress (unless bootstrap is none), switches user and includes the caller's file.
 * The request comes from request.json beside the internal files.
 */
register_shutdown_function(static function () {
	$e = error_get_last();
	if ($e !== null && ($e['type'] & (E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR))) {
		@file_put_contents('/internal/wp-codebox/last-error.json', json_encode($e));
	}
});
$wp_codebox_request = json_decode((string) file_get_contents('/internal/wp-codebox/request.json'), true);
if ($wp_codebox_request['bootstrap'] === 'wordpress') {
	require_once '/wordpress/wp-load.php';
	require_once ABSPATH . 'wp-admin/includes/admin.php';
	if ($wp_codebox_request['user'] === 'admin') {
		$wp_codebox_admins = get_users(array('role' => 'administrator', 'orderby' => 'ID', 'order' => 'ASC', 'number' => 1, 'fields' => 'ID'));
		wp_set_current_user($wp_codebox_admins ? (int) $wp_codebox_admins[0] : 0);
		unset($wp_codebox_admins);
	} else {
		wp_set_current_user((int) $wp_codebox_request['user']);
	}
}
$wp_codebox_file = (string) $wp_codebox_request['file'];
unset($wp_codebox_request);
require $wp_codebox_file;
