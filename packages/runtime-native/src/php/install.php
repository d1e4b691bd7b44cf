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
// The site the Playground backend installs: same title, pretty permalinks.
update_option('permalink_structure', '/%postname%/');
update_option('blogname', 'wp-codebox');
$GLOBALS['wp_rewrite']->init();
$GLOBALS['wp_rewrite']->flush_rules(false);
// The uploads folder exists from the start: WordPress would make it on a sandbox's first load,
// changing wp-content's mtime, and the warm server's preloads would look stale for a second or two.
wp_mkdir_p(WP_CONTENT_DIR . '/uploads');
echo json_encode(array('userId' => $result['user_id']));
