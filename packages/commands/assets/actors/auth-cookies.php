<?php
/**
 * Actors: logs a user in the way wp-login.php does and prints their auth as JSON:
 * { cookies: [{ name, value }] (auth, secure auth, logged in; valid one day), restNonce } with a
 * new session token behind the cookies. The caller defines $wp_codebox_user_id.
 */
require_once '/wordpress/wp-load.php';
$uid = $wp_codebox_user_id;
$expiration = time() + DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance($uid)->create($expiration);
$auth = wp_generate_auth_cookie($uid, $expiration, 'auth', $token);
$logged = wp_generate_auth_cookie($uid, $expiration, 'logged_in', $token);
// wp_create_nonce() ties the nonce to the session token it reads from the logged-in cookie.
$_COOKIE[LOGGED_IN_COOKIE] = $logged;
wp_set_current_user($uid);
echo json_encode(['cookies' => [['name' => AUTH_COOKIE, 'value' => $auth], ['name' => SECURE_AUTH_COOKIE, 'value' => $auth], ['name' => LOGGED_IN_COOKIE, 'value' => $logged]], 'restNonce' => wp_create_nonce('wp_rest')]);
