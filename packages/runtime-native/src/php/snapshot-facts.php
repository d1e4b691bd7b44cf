<?php
/**
 * Snapshots on the native backend: reads the sandbox's MariaDB `wordpress` database with mysqli,
 * without loading WordPress (so nothing is written), and prints
 * { tables: [{ name, rows, sha256 }], activeTheme, activePlugins } as JSON. Each table's hash is
 * SHA-256 over PHP serialize() of its rows (as strings or null) in primary-key order (every
 * column's order for a table without one).
 */
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$db = new mysqli('localhost', 'root', (string) getenv('WP_CODEBOX_DB_ROOT_PASSWORD'), 'wordpress', 0, '/run/mysqld/mysqld.sock');
$db->set_charset('utf8mb4');
$quote = static function ($name) {
	return '`' . str_replace('`', '``', $name) . '`';
};
$tables = [];
$names = array_map(static function ($row) { return $row[0]; }, $db->query("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'")->fetch_all());
sort($names, SORT_STRING);
foreach ($names as $name) {
	$keys = [];
	foreach ($db->query('SHOW KEYS FROM ' . $quote($name) . " WHERE Key_name = 'PRIMARY'")->fetch_all(MYSQLI_ASSOC) as $key) {
		$keys[(int) $key['Seq_in_index']] = $quote($key['Column_name']);
	}
	ksort($keys);
	if (!$keys) {
		$count = count($db->query('SHOW COLUMNS FROM ' . $quote($name))->fetch_all());
		$keys = range(1, max(1, $count));
	}
	$result = $db->query('SELECT * FROM ' . $quote($name) . ' ORDER BY ' . implode(', ', $keys), MYSQLI_USE_RESULT);
	$ctx = hash_init('sha256');
	$n = 0;
	while (($row = $result->fetch_row()) !== null) {
		hash_update($ctx, serialize($row));
		$n++;
	}
	$result->free();
	$tables[] = ['name' => $name, 'rows' => $n, 'sha256' => hash_final($ctx)];
}
$opts = [];
foreach (['stylesheet', 'active_plugins'] as $o) {
	try {
		$row = $db->query('SELECT option_value FROM wp_options WHERE option_name = ' . "'" . $db->real_escape_string($o) . "'")->fetch_row();
	} catch (Throwable $e) {
		$row = null;
	}
	$opts[$o] = $row === null ? null : $row[0];
}
$plugins = $opts['active_plugins'] !== null ? @unserialize($opts['active_plugins']) : [];
$plugins = is_array($plugins) ? array_values($plugins) : [];
sort($plugins);
echo json_encode(['tables' => $tables, 'activeTheme' => (string) $opts['stylesheet'], 'activePlugins' => $plugins], JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES);
