<?php
/**
 * Database housekeeping of a native site, on its private MariaDB server: `create` makes the
 * WordPress database and the account WordPress connects with (`wordpress`, rights on that database,
 * and reading the clean copy reset() restores from: no server settings, no writing the clean copy or
 * any other database, no triggers, views or routines reset() would not undo), then gives `root` the password in
 * WP_CODEBOX_DB_ROOT_PASSWORD; `shutdown` stops the server cleanly (its data directory is then
 * consistent), as root with that password. The action is the script's first argument.
 */
$action = $argv[1] ?? '';
$password = (string) getenv('WP_CODEBOX_DB_ROOT_PASSWORD');
if ($password === '') {
	fwrite(STDERR, "WP_CODEBOX_DB_ROOT_PASSWORD is not set\n");
	exit(2);
}
// A fresh data directory's root has no password yet.
$db = new mysqli('localhost', 'root', $action === 'create' ? '' : $password, '', 0, '/run/mysqld/mysqld.sock');
if ($action === 'create') {
	$db->query('CREATE DATABASE IF NOT EXISTS wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
	$db->query("CREATE USER IF NOT EXISTS 'wordpress'@'localhost'");
	$db->query("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, REFERENCES ON wordpress.* TO 'wordpress'@'localhost'");
	// reset() restores with this account (in the sandbox's warm PHP process): reading the clean copy is all it adds.
	$db->query("GRANT SELECT ON wp_codebox_clean.* TO 'wordpress'@'localhost'");
	$db->query("ALTER USER 'root'@'localhost' IDENTIFIED BY '" . $db->real_escape_string($password) . "'");
	// Root's other hosts are unreachable without networking; dropped so no account of root lacks the password.
	foreach ($db->query("SELECT Host FROM mysql.user WHERE User = 'root' AND Host <> 'localhost'")->fetch_all() as $row) {
		$db->query("DROP USER 'root'@'" . $db->real_escape_string($row[0]) . "'");
	}
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
