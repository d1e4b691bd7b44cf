<?php
/**
 * Database housekeeping of a native site, on its private MariaDB server: `create` makes the
 * WordPress database, `shutdown` stops the server cleanly (its data directory is then consistent).
 * The action is the script's first argument.
 */
$action = $argv[1] ?? '';
$db = new mysqli('localhost', 'root', '', '', 0, '/run/mysqld/mysqld.sock');
if ($action === 'create') {
	$db->query('CREATE DATABASE IF NOT EXISTS wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
} elseif ($action === 'shutdown') {
	$db->query('SHUTDOWN');
} else {
	fwrite(STDERR, "unknown action\n");
	exit(2);
}
if ($db->errno) {
	fwrite(STDERR, $db->error . "\n");
	exit(1);
}
