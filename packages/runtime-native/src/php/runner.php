<?php
/**
 * Runs one `wordpress.run-php` request of a native sandbox: records a fatal error's message, file
 * and line, loads WordPress (unless bootstrap is none), switches user and includes the caller's file.
 * The request (`{file, bootstrap, user}`) comes from the server: inherited as $wp_codebox_job by a
 * child forked for the run, on the socket ("go <request>") for a preloaded one.
 *
 * $wp_codebox_go is this child's end of a socket to the server. Preloaded (server.php set
 * $wp_codebox_preloading): WordPress is loaded before the request arrives, holding what loading
 * printed; on "go" the child checks that no file it loaded (nor a folder holding one, nor the
 * plugin and theme folders) changed since, of those that can (wp_codebox_may_change()), and that
 * no write reached the database since it began reading it (MariaDB's write counters, see
 * wp_codebox_db_writes()), says "run" and runs the request as a fresh child would. Otherwise it
 * says "stale" and dies unseen, and the server runs the request in a fresh child. The counters are
 * read as WordPress's connection opens (wp-content/db.php calls wp_codebox_db_connected()); with
 * another db.php, a child forked after the last run ended is trusted as before (the host drops it
 * when a page it served, WP-CLI or reset() may have written). A child forked while another run
 * went ($wp_codebox_pipelined) loads on a read-only connection and dies unless nothing but reads
 * was under way as it connected.
 *
 * A run whose file returned, with no fatal error and no destructor outside WordPress's own code
 * left to run, ends by flushing its output, saying "exit0 <its pid>" and killing itself: freeing
 * WordPress's memory and PHP's module shutdown cost more than the run itself, and nothing can see
 * them. The server ends the run on those words, without waiting for the kernel to free the memory.
 * A preloaded child adds " clean" when it sent nothing that may write to the database since its
 * run started (wp_codebox_statements_that_may_write()): the children the server preloaded beside
 * it are kept only then.
 */
