<?php
/**
 * The clean copy of a native sandbox's database, kept in the same MariaDB server: after boot the
 * `wordpress` database's tables are copied into `wp_codebox_clean` (action "save"); `reset()`
 * drops whatever tables `wordpress` holds and copies the clean ones back (action "restore"), with
 * no server restart. The action comes from clean-db.json.
 */
$wp_codebox_action = json_decode((string) file_get_contents('/internal/wp-codebox/clean-db.json'), true)['action'] ?? '';
$wp_codebox_db = new mysqli('localhost', 'root', '', '', 0, '/run/mysqld/mysqld.sock');
$wp_codebox_db->query('SET FOREIGN_KEY_CHECKS = 0');
$wp_codebox_name = static function ($name) {
	return '`' . str_replace('`', '``', $name) . '`';
};
$wp_codebox_tables = static function ($database) use ($wp_codebox_db, $wp_codebox_name) {
	$rows = $wp_codebox_db->query('SHOW FULL TABLES FROM ' . $wp_codebox_name($database) . " WHERE Table_type = 'BASE TABLE'")->fetch_all();
	return array_map(static function ($row) { return $row[0]; }, $rows);
};
$wp_codebox_copy = static function ($from, $to) use ($wp_codebox_db, $wp_codebox_name, $wp_codebox_tables) {
	foreach ($wp_codebox_tables($from) as $table) {
		$wp_codebox_db->query('CREATE TABLE ' . $wp_codebox_name($to) . '.' . $wp_codebox_name($table) . ' LIKE ' . $wp_codebox_name($from) . '.' . $wp_codebox_name($table));
		$wp_codebox_db->query('INSERT INTO ' . $wp_codebox_name($to) . '.' . $wp_codebox_name($table) . ' SELECT * FROM ' . $wp_codebox_name($from) . '.' . $wp_codebox_name($table));
	}
};
if ($wp_codebox_action === 'save') {
	$wp_codebox_db->query('DROP DATABASE IF EXISTS wp_codebox_clean');
	$wp_codebox_db->query('CREATE DATABASE wp_codebox_clean CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
	$wp_codebox_copy('wordpress', 'wp_codebox_clean');
} elseif ($wp_codebox_action === 'restore') {
	foreach ($wp_codebox_tables('wordpress') as $wp_codebox_table) {
		$wp_codebox_db->query('DROP TABLE wordpress.' . $wp_codebox_name($wp_codebox_table));
	}
	$wp_codebox_copy('wp_codebox_clean', 'wordpress');
} else {
	fwrite(STDERR, "unknown action\n");
	exit(2);
}
if ($wp_codebox_db->errno) {
	fwrite(STDERR, $wp_codebox_db->error . "\n");
	exit(1);
}
