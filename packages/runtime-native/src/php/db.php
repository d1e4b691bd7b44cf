<?php
/**
 * Database drop-in of a native sandbox: WordPress's own wpdb on MariaDB, recording every database
 * error (the query and MariaDB's message) for the result's `dbErrors`.
 */
class WP_Codebox_Native_DB extends wpdb {
	public function print_error($str = '') {
		$message = $str !== '' ? $str : $this->last_error;
		if ($message !== '') {
			@file_put_contents('/internal/wp-codebox/db-errors.jsonl', json_encode(array('query' => (string) $this->last_query, 'message' => (string) $message)) . "\n", FILE_APPEND);
		}
		return parent::print_error($str);
	}
}
$wpdb = new WP_Codebox_Native_DB(DB_USER, DB_PASSWORD, DB_NAME, DB_HOST);
