<?php
/**
 * Runs one `wordpress.run-php` request of a native sandbox: records a fatal error's message, file
 * and line, loads WordPress (unless bootstrap is none), switches user and includes the caller's file.
 * The request comes from request.json beside the internal files.
 *
 * $wp_codebox_go is this child's end of a socket to the server. Preloaded (server.php set
 * $wp_codebox_preloading): WordPress is loaded before the request arrives, holding what loading
 * printed; on "go" the child checks that no file it loaded (nor a folder holding one, nor the
 * plugin and theme folders) changed since, says "run" and runs the request as a fresh child would.
 * A changed file: it says "stale" and dies unseen, and the server runs the request in a fresh child.
 *
 * A run whose file returned, with no fatal error and no destructor outside WordPress's own code
 * left to run, ends by flushing its output, saying "exit0 <its pid>" and killing itself: freeing
 * WordPress's memory and PHP's module shutdown cost more than the run itself, and nothing can see
 * them. The server ends the run on those words, without waiting for the kernel to free the memory.
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
 * This child's socket to the server (set once, from $wp_codebox_go, before any caller's code runs).
 * @param resource|null $set
 * @return resource
 */
function wp_codebox_channel($set = null) {
	static $channel;
	if ($set !== null) {
		$channel = $set;
	}
	return $channel;
}

/**
 * The last shutdown function of a run whose file returned: when nothing is left that anyone could
 * see (no fatal error, no destructor outside WordPress's own wp-includes and wp-admin), flushes the
 * output, tells the server the exit code is 0 and kills this process, skipping PHP's teardown.
 */
function wp_codebox_quick_exit(): void {
	$e = error_get_last();
	if ($e !== null && ($e['type'] & (E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR))) {
		return;
	}
	foreach (get_declared_classes() as $class) {
		if (!method_exists($class, '__destruct')) {
			continue;
		}
		$method = new ReflectionMethod($class, '__destruct');
		$file = (string) $method->getFileName();
		if (!$method->isInternal() && strpos($file, '/wordpress/wp-includes/') !== 0 && strpos($file, '/wordpress/wp-admin/') !== 0) {
			return;
		}
	}
	while (ob_get_level() > 0) {
		ob_end_flush();
	}
	flush();
	// With its pid: a process the run forked inherits this socket and this shutdown function.
	fwrite(wp_codebox_channel(), 'exit0 ' . posix_getpid() . "\n");
	posix_kill(posix_getpid(), SIGKILL);
}

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

