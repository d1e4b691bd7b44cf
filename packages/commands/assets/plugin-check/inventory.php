<?php
/**
 * wp-codebox check, must-use plugin part 2: the inventory.
 *
 * Answers GET /wp-admin/?wp-codebox-check-inventory=<token> (as an administrator) with a JSON
 * list of what the site has: admin menu and submenu pages, REST routes, shortcodes, blocks, cron
 * hooks, AJAX actions, post types, taxonomies, options, tables and importers. It runs on admin_init at the
 * latest priority: by then wp-admin/menu.php has built the menus and every plugin has hooked in.
 * Callbacks carry the file and line they are defined at (from reflection).
 */

/** File and line where a callback is defined, or null. */
function wp_codebox_check_where($callback): ?array {
	try {
		if (is_string($callback) && strpos($callback, '::') !== false) {
			$callback = explode('::', $callback, 2);
		}
		if (is_array($callback) && count($callback) === 2) {
			$ref = new ReflectionMethod($callback[0], $callback[1]);
		} elseif ($callback instanceof Closure || (is_string($callback) && function_exists($callback))) {
			$ref = new ReflectionFunction($callback);
		} elseif (is_object($callback) && method_exists($callback, '__invoke')) {
			$ref = new ReflectionMethod($callback, '__invoke');
		} else {
			return null;
		}
		$file = $ref->getFileName();
		return $file === false ? null : ['file' => $file, 'line' => (int) $ref->getStartLine()];
	} catch (Throwable $e) {
		return null;
	}
}

/** A handler's declared arguments, reduced to the keys that decide the smallest valid request (JSON-safe). */
function wp_codebox_check_rest_args(array $args): array {
	$keys = ['type', 'required', 'default', 'enum', 'minimum', 'maximum', 'minLength', 'minItems', 'format', 'pattern'];
	$out = [];
	foreach ($args as $name => $arg) {
		$row = [];
		foreach ($keys as $key) {
			if (is_array($arg) && array_key_exists($key, $arg) && (is_scalar($arg[$key]) || is_array($arg[$key]) || $arg[$key] === null)) {
				$row[$key] = $arg[$key];
			}
		}
		if (isset($row['enum'])) {
			$row['enum'] = array_values((array) $row['enum']);
		}
		if (isset($row['required'])) {
			$row['required'] = (bool) $row['required'];
		}
		$out[(string) $name] = (object) $row;
	}
	return $out;
}

/**
 * What is in wp-content/ besides the checked plugin and the check itself, as paths relative to
 * it (folders end in /): the entries of wp-content/, plugins/, mu-plugins/ and themes/, and
 * everything under uploads/ up to 2000 entries.
 */
function wp_codebox_check_files(): array {
	$root = rtrim(WP_CONTENT_DIR, '/');
	$own = rtrim($GLOBALS['wp_codebox_check_config']['pluginDir'], '/');
	$skip = [$own, $root . '/.wp-codebox-check', $root . '/mu-plugins/0-wp-codebox-check.php', $root . '/database'];
	$files = [];
	$list = static function (string $dir, bool $deep) use (&$list, &$files, $root, $skip): void {
		foreach (@scandir($dir) ?: [] as $name) {
			if ($name === '.' || $name === '..' || count($files) >= 2000) {
				continue;
			}
			$path = $dir . '/' . $name;
			if (in_array($path, $skip, true)) {
				continue;
			}
			$is_dir = is_dir($path);
			$files[] = substr($path, strlen($root) + 1) . ($is_dir ? '/' : '');
			if ($is_dir && $deep) {
				$list($path, true);
			}
		}
	};
	$list($root, false);
	foreach (['plugins', 'mu-plugins', 'themes'] as $sub) {
		$list($root . '/' . $sub, false);
	}
	$uploads = wp_get_upload_dir();
	$base = '';
	if (empty($uploads['error']) && strpos((string) $uploads['basedir'], $root . '/') === 0) {
		$base = substr(rtrim((string) $uploads['basedir'], '/'), strlen($root) + 1);
		$list($root . '/' . $base, true);
	}
	// The uploads folder and its year/month folders are WordPress's, made on first need.
	$files = array_filter($files, static fn($f) => $base === '' || !preg_match('#^' . preg_quote($base, '#') . '/(\d{4}/(\d{2}/)?)?$#', $f));
	sort($files);
	return array_values(array_unique($files));
}

