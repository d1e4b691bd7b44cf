<?php
/**
 * The warm PHP process of a native sandbox. Reads one JSON request per line on stdin
 * (`{"marker", "bootstrap", "next"}`), runs it in a forked child (runner.php), so every run starts from a
 * clean process while OPcache's shared memory (WordPress compiled once) stays warm here; then kills
 * whatever the run left behind in the sandbox and ends the run's output on stdout and stderr with
 * the request's marker (and, on stdout, the exit code).
 *
 * After a run whose `next` (by default its bootstrap) is "wordpress", the next child is forked at
 * once and loads WordPress before its request arrives (a "preloaded" child, see runner.php): a run
 * then costs only the caller's code. When a request comes right after the last run ended (commands
 * back to back), up to WP_CODEBOX_PRELOADS more children start loading WordPress for the runs after
 * it while it runs, on the other core. Those overlap a run, so they are kept only while every run
 * ends "clean" (it sent nothing that may write to the database and left no process behind), and
 * each checks MariaDB's write counters before it runs (runner.php). A preloaded child that finds a
 * file it loaded changed since, or the database written, (or that died loading) is replaced by a
 * fresh child for that run. A child forked beside a run is also dropped once any file of wp-content
 * or the mounts changed after its fork (fs-watch.php: it may have read a file no check looks at
 * again); without inotify, no child is forked beside a run. After a load that wrote to the
 * database ("load-writes"), the next WP_CODEBOX_LOAD_WRITES_PAUSE runs get no children beside them.
 *
 * A line `{"kill":true}` while a run is going kills the run's processes (its deadline passed);
 * this process and OPcache live on.
 *
 * The exit code in the marker is followed by the TCP connections made in this process's network
 * namespace during the run (`:accepted:attempted`, from the kernel's counters): the connections the
 * relays accepted, each on its way to the host, and the connects PHP started. The host waits for
 * that many relay connections before it calls the run's requests settled; a run that made none has
 * nothing to wait for.
 */
pcntl_async_signals(true);
[$wp_codebox_wake_r, $wp_codebox_wake_w] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
stream_set_blocking($wp_codebox_wake_r, false);
stream_set_blocking($wp_codebox_wake_w, false);
// A child's exit wakes the wait below at once (a byte on a pipe select() watches, so no wake-up is lost).
pcntl_signal(SIGCHLD, static function () use ($wp_codebox_wake_w) {
	@fwrite($wp_codebox_wake_w, 'c');
});
// PHP's realpath cache is per process: filled here once, every child inherits it instead of
// resolving each of WordPress's paths again (a few thousand lstat calls per load).
// At most 20000 entries: a mounted plugin folder may hold a whole dependency tree.
$wp_codebox_budget = 20000;
$wp_codebox_walk = static function ($dir) use (&$wp_codebox_walk, &$wp_codebox_budget) {
	foreach (@scandir($dir) ?: array() as $name) {
		if (--$wp_codebox_budget < 0) {
			return;
		}
		if ($name === '.' || $name === '..') {
			continue;
		}
		$path = $dir . '/' . $name;
		if (is_dir($path)) {
			if ($name !== 'uploads' && $name !== 'node_modules' && $name !== '.git') {
				$wp_codebox_walk($path);
			}
		} elseif (substr($name, -4) === '.php') {
			realpath($path);
		}
	}
};
$wp_codebox_walk('/wordpress');
unset($wp_codebox_walk, $wp_codebox_budget);

/**
 * The caller's mount targets (sandbox paths), from mount-targets.json, read once as this process
 * starts. @return string[]|null null when the file is missing or not a list.
 */
function wp_codebox_mount_targets() {
	static $targets = false;
	if ($targets === false) {
		$listed = json_decode((string) @file_get_contents('/internal/wp-codebox/mount-targets.json'), true);
		$targets = is_array($listed) ? array_values(array_filter($listed, 'is_string')) : null;
	}
	return $targets;
}

