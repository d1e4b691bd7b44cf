<?php
/**
 * Snapshots: reads the database with PDO, without loading WordPress (so nothing is written), and
 * prints { tables: [{ name, rows, sha256 }], activeTheme, activePlugins } as JSON. Each table's
 * hash is SHA-256 over its rows in rowid order. The caller defines $wp_codebox_database (the
 * SQLite file's sandbox path).
 */
$pdo = new PDO('sqlite:' . $wp_codebox_database);
$pdo->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
$tables = [];
foreach ($pdo->query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")->fetchAll(PDO::FETCH_COLUMN) as $name) {
  $q = '"' . str_replace('"', '""', $name) . '"';
  try { $stmt = $pdo->query("SELECT * FROM $q ORDER BY rowid"); } catch (Exception $e) { $stmt = $pdo->query("SELECT * FROM $q"); }
  $ctx = hash_init('sha256');
  $n = 0;
  while (($row = $stmt->fetch(PDO::FETCH_NUM)) !== false) { hash_update($ctx, serialize($row)); $n++; }
  $stmt = null;
  $tables[] = ['name' => $name, 'rows' => $n, 'sha256' => hash_final($ctx)];
}
$opts = [];
foreach (['stylesheet', 'active_plugins'] as $o) {
  try { $v = $pdo->query("SELECT option_value FROM wp_options WHERE option_name = " . $pdo->quote($o))->fetchColumn(); } catch (Exception $e) { $v = false; }
  $opts[$o] = $v === false ? null : $v;
}
$pdo = null;
$plugins = $opts['active_plugins'] !== null ? @unserialize($opts['active_plugins']) : [];
$plugins = is_array($plugins) ? array_values($plugins) : [];
sort($plugins);
echo json_encode(['tables' => $tables, 'activeTheme' => (string) $opts['stylesheet'], 'activePlugins' => $plugins], JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES);
