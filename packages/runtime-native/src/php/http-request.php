<?php
/**
 * wordpress.http-request on a native sandbox, which has no web server: runs one request the way a
 * web server's PHP would, in a fresh child that has not loaded WordPress (runner.php, bootstrap
 * "none"). The request ({ method, path, query, headers, body }) comes from http-request.json: this
 * program fills $_SERVER, $_GET, $_POST, $_COOKIE, $_REQUEST and the raw body, then includes the
 * script the path names (a .php file of the site, a folder's index.php, else WordPress's
 * index.php). The page's output is this run's stdout; its status and headers are written to
 * http-response.json when the page ends (exit() included).
 *
 * PHP's command line keeps no list of the headers a script sends (headers_list() is empty), so
 * the headers are the ones WordPress passes through its filters: wp_headers, nocache_headers,
 * and a redirect's Location and X-Redirect-By. The status is PHP's own (http_response_code()).
 */
$wp_codebox_http = json_decode((string) file_get_contents('/internal/wp-codebox/http-request.json'), true);
$wp_codebox_root = '/wordpress';

/**
 * The headers the page sent, as far as WordPress's filters show them (lower-case names).
 * @param array<string, string>|null $add
 * @return array<string, string>
 */
function wp_codebox_sent_headers($add = null) {
	static $headers = array();
	if ($add !== null) {
		foreach ($add as $name => $value) {
			if ((string) $value === '') {
				unset($headers[strtolower((string) $name)]);
			} else {
				$headers[strtolower((string) $name)] = (string) $value;
			}
		}
	}
	return $headers;
}

// Hooks given to WordPress before it loads (it builds them when plugin.php loads), run last.
$wp_filter = array(
	'wp_headers' => array(PHP_INT_MAX => array(array('function' => static function ($headers) {
		wp_codebox_sent_headers(is_array($headers) ? $headers : array());
		return $headers;
	}, 'accepted_args' => 1))),
	'nocache_headers' => array(PHP_INT_MAX => array(array('function' => static function ($headers) {
		wp_codebox_sent_headers(is_array($headers) ? $headers : array());
		return $headers;
	}, 'accepted_args' => 1))),
	'wp_redirect' => array(PHP_INT_MAX => array(array('function' => static function ($location) {
		if ($location) {
			wp_codebox_sent_headers(array('location' => wp_sanitize_redirect($location)));
		}
		return $location;
	}, 'accepted_args' => 1))),
	'x_redirect_by' => array(PHP_INT_MAX => array(array('function' => static function ($by) {
		if (is_string($by) && $by !== '') {
			wp_codebox_sent_headers(array('x-redirect-by' => $by));
		}
		return $by;
	}, 'accepted_args' => 1))),
);

// The script the path names, as a web server with WordPress's rewrite rules would pick it.
$wp_codebox_path = '/' . ltrim((string) $wp_codebox_http['path'], '/');
$wp_codebox_script = '/index.php';
$wp_codebox_file = realpath($wp_codebox_root . $wp_codebox_path);
if ($wp_codebox_file !== false && strpos($wp_codebox_file . '/', $wp_codebox_root . '/') === 0) {
	if (is_dir($wp_codebox_file) && is_file($wp_codebox_file . '/index.php')) {
		$wp_codebox_script = rtrim($wp_codebox_path, '/') . '/index.php';
	} elseif (is_file($wp_codebox_file) && substr($wp_codebox_file, -4) === '.php' && basename($wp_codebox_file) !== 'wp-config.php') {
		$wp_codebox_script = $wp_codebox_path;
	}
}

$_SERVER['REQUEST_METHOD'] = (string) $wp_codebox_http['method'];
$_SERVER['REQUEST_URI'] = $wp_codebox_path . ($wp_codebox_http['query'] !== '' ? '?' . $wp_codebox_http['query'] : '');
$_SERVER['QUERY_STRING'] = (string) $wp_codebox_http['query'];
$_SERVER['HTTP_HOST'] = (string) $wp_codebox_http['host'];
$_SERVER['SERVER_NAME'] = (string) $wp_codebox_http['host'];
$_SERVER['SERVER_PORT'] = '80';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
$_SERVER['HTTPS'] = 'off';
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';
$_SERVER['DOCUMENT_ROOT'] = $wp_codebox_root;
$_SERVER['SCRIPT_NAME'] = $wp_codebox_script;
$_SERVER['PHP_SELF'] = $wp_codebox_script;
$_SERVER['SCRIPT_FILENAME'] = $wp_codebox_root . $wp_codebox_script;
unset($_SERVER['argv'], $_SERVER['argc'], $_SERVER['PATH_INFO'], $_SERVER['PATH_TRANSLATED']);
$_COOKIE = array();
foreach ($wp_codebox_http['headers'] as $wp_codebox_name => $wp_codebox_value) {
	$wp_codebox_key = strtoupper(str_replace('-', '_', (string) $wp_codebox_name));
	if ($wp_codebox_key === 'CONTENT_TYPE' || $wp_codebox_key === 'CONTENT_LENGTH') {
		$_SERVER[$wp_codebox_key] = (string) $wp_codebox_value;
	} else {
		$_SERVER['HTTP_' . $wp_codebox_key] = (string) $wp_codebox_value;
	}
	if ($wp_codebox_key === 'COOKIE') {
		foreach (explode(';', (string) $wp_codebox_value) as $wp_codebox_pair) {
			$wp_codebox_parts = explode('=', trim($wp_codebox_pair), 2);
			if ($wp_codebox_parts[0] !== '') {
				$_COOKIE[urldecode($wp_codebox_parts[0])] = urldecode($wp_codebox_parts[1] ?? '');
			}
		}
	}
}
$wp_codebox_body = base64_decode((string) $wp_codebox_http['body']);
if ($wp_codebox_body !== '') {
	$_SERVER['CONTENT_LENGTH'] = (string) strlen($wp_codebox_body);
}
parse_str((string) $wp_codebox_http['query'], $_GET);
$_POST = array();
if ($_SERVER['REQUEST_METHOD'] === 'POST' && stripos((string) ($_SERVER['CONTENT_TYPE'] ?? ''), 'application/x-www-form-urlencoded') === 0) {
	parse_str($wp_codebox_body, $_POST);
}
$_REQUEST = array_merge($_GET, $_POST);
// php://input is empty on the command line; WordPress's REST server reads the body from here first.
$HTTP_RAW_POST_DATA = $wp_codebox_body;

register_shutdown_function(static function () {
	$status = http_response_code();
	@file_put_contents('/internal/wp-codebox/http-response.json', json_encode(array('status' => $status === false ? 200 : $status, 'headers' => (object) wp_codebox_sent_headers()), JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE));
});
unset($wp_codebox_http, $wp_codebox_path, $wp_codebox_file, $wp_codebox_name, $wp_codebox_value, $wp_codebox_key, $wp_codebox_pair, $wp_codebox_parts, $wp_codebox_body);
chdir(dirname($wp_codebox_root . $wp_codebox_script));
// Held until the page ends, so headers sent after its first output still count (as with a buffering server).
ob_start();
require $wp_codebox_root . $wp_codebox_script;
