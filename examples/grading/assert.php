<?php
// Assertion helpers put before every task's assertions. The task passes when no assertion failed;
// the printed JSON carries each failure's message for the grade report.
$GLOBALS['grading_failures'] = array();

function grading_assert( $condition, string $message ): void {
	if ( ! $condition ) {
		$GLOBALS['grading_failures'][] = $message;
	}
}

function grading_assert_same( $expected, $actual, string $message ): void {
	grading_assert( $expected === $actual, $message . ': expected ' . var_export( $expected, true ) . ', got ' . var_export( $actual, true ) );
}

register_shutdown_function(
	static function () {
		echo wp_json_encode( array( 'passed' => array() === $GLOBALS['grading_failures'], 'failures' => $GLOBALS['grading_failures'] ) );
	}
);
