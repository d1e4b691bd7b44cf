<?php
/**
 * wp-codebox check, must-use plugin part 1: the recorder.
 *
 * Records every PHP error, every WordPress deprecation and doing-it-wrong notice, every failed
 * database query and every fatal of each request as one JSON line in $wp_codebox_check_config['log'].
 * Where an option or a table was created by code in the checked plugin is recorded in
 * $wp_codebox_check_config['origins'], so an uninstall leftover can point at its file and line.
 *
 * $wp_codebox_check_config is set by the lines the command puts before this file:
 *   [ 'log' => path, 'origins' => path, 'token' => string, 'pluginDir' => absolute path ]
 * It runs before regular plugins (must-use plugins load first), so it sees their whole life.
 */
$GLOBALS['wp_codebox_check_config'] = $wp_codebox_check_config;

/** PHP 8 leaves only these bits in error_reporting() while the @ operator is active. */
const WP_CODEBOX_CHECK_AT_MASK = E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR | E_PARSE;
const WP_CODEBOX_CHECK_FATAL = E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR;

function wp_codebox_check_append(string $key, array $row): void {
	static $busy = false;
	if ($busy) {
		return; // a problem inside the recorder is not recorded (no recursion)
	}
	$busy = true;
	$path = $GLOBALS['wp_codebox_check_config'][$key];
	if (!is_dir(dirname($path))) {
		@mkdir(dirname($path), 0777, true);
	}
	$row['uri'] = isset($_SERVER['REQUEST_URI']) && $_SERVER['REQUEST_URI'] !== '' ? $_SERVER['REQUEST_URI'] : 'cli';
	$tag = wp_codebox_check_request_tag();
	if ($tag !== '') {
		$row['request'] = $tag;
	}
	wp_codebox_check_append_line($path, json_encode($row, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n");
	$busy = false;
}

/** How many more times wp_codebox_check_append_line() asks for the file's lock in one request, in all. */
const WP_CODEBOX_CHECK_LOCK_TRIES = 20000;

/**
 * Appends $line to the file at $path under an exclusive lock; returns whether all of it was written.
 * Requests checked at the same time on other PHP workers append to the same file. Real PHP waits
 * for the lock; php-wasm's flock() never waits: while another worker holds it, even a blocking
 * LOCK_EX fails at once, and file_put_contents(..., LOCK_EX) then wrote nothing (a finding went
 * missing). So a lock refused is asked for again without blocking, up to 20,000 times in one request
 * (each a round trip to the worker's lock manager; usleep() cannot be used: this runs inside PHP's
 * error handler, where sleeping stops a php-wasm worker), and past that a line is written with
 * O_APPEND alone, which keeps a line of one write() whole.
 */
function wp_codebox_check_append_line(string $path, string $line): bool {
	static $tries_left = WP_CODEBOX_CHECK_LOCK_TRIES;
	$handle = @fopen($path, 'ab');
	if ($handle === false) {
		return false;
	}
	$locked = flock($handle, LOCK_EX);
	while (!$locked && $tries_left > 0) {
		$tries_left--;
		$locked = flock($handle, LOCK_EX | LOCK_NB);
	}
	$written = fwrite($handle, $line);
	fflush($handle);
	if ($locked) {
		flock($handle, LOCK_UN);
	}
	fclose($handle);
	return $written === strlen($line);
}

/**
 * The check's name for this request (header X-WP-Codebox-Check-Request), or '' for work the check
 * did not request by HTTP. Every row of the request carries it, and so do the requests it makes to
 * its own site (WP-Cron's spawn, loopbacks; see the http_request_args filter below), so a problem
 * is credited to the surface whose request caused it even when requests overlap.
 */
function wp_codebox_check_request_tag(): string {
	return isset($_SERVER['HTTP_X_WP_CODEBOX_CHECK_REQUEST']) ? substr((string) $_SERVER['HTTP_X_WP_CODEBOX_CHECK_REQUEST'], 0, 300) : '';
}

add_filter('http_request_args', static function ($args, $url = '') {
	$tag = wp_codebox_check_request_tag();
	// Headers given as one string are left as they are (rare; such a request stays untagged).
	if ($tag !== '' && is_array($args) && is_string($url) && (!isset($args['headers']) || is_array($args['headers'])) && function_exists('home_url') && parse_url($url, PHP_URL_HOST) === parse_url(home_url(), PHP_URL_HOST)) {
		$args['headers']['X-WP-Codebox-Check-Request'] = $tag;
	}
	return $args;
}, PHP_INT_MAX, 2);

function wp_codebox_check_record(string $level, string $message, string $file = '', int $line = 0, array $extra = []): void {
	// An uncaught exception's message carries its stack trace; the first part identifies it.
	$message = explode("\nStack trace:", $message)[0];
	wp_codebox_check_append('log', ['level' => $level, 'message' => $message, 'file' => $file, 'line' => $line] + $extra);
}

/** The first call site inside the checked plugin, else the frame after one of $markers. */
function wp_codebox_check_caller(array $markers): array {
	$trace = debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS);
	$dir = rtrim($GLOBALS['wp_codebox_check_config']['pluginDir'], '/');
	foreach ($trace as $frame) {
		if (isset($frame['file']) && ($frame['file'] === $dir || strpos($frame['file'], $dir . '/') === 0)) {
			return [$frame['file'], (int) ($frame['line'] ?? 0)];
		}
	}
	foreach ($trace as $i => $frame) {
		if (in_array($frame['function'] ?? '', $markers, true) && isset($trace[$i + 1]['file'])) {
			return [$trace[$i + 1]['file'], (int) ($trace[$i + 1]['line'] ?? 0)];
		}
	}
	return ['', 0];
}

/** True when $file is in the checked plugin's folder (or is its single file). */
function wp_codebox_check_is_plugin_file(string $file): bool {
	$dir = rtrim($GLOBALS['wp_codebox_check_config']['pluginDir'], '/');
	return $file === $dir || strpos($file, $dir . '/') === 0;
}

/** WordPress functions that report through trigger_error() and are recorded by their own hooks below. */
const WP_CODEBOX_CHECK_HOOKED_REPORTERS = ['_deprecated_function', '_deprecated_constructor', '_deprecated_class', '_deprecated_file', '_deprecated_argument', '_deprecated_hook', 'apply_filters_deprecated', 'do_action_deprecated', '_doing_it_wrong'];

/** The URL of the last outbound request the network policy blocked in this request, or null. */
$GLOBALS['wp_codebox_check_blocked'] = null;

set_error_handler(static function (int $errno, string $message, string $file = '', int $line = 0): bool {
	if ((error_reporting() | WP_CODEBOX_CHECK_AT_MASK) === WP_CODEBOX_CHECK_AT_MASK) {
		return false; // silenced with @
	}
	// WordPress's own trigger_error() for deprecations and doing-it-wrong is recorded by the hooks
	// below; wp_trigger_error() called by anything else is recorded here.
	if (($errno & (E_USER_DEPRECATED | E_USER_NOTICE | E_USER_WARNING)) && substr($file, -strlen('/wp-includes/functions.php')) === '/wp-includes/functions.php') {
		foreach (debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS) as $frame) {
			if (in_array($frame['function'] ?? '', WP_CODEBOX_CHECK_HOOKED_REPORTERS, true)) {
				return false;
			}
		}
	}
	$level = null;
	if ($errno & (E_WARNING | E_USER_WARNING | E_CORE_WARNING | E_COMPILE_WARNING)) {
		$level = 'warning';
	} elseif ($errno & (E_NOTICE | E_USER_NOTICE)) {
		$level = 'notice';
	} elseif ($errno & (E_DEPRECATED | E_USER_DEPRECATED)) {
		$level = 'deprecated';
	}
	// Fatal levels end the request and are recorded once, at shutdown.
	if ($level !== null) {
		$extra = [];
		if (!wp_codebox_check_is_plugin_file($file)) {
			// Raised by core while it ran the plugin's code: the plugin's calling frame is where to
			// look; core's frame stays in the record.
			[$plugin_file, $plugin_line] = wp_codebox_check_caller([]);
			if ($GLOBALS['wp_codebox_check_blocked'] !== null) {
				if ($plugin_file === '') {
					return false; // WordPress's own answer to the sandbox's network (its update checks), not the plugin's
				}
				$extra += ['cause' => 'sandbox', 'blocked' => $GLOBALS['wp_codebox_check_blocked']];
			}
			if ($plugin_file !== '') {
				$extra['raisedAt'] = ['file' => $file, 'line' => $line];
				[$file, $line] = [$plugin_file, $plugin_line];
			}
		}
		wp_codebox_check_record($level, $message, $file, $line, $extra);
	}
	return false; // PHP's own handling goes on as without the recorder
});

