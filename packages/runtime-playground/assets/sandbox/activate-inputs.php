<?php
/**
 * Boot: activates the --plugin and --theme inputs and applies site options, then prints
 * { plugins: [{ dir, file?, error }], themes: [{ dir, error }] } as JSON (error null on success).
 * The caller defines $wp_codebox_plugins (folder names or single-file plugin names under
 * wp-content/plugins), $wp_codebox_themes (folder names under wp-content/themes) and
 * $wp_codebox_site_options (option name => value).
 */
require_once '/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
$out = ['plugins' => [], 'themes' => []];
foreach ($wp_codebox_plugins as $dir) {
  $found = null;
  if (substr($dir, -4) === '.php') { $found = $dir; }
  else { foreach (get_plugins('/' . $dir) as $file => $data) { $found = $dir . '/' . $file; break; } }
  if ($found === null) { $out['plugins'][] = ['dir' => $dir, 'error' => 'no plugin header found in wp-content/plugins/' . $dir]; continue; }
  $r = activate_plugin($found);
  $out['plugins'][] = ['dir' => $dir, 'file' => $found, 'error' => is_wp_error($r) ? $r->get_error_message() : null];
}
foreach ($wp_codebox_themes as $dir) {
  $theme = wp_get_theme($dir);
  if (!$theme->exists() || $theme->errors()) { $out['themes'][] = ['dir' => $dir, 'error' => $theme->errors() ? $theme->errors()->get_error_message() : 'theme not found']; continue; }
  switch_theme($dir);
  $out['themes'][] = ['dir' => $dir, 'error' => null];
}
foreach ($wp_codebox_site_options as $k => $v) { update_option($k, $v); }
echo json_encode($out);
