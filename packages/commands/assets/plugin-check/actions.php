<?php
/**
 * wp-codebox check: the WordPress-side steps of a check, one per run. The command puts
 *   $wp_codebox_check_action = [ 'op' => …, 'userId' => int, … ];
 * before this file and reads the JSON it prints last: { "result": …, "printed": what the plugin printed }.
 *   resolve       plugin → { file, dir, name, version, active } or { error }
 *   activate      file → { error: null | { code, message, output }, active }
 *   deactivate    file → { active }
 *   uninstall     file → { uninstall: "uninstall.php" | "uninstall-hook" | "none" }, run as the
 *                 Plugins screen's Delete runs it (WP_ADMIN, current screen "plugins"), without
 *                 deleting the plugin's files
 *   is-active     file → { active }
 *   source-lines  names: [string] → { name: { file, line } }: the first line of the plugin's PHP
 *                 files that names each (for leftover files the recorder cannot see written)
 *   create-posts  posts: [{ key, type, title, content }], archives: [type]
 *                 → { posts: { key: url }, archives: { type: url | null } }
 *   run-cron      hook, args → { ran: true }
 *   seed-core     → { links: { frontPage, post, page, category, search, notFound, feed, login,
 *                 lostPassword, register | null }, subscriberId }: a post in a new category, a page
 *                 and a subscriber, for the core screens
 */
if ($wp_codebox_check_action['op'] === 'uninstall' && !defined('WP_ADMIN')) {
	define('WP_ADMIN', true); // as in a request to wp-admin/plugins.php
}
require_once '/wordpress/wp-load.php';
// The admin includes, as on the Plugins screen where a plugin is activated and deactivated.
require_once ABSPATH . 'wp-admin/includes/admin.php';
wp_set_current_user((int) $wp_codebox_check_action['userId']);
$a = $wp_codebox_check_action;
$relative = static fn($url) => is_string($url) ? wp_make_link_relative($url) : null;

