<?php
/**
 * Actors: the administrator commands act as by default: the user "admin", else the first user with
 * the administrator role; 0 when there is none. Needs WordPress loaded before it is called.
 */
function wp_codebox_admin_user_id(): int {
  $u = get_user_by('login', 'admin');
  if ($u) return (int) $u->ID;
  $ids = get_users(['role' => 'administrator', 'fields' => 'ID', 'number' => 1]);
  return $ids ? (int) $ids[0] : 0;
}
