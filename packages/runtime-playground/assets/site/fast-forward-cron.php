<?php
/**
 * Moves WordPress's recurring events that are overdue in the installed-site cache to their next
 * run after now, as if the site had been running all along. Reads and writes the `cron` option
 * with PDO, without loading WordPress, so nothing spawns. Single events and anything scheduled
 * later are left alone. Prints {"moved": N}.
 */
$pdo = new PDO('sqlite:/wordpress/wp-content/database/.ht.sqlite');
$pdo->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
$row = $pdo->query("SELECT option_value FROM wp_options WHERE option_name = 'cron'")->fetchColumn();
$cron = $row === false ? false : @unserialize($row);
$moved = 0;
if (is_array($cron)) {
  $now = time();
  $next = [];
  foreach ($cron as $timestamp => $hooks) {
    if (!is_array($hooks)) { $next[$timestamp] = $hooks; continue; }
    foreach ($hooks as $hook => $events) {
      foreach ($events as $key => $event) {
        $at = (int) $timestamp;
        $interval = isset($event['interval']) ? (int) $event['interval'] : 0;
        if ($at <= $now && $interval > 0) {
          $at += (intdiv($now - $at, $interval) + 1) * $interval;
          $moved++;
        }
        $next[$at][$hook][$key] = $event;
      }
    }
  }
  if ($moved > 0) {
    uksort($next, static function ($a, $b) { return $a === 'version' ? 1 : ($b === 'version' ? -1 : (int) $a <=> (int) $b); });
    $stmt = $pdo->prepare("UPDATE wp_options SET option_value = ? WHERE option_name = 'cron'");
    $stmt->execute([serialize($next)]);
  }
}
$pdo = null;
echo json_encode(['moved' => $moved]);
