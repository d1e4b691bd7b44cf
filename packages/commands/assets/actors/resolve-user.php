<?php
/**
 * Actors: prints { id } of a WordPress user (0 when there is none). The caller defines
 * $wp_codebox_user_ref: null for the administrator (wp_codebox_admin_user_id(), from
 * admin-user.php), a string of digits for a user id, any other string for a login.
 */
require_once '/wordpress/wp-load.php';
$ref = $wp_codebox_user_ref;
if ($ref === null) {
  $id = wp_codebox_admin_user_id();
} else {
  $u = ctype_digit($ref) ? get_user_by('id', (int) $ref) : get_user_by('login', $ref);
  $id = $u ? (int) $u->ID : 0;
}
echo json_encode(['id' => $id]);
