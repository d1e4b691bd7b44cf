<?php
/**
 * wp-codebox must-use plugin (every sandbox worker): WordPress HTTP API requests to the sandbox's
 * own site, whose host:port is listed in the constant WP_CODEBOX_SELF_HOSTS.
 * - blocking => false ones (WP-Cron's spawn, background-processing libraries) are not sent over a
 *   socket: the request is written as JSON to WP_CODEBOX_DEFERRED_DIR and WordPress gets the answer
 *   a non-blocking request always gets (no status, empty body). The worker hands the file to the
 *   runtime when the current PHP work ends, and the runtime serves it on the next free worker.
 *   Sent over a socket, the caller would wait out its own timeout for an answer that cannot come
 *   while it holds the worker (about 1 s of curl's polling for WP-Cron's 0.01 s, and without end
 *   under the virtual clock, where that timeout is counted in clock reads).
 * - blocking ones wait at least WP_CODEBOX_SELF_CALL_TIMEOUT seconds: the worker that answers may
 *   have to boot first.
 */
function wp_codebox_is_self_call($url) {
  if (!defined('WP_CODEBOX_SELF_HOSTS')) return false;
  $parts = wp_parse_url($url);
  if (!is_array($parts) || empty($parts['host'])) return false;
  $scheme = strtolower($parts['scheme'] ?? 'http');
  $host = strtolower(trim($parts['host'], '[]'));
  $port = isset($parts['port']) ? (int) $parts['port'] : ($scheme === 'https' ? 443 : 80);
  return in_array($host . ':' . $port, explode(' ', WP_CODEBOX_SELF_HOSTS), true);
}

add_filter('http_request_args', static function ($args, $url) {
  if (!empty($args['blocking']) && defined('WP_CODEBOX_SELF_CALL_TIMEOUT') && wp_codebox_is_self_call($url)) {
    $args['timeout'] = max((float) ($args['timeout'] ?? 5), (float) WP_CODEBOX_SELF_CALL_TIMEOUT);
  }
  return $args;
}, PHP_INT_MAX, 2);

add_filter('pre_http_request', static function ($pre, $args, $url) {
  if ($pre !== false || !isset($args['blocking']) || $args['blocking'] || !defined('WP_CODEBOX_DEFERRED_DIR') || !wp_codebox_is_self_call($url)) return $pre;
  $headers = [];
  $given = $args['headers'] ?? [];
  if (is_string($given)) $given = WP_Http::processHeaders($given)['headers'];
  foreach ((array) $given as $name => $value) $headers[strtolower((string) $name)] = is_array($value) ? implode(', ', $value) : (string) $value;
  if (!isset($headers['user-agent']) && !empty($args['user-agent'])) $headers['user-agent'] = (string) $args['user-agent'];
  $body = $args['body'] ?? null;
  if (is_array($body) || is_object($body)) {
    $body = http_build_query($body, '', '&');
    if (!isset($headers['content-type'])) $headers['content-type'] = 'application/x-www-form-urlencoded; charset=' . get_option('blog_charset');
  }
  $cookies = [];
  foreach ((array) ($args['cookies'] ?? []) as $name => $cookie) {
    if (!$cookie instanceof WP_Http_Cookie) $cookie = new WP_Http_Cookie(['name' => (string) $name, 'value' => (string) $cookie]);
    $cookies[] = $cookie->getHeaderValue();
  }
  if ($cookies) $headers['cookie'] = implode('; ', $cookies);
  $request = [
    'method' => strtoupper((string) ($args['method'] ?? 'GET')),
    'url' => (string) $url,
    'headers' => $headers,
    'body' => $body === null || $body === '' ? null : base64_encode((string) $body),
  ];
  if (!is_dir(WP_CODEBOX_DEFERRED_DIR)) mkdir(WP_CODEBOX_DEFERRED_DIR, 0777, true);
  static $n = 0;
  do {
    $file = sprintf('%s/%08d.json', WP_CODEBOX_DEFERRED_DIR, ++$n);
  } while (file_exists($file));
  file_put_contents($file, json_encode($request));
  return ['headers' => [], 'body' => '', 'response' => ['code' => false, 'message' => false], 'cookies' => [], 'http_response' => null];
}, PHP_INT_MAX, 3);
