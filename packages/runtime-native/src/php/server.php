<?php
/**
 * The warm PHP process of a native sandbox: reads one request per line on stdin, forks a child that
 * runs runner.php (so every run starts from a clean process, while OPcache's shared memory stays
 * warm in this parent), waits for it, kills whatever the run left behind in the sandbox, and ends
 * the run's output on stdout and stderr with the request's marker (and, on stdout, the exit code).
 */
while (($wp_codebox_line = fgets(STDIN)) !== false) {
	$wp_codebox_marker = (string) (json_decode($wp_codebox_line, true)['marker'] ?? '');
	$wp_codebox_pid = pcntl_fork();
	if ($wp_codebox_pid === 0) {
		fclose(STDIN);
		unset($wp_codebox_line, $wp_codebox_marker, $wp_codebox_pid);
		require '/opt/wp-codebox/runner.php';
		exit(0);
	}
	$wp_codebox_code = 255;
	if ($wp_codebox_pid > 0) {
		pcntl_waitpid($wp_codebox_pid, $wp_codebox_status);
		$wp_codebox_code = pcntl_wifexited($wp_codebox_status) ? pcntl_wexitstatus($wp_codebox_status) : 128 + pcntl_wtermsig($wp_codebox_status);
	}
	// Processes the run started (in this PID namespace only) must not outlive it.
	posix_kill(-1, SIGKILL);
	while (pcntl_waitpid(-1, $wp_codebox_status, WNOHANG) > 0) {
	}
	fwrite(STDERR, "\0" . $wp_codebox_marker . "\0");
	fwrite(STDOUT, "\0" . $wp_codebox_marker . ':' . $wp_codebox_code . "\0");
}
