<?php
/**
 * Boot: activates the --plugin and --theme inputs and applies site options, then prints
 * { plugins: [{ dir, file?, error, output? }], themes: [{ dir, error }] } as JSON (error null on
 * success). A plugin that printed while it was activated is active, as on the Plugins screen
 * (activate_plugin() saves it, then answers `unexpected_output`): `output` holds what it printed
 * (the first 4 KB) and `outputBytes` how much.
 * When something ends PHP on the way (a plugin calling exit or die as it loads), it prints
 * { ended: { kind: "plugin" | "theme" | "site options" | "WordPress", name } } instead, naming
 * what was being done, and whatever was printed before is dropped.
 * The caller defines $wp_codebox_plugins (folder names or single-file plugin names under
 * wp-content/plugins), $wp_codebox_themes (folder names under wp-content/themes) and
 * $wp_codebox_site_options (option name => value).
 */
$wp_codebox_stage = ['kind' => 'WordPress', 'name' => 'wp-load.php'];
$wp_codebox_reported = false;
register_shutdown_function(function () use (&$wp_codebox_stage, &$wp_codebox_reported) {
  if ($wp_codebox_reported) return;
  // A fatal error is reported by the fatal recorder; only a clean exit is ours to explain.
  $last = error_get_last();
  if ($last && ($last['type'] & (E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR))) return;
  while (ob_get_level() > 0) ob_end_clean();
  echo json_encode(['ended' => $wp_codebox_stage]);
});
require_once '/wordpress/wp-load.php';
// As on the Plugins screen: the admin includes are loaded (an activation hook may call
// got_mod_rewrite(), WP_Filesystem(), dbDelta() …) and the administrator is the current user.
require_once ABSPATH . 'wp-admin/includes/admin.php';
wp_set_current_user(wp_codebox_admin_user_id());
$out = ['plugins' => [], 'themes' => []];
foreach ($wp_codebox_plugins as $dir) {
  $found = null;
  if (substr($dir, -4) === '.php') { $found = $dir; }
  else { foreach (get_plugins('/' . $dir) as $file => $data) { $found = $dir . '/' . $file; break; } }
  if ($found === null) { $out['plugins'][] = ['dir' => $dir, 'error' => 'no plugin header found in wp-content/plugins/' . $dir]; continue; }
  $wp_codebox_stage = ['kind' => 'plugin', 'name' => $dir];
  $r = activate_plugin($found);
  $printed = is_wp_error($r) && $r->get_error_code() === 'unexpected_output' ? (string) $r->get_error_data() : null;
  $out['plugins'][] = ['dir' => $dir, 'file' => $found, 'error' => is_wp_error($r) && $printed === null ? $r->get_error_message() : null] + ($printed === null ? [] : ['output' => substr($printed, 0, 4096), 'outputBytes' => strlen($printed)]);
}
foreach ($wp_codebox_themes as $dir) {
  $theme = wp_get_theme($dir);
  if (!$theme->exists() || $theme->errors()) { $out['themes'][] = ['dir' => $dir, 'error' => $theme->errors() ? $theme->errors()->get_error_message() : 'theme not found']; continue; }
  $wp_codebox_stage = ['kind' => 'theme', 'name' => $dir];
  switch_theme($dir);
  $out['themes'][] = ['dir' => $dir, 'error' => null];
}
foreach ($wp_codebox_site_options as $k => $v) { $wp_codebox_stage = ['kind' => 'site options', 'name' => $k]; update_option($k, $v); }
$wp_codebox_reported = true;
echo json_encode($out);
