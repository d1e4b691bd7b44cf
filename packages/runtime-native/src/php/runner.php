<?php
/**
 * Runs one `wordpress.run-php` request of a native sandbox: records a fatal error's message, file
 * and line, loads WordPress (unless bootstrap is none), switches user and includes the caller's file.
 * The request comes from request.json beside the internal files.
 *
 * Preloaded (server.php set $wp_codebox_go, its end of a socket to the server): WordPress is loaded
 * before the request arrives, holding what loading printed; on "go" the child checks that no file
 * it loaded (nor a folder holding one, nor the plugin and theme folders) changed since, says "run"
 * and runs the request as a fresh child would. A changed file: it says "stale" and dies unseen, and
 * the server runs the request in a fresh child.
 */
register_shutdown_function(static function () {
	$e = error_get_last();
	if ($e !== null && ($e['type'] & (E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR))) {
		@file_put_contents('/internal/wp-codebox/last-error.json', json_encode($e));
	}
	// A preloaded child that dies before its request (a fatal while loading) prints nothing: the
	// fresh child the server starts instead prints it as the run's.
	if (!empty($GLOBALS['wp_codebox_holding'])) {
		while (ob_get_level() > 0) {
			ob_end_clean();
		}
	}
});

/**
 * What identifies a loaded file's version: [mtime, size, inode] per path (null: gone).
 * @param string[] $paths
 * @return array<string, array{0:int,1:int,2:int}|null>
 */
function wp_codebox_stamps(array $paths): array {
	clearstatcache();
	$stamps = array();
	foreach ($paths as $path) {
		$s = @stat($path);
		$stamps[$path] = $s ? array($s['mtime'], $s['size'], $s['ino']) : null;
	}
	return $stamps;
}

if (isset($wp_codebox_go)) {
	$wp_codebox_holding = true;
	// Whole seconds: a file changed in the second before loading began may have been read half old.
	$wp_codebox_since = (int) floor(microtime(true)) - 1;
	$wp_codebox_log = '/tmp/wp-codebox-preload.log';
	ini_set('error_log', $wp_codebox_log);
	ob_start();
	require_once '/wordpress/wp-load.php';
	require_once ABSPATH . 'wp-admin/includes/admin.php';
	$wp_codebox_watch = get_included_files();
	foreach ($wp_codebox_watch as $wp_codebox_path) {
		$wp_codebox_watch[] = dirname($wp_codebox_path);
	}
	array_push($wp_codebox_watch, WP_PLUGIN_DIR, WPMU_PLUGIN_DIR, get_theme_root(), WP_CONTENT_DIR);
	$wp_codebox_watch = array_values(array_unique($wp_codebox_watch));
	$wp_codebox_stamps = wp_codebox_stamps($wp_codebox_watch);
	$wp_codebox_recent = false;
	foreach ($wp_codebox_stamps as $wp_codebox_stamp) {
		$wp_codebox_recent = $wp_codebox_recent || ($wp_codebox_stamp !== null && $wp_codebox_stamp[0] >= $wp_codebox_since);
	}
	if (fgets($wp_codebox_go) === false) {
		posix_kill(posix_getpid(), SIGKILL);
	}
	if ($wp_codebox_recent || wp_codebox_stamps($wp_codebox_watch) !== $wp_codebox_stamps) {
		fwrite($wp_codebox_go, "stale\n");
		// Not exit(): WordPress's shutdown hooks must not run for a request this child never ran.
		posix_kill(posix_getpid(), SIGKILL);
	}
	fwrite($wp_codebox_go, "run\n");
	fclose($wp_codebox_go);
	$wp_codebox_holding = false;
	// The request starts now, as far as WordPress's timers can tell.
	$_SERVER['REQUEST_TIME_FLOAT'] = microtime(true);
	$_SERVER['REQUEST_TIME'] = (int) $_SERVER['REQUEST_TIME_FLOAT'];
	$timestart = $_SERVER['REQUEST_TIME_FLOAT'];
	ini_restore('error_log');
	$wp_codebox_logged = (string) @file_get_contents($wp_codebox_log);
	@unlink($wp_codebox_log);
	if ($wp_codebox_logged !== '') {
		// As PHP's command line logs to stderr: without the date a log file's lines carry.
		fwrite(STDERR, preg_replace('/^\[[^\]]*\] /m', '', $wp_codebox_logged));
	}
	ob_end_flush();
	unset($wp_codebox_go, $wp_codebox_holding, $wp_codebox_since, $wp_codebox_log, $wp_codebox_watch, $wp_codebox_path, $wp_codebox_stamps, $wp_codebox_stamp, $wp_codebox_recent, $wp_codebox_logged);
	$wp_codebox_request = json_decode((string) file_get_contents('/internal/wp-codebox/request.json'), true);
} else {
	$wp_codebox_request = json_decode((string) file_get_contents('/internal/wp-codebox/request.json'), true);
	if ($wp_codebox_request['bootstrap'] === 'wordpress') {
		require_once '/wordpress/wp-load.php';
		require_once ABSPATH . 'wp-admin/includes/admin.php';
	}
}
if ($wp_codebox_request['bootstrap'] === 'wordpress') {
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
