<?php
/**
 * wordpress.state-export and the wordpress-state observation: reads WordPress state inside the
 * sandbox and prints one JSON object { sections: { <section>: data }, abilitiesAvailable,
 * generatedAt }. The section data has exactly the fields of the state-export schema (checked
 * before anything is written). The caller defines $wp_codebox_state_config, a normalised request:
 * { sections, optionNames, userFields, includeContent, redaction: "safe" | "none" }.
 */
require_once '/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
$config = $wp_codebox_state_config;
$want = array_flip($config['sections']);
$withContent = (bool) $config['includeContent'];
$h = static function ($value) { return hash('sha256', (string) $value); };
$gmt = static function ($value) {
  if (!$value || $value === '0000-00-00 00:00:00') { return null; }
  return gmdate('Y-m-d\\TH:i:s\\Z', strtotime($value . ' UTC'));
};
$obj = static function (array $a) { return empty($a) ? new stdClass() : $a; };
$out = [];
global $wpdb;

if (isset($want['summary'])) {
  $counts = [];
  foreach ($wpdb->get_results("SELECT post_type, post_status, COUNT(*) AS n FROM {$wpdb->posts} GROUP BY post_type, post_status") as $row) {
    $counts[$row->post_type][$row->post_status] = (int) $row->n;
  }
  ksort($counts);
  foreach ($counts as $type => $byStatus) { ksort($byStatus); $counts[$type] = $obj($byStatus); }
  $plugins = array_values((array) get_option('active_plugins', []));
  sort($plugins);
  $out['summary'] = [
    'siteUrl' => site_url(),
    'homeUrl' => home_url(),
    'wordpressVersion' => get_bloginfo('version'),
    'activeTheme' => get_stylesheet(),
    'activePlugins' => $plugins,
    'postCounts' => $obj($counts),
  ];
}

if (isset($want['posts'])) {
  $types = array_values(array_diff(get_post_types(['public' => true], 'names'), ['attachment']));
  sort($types);
  $in = implode(',', array_map(static function ($t) use ($wpdb) { return $wpdb->prepare('%s', $t); }, $types));
  $rows = $in === '' ? [] : $wpdb->get_results("SELECT ID, post_type, post_name, post_status, post_title, post_content, post_modified_gmt FROM {$wpdb->posts} WHERE post_type IN ($in) AND post_status <> 'auto-draft' ORDER BY ID ASC");
  $posts = [];
  foreach ($rows as $p) {
    $e = ['id' => (int) $p->ID, 'type' => $p->post_type, 'slug' => (string) $p->post_name, 'status' => $p->post_status, 'title' => (string) $p->post_title, 'contentHash' => $h($p->post_content), 'modifiedGmt' => $gmt($p->post_modified_gmt)];
    if ($withContent) { $e['content'] = (string) $p->post_content; }
    $posts[] = $e;
  }
  $out['posts'] = $posts;
}

if (isset($want['terms'])) {
  $terms = get_terms(['taxonomy' => array_values(get_taxonomies()), 'hide_empty' => false, 'orderby' => 'term_id', 'order' => 'ASC']);
  $list = [];
  foreach (is_wp_error($terms) ? [] : $terms as $t) {
    $list[] = ['id' => (int) $t->term_id, 'taxonomy' => $t->taxonomy, 'slug' => $t->slug, 'name' => $t->name, 'parent' => (int) $t->parent, 'count' => (int) $t->count];
  }
  usort($list, static function ($a, $b) { return $a['id'] <=> $b['id']; });
  $out['terms'] = $list;
}

if (isset($want['menus'])) {
  $menus = [];
  foreach (wp_get_nav_menus() as $m) {
    $items = [];
    foreach ((array) wp_get_nav_menu_items($m->term_id, ['post_status' => 'any']) as $i) {
      if (!$i) { continue; }
      $items[] = ['id' => (int) $i->ID, 'title' => (string) $i->title, 'url' => (string) $i->url, 'parentId' => (int) $i->menu_item_parent, 'object' => (string) $i->object, 'type' => (string) $i->type];
    }
    $menus[] = ['id' => (int) $m->term_id, 'slug' => $m->slug, 'name' => $m->name, 'items' => $items];
  }
  usort($menus, static function ($a, $b) { return $a['id'] <=> $b['id']; });
  $out['menus'] = $menus;
}