$result = null;
ob_start();
switch ($a['op']) {
	case 'resolve':
		$want = trim((string) $a['plugin'], '/');
		$file = null;
		if (substr($want, -4) === '.php') {
			$file = is_file(WP_PLUGIN_DIR . '/' . $want) ? $want : null;
		} else {
			foreach (get_plugins('/' . $want) as $main => $_) {
				$file = $want . '/' . $main;
				break;
			}
		}
		if ($file === null) {
			$result = ['error' => "No plugin with a plugin header was found at wp-content/plugins/$want."];
			break;
		}
		$data = get_plugin_data(WP_PLUGIN_DIR . '/' . $file, false, false);
		$dir = dirname($file) === '.' ? WP_PLUGIN_DIR . '/' . $file : WP_PLUGIN_DIR . '/' . dirname($file);
		$result = ['file' => $file, 'dir' => $dir, 'name' => (string) $data['Name'], 'version' => (string) $data['Version'], 'active' => is_plugin_active($file)];
		break;

	case 'activate':
		$result = activate_plugin($a['file'], '', false, false);
		$error = null;
		if (is_wp_error($result)) {
			$data = $result->get_error_data();
			$error = ['code' => $result->get_error_code(), 'message' => wp_strip_all_tags($result->get_error_message()), 'output' => is_string($data) ? $data : null];
		}
		$result = ['error' => $error, 'active' => is_plugin_active($a['file'])];
		break;

	case 'deactivate':
		deactivate_plugins($a['file']);
		$result = ['active' => is_plugin_active($a['file'])];
		break;

	case 'uninstall':
		$mechanism = 'none';
		set_current_screen('plugins');
		if (is_uninstallable_plugin($a['file'])) {
			$mechanism = is_file(WP_PLUGIN_DIR . '/' . dirname($a['file']) . '/uninstall.php') && dirname($a['file']) !== '.' ? 'uninstall.php' : 'uninstall-hook';
			uninstall_plugin($a['file']);
		}
		$result = ['uninstall' => $mechanism];
		break;

	case 'is-active':
		$result = ['active' => is_plugin_active($a['file'])];
		break;

	case 'source-lines':
		$dir = dirname(WP_PLUGIN_DIR . '/' . $a['file']);
		$sources = dirname($a['file']) === '.' ? [WP_PLUGIN_DIR . '/' . $a['file']] : [];
		if ($sources === []) {
			$walk = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS));
			foreach ($walk as $entry) {
				if (count($sources) >= 500) {
					break;
				}
				if ($entry->isFile() && substr($entry->getFilename(), -4) === '.php' && strpos($entry->getPathname(), '/vendor/') === false) {
					$sources[] = $entry->getPathname();
				}
			}
			sort($sources);
		}
		$found = [];
		foreach ((array) $a['names'] as $name) {
			foreach ($sources as $source) {
				foreach (preg_split('/\r?\n/', (string) @file_get_contents($source)) as $i => $text) {
					// Comments name files too; the line that writes one is code.
					if ($name !== '' && strpos($text, (string) $name) !== false && !preg_match('#^\s*(//|\*|/\*|\#)#', $text)) {
						$found[$name] = ['file' => $source, 'line' => $i + 1];
						break 2;
					}
				}
			}
		}
		$result = (object) $found;
		break;

	case 'create-posts':
		// As saving Settings > Permalinks would: the plugin's post types get their URLs.
		flush_rewrite_rules(false);
		$posts = [];
		foreach ($a['posts'] as $post) {
			$id = wp_insert_post(['post_type' => $post['type'], 'post_title' => $post['title'], 'post_content' => $post['content'], 'post_status' => 'publish'], true);
			$posts[$post['key']] = is_wp_error($id) ? null : $relative(get_permalink($id));
		}
		$archives = [];
		foreach ($a['archives'] as $type) {
			$archives[$type] = $relative(get_post_type_archive_link($type) ?: null);
		}
		$result = ['posts' => (object) $posts, 'archives' => (object) $archives];
		break;

	case 'run-cron':
		do_action_ref_array($a['hook'], (array) $a['args']);
		$result = ['ran' => true];
		break;

	case 'seed-core':
		$term = term_exists('wp-codebox check', 'category') ?: wp_insert_term('wp-codebox check', 'category');
		$category = is_wp_error($term) ? (int) get_option('default_category') : (int) $term['term_id'];
		$post = wp_insert_post(['post_type' => 'post', 'post_status' => 'publish', 'post_title' => 'wp-codebox check: a post', 'post_content' => "<!-- wp:paragraph -->\n<p>A sample post.</p>\n<!-- /wp:paragraph -->", 'post_category' => [$category]]);
		$page = wp_insert_post(['post_type' => 'page', 'post_status' => 'publish', 'post_title' => 'wp-codebox check: a page', 'post_content' => "<!-- wp:paragraph -->\n<p>A sample page.</p>\n<!-- /wp:paragraph -->"]);
		$subscriber = get_user_by('login', 'wp-codebox-subscriber');
		$subscriber_id = $subscriber ? $subscriber->ID : wp_insert_user(['user_login' => 'wp-codebox-subscriber', 'user_pass' => wp_generate_password(32), 'user_email' => 'subscriber@example.org', 'role' => 'subscriber']);
		global $wpdb;
		// An id no post has, so the request is a 404 under any permalink structure.
		$missing = (int) $wpdb->get_var("SELECT MAX(ID) FROM {$wpdb->posts}") + 1000000;
		$result = [
			'links' => [
				'frontPage' => $relative(home_url('/')),
				'post' => $relative(get_permalink($post)),
				'page' => $relative(get_permalink($page)),
				'category' => $relative(get_category_link($category)),
				'search' => $relative(add_query_arg('s', 'wp-codebox', home_url('/'))),
				'notFound' => $relative(add_query_arg('p', $missing, home_url('/'))),
				'feed' => $relative(get_feed_link('rss2')),
				'login' => $relative(wp_login_url()),
				'lostPassword' => $relative(wp_lostpassword_url()),
				'register' => get_option('users_can_register') ? $relative(wp_registration_url()) : null,
			],
			'subscriberId' => is_wp_error($subscriber_id) ? 0 : (int) $subscriber_id,
		];
		break;

	default:
		$result = ['error' => 'unknown op'];
}
$printed = ob_get_clean();
echo "\n" . json_encode(['result' => $result, 'printed' => $printed], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR);
