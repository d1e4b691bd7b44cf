<?php
/**
 * wordpress.ability: runs one registered ability (Abilities API, WordPress 6.9+) and prints one
 * JSON object. The caller loads WordPress, sets the current user and defines $wp_codebox_ability:
 * { name, input (decoded JSON, or null when none was given), list (bool) }.
 * Printed: { available: false } without the API; { available, found: false, names } for an
 * unknown name; { available, found, ok: true, output } or { ..., ok: false, error: { code,
 * message, data } } for a WP_Error. With list true: { available, abilities: [ { name, label,
 * description, inputSchema, outputSchema, annotations } ] } (what the MCP server makes tools of).
 */
$spec = $wp_codebox_ability;
$flags = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_PARTIAL_OUTPUT_ON_ERROR;
if (!function_exists('wp_get_ability') || !function_exists('wp_get_abilities')) {
  echo json_encode(['available' => false, 'wordpressVersion' => get_bloginfo('version')], $flags);
  return;
}
$names = [];
foreach (wp_get_abilities() as $registered) { $names[] = (string) $registered->get_name(); }
sort($names, SORT_STRING);
if (!empty($spec['list'])) {
  $abilities = [];
  foreach (wp_get_abilities() as $a) {
    $annotations = $a->get_meta_item('annotations', []);
    $abilities[] = [
      'name' => (string) $a->get_name(),
      'label' => (string) $a->get_label(),
      'description' => (string) $a->get_description(),
      // Empty PHP arrays print as [] and are told apart from {} by the caller.
      'inputSchema' => $a->get_input_schema(),
      'outputSchema' => $a->get_output_schema(),
      'annotations' => is_array($annotations) ? $annotations : [],
    ];
  }
  usort($abilities, static function ($x, $y) { return strcmp($x['name'], $y['name']); });
  echo json_encode(['available' => true, 'abilities' => $abilities], $flags);
  return;
}
// wp_get_ability() on an unknown name raises a _doing_it_wrong notice: ask first.
if (!wp_has_ability($spec['name'])) {
  echo json_encode(['available' => true, 'found' => false, 'names' => $names], $flags);
  return;
}
$result = wp_get_ability($spec['name'])->execute($spec['input']);
if (is_wp_error($result)) {
  $data = $result->get_error_data();
  echo json_encode(['available' => true, 'found' => true, 'ok' => false, 'error' => ['code' => (string) $result->get_error_code(), 'message' => $result->get_error_message(), 'data' => $data]], $flags);
  return;
}
echo json_encode(['available' => true, 'found' => true, 'ok' => true, 'output' => $result], $flags);
