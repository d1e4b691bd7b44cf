<?php
/**
 * Installs WordPress into the native site cache's fresh database (run once per WordPress release).
 */
define('WP_INSTALLING', true);
require_once '/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$result = wp_install('My WordPress Website', 'admin', 'admin@localhost.com', true, '', 'password');
if (is_wp_error($result) || empty($result['user_id'])) {
	fwrite(STDERR, "WordPress install failed\n");
	exit(1);
}
echo json_encode(array('userId' => $result['user_id']));
