<?php
$post_id = wp_insert_post( array( 'post_title' => 'Quiet title', 'post_status' => 'publish' ) );
grading_assert_same( 'QUIET TITLE', get_the_title( $post_id ), 'front-end title' );
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
set_current_screen( 'edit-post' );
grading_assert_same( 'Quiet title', get_the_title( $post_id ), 'admin title is left alone' );