/** The checked plugin's callbacks on every hook (actions and filters share one registry): [['hook', 'file', 'line'], …]. */
function wp_codebox_check_plugin_callbacks(?array $hooks = null): array {
	global $wp_filter;
	$out = [];
	foreach ($hooks ?? array_keys((array) $wp_filter) as $hook) {
		if (!isset($wp_filter[$hook]) || $hook === 'all') {
			continue;
		}
		foreach ($wp_filter[$hook]->callbacks as $callbacks) {
			foreach ($callbacks as $entry) {
				$function = $entry['function'] ?? null;
				// The recorder wraps notice callbacks (notices.php): count the plugin's own.
				if ($function instanceof Closure) {
					$ref = new ReflectionFunction($function);
					if ($ref->getFileName() === __FILE__ && array_key_exists('original', $ref->getStaticVariables())) {
						$function = $ref->getStaticVariables()['original'];
					}
				}
				$where = wp_codebox_check_where($function);
				if ($where !== null && wp_codebox_check_is_plugin_file($where['file'])) {
					$out[(string) $hook . "\0" . $where['file'] . "\0" . $where['line']] = ['hook' => (string) $hook] + $where;
				}
			}
		}
	}
	return array_values($out);
}

function wp_codebox_check_first_callback(string $hook) {
	global $wp_filter;
	if (!isset($wp_filter[$hook])) {
		return null;
	}
	foreach ($wp_filter[$hook]->callbacks as $callbacks) {
		foreach ($callbacks as $entry) {
			return $entry['function'];
		}
	}
	return null;
}