// An outbound request the network policy (WP_HTTP_BLOCK_EXTERNAL) refused: a finding of the
// sandbox's making when the plugin made it, and the cause of what core raises after it.
add_action('http_api_debug', static function ($response, $context = '', $class = '', $args = [], $url = '') {
	if (!is_wp_error($response) || $response->get_error_code() !== 'http_request_not_executed') {
		return;
	}
	$GLOBALS['wp_codebox_check_blocked'] = (string) $url;
	[$file, $line] = wp_codebox_check_caller([]);
	if ($file !== '') {
		wp_codebox_check_record('blocked-request', sprintf('An outbound request to %s was blocked by the sandbox\'s network policy (no network unless the command allows it).', (string) $url), $file, $line, ['cause' => 'sandbox', 'blocked' => (string) $url]);
	}
}, 10, 5);

$wp_codebox_check_deprecations = [
	'deprecated_function_run' => static fn($function, $replacement = '', $version = '') => sprintf('%s is deprecated since WordPress %s%s.', $function, $version, $replacement ? "; use $replacement instead" : ''),
	'deprecated_constructor_run' => static fn($class, $version = '', $parent = '') => sprintf('The PHP4-style constructor of %s is deprecated since WordPress %s; use __construct() instead.', $class, $version),
	'deprecated_class_run' => static fn($class, $replacement = '', $version = '') => sprintf('Class %s is deprecated since WordPress %s%s.', $class, $version, $replacement ? "; use $replacement instead" : ''),
	'deprecated_file_included' => static fn($file, $replacement = '', $version = '', $message = '') => sprintf('File %s is deprecated since WordPress %s%s. %s', $file, $version, $replacement ? "; use $replacement instead" : '', $message),
	'deprecated_argument_run' => static fn($function, $message = '', $version = '') => sprintf('%s was called with an argument that is deprecated since WordPress %s. %s', $function, $version, $message),
	'deprecated_hook_run' => static fn($hook, $replacement = '', $version = '', $message = '') => sprintf('Hook %s is deprecated since WordPress %s%s. %s', $hook, $version, $replacement ? "; use $replacement instead" : '', $message),
];
foreach ($wp_codebox_check_deprecations as $hook => $describe) {
	add_action($hook, static function (...$args) use ($describe) {
		[$file, $line] = wp_codebox_check_caller(['_deprecated_function', '_deprecated_constructor', '_deprecated_class', '_deprecated_file', '_deprecated_argument', '_deprecated_hook', 'apply_filters_deprecated', 'do_action_deprecated']);
		wp_codebox_check_record('deprecated', trim(wp_strip_all_tags($describe(...$args))), $file, $line);
	}, 10, 4);
}
add_action('doing_it_wrong_run', static function ($function, $message = '', $version = '') {
	[$file, $line] = wp_codebox_check_caller(['_doing_it_wrong']);
	wp_codebox_check_record('doing-it-wrong', trim(wp_strip_all_tags(sprintf('%s was called incorrectly. %s (since WordPress %s)', $function, $message, $version))), $file, $line);
}, 10, 3);

