<?php
/**
 * wp-codebox check, must-use plugin part 3: admin notices.
 *
 * On every wp-admin screen (not AJAX, not cron) the whole page is buffered; when it is sent, the
 * error and warning notices in it (div.notice-error, div.notice-warning and the older div.error)
 * are recorded as problems of level admin-notice-error / admin-notice-warning with their plain
 * text (entities decoded, tags, scripts and styles removed). Callbacks on the notice hooks are
 * wrapped just before those hooks fire, so a notice is recorded at the file and line of the
 * callback that printed it.
 *
 * Needs wp_codebox_check_record() (part 1) and wp_codebox_check_where() (part 2).
 */

/** Error and warning notices in an HTML page or fragment: [['type' => 'error'|'warning', 'text' => string], …]. */
function wp_codebox_check_notices(string $html): array {
	if (stripos($html, 'error') === false && stripos($html, 'notice-warning') === false) {
		return [];
	}
	$doc = new DOMDocument();
	$previous = libxml_use_internal_errors(true);
	// The XML declaration makes libxml read the markup as UTF-8 whatever the page declares.
	$doc->loadHTML('<?xml encoding="UTF-8">' . $html, LIBXML_NOERROR | LIBXML_NOWARNING | LIBXML_NONET);
	libxml_clear_errors();
	libxml_use_internal_errors($previous);
	$class = static fn(string $name): string => "contains(concat(' ', normalize-space(@class), ' '), ' $name ')";
	$is_notice = sprintf('(%s or %s or %s)', $class('notice-error'), $class('notice-warning'), $class('error'));
	// Hidden markup (class "hidden", the hidden attribute, display:none) is a template that page
	// JavaScript shows when something happens, such as the classic editor's "Connection lost".
	$hidden = sprintf("(%s or @hidden or contains(translate(@style, ' ', ''), 'display:none'))", $class('hidden'));
	$xpath = new DOMXPath($doc);
	$notices = [];
	// Outermost notices only: a notice inside another is part of its text.
	foreach ($xpath->query("//div[$is_notice][not(ancestor::div[$is_notice])][not(ancestor-or-self::*[$hidden])]") as $div) {
		foreach (iterator_to_array($xpath->query('.//script|.//style|.//template', $div)) as $node) {
			$node->parentNode->removeChild($node);
		}
		$text = trim(preg_replace('/\s+/u', ' ', (string) $div->textContent));
		if ($text === '') {
			continue; // an empty placeholder that page JavaScript fills
		}
		$classes = ' ' . preg_replace('/\s+/', ' ', (string) $div->getAttribute('class')) . ' ';
		$notices[] = ['type' => strpos($classes, ' notice-warning ') !== false ? 'warning' : 'error', 'text' => mb_substr($text, 0, 500)];
	}
	return $notices;
}

/** Where each notice printed on this request came from: "type\0text" => ['file' => …, 'line' => …]. */
$GLOBALS['wp_codebox_check_notice_origins'] = [];

function wp_codebox_check_notices_wanted(): bool {
	return is_admin() && !wp_doing_ajax() && !wp_doing_cron() && !empty($_SERVER['REQUEST_URI']);
}

add_action('admin_init', static function () {
	if (!wp_codebox_check_notices_wanted()) {
		return;
	}
	ob_start(static function (string $buffer, int $phase): string {
		// Only the page as sent: a buffer thrown away (ob_end_clean) shows nothing to anyone.
		if (($phase & PHP_OUTPUT_HANDLER_FINAL) && !($phase & PHP_OUTPUT_HANDLER_CLEAN) && $buffer !== '') {
			foreach (wp_codebox_check_notices($buffer) as $notice) {
				$where = $GLOBALS['wp_codebox_check_notice_origins'][$notice['type'] . "\0" . $notice['text']] ?? ['file' => '', 'line' => 0];
				wp_codebox_check_record('admin-notice-' . $notice['type'], $notice['text'], (string) $where['file'], (int) $where['line']);
			}
		}
		return $buffer;
	});
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