register_shutdown_function(static function () {
	$e = error_get_last();
	// A child that dies loading WordPress before its run is no run's: the fresh child that runs the
	// request instead meets the same error, as the run's (one loading beside a run must not be
	// taken for that run's).
	if ($e !== null && ($e['type'] & (E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR)) && empty($GLOBALS['wp_codebox_holding'])) {
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
	$before = wp_codebox_run_writes();
	$clean = $before !== null && $before[0] === posix_getpid() && $before[1] >= 0 && $before[1] === wp_codebox_statements_that_may_write() ? ' clean' : '';
	// With its pid: a process the run forked inherits this socket and this shutdown function.
	fwrite(wp_codebox_channel(), 'exit0 ' . posix_getpid() . $clean . "\n");
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

/**
 * MariaDB's counters of statements that change data or may (INSERT, UPDATE, DELETE, REPLACE, LOAD
 * DATA, counted as they start, refused ones included; transactions begun and committed; table
 * locks; schema changes) and of rows written, updated and deleted, summed: globally (every
 * connection of the sandbox's server, ended ones included) and for `$dbh`'s own connection; and
 * InnoDB's log sequence number, which moves with every change InnoDB logs, a commit included (a
 * transaction committed by `SET autocommit=1` or `ANALYZE TABLE` moves no counter). Reads
 * (temporary tables of a SELECT included) leave them alone.
 * @param mixed $dbh WordPress's connection ($wpdb->dbh).
 * @param string $first a statement to run first, in the same round trip (its failure is null too).
 * @return array{0:int,1:int,2:int}|null [global, this connection's, log sequence number]; null when
 *   they cannot be read.
 */
function wp_codebox_db_writes($dbh, string $first = '') {
	if (!($dbh instanceof mysqli)) {
		return null;
	}
	$names = "Variable_name IN ('Innodb_lsn_current','Handler_write','Handler_update','Handler_delete','Com_insert','Com_insert_select','Com_update','Com_update_multi','Com_delete','Com_delete_multi','Com_replace','Com_replace_select','Com_load','Com_begin','Com_commit','Com_xa_commit','Com_lock_tables','Com_truncate','Com_create_table','Com_alter_table','Com_drop_table','Com_rename_table','Com_create_index','Com_drop_index','Com_create_db','Com_drop_db','Com_alter_db','Com_create_view','Com_drop_view')";
	$sums = array();
	try {
		if (!mysqli_multi_query($dbh, ($first !== '' ? "$first; " : '') . "SHOW GLOBAL STATUS WHERE $names; SHOW SESSION STATUS WHERE $names")) {
			return null;
		}
		$lsn = null;
		do {
			$result = mysqli_store_result($dbh);
			if ($result instanceof mysqli_result) {
				$sum = 0;
				foreach ($result->fetch_all() as $row) {
					if ($row[0] === 'Innodb_lsn_current') {
						$lsn ??= (int) $row[1];
					} else {
						$sum += (int) $row[1];
					}
				}
				$sums[] = $sum;
				$result->free();
			}
		} while (mysqli_more_results($dbh) && mysqli_next_result($dbh));
	} catch (Throwable $e) {
		return null;
	}
	if (mysqli_errno($dbh) !== 0) {
		return null;
	}
	return count($sums) === 2 && $lsn !== null ? array($sums[0], $sums[1], $lsn) : null;
}

/**
 * The write counters as a preloaded child's connection was opened, before WordPress read anything
 * (`quiet`: no other connection of the sandbox was running anything but a read then, so no write
 * counted before was still to be committed).
 * `sent`: wp_codebox_statements_that_may_write() then.
 * @param array{global:int, session:int, lsn:int, quiet:bool, sent:int}|null $set
 * @return array{global:int, session:int, lsn:int, quiet:bool, sent:int}|null
 */
function wp_codebox_db_baseline($set = null) {
	static $baseline = null;
	if ($set !== null) {
		$baseline = $set;
	}
	return $baseline;
}

/**
 * How many statements this process sent to MySQL servers, through any of its connections (PHP's
 * mysqlnd counts them in the process), that may have changed data: statements without a result set
 * (INSERT, UPDATE, DELETE, SET, BEGIN, COMMIT, DDL), rows reported affected, prepared statements
 * run. Costs no query. -1 when PHP cannot count them.
 */
function wp_codebox_statements_that_may_write(): int {
	if (!function_exists('mysqli_get_client_stats')) {
		return -1;
	}
	$stats = mysqli_get_client_stats();
	return (int) ($stats['non_result_set_queries'] ?? 0) + (int) ($stats['rows_affected_normal'] ?? 0) + (int) ($stats['rows_affected_ps'] ?? 0) + (int) ($stats['com_stmt_execute'] ?? 0);
}

/**
 * This process's pid and `wp_codebox_statements_that_may_write()` when its run started (a
 * preloaded child's), for its " clean" at exit (a process the run forks inherits it, with the
 * wrong pid).
 * @param array{0:int,1:int}|null $set
 * @return array{0:int,1:int}|null
 */
function wp_codebox_run_writes($set = null) {
	static $writes = null;
	if ($set !== null) {
		$writes = $set;
	}
	return $writes;
}

/**
 * Where wp-content/db.php records a database error of this process: the run's file, or while
 * WordPress is loaded before its run, a file of this child's own, added to the run's when the run
 * starts (a child that never runs leaves none: the server removes it).
 * @param bool|null $holding set while loading before the run
 */
function wp_codebox_db_errors_file($holding = null): string {
	static $held = false;
	if ($holding !== null) {
		$held = $holding;
	}
	return $held ? '/internal/wp-codebox/db-errors-preload-' . posix_getpid() . '.jsonl' : '/internal/wp-codebox/db-errors.jsonl';
}

wp_codebox_channel($wp_codebox_go);
unset($wp_codebox_go);
if ($wp_codebox_preloading) {
	$wp_codebox_holding = true;
	wp_codebox_db_errors_file(true);
	// Whole seconds: a file changed in the second before loading began may have been read half old.
	$wp_codebox_since = (int) floor(microtime(true)) - 1;
	$wp_codebox_log = '/tmp/wp-codebox-preload-' . posix_getpid() . '.log';
	// Whatever a run left at this child's paths (a FIFO would block it) goes first.
	wp_codebox_remove($wp_codebox_log);
	wp_codebox_remove(wp_codebox_db_errors_file());
	ini_set('error_log', $wp_codebox_log);
	// WP-Cron belongs to the command this child will run: loading WordPress before it comes must not
	// spawn it (no jobs look due until then; the run spawns it as a page load would).
	$GLOBALS['wp_filter']['pre_get_ready_cron_jobs'][10][] = array('function' => 'wp_codebox_no_cron_yet', 'accepted_args' => 1);
	function wp_codebox_no_cron_yet() {
		return array();
	}
	/** Called by wp-content/db.php once WordPress's connection is open, before its first query. */
	function wp_codebox_db_connected($wpdb) {
		// Loading beside a run must not change the database under it: a write WordPress tries is
		// refused (and counted, see below) until the child's own run starts.
		$writes = wp_codebox_db_writes($wpdb->dbh ?? null, empty($GLOBALS['wp_codebox_pipelined']) ? '' : 'SET SESSION TRANSACTION READ ONLY');
		if ($writes === null) {
			return;
		}
		// Read after the counters: a write counted before them is committed by now unless its
		// connection is still running something other than a read (a transaction it holds open is
		// seen by the log sequence number when it commits).
		try {
			$busy = mysqli_query($wpdb->dbh, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Sleep' AND (INFO IS NULL OR INFO NOT REGEXP '^[[:space:]]*(SELECT|SHOW)[[:space:]]')");
			$quiet = $busy instanceof mysqli_result && (int) $busy->fetch_row()[0] === 0;
		} catch (Throwable $e) {
			$quiet = false;
		}
		wp_codebox_db_baseline(array('global' => $writes[0], 'session' => $writes[1], 'lsn' => $writes[2], 'quiet' => $quiet, 'sent' => wp_codebox_statements_that_may_write()));
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
	if ($wp_codebox_pipelined && (wp_codebox_db_baseline() === null || !wp_codebox_db_baseline()['quiet'])) {
		// What it read may miss a write the run beside it made: the server forks another child
		// once that run ended.
		posix_kill(posix_getpid(), SIGKILL);
	}
	$wp_codebox_watch = get_included_files();
	foreach ($wp_codebox_watch as $wp_codebox_path) {
		$wp_codebox_watch[] = dirname($wp_codebox_path);
	}
	array_push($wp_codebox_watch, WP_PLUGIN_DIR, WPMU_PLUGIN_DIR, get_theme_root(), WP_CONTENT_DIR);
	// Not the sandbox's root: bubblewrap made it when this process started (its mtime would make
	// every preload of the next second or two look stale), and it holds only mount points (the
	// one file included from it, /wp-config.php, is a bind, watched itself).
	$wp_codebox_watch = array_values(array_filter(array_diff(array_unique($wp_codebox_watch), array('/')), 'wp_codebox_may_change'));
	// The request may have come while WordPress loaded (a command right after the last one): then
	// one look at the files is enough, as anything changed since loading began is recent.
	stream_set_blocking(wp_codebox_channel(), false);
	$wp_codebox_asked = (string) fgets(wp_codebox_channel());
	stream_set_blocking(wp_codebox_channel(), true);
	$wp_codebox_early = substr($wp_codebox_asked, -1) === "\n";
	$wp_codebox_stamps = wp_codebox_stamps($wp_codebox_watch);
	$wp_codebox_recent = false;
	foreach ($wp_codebox_stamps as $wp_codebox_stamp) {
		$wp_codebox_recent = $wp_codebox_recent || ($wp_codebox_stamp !== null && $wp_codebox_stamp[0] >= $wp_codebox_since);
	}
	if (!$wp_codebox_early) {
		// The rest of "go <request>\n" (all of it, unless part had come).
		$wp_codebox_rest = fgets(wp_codebox_channel());
		if ($wp_codebox_rest === false) {
			posix_kill(posix_getpid(), SIGKILL);
		}
		$wp_codebox_asked .= $wp_codebox_rest;
	}
	// No write may have reached the database since this child began reading it: the global count's
	// growth is this connection's own, and the log sequence number moved only if this connection
	// wrote (a commit no counter sees moves it too), with nothing but reads under way as it
	// connected. Forked while a run went, its own writes were refused: that load was not the site's.
	$wp_codebox_db_stale = false;
	$wp_codebox_baseline = wp_codebox_db_baseline();
	if ($wp_codebox_baseline !== null) {
		$wp_codebox_sent = wp_codebox_statements_that_may_write();
		$wp_codebox_writes = wp_codebox_db_writes($GLOBALS['wpdb']->dbh ?? null, $wp_codebox_pipelined ? 'SET SESSION TRANSACTION READ WRITE' : '');
		$wp_codebox_own = $wp_codebox_writes === null ? 0 : $wp_codebox_writes[1] - $wp_codebox_baseline['session'];
		$wp_codebox_db_stale = $wp_codebox_writes === null || !$wp_codebox_baseline['quiet'] || $wp_codebox_writes[0] - $wp_codebox_baseline['global'] !== $wp_codebox_own || ($wp_codebox_own === 0 && $wp_codebox_writes[2] !== $wp_codebox_baseline['lsn']);
		if ($wp_codebox_pipelined && ($wp_codebox_own !== 0 || $wp_codebox_sent !== $wp_codebox_baseline['sent'])) {
			// The server stops loading WordPress beside runs for a while.
			fwrite(wp_codebox_channel(), "load-writes\n");
			$wp_codebox_db_stale = true;
		}
	}
	wp_codebox_run_writes(array(posix_getpid(), wp_codebox_statements_that_may_write()));
	if ($wp_codebox_db_stale || $wp_codebox_recent || (!$wp_codebox_early && wp_codebox_stamps($wp_codebox_watch) !== $wp_codebox_stamps)) {
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
	$wp_codebox_held_errors = wp_codebox_db_errors_file();
	wp_codebox_db_errors_file(false);
	if (is_file($wp_codebox_held_errors)) {
		@file_put_contents(wp_codebox_db_errors_file(), (string) file_get_contents($wp_codebox_held_errors), FILE_APPEND);
		@unlink($wp_codebox_held_errors);
	}
	if ($wp_codebox_logged !== '') {
		// As PHP's command line logs to stderr: without the date a log file's lines carry.
		fwrite(STDERR, preg_replace('/^\[[^\]]*\] /m', '', $wp_codebox_logged));
	}
	ob_end_flush();
	unset($wp_codebox_holding, $wp_codebox_since, $wp_codebox_log, $wp_codebox_watch, $wp_codebox_path, $wp_codebox_stamps, $wp_codebox_stamp, $wp_codebox_recent, $wp_codebox_logged, $wp_codebox_early, $wp_codebox_writes, $wp_codebox_baseline, $wp_codebox_db_stale, $wp_codebox_pipelined, $wp_codebox_held_errors, $wp_codebox_sent, $wp_codebox_own);
	$wp_codebox_request = json_decode(substr($wp_codebox_asked, 3), true);
	unset($wp_codebox_asked, $wp_codebox_rest, $wp_codebox_job);
} else {
	unset($wp_codebox_preloading, $wp_codebox_pipelined);
	$wp_codebox_request = json_decode((string) $wp_codebox_job, true);
	unset($wp_codebox_job);
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
