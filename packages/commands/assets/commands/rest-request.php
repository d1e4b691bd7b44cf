<?php
/**
 * wordpress.rest-request: dispatches one REST request inside WordPress (rest_do_request, no HTTP)
 * and prints { status, headers, data } as JSON. The caller loads WordPress, sets the current user
 * and defines $wp_codebox_rest: { method, route, params (name => value), body (JSON data or null) }.
 */
$spec = $wp_codebox_rest;
$request = new WP_REST_Request($spec['method'], $spec['route']);
foreach ($spec['params'] as $k => $v) { $request->set_param($k, $v); }
if ($spec['body'] !== null) { $request->set_header('content-type', 'application/json'); $request->set_body(json_encode($spec['body'])); $request->set_body_params(is_array($spec['body']) ? $spec['body'] : []); }
$response = rest_do_request($request);
$server = rest_get_server();
echo json_encode(['status' => $response->get_status(), 'headers' => (object) $response->get_headers(), 'data' => $server->response_to_data($response, false)], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
