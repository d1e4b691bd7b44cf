<?php
/*
 * Profiling hooks appended to the installer's must-use plugin by bench/install-phases.ts: marks
 * wall time (microtime), PHP's CPU time (getrusage) and the SQL queries sent so far at each phase
 * boundary of wp_install(), and writes them to wp-content/wp-codebox-phases.json as the request ends.
 */
$GLOBALS['wp_codebox_phases'] = [];
$GLOBALS['wp_codebox_queries'] = 0;
function wp_codebox_mark($name) {
	$r = getrusage();
	$GLOBALS['wp_codebox_phases'][] = [
		'name' => $name,
		'wallMs' => microtime(true) * 1000,
		'cpuMs' => ($r['ru_utime.tv_sec'] + $r['ru_stime.tv_sec']) * 1000 + ($r['ru_utime.tv_usec'] + $r['ru_stime.tv_usec']) / 1000,
		'queries' => $GLOBALS['wp_codebox_queries'],
		// Whether the SQLite driver has a transaction open (the installer plugin's one).
		'inTransaction' => isset($GLOBALS['wpdb']->dbh) && is_object($GLOBALS['wpdb']->dbh) && method_exists($GLOBALS['wpdb']->dbh, 'inTransaction') ? $GLOBALS['wpdb']->dbh->inTransaction() : null,
	];
}
if (isset($_SERVER['REQUEST_TIME_FLOAT'])) {
	$GLOBALS['wp_codebox_phases'][] = ['name' => 'request start', 'wallMs' => $_SERVER['REQUEST_TIME_FLOAT'] * 1000, 'cpuMs' => null, 'queries' => 0];
}
foreach ($GLOBALS['wp_codebox_early'] ?? [] as [$name, $ms]) {
	$GLOBALS['wp_codebox_phases'][] = ['name' => $name, 'wallMs' => $ms, 'cpuMs' => null, 'queries' => 0];
}
wp_codebox_mark('mu-plugins loading');
$GLOBALS['wp_codebox_phases'][count($GLOBALS['wp_codebox_phases']) - 1]['files'] = count(get_included_files());
add_filter('query', function ($q) {
	$GLOBALS['wp_codebox_queries']++;
	return $q;
});
$wp_codebox_once = function ($hook, $name, $priority = -1000) {
	$done = false;
	$cb = function ($value = null) use (&$done, $name) {
		if (!$done) {
			$done = true;
			wp_codebox_mark($name);
		}
		return $value;
	};
	add_filter($hook, $cb, $priority, 1);
};
$wp_codebox_once('wp_loaded', 'WordPress loaded');
$wp_codebox_once('populate_options', 'tables made (wp_install start, sqlite_make_db_sqlite)', 1000);
add_action('add_option', function ($option) {
	if ($option === 'wp_user_roles') wp_codebox_mark('populate_options done');
});
$wp_codebox_once('pre_update_option_blogname', 'populate_roles done');
$wp_codebox_once('user_register', 'admin user created');
$wp_codebox_once('permalink_structure_changed', 'wp_install_defaults done');
$wp_codebox_once('wp_install', 'wp_install done', 1000);
add_action('shutdown', function () {
	wp_codebox_mark('request end');
	file_put_contents(WP_CONTENT_DIR . '/wp-codebox-phases.json', json_encode($GLOBALS['wp_codebox_phases']));
}, 1000);