function wp_codebox_check_inventory(): array {
	global $menu, $submenu, $shortcode_tags, $wp_filter, $wpdb;
	$relative = static fn(string $url): string => wp_make_link_relative($url);

	$pages = [];
	$page = static function (string $slug, ?string $parent, string $title) use ($relative): array {
		// As menu_page_url() builds it, but with the slug URL-encoded instead of HTML-escaped:
		// this URL is requested, not printed, and esc_url() would turn & into &#038; and drop <>".
		global $_parent_pages;
		if (isset($_parent_pages[$slug])) {
			$parent_slug = $_parent_pages[$slug];
			$base = ($parent_slug && !isset($_parent_pages[$parent_slug])) ? $parent_slug : 'admin.php';
			$url = admin_url($base . (strpos($base, '?') === false ? '?' : '&') . 'page=' . rawurlencode($slug));
		} else {
			$url = admin_url($slug);
		}
		$row = ['slug' => $slug, 'parent' => $parent, 'title' => trim(wp_strip_all_tags($title)), 'url' => $relative($url)];
		$where = wp_codebox_check_where(wp_codebox_check_first_callback(get_plugin_page_hookname($slug, $parent ?? '')));
		if ($where !== null) {
			$row['callback'] = $where;
		}
		return $row;
	};
	foreach ((array) $menu as $item) {
		if (empty($item[2]) || strpos((string) ($item[4] ?? ''), 'wp-menu-separator') !== false) {
			continue;
		}
		$pages[] = $page((string) $item[2], null, (string) $item[0]);
	}
	foreach ((array) $submenu as $parent => $items) {
		foreach ((array) $items as $item) {
			if (!empty($item[2])) {
				$pages[] = $page((string) $item[2], (string) $parent, (string) $item[0]);
			}
		}
	}

	$routes = [];
	$rest_server = rest_get_server();
	$namespaces = $rest_server->get_namespaces();
	foreach ($rest_server->get_routes() as $route => $handlers) {
		$methods = [];
		$callback = null;
		foreach ((array) $handlers as $handler) {
			foreach (array_keys((array) ($handler['methods'] ?? [])) as $method) {
				$methods[] = (string) $method;
			}
			if ($callback === null && !empty($handler['methods']['GET'])) {
				$callback = $handler['callback'] ?? null;
			}
		}
		if ($callback === null && isset($handlers[0]['callback'])) {
			$callback = $handlers[0]['callback'];
		}
		$row = ['route' => (string) $route, 'methods' => array_values(array_unique($methods)), 'pathParams' => (bool) preg_match('/[(\[]/', (string) $route)];
		$endpoints = [];
		foreach ((array) $handlers as $handler) {
			$endpoint = ['methods' => array_map('strval', array_keys((array) ($handler['methods'] ?? []))), 'args' => (object) wp_codebox_check_rest_args((array) ($handler['args'] ?? []))];
			$at = wp_codebox_check_where($handler['callback'] ?? null);
			if ($at !== null && wp_codebox_check_is_plugin_file($at['file'])) {
				$endpoint['callback'] = $at;
			}
			$endpoints[] = $endpoint;
		}
		$row['endpoints'] = $endpoints;
		// WordPress adds an index route for every namespace that has routes.
		if (in_array(ltrim((string) $route, '/'), $namespaces, true)) {
			$row['namespaceIndex'] = true;
		}
		$where = wp_codebox_check_where($callback);
		if ($where !== null) {
			$row['callback'] = $where;
		}
		$routes[] = $row;
	}

	$shortcodes = [];
	foreach ((array) $shortcode_tags as $tag => $callback) {
		$row = ['tag' => (string) $tag];
		$where = wp_codebox_check_where($callback);
		if ($where !== null) {
			$row['callback'] = $where;
		}
		$shortcodes[] = $row;
	}

	$blocks = [];
	foreach (WP_Block_Type_Registry::get_instance()->get_all_registered() as $name => $type) {
		$row = ['name' => (string) $name, 'dynamic' => $type->is_dynamic()];
		$where = wp_codebox_check_where($type->render_callback);
		if ($where !== null) {
			$row['callback'] = $where;
		}
		$blocks[] = $row;
	}

	$cron = [];
	foreach ((array) _get_cron_array() as $events) {
		foreach ((array) $events as $hook => $instances) {
			foreach ((array) $instances as $instance) {
				$cron[] = ['hook' => (string) $hook, 'schedule' => $instance['schedule'] ?: null, 'args' => array_values((array) ($instance['args'] ?? []))];
			}
		}
	}

	$ajax = [];
	foreach (array_keys((array) $wp_filter) as $hook) {
		$hook = (string) $hook;
		if (strpos($hook, 'wp_ajax_nopriv_') === 0) {
			$ajax[] = ['action' => substr($hook, strlen('wp_ajax_nopriv_')), 'nopriv' => true];
		} elseif (strpos($hook, 'wp_ajax_') === 0) {
			$ajax[] = ['action' => substr($hook, strlen('wp_ajax_')), 'nopriv' => false];
		}
	}

	$post_types = [];
	foreach (get_post_types([], 'objects') as $type) {
		$post_types[] = ['name' => $type->name, 'public' => (bool) $type->public, 'hasArchive' => (bool) $type->has_archive];
	}
	$taxonomies = [];
	foreach (get_taxonomies([], 'objects') as $taxonomy) {
		$taxonomies[] = ['name' => $taxonomy->name, 'public' => (bool) $taxonomy->public];
	}

	// register_importer() screens live at admin.php?import=<id>; the callback draws them.
	$importers = [];
	foreach (function_exists('get_importers') ? (array) get_importers() : [] as $id => $data) {
		$row = ['id' => (string) $id, 'name' => trim(wp_strip_all_tags((string) ($data[0] ?? $id))), 'url' => $relative(admin_url('admin.php?import=' . rawurlencode((string) $id)))];
		$where = wp_codebox_check_where($data[2] ?? null);
		if ($where !== null) {
			$row['callback'] = $where;
		}
		$importers[] = $row;
	}

	return [
		'adminPages' => $pages,
		'restRoutes' => $routes,
		'shortcodes' => $shortcodes,
		'blocks' => $blocks,
		'cronHooks' => $cron,
		'ajaxActions' => $ajax,
		'postTypes' => $post_types,
		'taxonomies' => $taxonomies,
		'options' => array_map('strval', (array) $wpdb->get_col("SELECT option_name FROM {$wpdb->options}")),
		'tables' => array_map('strval', (array) $wpdb->get_col('SHOW TABLES')),
		'importers' => $importers,
		'files' => wp_codebox_check_files(),
		'callbacks' => wp_codebox_check_plugin_callbacks(),
	];
}

add_action('admin_init', static function () {
	if (!isset($_GET['wp-codebox-check-inventory']) || !hash_equals($GLOBALS['wp_codebox_check_config']['token'], (string) $_GET['wp-codebox-check-inventory'])) {
		return;
	}
	while (ob_get_level() > 0) {
		ob_end_clean();
	}
	header('Content-Type: application/json; charset=utf-8');
	echo json_encode(wp_codebox_check_inventory(), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR);
	exit;
}, PHP_INT_MAX);
