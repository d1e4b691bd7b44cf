<?php
/**
 * The actor's login for wordpress.http-request on a native sandbox: run by runner.php after
 * WordPress loaded and the actor was set, it opens a session for the current user (as logging in
 * does) and prints { cookies: [{ name, value }], restNonce } as JSON: the auth and logged-in
 * cookies (the site is plain HTTP, so the "auth" scheme) and a wp_rest nonce bound to that session.
 */
$wp_codebox_user = get_current_user_id();
$wp_codebox_out = array('cookies' => array(), 'restNonce' => '');
if ($wp_codebox_user > 0) {
	$wp_codebox_expires = time() + 2 * DAY_IN_SECONDS;
	$wp_codebox_token = WP_Session_Tokens::get_instance($wp_codebox_user)->create($wp_codebox_expires);
	$wp_codebox_logged_in = wp_generate_auth_cookie($wp_codebox_user, $wp_codebox_expires, 'logged_in', $wp_codebox_token);
	$wp_codebox_out['cookies'][] = array('name' => AUTH_COOKIE, 'value' => wp_generate_auth_cookie($wp_codebox_user, $wp_codebox_expires, 'auth', $wp_codebox_token));
	$wp_codebox_out['cookies'][] = array('name' => LOGGED_IN_COOKIE, 'value' => $wp_codebox_logged_in);
	// Nonces hang on the session token, which WordPress reads from the logged-in cookie.
	$_COOKIE[LOGGED_IN_COOKIE] = $wp_codebox_logged_in;
	$wp_codebox_out['restNonce'] = wp_create_nonce('wp_rest');
}
echo json_encode($wp_codebox_out, JSON_UNESCAPED_SLASHES);
