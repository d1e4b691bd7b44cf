<?php
/**
 * wordpress.phpunit: reads PHPUnit's own JUnit log and prints the counts and every failing test as
 * JSON. The caller defines $wp_codebox_junit (the log's sandbox path) and $wp_codebox_plugin_dir.
 * Failures and errors carry the location of the failing assertion: the first frame of the failure's
 * trace inside the test's own file, else the test method's file and line.
 */
$wp_codebox_xml = @simplexml_load_file($wp_codebox_junit);
if ($wp_codebox_xml === false) {
	echo json_encode(['found' => false]);
	return;
}
$totals = ['tests' => 0, 'assertions' => 0, 'failures' => 0, 'errors' => 0, 'skipped' => 0, 'warnings' => 0];
foreach ($wp_codebox_xml->testsuite as $suite) {
	foreach (array_keys($totals) as $key) {
		$totals[$key] += (int) $suite[$key];
	}
}
$failing = [];
foreach ($wp_codebox_xml->xpath('//testcase') as $case) {
	foreach (['failure', 'error'] as $kind) {
		foreach ($case->{$kind} as $problem) {
			$text = trim((string) $problem);
			$file = (string) $case['file'];
			$line = (int) $case['line'];
			if (preg_match_all('/^(\/\S+?):(\d+)$/m', $text, $frames, PREG_SET_ORDER)) {
				foreach ($frames as $frame) {
					if ($frame[1] === $file) { $line = (int) $frame[2]; break; }
				}
			}
			// The message is the text before PHPUnit's trace (the trailing "path:line" lines).
			$message = trim(preg_replace('/(\n\/\S+:\d+)+\s*$/', '', "\n" . $text));
			$name = (string) $case['name'];
			$class = (string) ($case['class'] ?: $case['classname']);
			// PHPUnit 9 starts the text with the test's name; the message follows it.
			foreach ([$class . '::' . $name, $name] as $prefix) {
				if ($prefix !== '' && strncmp($message, $prefix . "\n", strlen($prefix) + 1) === 0) { $message = ltrim(substr($message, strlen($prefix) + 1)); break; }
			}
			$failing[] = [
				'name' => $class !== '' ? $class . '::' . $name : $name,
				'kind' => $kind,
				'type' => (string) $problem['type'],
				'message' => $message,
				'file' => $file,
				'line' => $line,
			];
		}
	}
}
echo json_encode(['found' => true, 'totals' => $totals, 'failing' => $failing], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PARTIAL_OUTPUT_ON_ERROR);
