<?php
/**
 * Actors: prints { id } of a WordPress user (0 when there is none). The caller defines
 * $wp_codebox_user_ref: null for the administrator (the user "admin", else the first user with the
 * administrator role), a string of digits for a user id, any other string for a login.
 */
require_once '/wordpress/wp-load.php';
$ref = $wp_codebox_user_ref;
if ($ref === null) {
  $u = get_user_by('login', 'admin');
  if (!$u) { $ids = get_users(['role' => 'administrator', 'fields' => 'ID', 'number' => 1]); $u = $ids ? get_user_by('id', $ids[0]) : null; }
} else {
  $u = ctype_digit($ref) ? get_user_by('id', (int) $ref) : get_user_by('login', $ref);
}
echo json_encode(['id' => $u ? (int) $u->ID : 0]);
