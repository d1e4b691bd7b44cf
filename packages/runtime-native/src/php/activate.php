<?php
/**
 * Activates a native sandbox's `--plugin` / `--theme` inputs and sets its site options, after
 * WordPress loaded (run through runner.php as the administrator). Reads activate.json. A plugin
 * that printed while it was activated is active, as on the Plugins screen (activate_plugin()
 * saves it, then answers `unexpected_output`): one JSON line on stdout says so,
 * {"plugin": folder, "output": the first 4 KB, "outputBytes": n}.
 */
$wp_codebox_inputs = json_decode((string) file_get_contents('/internal/wp-codebox/activate.json'), true);
foreach ($wp_codebox_inputs['plugins'] as $wp_codebox_folder) {
	$wp_codebox_found = get_plugins('/' . $wp_codebox_folder);
	if (!$wp_codebox_found) {
		fwrite(STDERR, "No plugin header in wp-content/plugins/$wp_codebox_folder\n");
		exit(1);
	}
	$wp_codebox_result = activate_plugin($wp_codebox_folder . '/' . array_key_first($wp_codebox_found));
	if (is_wp_error($wp_codebox_result) && $wp_codebox_result->get_error_code() === 'unexpected_output') {
		$wp_codebox_printed = (string) $wp_codebox_result->get_error_data();
		echo json_encode(['plugin' => $wp_codebox_folder, 'output' => substr($wp_codebox_printed, 0, 4096), 'outputBytes' => strlen($wp_codebox_printed)]), "\n";
	} elseif (is_wp_error($wp_codebox_result)) {
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
