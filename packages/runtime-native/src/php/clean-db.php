<?php
/**
 * The clean copy of a native sandbox's database, kept in the same MariaDB server: after boot the
 * `wordpress` database's tables are copied into `wp_codebox_clean` (action "save"), with a
 * signature per clean table (CHECKSUM TABLE, the definition and the next AUTO_INCREMENT), printed
 * as `signatures`; `reset()` (action "restore") drops the tables of `wordpress` that the clean copy
 * does not have, and puts back only the tables whose signature changed (only the rows when the
 * definition is the same) or that are gone, with no server restart.
 *
 * A save writes `wp_codebox_clean`, which only MariaDB's root may: it runs in a PHP process of its
 * own (action as the first argument, root's password in WP_CODEBOX_DB_ROOT_PASSWORD), never in the
 * sandbox's warm PHP process, whose memory and OPcache the sandbox's own code can write. A restore
 * needs only what WordPress's account `wordpress` has (its database, and reading the clean copy),
 * so it runs in the warm process (action from clean-db.json, the signatures from
 * clean-db-signatures.json, both written by the host just before). Prints what it did as JSON
 * (`{"restored": [...], "dropped": [...]}`, and `signatures` after a save).
 */
$wp_codebox_password = getenv('WP_CODEBOX_DB_ROOT_PASSWORD');
$wp_codebox_action = $wp_codebox_password !== false ? ($argv[1] ?? '') : (json_decode((string) file_get_contents('/internal/wp-codebox/clean-db.json'), true)['action'] ?? '');
if ($wp_codebox_action === 'save' && $wp_codebox_password === false) {
	fwrite(STDERR, "a save needs MariaDB's root\n");
	exit(2);
}
$wp_codebox_signatures_file = '/internal/wp-codebox/clean-db-signatures.json';
$wp_codebox_db = $wp_codebox_password !== false
	? new mysqli('localhost', 'root', (string) $wp_codebox_password, '', 0, '/run/mysqld/mysqld.sock')
	: new mysqli('localhost', 'wordpress', '', '', 0, '/run/mysqld/mysqld.sock');
unset($wp_codebox_password);
$wp_codebox_db->query('SET FOREIGN_KEY_CHECKS = 0');
$wp_codebox_name = static function ($name) {
	return '`' . str_replace('`', '``', $name) . '`';
};
$wp_codebox_tables = static function ($database) use ($wp_codebox_db, $wp_codebox_name) {
	$rows = $wp_codebox_db->query('SHOW FULL TABLES FROM ' . $wp_codebox_name($database) . " WHERE Table_type = 'BASE TABLE'")->fetch_all();
	return array_map(static function ($row) { return $row[0]; }, $rows);
};
/**
 * Signature of each named table of a database: [checksum, hash of its definition without the next
 * AUTO_INCREMENT, that next AUTO_INCREMENT (null: none)].
 */
$wp_codebox_signatures = static function ($database, array $tables) use ($wp_codebox_db, $wp_codebox_name) {
	if (!$tables) {
		return array();
	}
	$signatures = array();
	$quoted = array_map(static function ($table) use ($wp_codebox_name, $database) { return $wp_codebox_name($database) . '.' . $wp_codebox_name($table); }, $tables);
	$sums = array();
	foreach ($wp_codebox_db->query('CHECKSUM TABLE ' . implode(', ', $quoted))->fetch_all() as $row) {
		$sums[substr($row[0], strlen($database) + 1)] = (string) $row[1];
	}
	foreach ($tables as $table) {
		$create = (string) ($wp_codebox_db->query('SHOW CREATE TABLE ' . $wp_codebox_name($database) . '.' . $wp_codebox_name($table))->fetch_row()[1] ?? '');
		$next = preg_match('/ AUTO_INCREMENT=(\d+)/', $create, $m) ? (int) $m[1] : null;
		$signatures[$table] = array($sums[$table] ?? '', md5(preg_replace('/ AUTO_INCREMENT=\d+/', '', $create)), $next);
	}
	return $signatures;
};
$wp_codebox_copy_table = static function ($from, $to, $table) use ($wp_codebox_db, $wp_codebox_name) {
	$wp_codebox_db->query('CREATE TABLE ' . $wp_codebox_name($to) . '.' . $wp_codebox_name($table) . ' LIKE ' . $wp_codebox_name($from) . '.' . $wp_codebox_name($table));
	$wp_codebox_db->query('INSERT INTO ' . $wp_codebox_name($to) . '.' . $wp_codebox_name($table) . ' SELECT * FROM ' . $wp_codebox_name($from) . '.' . $wp_codebox_name($table));
};
/**
 * Same definition, other rows: the rows are replaced and the next AUTO_INCREMENT set back. When
 * the counter moved, TRUNCATE (which starts it again) and the copied rows leave it as in the clean
 * copy (made the same way); otherwise DELETE, which is cheaper than any DDL.
 */
