<?php
/**
 * wordpress.rest-request on a native sandbox: dispatches one REST request inside WordPress
 * (rest_do_request, no HTTP) and prints { status, headers, data } as JSON. Run by runner.php after
 * WordPress loaded and the actor was set; the request ({ method, route, params, body }) comes from
 * rest-request.json beside the internal files.
 */
$wp_codebox_rest = json_decode((string) file_get_contents('/internal/wp-codebox/rest-request.json'), true);
$wp_codebox_request = new WP_REST_Request($wp_codebox_rest['method'], $wp_codebox_rest['route']);
foreach ($wp_codebox_rest['params'] as $wp_codebox_key => $wp_codebox_value) {
	$wp_codebox_request->set_param($wp_codebox_key, $wp_codebox_value);
}
if ($wp_codebox_rest['body'] !== null) {
	$wp_codebox_request->set_header('content-type', 'application/json');
	$wp_codebox_request->set_body(json_encode($wp_codebox_rest['body']));
	$wp_codebox_request->set_body_params(is_array($wp_codebox_rest['body']) ? $wp_codebox_rest['body'] : array());
}
$wp_codebox_response = rest_do_request($wp_codebox_request);
echo json_encode(array('status' => $wp_codebox_response->get_status(), 'headers' => (object) $wp_codebox_response->get_headers(), 'data' => rest_get_server()->response_to_data($wp_codebox_response, false)), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
