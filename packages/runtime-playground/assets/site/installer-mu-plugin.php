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
/*
 * The permalink structure the post-install setup gives the site (installed-site.ts), set as the
 * install ends. The first load of WordPress after it then registers the taxonomies' rewrite rules,
 * which it does only on a site with pretty permalinks, and the post-install flush keeps them, as
 * it does after Playground's boot, which sets pretty permalinks itself once the installer is done.
 */
add_action('wp_install', function () {
	update_option('permalink_structure', '/%postname%/');
});