if (isset($want['templates'])) {
  $templates = [];
  $parts = [];
  if (function_exists('get_block_templates')) {
    foreach (get_block_templates([], 'wp_template') as $t) {
      $e = ['id' => (string) $t->id, 'slug' => (string) $t->slug, 'theme' => (string) $t->theme, 'type' => (string) $t->type, 'source' => (string) $t->source, 'contentHash' => $h($t->content)];
      if ($withContent) { $e['content'] = (string) $t->content; }
      $templates[] = $e;
    }
    foreach (get_block_templates([], 'wp_template_part') as $t) {
      $e = ['id' => (string) $t->id, 'slug' => (string) $t->slug, 'theme' => (string) $t->theme, 'area' => (string) ($t->area ?? ''), 'source' => (string) $t->source, 'contentHash' => $h($t->content)];
      if ($withContent) { $e['content'] = (string) $t->content; }
      $parts[] = $e;
    }
  }
  $byId = static function ($a, $b) { return strcmp($a['id'], $b['id']); };
  usort($templates, $byId);
  usort($parts, $byId);
  $styles = ['stylesheetHash' => null];
  if (function_exists('wp_get_global_stylesheet')) {
    $css = wp_get_global_stylesheet();
    $styles['stylesheetHash'] = $h($css);
    if ($withContent) { $styles['stylesheet'] = (string) $css; }
  }
  $out['templates'] = ['theme' => get_stylesheet(), 'templates' => $templates, 'templateParts' => $parts, 'globalStyles' => $styles];
}

if (isset($want['media'])) {
  $media = [];
  foreach ($wpdb->get_col("SELECT ID FROM {$wpdb->posts} WHERE post_type = 'attachment' ORDER BY ID ASC") as $id) {
    $p = get_post((int) $id);
    $media[] = ['id' => (int) $p->ID, 'slug' => (string) $p->post_name, 'title' => (string) $p->post_title, 'status' => $p->post_status, 'mimeType' => (string) $p->post_mime_type, 'sourceUrl' => (string) wp_get_attachment_url($p->ID), 'altText' => (string) get_post_meta($p->ID, '_wp_attachment_image_alt', true), 'metadataHash' => $h(wp_json_encode(wp_get_attachment_metadata($p->ID)))];
  }
  $out['media'] = $media;
}

if (isset($want['options'])) {
  $options = [];
  foreach ($config['optionNames'] as $name) { $options[$name] = get_option($name, null); }
  $out['options'] = $obj($options);
}

if (isset($want['users'])) {
  $fields = $config['userFields'];
  $users = [];
  foreach (get_users(['orderby' => 'ID', 'order' => 'ASC', 'number' => -1]) as $u) {
    $e = ['id' => (int) $u->ID, 'redacted' => $config['redaction'] !== 'none'];
    foreach ($fields as $f) {
      if ($f === 'roles') { $roles = array_values((array) $u->roles); sort($roles); $e['roles'] = $roles; }
      elseif ($f === 'caps') { $caps = array_keys(array_filter((array) $u->allcaps)); sort($caps); $e['caps'] = $caps; }
      elseif ($config['redaction'] === 'none') {
        $value = in_array($f, ['first_name', 'last_name', 'nickname'], true) ? get_user_meta($u->ID, $f, true) : ($u->data->{$f} ?? '');
        $e[$f] = (string) $value;
      }
    }
    $users[] = $e;
  }
  $out['users'] = $users;
}

if (isset($want['rest-routes'])) {
  $server = rest_get_server();
  $routes = [];
  foreach ($server->get_routes() as $route => $handlers) {
    $methods = [];
    foreach ($handlers as $handler) { foreach (array_keys((array) ($handler['methods'] ?? [])) as $m) { $methods[$m] = true; } }
    $methods = array_keys($methods);
    sort($methods);
    $options = $server->get_route_options($route);
    $routes[] = ['route' => (string) $route, 'namespace' => (string) ($options['namespace'] ?? ''), 'methods' => $methods];
  }
  usort($routes, static function ($a, $b) { return strcmp($a['route'], $b['route']); });
  $out['rest-routes'] = $routes;
}

$abilitiesAvailable = function_exists('wp_get_abilities');
if (isset($want['abilities'])) {
  $abilities = [];
  if ($abilitiesAvailable) {
    foreach (wp_get_abilities() as $a) {
      $abilities[] = ['name' => (string) $a->get_name(), 'label' => (string) $a->get_label(), 'description' => (string) $a->get_description()];
    }
    usort($abilities, static function ($a, $b) { return strcmp($a['name'], $b['name']); });
  }
  $out['abilities'] = $abilities;
}

// The export's time by the sandbox's clock (virtual in a deterministic run), ISO-8601 UTC with ms.
$now = microtime(true);
$generatedAt = gmdate('Y-m-d\TH:i:s', (int) floor($now)) . sprintf('.%03dZ', (int) floor(($now - floor($now)) * 1000));
echo wp_json_encode(['sections' => $obj($out), 'abilitiesAvailable' => $abilitiesAvailable, 'generatedAt' => $generatedAt], JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES);
