<?php
// Seeds a category and three posts in it; prints what it created.
$cat = wp_insert_term('Seeded', 'category', ['slug' => 'seeded']);
$ids = [];
foreach (['one', 'two', 'three'] as $n) {
	$ids[] = wp_insert_post([
		'post_title'    => "Seeded post $n",
		'post_content'  => "Body of post $n.",
		'post_status'   => 'publish',
		'post_category' => [is_wp_error($cat) ? 1 : $cat['term_id']],
	]);
}
update_option('blogname', 'Seeded site');
echo json_encode(['posts' => $ids]);