$wp_codebox_refill_table = static function ($table, $moved) use ($wp_codebox_db, $wp_codebox_name) {
	$wp_codebox_db->query(($moved ? 'TRUNCATE TABLE' : 'DELETE FROM') . ' wordpress.' . $wp_codebox_name($table));
	$wp_codebox_db->query('INSERT INTO wordpress.' . $wp_codebox_name($table) . ' SELECT * FROM wp_codebox_clean.' . $wp_codebox_name($table));
};
$wp_codebox_done = array('restored' => array(), 'dropped' => array());
if ($wp_codebox_action === 'save') {
	$wp_codebox_db->query('DROP DATABASE IF EXISTS wp_codebox_clean');
	$wp_codebox_db->query('CREATE DATABASE wp_codebox_clean CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
	$wp_codebox_saved = $wp_codebox_tables('wordpress');
	foreach ($wp_codebox_saved as $wp_codebox_table) {
		$wp_codebox_copy_table('wordpress', 'wp_codebox_clean', $wp_codebox_table);
	}
		// Of the clean copies: a table reset() copies back is made as they were (its next AUTO_INCREMENT too).
	$wp_codebox_done['signatures'] = (object) $wp_codebox_signatures('wp_codebox_clean', $wp_codebox_saved);
} elseif ($wp_codebox_action === 'restore') {
	$wp_codebox_clean = $wp_codebox_tables('wp_codebox_clean');
	$wp_codebox_saved = json_decode((string) @file_get_contents($wp_codebox_signatures_file), true);
	$wp_codebox_present = $wp_codebox_tables('wordpress');
	$wp_codebox_now = $wp_codebox_signatures('wordpress', array_values(array_intersect($wp_codebox_present, $wp_codebox_clean)));
	foreach ($wp_codebox_present as $wp_codebox_table) {
		$wp_codebox_was = is_array($wp_codebox_saved) ? ($wp_codebox_saved[$wp_codebox_table] ?? null) : null;
		$wp_codebox_is = $wp_codebox_now[$wp_codebox_table] ?? null;
		if (!in_array($wp_codebox_table, $wp_codebox_clean, true)) {
			$wp_codebox_db->query('DROP TABLE wordpress.' . $wp_codebox_name($wp_codebox_table));
			$wp_codebox_done['dropped'][] = $wp_codebox_table;
		} elseif ($wp_codebox_was === null || $wp_codebox_is === null || $wp_codebox_was[1] !== $wp_codebox_is[1]) {
			$wp_codebox_db->query('DROP TABLE wordpress.' . $wp_codebox_name($wp_codebox_table));
			$wp_codebox_copy_table('wp_codebox_clean', 'wordpress', $wp_codebox_table);
			$wp_codebox_done['restored'][] = $wp_codebox_table;
		} elseif ($wp_codebox_was !== $wp_codebox_is) {
			$wp_codebox_refill_table($wp_codebox_table, $wp_codebox_was[2] !== $wp_codebox_is[2]);
			$wp_codebox_done['restored'][] = $wp_codebox_table;
		}
	}
	foreach (array_diff($wp_codebox_clean, $wp_codebox_present) as $wp_codebox_table) {
		$wp_codebox_copy_table('wp_codebox_clean', 'wordpress', $wp_codebox_table);
		$wp_codebox_done['restored'][] = $wp_codebox_table;
	}
} else {
	fwrite(STDERR, "unknown action\n");
	exit(2);
}
if ($wp_codebox_db->errno) {
	fwrite(STDERR, $wp_codebox_db->error . "\n");
	exit(1);
}
echo json_encode($wp_codebox_done);
