/**
 * Test support: stand-ins for the WordPress core test library and plugins whose PHPUnit suites
 * run on it, written into a scratch folder (used by the phpunit tests of both backends).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// Stand-ins for the WordPress core test library (wordpress-develop's tests/phpunit/includes, which
// wp-phpunit/wp-phpunit republishes; no copy is available offline here). They follow the real
// library's contract with the sandbox: the bootstrap reads WP_TESTS_CONFIG_FILE_PATH, decides
// multisite from getenv('WP_MULTISITE') === '1' or a true WP_TESTS_MULTISITE and says which, runs
// `php includes/install.php <config> <multisite>` unless WP_TESTS_SKIP_INSTALL=1, then loads
// wp-settings.php; install.php drops the prefixed tables, runs wp_install() with the config's
// title and email, and says "Installing network..." when its second argument is true (the
// stand-in stops there: it does not set up the network's tables).
export const LIBRARY: Record<string, string> = {
  "includes/functions.php": `<?php
// Test stand-in for the core test library's includes/functions.php.
function tests_add_filter($hook, $callback, $priority = 10, $accepted_args = 1) {
	global $wp_filter;
	if (function_exists('add_filter')) { add_filter($hook, $callback, $priority, $accepted_args); return true; }
	$wp_filter[$hook][$priority][is_string($callback) ? $callback : spl_object_hash($callback)] = ['function' => $callback, 'accepted_args' => $accepted_args];
	return true;
}
function tests_reset__SERVER() {
	$_SERVER['HTTP_HOST'] = $_SERVER['SERVER_NAME'] = WP_TESTS_DOMAIN;
	$_SERVER['REQUEST_METHOD'] = 'GET';
	$_SERVER['REQUEST_URI'] = '';
}
`,
  "includes/install.php": `<?php
// Test stand-in for the core test library's includes/install.php (run as its own PHP process).
$config_file_path = $argv[1];
$multisite = !empty($argv[2]);
define('WP_INSTALLING', true);
require_once $config_file_path;
require_once __DIR__ . '/functions.php';
tests_reset__SERVER();
tests_add_filter('pre_wp_mail', '__return_true');
require_once ABSPATH . 'wp-settings.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
echo 'Installing...' . PHP_EOL;
foreach ($wpdb->tables() as $table => $prefixed_table) { $wpdb->query("DROP TABLE IF EXISTS $prefixed_table"); }
wp_install(WP_TESTS_TITLE, 'admin', WP_TESTS_EMAIL, true, null, 'password');
if ($multisite) { echo 'Installing network...' . PHP_EOL; }
`,
  "includes/bootstrap.php": `<?php
// Test stand-in for the core test library's includes/bootstrap.php.
$config_file_path = defined('WP_TESTS_CONFIG_FILE_PATH') ? WP_TESTS_CONFIG_FILE_PATH : dirname(__DIR__) . '/wp-tests-config.php';
global $wpdb, $current_site, $current_blog, $wp_rewrite, $shortcode_tags, $wp, $phpmailer, $wp_theme_directories;
if (!is_readable($config_file_path)) { echo "ERROR: wp-tests-config.php is missing!\n"; exit(1); }
require_once $config_file_path;
require_once __DIR__ . '/functions.php';
tests_reset__SERVER();
define('WP_TESTS_TABLE_PREFIX', $table_prefix);
$multisite = '1' === getenv('WP_MULTISITE') || (defined('WP_TESTS_MULTISITE') && WP_TESTS_MULTISITE);
echo $multisite ? "Running as multisite...\n" : "Running as single site...\n";
if ('1' !== getenv('WP_TESTS_SKIP_INSTALL')) {
	system(WP_PHP_BINARY . ' ' . escapeshellarg(__DIR__ . '/install.php') . ' ' . escapeshellarg($config_file_path) . ' ' . (int) $multisite, $retval);
	if (0 !== $retval) { exit($retval); }
}
require_once ABSPATH . 'wp-settings.php';
`,
};

/**
 * A plugin whose tests run on the core test library, scaffolded the way `wp scaffold plugin-tests`
 * does: WP_TESTS_DIR, else sys_get_temp_dir()/wordpress-tests-lib.
 */
export function writeLibraryPlugin(scratch: string, slug: string, withVendorLibrary: boolean): string {
  const dir = join(scratch, slug);
  const fn = slug.replaceAll("-", "_");
  const put = (rel: string, text: string) => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  put(`${slug}.php`, `<?php\n/* Plugin Name: ${slug} */\nfunction ${fn}_answer() { return 42; }\n`);
  put("phpunit.xml.dist", `<?xml version="1.0"?>\n<phpunit bootstrap="tests/bootstrap.php"><testsuites><testsuite name="all"><directory suffix="Test.php">tests</directory></testsuite></testsuites></phpunit>\n`);
  put(
    "tests/bootstrap.php",
    `<?php
$_tests_dir = getenv('WP_TESTS_DIR');
if (!$_tests_dir) { $_tests_dir = rtrim(sys_get_temp_dir(), '/\\\\') . '/wordpress-tests-lib'; }
if (!file_exists("{$_tests_dir}/includes/functions.php")) { echo "Could not find {$_tests_dir}/includes/functions.php\n"; exit(1); }
require_once "{$_tests_dir}/includes/functions.php";
tests_add_filter('muplugins_loaded', static function () { require dirname(__DIR__) . '/${slug}.php'; });
require "{$_tests_dir}/includes/bootstrap.php";
`,
  );
  put(
    "tests/LibraryTest.php",
    `<?php
use PHPUnit\\Framework\\TestCase;
final class LibraryTest extends TestCase {
	public function test_runs_on_the_site_the_library_installed() {
		global $wpdb;
		$this->assertSame('wptests_', $wpdb->prefix);
		$this->assertSame(WP_TESTS_TABLE_PREFIX, $wpdb->prefix);
		$this->assertSame('Test Blog', get_option('blogname'));
		$this->assertSame('admin@example.org', get_option('admin_email'));
	}
	public function test_the_plugin_is_loaded_through_the_library() {
		$this->assertSame(42, ${fn}_answer());
	}
	public function test_wordpress_apis_write_to_the_test_tables() {
		$id = wp_insert_post(['post_title' => 'Library note', 'post_status' => 'publish']);
		$this->assertGreaterThan(0, $id);
		$this->assertSame('Library note', get_post($id)->post_title);
	}
}
`,
  );
  if (withVendorLibrary) for (const [rel, text] of Object.entries(LIBRARY)) put(`vendor/wp-phpunit/wp-phpunit/${rel}`, text);
  return dir;
}

/** Writes the stand-in library to `<parent>/wordpress-tests-lib` (where `install-wp-tests.sh` puts the real one). */
export function writeLibrary(parent: string): string {
  const dir = join(parent, "wordpress-tests-lib");
  for (const [rel, text] of Object.entries(LIBRARY)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}
