<?php
/**
 * wp-codebox check, must-use plugin part 3: admin notices.
 *
 * On every wp-admin screen (not AJAX, not cron) a copy of the page is kept as it is sent; when the
 * request ends, the error and warning notices in it (div.notice-error, div.notice-warning and the older div.error)
 * are recorded as problems of level admin-notice-error / admin-notice-warning with their plain
 * text (entities decoded, tags, scripts and styles removed). Callbacks on the notice hooks are
 * wrapped just before those hooks fire, so a notice is recorded at the file and line of the
 * callback that printed it.
 *
 * Needs wp_codebox_check_record() (part 1), wp_codebox_check_where() (part 2) and
 * wp_codebox_check_notices() (notice-text.php).
 */

/** Where each notice printed on this request came from: "type\0text" => ['file' => …, 'line' => …]. */
$GLOBALS['wp_codebox_check_notice_origins'] = [];

/**
 * Where a notice printed outside the notice hooks came from: the callback that draws this screen
 * when it is a plugin's admin page or importer, else nowhere (['file' => '', 'line' => 0]).
 */
function wp_codebox_check_screen_callback(): array {
	$callback = null;
	if (!empty($GLOBALS['page_hook'])) {
		$callback = wp_codebox_check_first_callback((string) $GLOBALS['page_hook']);
	} elseif (isset($_GET['import']) && is_string($_GET['import']) && isset($GLOBALS['wp_importers'][$_GET['import']][2])) {
		$callback = $GLOBALS['wp_importers'][$_GET['import']][2];
	}
	return ($callback !== null ? wp_codebox_check_where($callback) : null) ?? ['file' => '', 'line' => 0];
}

function wp_codebox_check_notices_wanted(): bool {
	return is_admin() && !wp_doing_ajax() && !wp_doing_cron() && !empty($_SERVER['REQUEST_URI']);
}

add_action('admin_init', static function () {
	if (!wp_codebox_check_notices_wanted()) {
		return;
	}
	// A chunk size of 1 passes every write straight through, so headers are sent exactly when they
	// would be without the recorder (a fatal after output still answers 200); the handler keeps a
	// copy of the page to read its notices when the request ends.
	ob_start(static function (string $buffer, int $phase): string {
		static $page = '';
		if (!($phase & PHP_OUTPUT_HANDLER_CLEAN) && strlen($page) < 8 * 1024 * 1024) {
			$page .= $buffer;
		}
		if (($phase & PHP_OUTPUT_HANDLER_FINAL) && $page !== '') {
			foreach (wp_codebox_check_notices($page) as $notice) {
				$where = $GLOBALS['wp_codebox_check_notice_origins'][$notice['type'] . "\0" . $notice['text']] ?? wp_codebox_check_screen_callback();
				wp_codebox_check_record('admin-notice-' . $notice['type'], $notice['text'], (string) $where['file'], (int) $where['line']);
			}
			$page = '';
		}
		return $buffer;
	}, 1);
}, PHP_INT_MIN);

/**
 * Wraps every callback of the notice hooks so what it prints is attributed to it. Runs on
 * in_admin_header, the last hook before wp-admin/admin-header.php fires the notice hooks; the
 * array keys stay, so remove_action() with the original callback still works.
 */
add_action('in_admin_header', static function () {
	global $wp_filter;
	foreach (['admin_notices', 'all_admin_notices', 'network_admin_notices', 'user_admin_notices'] as $hook) {
		if (!isset($wp_filter[$hook])) {
			continue;
		}
		foreach ($wp_filter[$hook]->callbacks as $priority => $entries) {
			foreach ($entries as $key => $entry) {
				$original = $entry['function'];
				$where = wp_codebox_check_where($original);
				if ($where === null) {
					continue;
				}
				$wp_filter[$hook]->callbacks[$priority][$key]['function'] = static function (...$args) use ($original, $where) {
					ob_start();
					try {
						return call_user_func_array($original, $args);
					} finally {
						$printed = (string) ob_get_clean();
						foreach (wp_codebox_check_notices($printed) as $notice) {
							$GLOBALS['wp_codebox_check_notice_origins'][$notice['type'] . "\0" . $notice['text']] ??= $where;
						}
						echo $printed;
					}
				};
			}
		}
	}
}, PHP_INT_MAX);