/**
 * Whether a file or folder of the sandbox can change while it lives: everything but the WordPress
 * tree at /wordpress, which is bound read-only from the cache, less wp-content and the caller's
 * mounts inside it (their targets are in mount-targets.json, read once as this process starts).
 */
function wp_codebox_may_change(string $path): bool {
	$targets = wp_codebox_mount_targets();
	if ($targets === null || ($path !== '/wordpress' && strncmp($path, '/wordpress/', 11) !== 0) || $path === '/wordpress/wp-content' || strncmp($path, '/wordpress/wp-content/', 22) === 0) {
		return true;
	}
	foreach ($targets as $target) {
		if ($path === $target || strncmp($path, $target . '/', strlen($target) + 1) === 0) {
			return true;
		}
	}
	return false;
}
require __DIR__ . '/fs-watch.php';
wp_codebox_fs_watch_start(wp_codebox_mount_targets() ?? array());
/**
 * TCP connections of this network namespace so far: [accepted by a listener (the relays), connects
 * started]; null when the kernel's counters cannot be read.
 * @return array{0:int,1:int}|null
 */
function wp_codebox_tcp_opens() {
	$lines = @file('/proc/net/snmp', FILE_IGNORE_NEW_LINES);
	$names = null;
	foreach ($lines ?: array() as $line) {
		if (strncmp($line, 'Tcp: ', 5) !== 0) {
			continue;
		}
		if ($names === null) {
			$names = explode(' ', $line);
			continue;
		}
		$row = array_combine($names, explode(' ', $line));
		if (!is_array($row) || !isset($row['PassiveOpens'], $row['ActiveOpens'])) {
			return null;
		}
		return array((int) $row['PassiveOpens'], (int) $row['ActiveOpens']);
	}
	return null;
}
/** How many children may load WordPress beside a run, for the runs after it. */
const WP_CODEBOX_PRELOADS = 2;

/** Runs without children loading beside them after a load that wrote to the database. */
const WP_CODEBOX_LOAD_WRITES_PAUSE = 8;

/** A request that comes this soon after the last run ended is one of commands back to back (s). */
const WP_CODEBOX_BACK_TO_BACK_S = 0.1;

/**
 * Forks a child with a socket to it.
 * @return array{pid:int, go?:resource} pid 0 in the child (go: its end), -1 when fork failed, else
 *   the child's pid (go: this process's end).
 */
function wp_codebox_fork() {
	[$parent, $child] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
	$pid = pcntl_fork();
	if ($pid === 0) {
		fclose($parent);
		return array('pid' => 0, 'go' => $child);
	}
	fclose($child);
	if ($pid < 0) {
		fclose($parent);
		return array('pid' => -1);
	}
	return array('pid' => $pid, 'go' => $parent);
}

/**
 * Removes what a preloaded child held for its run (PHP's messages and the database errors of its
 * loading, see runner.php), when it will not run.
 */
function wp_codebox_forget(int $pid): void {
	@unlink("/tmp/wp-codebox-preload-$pid.log");
	@unlink("/internal/wp-codebox/db-errors-preload-$pid.jsonl");
}

/**
 * Kills the preloaded children.
 * @param array<int, array{pid:int, go:resource}> $children
 */
function wp_codebox_drop(array &$children): void {
	foreach ($children as $child) {
		posix_kill($child['pid'], SIGKILL);
		fclose($child['go']);
		pcntl_waitpid($child['pid'], $status);
		wp_codebox_forget($child['pid']);
	}
	$children = array();
}

/**
 * Kills every process of this PID namespace this process may signal except itself and `$keep`
 * (the preloaded children): what a run started must not outlive it. Scans /proc until a pass
 * finds no process it has not killed yet, so one forked during a pass is caught by the next.
 * @param array<int, true> $keep pids
 * @param int $run the run's child (killed once it said "exit0")
 * @return bool whether it killed another process than `$run`
 */
