<?php
/**
 * wp-codebox preload (every script and request of a sandbox worker, after Playground's
 * `0-sqlite.php`): keeps the SQLite integration's MySQL grammar from one request to the next.
 *
 * The integration's driver (`WP_MySQL_On_SQLite`) builds a `WP_Parser_Grammar` from its grammar
 * table at the first query of every request (~7 ms of a ~70 ms WordPress load in php-wasm). The
 * built object holds only arrays and numbers, so its properties are kept in a PHP file outside the
 * site (`/internal`, per worker); OPcache keeps that file's arrays in shared memory, and putting the
 * object back costs well under a millisecond. The entry is kept in OPcache's file-cache folder,
 * so the OPcache seed saved with the installed site brings it to every new worker, already
 * compiled. The entry is named after everything it is made
 * from (the integration's version and the size and mtime of the grammar and its class), and the
 * grammar put back is checked to be a `WP_Parser_Grammar` with exactly the properties that class
 * declares; with any other integration (a custom `db.php`, another version that no longer works
 * this way) this file does nothing.
 */
if (isset($GLOBALS['wpdb']) && is_object($GLOBALS['wpdb']) && get_class($GLOBALS['wpdb']) === 'Playground_SQLite_Integration_Loader') {
  class WP_Codebox_SQLite_Integration_Loader extends Playground_SQLite_Integration_Loader {
    const DATABASE_DIR = '/internal/shared/sqlite-database-integration/wp-includes/database';

    protected function load_sqlite_integration() {
      $static = $this->grammar_property();
      $path = $static ? $this->cache_path() : null;
      if ($path !== null && is_file($path)) {
        $properties = include $path;
        $grammar = is_array($properties) ? $this->restore($properties) : null;
        if ($grammar !== null) $static->setValue(null, $grammar);
      }
      parent::load_sqlite_integration();
      if ($path !== null && !is_file($path)) $this->store($static, $path);
    }

    /**
     * Builds the grammar entry without loading WordPress, the way the driver builds its grammar,
     * unless it is there already: the OPcache seed a sandbox saves right after its boot, when
     * nothing but this package's code may run (a WordPress load would run the site's drop-ins).
     * Returns whether the entry is there.
     */
    public function prime_grammar() {
      $static = $this->grammar_property();
      $path = $static ? $this->cache_path() : null;
      if ($path === null) return false;
      if (!is_file($path)) {
        $static->setValue(null, new WP_Parser_Grammar(require self::DATABASE_DIR . '/mysql/mysql-grammar.php'));
        $this->store($static, $path);
      }
      return is_file($path);
    }

    /** The driver's `$mysql_grammar` static, with the integration's classes loaded; null when it is not there. */
    private function grammar_property() {
      $loader = self::DATABASE_DIR . '/load.php';
      if (!is_file($loader)) return null;
      require_once $loader;
      if (!class_exists('WP_MySQL_On_SQLite', false) || !class_exists('WP_Parser_Grammar', false) || !property_exists('WP_MySQL_On_SQLite', 'mysql_grammar')) return null;
      $property = new ReflectionProperty('WP_MySQL_On_SQLite', 'mysql_grammar');
      if (!$property->isStatic()) return null;
      $property->setAccessible(true);
      return $property;
    }

    private function cache_path() {
      $sources = array();
      foreach (array('/mysql/mysql-grammar.php', '/parser/class-wp-parser-grammar.php') as $file) {
        $stat = @stat(self::DATABASE_DIR . $file);
        if (!$stat) return null;
        $sources[] = array($file, $stat['size'], $stat['mtime']);
      }
      $version = defined('SQLITE_DRIVER_VERSION') ? SQLITE_DRIVER_VERSION : '';
      // Inside OPcache's file-cache folder: the installed site's OPcache seed then carries the entry
      // (and its compiled form) to every worker it boots, so a worker need not build it first.
      return '/internal/shared/opcache/wp-codebox/sqlite-grammar/' . md5(serialize(array(PHP_VERSION, $version, $sources))) . '.php';
    }

    /** Declared property names of WP_Parser_Grammar, sorted. */
    private function declared_properties() {
      $names = array_keys(get_class_vars('WP_Parser_Grammar'));
      sort($names);
      return $names;
    }

    private function restore(array $properties) {
      $names = array_keys($properties);
      sort($names);
      if ($names !== $this->declared_properties()) return null;
      $grammar = (new ReflectionClass('WP_Parser_Grammar'))->newInstanceWithoutConstructor();
      foreach ($properties as $name => $value) $grammar->$name = $value;
      return $grammar;
    }

    private function store($static, $path) {
      $grammar = $static->getValue();
      if (!($grammar instanceof WP_Parser_Grammar) || get_class($grammar) !== 'WP_Parser_Grammar') return;
      $properties = get_object_vars($grammar);
      $names = array_keys($properties);
      sort($names);
      if ($names !== $this->declared_properties()) return;
      // Only arrays and scalars survive var_export() unchanged.
      $plain = true;
      array_walk_recursive($properties, static function ($value) use (&$plain) {
        if (is_object($value) || is_resource($value)) $plain = false;
      });
      if (!$plain) return;
      if (!is_dir(dirname($path))) @mkdir(dirname($path), 0777, true);
      $temporary = $path . '.' . getmypid() . '.tmp';
      if (@file_put_contents($temporary, '<?php return ' . var_export($properties, true) . ";\n") !== false) {
        // An old mtime: OPcache caches a file only once it is 2 s old (file_update_protection); an entry never changes.
        @touch($temporary, 1000000000);
        @rename($temporary, $path);
      }
    }
  }
  $wpdb = $GLOBALS['wpdb'] = new WP_Codebox_SQLite_Integration_Loader();
}
