<?php
/**
 * Database drop-in of a native sandbox: WordPress's own wpdb on MariaDB, recording every database
 * error (the query and MariaDB's message) for the result's `dbErrors`.
 */
class WP_Codebox_Native_DB extends wpdb {
	public function print_error($str = '') {
		$message = $str !== '' ? $str : $this->last_error;
		if ($message !== '') {
			// A request through the web server records into a file of its own (its id is a FastCGI
			// parameter, which no request header can set); a command's run into the shared one.
			$id = isset($_SERVER['WP_CODEBOX_REQUEST']) && preg_match('/^[a-f0-9-]{36}$/', (string) $_SERVER['WP_CODEBOX_REQUEST']) ? '-' . $_SERVER['WP_CODEBOX_REQUEST'] : '';
			// A child loading WordPress before its run holds its own until the run starts (runner.php).
			$file = function_exists('wp_codebox_db_errors_file') ? wp_codebox_db_errors_file() : '/internal/wp-codebox/db-errors' . $id . '.jsonl';
			@file_put_contents($file, json_encode(array('query' => (string) $this->last_query, 'message' => (string) $message)) . "\n", FILE_APPEND);
		}
		return parent::print_error($str);
	}
}
$wpdb = new WP_Codebox_Native_DB(DB_USER, DB_PASSWORD, DB_NAME, DB_HOST);
// A child the warm process preloads WordPress in reads the database's write counters here, before
// WordPress reads anything (php/runner.php).
if (function_exists('wp_codebox_db_connected')) {
	wp_codebox_db_connected($wpdb);
}