/**
 * The SQLite integration's last_error is an HTML report (query log, backtrace); the driver's own
 * message sits in its error_message block. Plain messages pass through with tags stripped.
 */
function wp_codebox_check_db_message(string $error): string {
	if (preg_match('/class="error_message"[^>]*>(.*?)<\/div>/s', $error, $m)) {
		$error = $m[1];
	}
	return trim(preg_replace('/\s+/', ' ', html_entity_decode(strip_tags($error), ENT_QUOTES)));
}

/**
 * Records $wpdb's last error once, with the plugin call site of the query that failed. wpdb has
 * no hook after a query, so this runs before the next query and at shutdown; the call site is
 * remembered when each query starts.
 */
function wp_codebox_check_flush_db_error(?array $next_caller = null): void {
	static $last = null;
	static $caller = ['', 0];
	global $wpdb;
	if (isset($wpdb) && is_object($wpdb) && !empty($wpdb->last_error)) {
		$key = $wpdb->last_error . "\0" . $wpdb->last_query;
		if ($key !== $last) {
			$last = $key;
			wp_codebox_check_record('db-error', wp_codebox_check_db_message((string) $wpdb->last_error), $caller[0], $caller[1], ['query' => (string) $wpdb->last_query]);
		}
	}
	if ($next_caller !== null) {
		$caller = $next_caller;
	}
}
add_filter('query', static function ($query) {
	$caller = wp_codebox_check_caller([]);
	wp_codebox_check_flush_db_error($caller);
	if (is_string($query) && $caller[0] !== '' && preg_match('/^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?([A-Za-z0-9_$]+)/i', $query, $m)) {
		wp_codebox_check_append('origins', ['kind' => 'table', 'name' => $m[1], 'file' => $caller[0], 'line' => $caller[1]]);
	}
	return $query;
}, PHP_INT_MAX);
add_action('added_option', static function ($name) {
	[$file, $line] = wp_codebox_check_caller([]);
	if ($file !== '') {
		wp_codebox_check_append('origins', ['kind' => 'option', 'name' => (string) $name, 'file' => $file, 'line' => $line]);
	}
});

