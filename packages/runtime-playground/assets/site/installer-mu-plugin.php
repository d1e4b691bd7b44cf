<?php
/**
 * Must-use plugin of the worker that installs a release into the installed-site cache, active only
 * while WordPress's installer runs (WP_INSTALLING). It leaves out work whose result the installed
 * site does not keep, so the site is the one a plain install makes:
 *
 * - While installing, get_option() bypasses its caches and queries the database for every read,
 *   and site_url()/home_url() read 'siteurl' and 'home' about 200 times per install, each a query
 *   the SQLite driver translates. Both options are replaced on every read by the WP_SITEURL and
 *   WP_HOME constants (WordPress's own option_siteurl/option_home filters), so they are answered
 *   from those constants, as the filters would, without the query.
 * - The HTTP requests the installer makes to test pretty permalinks on its own site fail in this
 *   worker anyway (it serves no HTTP and its network is closed): they fail at once, without
 *   loading the HTTP library.
 * - The "new site" e-mail to the administrator cannot be sent from the sandbox (there is no mail
 *   transport): it is not composed.
 * - The SQLite driver runs each statement in a transaction of its own (BEGIN IMMEDIATE, COMMIT:
 *   ~250 statements in an install). From populate_options() (the tables are made before it, in
 *   a transaction of the integration's own) to the end of the install they run inside one
 *   transaction instead, the driver giving each a savepoint, so a failing statement is undone
 *   alone, as before. It is committed when the install ends, or else when the request does:
 *   what autocommit would have written, written at once.
 *
 * It also sets the site's final permalink structure as the install ends (below).
 */
if (!defined('WP_INSTALLING') || !WP_INSTALLING) {
	return;
}
if (defined('WP_SITEURL')) {
	add_filter('pre_option_siteurl', function () {
		return untrailingslashit(WP_SITEURL);
	});
}
if (defined('WP_HOME')) {
	add_filter('pre_option_home', function () {
		return untrailingslashit(WP_HOME);
	});
}
add_filter('pre_http_request', function () {
	return new WP_Error('http_request_failed', 'The installer makes no HTTP requests.');
});
add_filter('pre_wp_mail', '__return_false');
$wp_codebox_sqlite = isset($GLOBALS['wpdb']->dbh) && is_object($GLOBALS['wpdb']->dbh) && in_array(get_class($GLOBALS['wpdb']->dbh), ['WP_SQLite_Driver', 'WP_MySQL_On_SQLite'], true) ? $GLOBALS['wpdb']->dbh : null;
if ($wp_codebox_sqlite !== null && method_exists($wp_codebox_sqlite, 'beginTransaction') && method_exists($wp_codebox_sqlite, 'inTransaction') && method_exists($wp_codebox_sqlite, 'commit')) {
	$wp_codebox_begun = false;
	add_action('populate_options', function () use ($wp_codebox_sqlite, &$wp_codebox_begun) {
		if (!$wp_codebox_begun && !$wp_codebox_sqlite->inTransaction()) {
			$wp_codebox_sqlite->beginTransaction();
			$wp_codebox_begun = true;
		}
	}, -1000);
	$wp_codebox_commit = function () use ($wp_codebox_sqlite, &$wp_codebox_begun) {
		if ($wp_codebox_begun && $wp_codebox_sqlite->inTransaction()) $wp_codebox_sqlite->commit();
		$wp_codebox_begun = false;
	};
	add_action('wp_install', $wp_codebox_commit, PHP_INT_MAX);
	add_action('shutdown', $wp_codebox_commit, -1000);
}
/*
 * The permalink structure the post-install setup gives the site (installed-site.ts), set as the
 * install ends. The first load of WordPress after it then registers the taxonomies' rewrite rules,
 * which it does only on a site with pretty permalinks, and the post-install flush keeps them, as
 * it does after Playground's boot, which sets pretty permalinks itself once the installer is done.
 */
add_action('wp_install', function () {
	update_option('permalink_structure', '/%postname%/');
});
