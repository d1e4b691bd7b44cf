<?php
/**
 * The warm PHP process of a native sandbox. Reads one JSON request per line on stdin
 * (`{"marker", "bootstrap", "next"}`), runs it in a forked child (runner.php), so every run starts from a
 * clean process while OPcache's shared memory (WordPress compiled once) stays warm here; then kills
 * whatever the run left behind in the sandbox and ends the run's output on stdout and stderr with
 * the request's marker (and, on stdout, the exit code).
 *
 * After a run whose `next` (by default its bootstrap) is "wordpress", the next child is forked at once and loads WordPress before
 * its request arrives (a "preloaded" child, see runner.php): a run then costs only the caller's
 * code. A preloaded child that finds a file it loaded changed since (or that died loading) is
 * replaced by a fresh child for that run.
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
$wp_codebox_pre = null;
$wp_codebox_next = '';
$wp_codebox_mode = '';
while (true) {
	if ($wp_codebox_pre === null && $wp_codebox_next === 'wordpress') {
		[$wp_codebox_go_parent, $wp_codebox_go] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
		$wp_codebox_pid = pcntl_fork();
		if ($wp_codebox_pid === 0) {
			fclose($wp_codebox_go_parent);
			$wp_codebox_mode = 'preload';
			break;
		}
		fclose($wp_codebox_go);
		unset($wp_codebox_go);
		// No preload when fork fails (the process limit): the run forks its own child.
		$wp_codebox_pre = $wp_codebox_pid > 0 ? array('pid' => $wp_codebox_pid, 'go' => $wp_codebox_go_parent) : null;
		if ($wp_codebox_pid < 0) {
			fclose($wp_codebox_go_parent);
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
	if ($wp_codebox_pre !== null && $wp_codebox_bootstrap !== 'wordpress') {
		posix_kill($wp_codebox_pre['pid'], SIGKILL);
		pcntl_waitpid($wp_codebox_pre['pid'], $wp_codebox_status);
		$wp_codebox_pre = null;
	}
	$wp_codebox_opens = wp_codebox_tcp_opens();
	$wp_codebox_fresh = $wp_codebox_pre === null;
	if (!$wp_codebox_fresh) {
		$wp_codebox_pid = $wp_codebox_pre['pid'];
		@fwrite($wp_codebox_pre['go'], "go\n");
	}
	$wp_codebox_code = 255;
	$wp_codebox_killed = false;
	while (true) {
		if ($wp_codebox_fresh) {
			if ($wp_codebox_pre !== null) {
				fclose($wp_codebox_pre['go']);
			}
			[$wp_codebox_go_parent, $wp_codebox_go] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
			$wp_codebox_pid = pcntl_fork();
			if ($wp_codebox_pid === 0) {
				fclose($wp_codebox_go_parent);
				$wp_codebox_pre = null;
				$wp_codebox_mode = 'run';
				break 2;
			}
			fclose($wp_codebox_go);
			unset($wp_codebox_go);
			$wp_codebox_pre = array('pid' => $wp_codebox_pid, 'go' => $wp_codebox_go_parent);
			if ($wp_codebox_pid < 0) {
				break;
			}
		}
		// What the child said so far: "run" (a preloaded child, just before it runs the request;
		// without it, it did not run), "stale" and "exit0 <pid>" (it ended with code 0, its output
		// written, and is killing itself, skipping the teardown nothing can see; a process the run
		// forked says it with its own pid, which does not count). The run ends on the child's
		// "exit0": tearing down WordPress's memory takes the kernel a few ms no one needs to wait for.
		$wp_codebox_said = '';
		$wp_codebox_talks = true;
		stream_set_blocking($wp_codebox_pre['go'], false);
		while (true) {
			$wp_codebox_done = pcntl_waitpid($wp_codebox_pid, $wp_codebox_status, WNOHANG);
			if ($wp_codebox_done !== 0) {
				if ($wp_codebox_done === $wp_codebox_pid) {
					$wp_codebox_code = pcntl_wifexited($wp_codebox_status) ? pcntl_wexitstatus($wp_codebox_status) : 128 + pcntl_wtermsig($wp_codebox_status);
				}
				break;
			}
			if (!$wp_codebox_killed && strpos($wp_codebox_said, "exit0 $wp_codebox_pid\n") !== false) {
				// Reaped later (with what the run left, below, or after the next run).
				posix_kill($wp_codebox_pid, SIGKILL);
				break;
			}
			$wp_codebox_read = $wp_codebox_talks ? array(STDIN, $wp_codebox_wake_r, $wp_codebox_pre['go']) : array(STDIN, $wp_codebox_wake_r);
			$wp_codebox_none = null;
			$wp_codebox_none2 = null;
			if (@stream_select($wp_codebox_read, $wp_codebox_none, $wp_codebox_none2, 5) > 0) {
				if (in_array($wp_codebox_wake_r, $wp_codebox_read, true)) {
					fread($wp_codebox_wake_r, 4096);
				}
				if (in_array($wp_codebox_pre['go'], $wp_codebox_read, true)) {
					$wp_codebox_heard = fread($wp_codebox_pre['go'], 64);
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
		$wp_codebox_said .= (string) fread($wp_codebox_pre['go'], 64);
		if (strpos($wp_codebox_said, "exit0 $wp_codebox_pid\n") !== false) {
			$wp_codebox_code = 0;
		}
		if ($wp_codebox_fresh || $wp_codebox_killed || strpos($wp_codebox_said, 'run') !== false) {
			break;
		}
		$wp_codebox_fresh = true;
	}
	if ($wp_codebox_pre !== null) {
		fclose($wp_codebox_pre['go']);
		$wp_codebox_pre = null;
	}
	// Processes the run started (in this PID namespace only) must not outlive it.
	posix_kill(-1, SIGKILL);
	while (pcntl_waitpid(-1, $wp_codebox_status, WNOHANG) > 0) {
	}
	fread($wp_codebox_wake_r, 4096);
	// Counted after the run's processes were killed: no connection of the run starts later.
	$wp_codebox_opened = wp_codebox_tcp_opens();
	$wp_codebox_net = $wp_codebox_opens !== null && $wp_codebox_opened !== null ? ':' . ($wp_codebox_opened[0] - $wp_codebox_opens[0]) . ':' . ($wp_codebox_opened[1] - $wp_codebox_opens[1]) : '';
	fwrite(STDERR, "\0" . $wp_codebox_marker . "\0");
	fwrite(STDOUT, "\0" . $wp_codebox_marker . ':' . $wp_codebox_code . $wp_codebox_net . "\0");
}
// A child: a clean slate for runner.php (it runs in this global scope, as WordPress expects).
pcntl_signal(SIGCHLD, SIG_DFL);
pcntl_async_signals(false);
fclose(STDIN);
fclose($wp_codebox_wake_r);
fclose($wp_codebox_wake_w);
if ($wp_codebox_pre !== null) {
	fclose($wp_codebox_pre['go']);
}
$wp_codebox_preloading = $wp_codebox_mode === 'preload';
unset($wp_codebox_wake_r, $wp_codebox_wake_w, $wp_codebox_pre, $wp_codebox_next, $wp_codebox_bootstrap, $wp_codebox_mode, $wp_codebox_line, $wp_codebox_request, $wp_codebox_marker, $wp_codebox_pid, $wp_codebox_fresh, $wp_codebox_code, $wp_codebox_killed, $wp_codebox_status, $wp_codebox_go_parent, $wp_codebox_done, $wp_codebox_read, $wp_codebox_none, $wp_codebox_none2, $wp_codebox_said, $wp_codebox_talks, $wp_codebox_heard, $wp_codebox_opens, $wp_codebox_opened, $wp_codebox_net);
require '/opt/wp-codebox/runner.php';
exit(0);
