<?php
/**
 * wp-codebox must-use plugin (every sandbox worker): keeps WordPress 6.4/6.5's theme block-pattern
 * cache from one request to the next, as WordPress 6.6 and later do themselves.
 *
 * WordPress 6.4 and 6.5 keep the parsed headers of a theme's `patterns/*.php` files in the object
 * cache only (`WP_Theme::get_pattern_cache()`), so without a persistent object cache every request
 * opens and parses every pattern file again (56 files for Twenty Twenty-Four: ~15 ms of a ~70 ms
 * WordPress load in php-wasm). 6.6 moved that cache into a transient for this reason. Here the
 * parsed headers are kept in a file outside the site (`/internal`, per worker, never in the
 * database or a snapshot) and put back into the object cache before WordPress reads it.
 *
 * The stored entry is exactly what `get_block_patterns()` computed. It is used only while nothing it
 * was made from changed: the theme's stylesheet, version and folder, and each pattern file's
 * name, size, mtime and inode (so adding, removing or editing a pattern shows at the next request;
 * 6.6 itself waits for a theme version change). mtimes count whole seconds, so an edit that keeps
 * the size within the second the entry was made would go unseen: as OPcache does
 * (`opcache.file_update_protection`), nothing is kept or used while a pattern file is less than
 * two seconds old (by the host's clock, read from a file written in memory: PHP's own clock may
 * be the sandbox's virtual one). A file whose mtime is set back on purpose is not noticed. Nothing is kept in the theme development mode
 * (WordPress ignores the cache there), nor when parsing a pattern raised a `_doing_it_wrong()`
 * notice, so such a notice still shows at every request as it does without the cache.
 */
function wp_codebox_theme_pattern_cache_group() {
  // 6.4 kept the entry in the default group, 6.5 in `theme_files`; 6.6 and later use a transient.
  $version = $GLOBALS['wp_version'] ?? '0';
  if (version_compare($version, '6.4', '<') || version_compare($version, '6.6-alpha', '>=')) return null;
  return version_compare($version, '6.5-alpha', '>=') ? 'theme_files' : '';
}

/**
 * The host's time now, in whole seconds: the mtime of a file just created in memory (null when
 * that fails). Created anew each time: rewriting an existing in-memory file keeps its mtime.
 */
function wp_codebox_host_seconds() {
  $dir = '/internal/wp-codebox/theme-patterns';
  if (!is_dir($dir)) @mkdir($dir, 0777, true);
  $file = $dir . '/.now-' . getmypid();
  @unlink($file);
  if (@file_put_contents($file, '') === false) return null;
  clearstatcache(true, $file);
  $mtime = @filemtime($file);
  @unlink($file);
  return $mtime === false ? null : $mtime;
}

/**
 * The active theme and its parent, each with the path of its stored entry (which names everything
 * it was made from); empty when an entry must not be kept or used now (a pattern file changed
 * within the last two seconds, or the host's time cannot be read).
 */
function wp_codebox_theme_pattern_cache_entries() {
  $theme = wp_get_theme();
  $themes = array($theme);
  if ($theme->parent()) $themes[] = $theme->parent();
  $now = wp_codebox_host_seconds();
  if ($now === null) return array();
  $entries = array();
  foreach ($themes as $t) {
    if (!$t->exists()) continue;
    $dir = $t->get_stylesheet_directory() . '/patterns/';
    $files = array();
    foreach (glob($dir . '*.php') ?: array() as $file) {
      $stat = @stat($file);
      if (!$stat || $stat['mtime'] >= $now - 1) return array();
      $files[] = array(basename($file), $stat['size'], $stat['mtime'], $stat['ino']);
    }
    $key = md5(serialize(array($GLOBALS['wp_version'], $t->get_stylesheet(), $t->get('Version'), $dir, $files)));
    $entries[] = array($t, '/internal/wp-codebox/theme-patterns/' . $key . '.php');
  }
  return $entries;
}

$GLOBALS['wp_codebox_theme_pattern_notices'] = 0;
add_action('doing_it_wrong_run', static function ($function) {
  if ($function === 'get_block_patterns' || $function === '_register_theme_block_patterns') $GLOBALS['wp_codebox_theme_pattern_notices']++;
});

// Before `_register_theme_block_patterns()` (init, 10) reads the cache: put stored entries back.
add_action('init', static function () {
  $group = wp_codebox_theme_pattern_cache_group();
  if ($group === null || wp_is_development_mode('theme')) return;
  $GLOBALS['wp_codebox_theme_pattern_entries'] = wp_codebox_theme_pattern_cache_entries();
  foreach ($GLOBALS['wp_codebox_theme_pattern_entries'] as list($theme, $path)) {
    if (!is_file($path)) continue;
    $patterns = include $path;
    if (is_array($patterns)) wp_cache_set('wp_theme_patterns_' . $theme->get_stylesheet(), array('version' => $theme->get('Version'), 'patterns' => $patterns), $group);
  }
}, 9);

// After it: store what WordPress computed, unless computing it raised a notice.
add_action('init', static function () {
  $group = wp_codebox_theme_pattern_cache_group();
  if ($group === null || empty($GLOBALS['wp_codebox_theme_pattern_entries']) || $GLOBALS['wp_codebox_theme_pattern_notices'] > 0) return;
  foreach ($GLOBALS['wp_codebox_theme_pattern_entries'] as list($theme, $path)) {
    if (is_file($path)) continue;
    $data = wp_cache_get('wp_theme_patterns_' . $theme->get_stylesheet(), $group);
    if (!is_array($data) || !isset($data['patterns']) || !is_array($data['patterns']) || $data['version'] !== $theme->get('Version')) continue;
    if (!is_dir(dirname($path))) @mkdir(dirname($path), 0777, true);
    $temporary = $path . '.' . getmypid() . '.tmp';
    if (@file_put_contents($temporary, '<?php return ' . var_export($data['patterns'], true) . ";\n") !== false) {
      // An old mtime: OPcache caches a file only once it is 2 s old (file_update_protection); an entry never changes.
      @touch($temporary, 1000000000);
      @rename($temporary, $path);
    }
  }
}, 11);