wp_codebox_channel($wp_codebox_go);
unset($wp_codebox_go);
if ($wp_codebox_preloading) {
	$wp_codebox_holding = true;
	// Whole seconds: a file changed in the second before loading began may have been read half old.
	$wp_codebox_since = (int) floor(microtime(true)) - 1;
	$wp_codebox_log = '/tmp/wp-codebox-preload.log';
	ini_set('error_log', $wp_codebox_log);
	// WP-Cron belongs to the command this child will run: loading WordPress before it comes must not
	// spawn it (no jobs look due until then; the run spawns it as a page load would).
	$GLOBALS['wp_filter']['pre_get_ready_cron_jobs'][10][] = array('function' => 'wp_codebox_no_cron_yet', 'accepted_args' => 1);
	function wp_codebox_no_cron_yet() {
		return array();
	}
	ob_start();
	require_once '/wordpress/wp-load.php';
	require_once ABSPATH . 'wp-admin/includes/admin.php';
	// The administrator (the default actor), looked up and cached now: the database is as the
	// previous run left it until this child runs.
	$wp_codebox_admins = get_users(array('role' => 'administrator', 'orderby' => 'ID', 'order' => 'ASC', 'number' => 1, 'fields' => 'ID'));
	$wp_codebox_admin = $wp_codebox_admins ? (int) $wp_codebox_admins[0] : 0;
	if ($wp_codebox_admin > 0) {
		get_userdata($wp_codebox_admin);
	}
	$wp_codebox_watch = get_included_files();
	foreach ($wp_codebox_watch as $wp_codebox_path) {
		$wp_codebox_watch[] = dirname($wp_codebox_path);
	}
	array_push($wp_codebox_watch, WP_PLUGIN_DIR, WPMU_PLUGIN_DIR, get_theme_root(), WP_CONTENT_DIR);
	// Not the sandbox's root: bubblewrap made it when this process started (its mtime would make
	// every preload of the next second or two look stale), and it holds only mount points (the
	// one file included from it, /wp-config.php, is a bind, watched itself).
	$wp_codebox_watch = array_values(array_diff(array_unique($wp_codebox_watch), array('/')));
	// The request may have come while WordPress loaded (a command right after the last one): then
	// one look at the files is enough, as anything changed since loading began is recent.
	stream_set_blocking(wp_codebox_channel(), false);
	$wp_codebox_asked = fgets(wp_codebox_channel());
	stream_set_blocking(wp_codebox_channel(), true);
	$wp_codebox_early = is_string($wp_codebox_asked) && substr($wp_codebox_asked, -1) === "\n";
	$wp_codebox_stamps = wp_codebox_stamps($wp_codebox_watch);
	$wp_codebox_recent = false;
	foreach ($wp_codebox_stamps as $wp_codebox_stamp) {
		$wp_codebox_recent = $wp_codebox_recent || ($wp_codebox_stamp !== null && $wp_codebox_stamp[0] >= $wp_codebox_since);
	}
	if (!$wp_codebox_early && fgets(wp_codebox_channel()) === false) {
		posix_kill(posix_getpid(), SIGKILL);
	}
	if ($wp_codebox_recent || (!$wp_codebox_early && wp_codebox_stamps($wp_codebox_watch) !== $wp_codebox_stamps)) {
		fwrite(wp_codebox_channel(), "stale\n");
		// Not exit(): WordPress's shutdown hooks must not run for a request this child never ran.
		posix_kill(posix_getpid(), SIGKILL);
	}
	fwrite(wp_codebox_channel(), "run\n");
	$wp_codebox_holding = false;
	remove_filter('pre_get_ready_cron_jobs', 'wp_codebox_no_cron_yet', 10);
	if (function_exists('_wp_cron')) {
		_wp_cron();
	}
	unset($wp_codebox_preloading);
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
	unset($wp_codebox_holding, $wp_codebox_since, $wp_codebox_log, $wp_codebox_watch, $wp_codebox_path, $wp_codebox_stamps, $wp_codebox_stamp, $wp_codebox_recent, $wp_codebox_logged, $wp_codebox_asked, $wp_codebox_early);
	$wp_codebox_request = json_decode((string) file_get_contents('/internal/wp-codebox/request.json'), true);
} else {
	unset($wp_codebox_preloading);
	$wp_codebox_request = json_decode((string) file_get_contents('/internal/wp-codebox/request.json'), true);
	if ($wp_codebox_request['bootstrap'] === 'wordpress') {
		require_once '/wordpress/wp-load.php';
		require_once ABSPATH . 'wp-admin/includes/admin.php';
	}
}
if ($wp_codebox_request['bootstrap'] === 'wordpress') {
	if ($wp_codebox_request['user'] === 'admin') {
		if (!isset($wp_codebox_admin)) {
			$wp_codebox_admins = get_users(array('role' => 'administrator', 'orderby' => 'ID', 'order' => 'ASC', 'number' => 1, 'fields' => 'ID'));
			$wp_codebox_admin = $wp_codebox_admins ? (int) $wp_codebox_admins[0] : 0;
		}
		wp_set_current_user($wp_codebox_admin);
		unset($wp_codebox_admins, $wp_codebox_admin);
	} else {
		unset($wp_codebox_admins, $wp_codebox_admin);
		// as=user:<id> naming nobody is the caller's mistake, not a run as anonymous (user 0, as=anonymous).
		if ((int) $wp_codebox_request['user'] !== 0 && !get_userdata((int) $wp_codebox_request['user'])) {
			@file_put_contents('/internal/wp-codebox/actor-missing', (string) (int) $wp_codebox_request['user']);
			exit(3);
		}
		wp_set_current_user((int) $wp_codebox_request['user']);
	}
}
$wp_codebox_file = (string) $wp_codebox_request['file'];
unset($wp_codebox_request);
// Registered from a shutdown function, so it runs after every other one (one calling exit() stops it).
register_shutdown_function(static function () {
	register_shutdown_function('wp_codebox_quick_exit');
});
require $wp_codebox_file;