function wp_codebox_end_run(array $keep, int $run): bool {
	// Killed by an earlier call and maybe not gone yet (the kernel frees a process's memory first).
	static $dying = array();
	$self = posix_getpid();
	$killed = array();
	do {
		$more = false;
		foreach (scandir('/proc') ?: array() as $entry) {
			$pid = (int) $entry;
			if ((string) $pid !== $entry || $pid <= 1 || $pid === $self || isset($keep[$pid])) {
				continue;
			}
			if (!isset($killed[$pid]) && posix_kill($pid, SIGKILL)) {
				$killed[$pid] = true;
				$more = true;
			}
		}
	} while ($more);
	while (pcntl_waitpid(-1, $status, WNOHANG) > 0) {
	}
	$others = array_diff_key($killed, $dying, array($run => true));
	$dying = $killed;
	return $others !== array();
}

/**
 * Before a run: removes what the last run left for the host to read (its fatal error, a missing
 * actor) and writes the run's code file, `code/<name>` of the internal folder, replacing whatever
 * is there (this process is confined like the run: nothing it writes can reach the host).
 * @param mixed $code `{name, source}` from the request, or null.
 */
function wp_codebox_prepare_run($code): void {
	@unlink('/internal/wp-codebox/last-error.json');
	@unlink('/internal/wp-codebox/actor-missing');
	if (!is_array($code) || !is_string($code['name'] ?? null) || !is_string($code['source'] ?? null)) {
		return;
	}
	$name = $code['name'];
	if ($name === '' || $name === '.' || $name === '..' || strpbrk($name, "/\0") !== false) {
		return;
	}
	$dir = '/internal/wp-codebox/code';
	if (is_link($dir) || (file_exists($dir) && !is_dir($dir))) {
		@unlink($dir);
	}
	@mkdir($dir, 0755);
	$path = "$dir/$name";
	// Whatever is there goes first (a link is never written through, a FIFO would block), so a
	// write that fails (a full disk) leaves no file: the run then fails on it by name instead of
	// running the last run's code.
	wp_codebox_remove($path);
	if (@file_put_contents($path, $code['source']) !== strlen($code['source'])) {
		@unlink($path);
	}
}

/** Removes a file, a link or a folder with what it holds. */
function wp_codebox_remove(string $path): void {
	if (is_dir($path) && !is_link($path)) {
		foreach (@scandir($path) ?: array() as $name) {
			if ($name !== '.' && $name !== '..') {
				wp_codebox_remove("$path/$name");
			}
		}
		@rmdir($path);
		return;
	}
	@unlink($path);
}

