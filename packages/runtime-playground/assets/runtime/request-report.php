<?php
/**
 * wp-codebox: loaded before every PHP script and HTTP request of a sandbox (Playground's
 * auto_prepend preload folder). At shutdown it writes how the request ended to
 * /internal/wp-codebox/request-report.json, which the worker reads and deletes after each run or
 * HTTP request:
 *   fatal:    error_get_last() when the request died of a fatal error (message, file, line, type);
 *   dbErrors: every database error WordPress recorded ($EZSQL_ERROR, filled by wpdb::print_error
 *             and the SQLite integration), as [{ query, message }] with the message as plain text.
 *
 * HTTP requests (every request without $_SERVER['WP_CODEBOX_SCRIPT'], which the worker sets for
 * scripts) do not display PHP errors (as on a production server), so a fatal error before the
 * response was sent gives HTTP 500 from PHP itself; the runtime reports the error from this file.
 */
if (empty($_SERVER['WP_CODEBOX_SCRIPT'])) {
    // Logged when it happens, so even a fatal that leaves no memory for shutdown code is seen.
    $__wp_codebox_error_log = static function () {
        ini_set('display_errors', '0');
        ini_set('log_errors', '1');
        ini_set('error_log', '/internal/wp-codebox/http-error.log');
    };
    $__wp_codebox_error_log();
    // Playground's own must-use plugin turns error logging off: turn it back on after must-use
    // plugins load (a hook registered before WordPress loads, which WordPress supports).
    $GLOBALS['wp_filter']['muplugins_loaded'][PHP_INT_MAX]['wp_codebox_error_log'] = array('function' => $__wp_codebox_error_log, 'accepted_args' => 0);
    unset($__wp_codebox_error_log);
}
// Memory for the shutdown function when the request died of memory exhaustion (deep recursion).
$GLOBALS['__wp_codebox_reserve'] = str_repeat(' ', 2 * 1024 * 1024);
register_shutdown_function(static function () {
    $GLOBALS['__wp_codebox_reserve'] = null;
    @ini_set('memory_limit', '-1');
    $report = array();
    $e = error_get_last();
    // E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR
    if ($e !== null && ($e['type'] & (1 | 4 | 16 | 64 | 256 | 4096))) {
        $report['fatal'] = $e;
    }
    if (!empty($GLOBALS['EZSQL_ERROR']) && is_array($GLOBALS['EZSQL_ERROR'])) {
        $report['dbErrors'] = array();
        foreach ($GLOBALS['EZSQL_ERROR'] as $entry) {
            $text = (string) ($entry['error_str'] ?? '');
            // The SQLite integration formats its errors as HTML with the message in .error_message.
            if (preg_match('/class="error_message"[^>]*>\s*(.*?)\s*<\/div>/s', $text, $m)) {
                $text = $m[1];
            }
            $text = trim(html_entity_decode(strip_tags($text), ENT_QUOTES | ENT_HTML5, 'UTF-8'));
            $report['dbErrors'][] = array('query' => (string) ($entry['query'] ?? ''), 'message' => $text);
        }
    }
    if ($report) {
        @file_put_contents('/internal/wp-codebox/request-report.json', json_encode($report, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR));
    }
});