// Coverage: which of the plugin's callbacks ran. A hook callback counts as run when its hook
// fired while it was registered; shortcodes, REST handlers and blocks are seen as they render.
// WordPress 6.1+ counts every action and filter it fires ($wp_actions, $wp_filters): the hooks
// fired since now are those whose count grew. An 'all' hook would do the same at the cost of a call
// on every filter WordPress applies (gettext alone runs thousands of times a page), so it is only
// the fallback for older WordPress.
$GLOBALS['wp_codebox_check_fired'] = [];
$GLOBALS['wp_codebox_check_ran'] = [];
$GLOBALS['wp_codebox_check_counts'] = isset($GLOBALS['wp_filters']) || function_exists('did_filter')
	? [(array) ($GLOBALS['wp_actions'] ?? []), (array) ($GLOBALS['wp_filters'] ?? [])]
	: null;
if ($GLOBALS['wp_codebox_check_counts'] === null) {
	add_action('all', static function ($hook) {
		$GLOBALS['wp_codebox_check_fired'][$hook] = true;
	});
}

/** The hooks fired since the recorder loaded. */
function wp_codebox_check_fired_hooks(): array {
	if ($GLOBALS['wp_codebox_check_counts'] === null) {
		return array_keys($GLOBALS['wp_codebox_check_fired']);
	}
	$fired = [];
	foreach ([(array) ($GLOBALS['wp_actions'] ?? []), (array) ($GLOBALS['wp_filters'] ?? [])] as $i => $counts) {
		$before = $GLOBALS['wp_codebox_check_counts'][$i];
		foreach ($counts as $hook => $count) {
			if ($count > ($before[$hook] ?? 0)) {
				$fired[$hook] = true;
			}
		}
	}
	return array_keys($fired);
}

/** True once a file of the checked plugin was loaded in this request: before that, none of its callbacks can be registered. */
function wp_codebox_check_plugin_loaded(): bool {
	foreach (get_included_files() as $file) {
		if (wp_codebox_check_is_plugin_file($file)) {
			return true;
		}
	}
	return false;
}
add_filter('do_shortcode_tag', static function ($output, $tag) {
	$GLOBALS['wp_codebox_check_ran']['shortcode:' . $tag] = true;
	return $output;
}, PHP_INT_MAX, 2);
// Applied once the permission callback allowed the request, right before the route's callback.
add_filter('rest_dispatch_request', static function ($result, $request = null, $route = '', $handler = []) {
	$where = wp_codebox_check_where($handler['callback'] ?? null);
	if ($result === null && $where !== null) {
		$GLOBALS['wp_codebox_check_ran']['rest:' . $where['file'] . ':' . $where['line']] = true;
	}
	return $result;
}, PHP_INT_MAX, 4);
add_filter('render_block', static function ($content, $block) {
	if (!empty($block['blockName'])) {
		$GLOBALS['wp_codebox_check_ran']['block:' . $block['blockName']] = true;
	}
	return $content;
}, PHP_INT_MAX, 2);

register_shutdown_function(static function () {
	$fired = function_exists('wp_codebox_check_plugin_callbacks') && wp_codebox_check_plugin_loaded() ? wp_codebox_check_fired_hooks() : [];
	if ($fired !== []) {
		$ran = array_keys($GLOBALS['wp_codebox_check_ran']);
		foreach (wp_codebox_check_plugin_callbacks($fired) as $c) {
			$ran[] = 'hook:' . $c['hook'] . '@' . $c['file'] . ':' . $c['line'];
		}
		if ($ran !== []) {
			wp_codebox_check_append('coverage', ['ran' => $ran]);
		}
	}
	wp_codebox_check_flush_db_error();
	$error = error_get_last();
	if ($error !== null && ($error['type'] & WP_CODEBOX_CHECK_FATAL)) {
		wp_codebox_check_record('fatal', (string) $error['message'], (string) $error['file'], (int) $error['line']);
	}
});
