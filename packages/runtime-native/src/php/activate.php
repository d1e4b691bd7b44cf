<?php
/**
 * Activates a native sandbox's `--plugin` / `--theme` inputs and sets its site options, after
 * WordPress loaded (run through runner.php as the administrator). Reads activate.json.
 */
$wp_codebox_inputs = json_decode((string) file_get_contents('/internal/wp-codebox/activate.json'), true);
foreach ($wp_codebox_inputs['plugins'] as $wp_codebox_folder) {
	$wp_codebox_found = get_plugins('/' . $wp_codebox_folder);
	if (!$wp_codebox_found) {
		fwrite(STDERR, "No plugin header in wp-content/plugins/$wp_codebox_folder\n");
		exit(1);
	}
	$wp_codebox_result = activate_plugin($wp_codebox_folder . '/' . array_key_first($wp_codebox_found));
	if (is_wp_error($wp_codebox_result)) {
		fwrite(STDERR, $wp_codebox_result->get_error_message() . "\n");
		exit(1);
	}
}
foreach ($wp_codebox_inputs['themes'] as $wp_codebox_folder) {
	switch_theme($wp_codebox_folder);
}
foreach ($wp_codebox_inputs['siteOptions'] as $wp_codebox_name => $wp_codebox_value) {
	update_option($wp_codebox_name, $wp_codebox_value);
}