// Children that loaded WordPress for the runs to come, oldest first: one forked after each
// WordPress run, more forked while a run goes (see the header). The current run's child is $wp_codebox_run.
$wp_codebox_ready = array();
$wp_codebox_run = null;
$wp_codebox_next = '';
$wp_codebox_mode = '';
$wp_codebox_pipelined = false;
$wp_codebox_ended = 0.0;
// Runs left before children load beside a run again, after one said its loading wrote to the
// database (an expired transient deleted, a plugin's option: maybe once, maybe every time).
$wp_codebox_load_writes = 0;
// Counts the times wp_codebox_fs_changed() saw a change: a child forked beside a run keeps the
// count of its fork and is used only while it stays the same.
$wp_codebox_fs_epoch = 0;
while (true) {
	// A preloaded child that died (a fatal while loading) is replaced.
	foreach ($wp_codebox_ready as $wp_codebox_i => $wp_codebox_child) {
		if (pcntl_waitpid($wp_codebox_child['pid'], $wp_codebox_status, WNOHANG) !== 0) {
			fclose($wp_codebox_child['go']);
			wp_codebox_forget($wp_codebox_child['pid']);
			unset($wp_codebox_ready[$wp_codebox_i]);
		}
	}
	$wp_codebox_ready = array_values($wp_codebox_ready);
	if (!$wp_codebox_ready && $wp_codebox_next === 'wordpress') {
		$wp_codebox_child = wp_codebox_fork();
		if ($wp_codebox_child['pid'] === 0) {
			$wp_codebox_mode = 'preload';
			break;
		}
		// No preload when fork fails (the process limit): the run forks its own child.
		if ($wp_codebox_child['pid'] > 0) {
			$wp_codebox_ready[] = $wp_codebox_child;
		}
	}
	$wp_codebox_line = fgets(STDIN);
	if ($wp_codebox_line === false) {
		// A signal (a preloaded child's exit) interrupts the read without ending the input.
		if (!feof(STDIN)) {
			continue;
		}
		posix_kill(-1, SIGKILL);
		exit(0);
	}
	$wp_codebox_request = json_decode($wp_codebox_line, true);
	if (!is_array($wp_codebox_request) || !isset($wp_codebox_request['marker'])) {
		continue; // a kill that came after its run had ended
	}
	$wp_codebox_marker = (string) $wp_codebox_request['marker'];
	$wp_codebox_bootstrap = (string) ($wp_codebox_request['bootstrap'] ?? '');
	$wp_codebox_next = (string) ($wp_codebox_request['next'] ?? $wp_codebox_bootstrap);
	// What the run's child gets: on its socket when preloaded, inherited when forked for the run.
	$wp_codebox_job = json_encode($wp_codebox_request['request'] ?? null);
	wp_codebox_prepare_run($wp_codebox_request['code'] ?? null);
	if ($wp_codebox_bootstrap !== 'wordpress') {
		wp_codebox_drop($wp_codebox_ready);
	}
	if (wp_codebox_fs_changed()) {
		$wp_codebox_fs_epoch++;
	}
	foreach ($wp_codebox_ready as $wp_codebox_i => $wp_codebox_child) {
		// Forked beside a run, it may have read a file (not a script) changed since.
		if (($wp_codebox_child['epoch'] ?? $wp_codebox_fs_epoch) !== $wp_codebox_fs_epoch) {
			$wp_codebox_stale = array($wp_codebox_child);
			wp_codebox_drop($wp_codebox_stale);
			unset($wp_codebox_ready[$wp_codebox_i]);
		}
	}
	$wp_codebox_ready = array_values($wp_codebox_ready);
	$wp_codebox_opens = wp_codebox_tcp_opens();
	$wp_codebox_fresh = !$wp_codebox_ready;
	if (!$wp_codebox_fresh) {
		$wp_codebox_run = array_shift($wp_codebox_ready);
		// A run may have stopped it (SIGSTOP): it would never answer.
		posix_kill($wp_codebox_run['pid'], SIGCONT);
		@fwrite($wp_codebox_run['go'], "go $wp_codebox_job\n");
		// Commands back to back (this one came right after the last ended): the next runs' children
		// load WordPress while this one runs, on the other core. Each is trusted only if no write
		// reached the database since it began reading it (see runner.php). A caller that paused
		// gets its next child after this run, as it would not use it sooner.
		$wp_codebox_load_writes = max(0, $wp_codebox_load_writes - 1);
		while ($wp_codebox_next === 'wordpress' && $wp_codebox_load_writes === 0 && (wp_codebox_fs_watch()['ok'] ?? false) && microtime(true) - $wp_codebox_ended < WP_CODEBOX_BACK_TO_BACK_S && count($wp_codebox_ready) < WP_CODEBOX_PRELOADS) {
			$wp_codebox_child = wp_codebox_fork();
			if ($wp_codebox_child['pid'] === 0) {
				$wp_codebox_mode = 'preload';
				$wp_codebox_pipelined = true;
				break 2;
			}
			if ($wp_codebox_child['pid'] < 0) {
				break;
			}
			$wp_codebox_ready[] = $wp_codebox_child + array('epoch' => $wp_codebox_fs_epoch);
		}
	}
	$wp_codebox_code = 255;
	$wp_codebox_killed = false;
	$wp_codebox_said = '';
	while (true) {
		if ($wp_codebox_fresh) {
			if ($wp_codebox_run !== null) {
				fclose($wp_codebox_run['go']);
				$wp_codebox_run = null;
			}
			$wp_codebox_child = wp_codebox_fork();
			if ($wp_codebox_child['pid'] === 0) {
				$wp_codebox_mode = 'run';
				break 2;
			}
			if ($wp_codebox_child['pid'] < 0) {
				break;
			}
			$wp_codebox_run = $wp_codebox_child;
		}
		$wp_codebox_pid = $wp_codebox_run['pid'];
		// What the child said so far: "run" (a preloaded child, just before it runs the request;
		// without it, it did not run), "stale" and "exit0 <pid>[ clean]" (it ended with code 0, its
		// output written, and is killing itself, skipping the teardown nothing can see; "clean": no
		// write reached the database while it ran; a process the run forked says it with its own
		// pid, which does not count). The run ends on the child's "exit0": tearing down WordPress's
		// memory takes the kernel a few ms no one needs to wait for.
		$wp_codebox_said = '';
		$wp_codebox_talks = true;
		$wp_codebox_exit0 = '/(?:^|\n)exit0 ' . $wp_codebox_pid . '( clean)?\n/';
		stream_set_blocking($wp_codebox_run['go'], false);
		while (true) {
			$wp_codebox_done = pcntl_waitpid($wp_codebox_pid, $wp_codebox_status, WNOHANG);
			if ($wp_codebox_done !== 0) {
				if ($wp_codebox_done === $wp_codebox_pid) {
					$wp_codebox_code = pcntl_wifexited($wp_codebox_status) ? pcntl_wexitstatus($wp_codebox_status) : 128 + pcntl_wtermsig($wp_codebox_status);
				}
				break;
			}
			if (!$wp_codebox_killed && preg_match($wp_codebox_exit0, $wp_codebox_said)) {
				// Reaped later (with what the run left, below, or after the next run).
				posix_kill($wp_codebox_pid, SIGKILL);
				break;
			}
			$wp_codebox_read = $wp_codebox_talks ? array(STDIN, $wp_codebox_wake_r, $wp_codebox_run['go']) : array(STDIN, $wp_codebox_wake_r);
			$wp_codebox_none = null;
			$wp_codebox_none2 = null;
			if (@stream_select($wp_codebox_read, $wp_codebox_none, $wp_codebox_none2, 5) > 0) {
				if (in_array($wp_codebox_wake_r, $wp_codebox_read, true)) {
					fread($wp_codebox_wake_r, 4096);
				}
				if (in_array($wp_codebox_run['go'], $wp_codebox_read, true)) {
					$wp_codebox_heard = fread($wp_codebox_run['go'], 64);
					// Nothing readable means the child closed its end (it died): its exit is awaited.
					$wp_codebox_talks = is_string($wp_codebox_heard) && $wp_codebox_heard !== '';
					$wp_codebox_said .= (string) $wp_codebox_heard;
				}
				if (in_array(STDIN, $wp_codebox_read, true)) {
					$wp_codebox_line = fgets(STDIN);
					if ($wp_codebox_line === false) {
						posix_kill(-1, SIGKILL);
						exit(0);
					}
					if (strpos($wp_codebox_line, '"kill"') !== false) {
						$wp_codebox_killed = true;
						posix_kill($wp_codebox_pid, SIGKILL);
					}
				}
			}
		}
		$wp_codebox_said .= (string) fread($wp_codebox_run['go'], 64);
		if (strpos($wp_codebox_said, "load-writes\n") !== false) {
			$wp_codebox_load_writes = WP_CODEBOX_LOAD_WRITES_PAUSE;
		}
		if (preg_match($wp_codebox_exit0, $wp_codebox_said)) {
			$wp_codebox_code = 0;
		}
		if ($wp_codebox_fresh || $wp_codebox_killed || strpos($wp_codebox_said, 'run') !== false) {
			break;
		}
		wp_codebox_forget($wp_codebox_pid);
		$wp_codebox_fresh = true;
	}
	$wp_codebox_clean = $wp_codebox_run !== null && !$wp_codebox_killed && preg_match($wp_codebox_exit0, $wp_codebox_said, $wp_codebox_m) && ($wp_codebox_m[1] ?? '') === ' clean';
	$wp_codebox_ran = $wp_codebox_run['pid'] ?? 0;
	if ($wp_codebox_run !== null) {
		fclose($wp_codebox_run['go']);
		$wp_codebox_run = null;
	}
	// Processes the run started (in this PID namespace only) must not outlive it.
	$wp_codebox_others = wp_codebox_end_run(array_fill_keys(array_column($wp_codebox_ready, 'pid'), true), $wp_codebox_ran);
	// The children preloaded while this run went stay only if the next run loads WordPress and
	// this one ended saying it sent nothing that may write to the database, with no process of its
	// own left (one could have written through a connection of its own).
	if (!$wp_codebox_clean || $wp_codebox_others || $wp_codebox_next !== 'wordpress') {
		wp_codebox_drop($wp_codebox_ready);
	}
	fread($wp_codebox_wake_r, 4096);
	// Counted after the run's processes were killed: no connection of the run starts later.
	$wp_codebox_opened = wp_codebox_tcp_opens();
	$wp_codebox_net = $wp_codebox_opens !== null && $wp_codebox_opened !== null ? ':' . ($wp_codebox_opened[0] - $wp_codebox_opens[0]) . ':' . ($wp_codebox_opened[1] - $wp_codebox_opens[1]) : '';
	fwrite(STDERR, "\0" . $wp_codebox_marker . "\0");
	fwrite(STDOUT, "\0" . $wp_codebox_marker . ':' . $wp_codebox_code . $wp_codebox_net . "\0");
	$wp_codebox_ended = microtime(true);
}
// A child: a clean slate for runner.php (it runs in this global scope, as WordPress expects).
pcntl_signal(SIGCHLD, SIG_DFL);
pcntl_async_signals(false);
fclose(STDIN);
fclose($wp_codebox_wake_r);
fclose($wp_codebox_wake_w);
// This process's ends of the sockets to the other children (the run going, the preloaded ones).
foreach ($wp_codebox_ready as $wp_codebox_other) {
	fclose($wp_codebox_other['go']);
}
if ($wp_codebox_run !== null) {
	fclose($wp_codebox_run['go']);
}
$wp_codebox_go = $wp_codebox_child['go'];
$wp_codebox_preloading = $wp_codebox_mode === 'preload';
// A preloaded child gets its request when its run starts (see runner.php).
$wp_codebox_job = $wp_codebox_preloading ? null : $wp_codebox_job;
unset($wp_codebox_wake_r, $wp_codebox_wake_w, $wp_codebox_ready, $wp_codebox_run, $wp_codebox_child, $wp_codebox_other, $wp_codebox_i, $wp_codebox_next, $wp_codebox_bootstrap, $wp_codebox_mode, $wp_codebox_line, $wp_codebox_request, $wp_codebox_marker, $wp_codebox_pid, $wp_codebox_fresh, $wp_codebox_code, $wp_codebox_killed, $wp_codebox_status, $wp_codebox_done, $wp_codebox_read, $wp_codebox_none, $wp_codebox_none2, $wp_codebox_said, $wp_codebox_talks, $wp_codebox_heard, $wp_codebox_opens, $wp_codebox_opened, $wp_codebox_net, $wp_codebox_exit0, $wp_codebox_m, $wp_codebox_clean, $wp_codebox_ran, $wp_codebox_others, $wp_codebox_ended, $wp_codebox_load_writes, $wp_codebox_fs_epoch, $wp_codebox_stale);
require '/opt/wp-codebox/runner.php';
exit(0);
