<?php
/**
 * wp-codebox check: the error and warning notices in a piece of wp-admin HTML, as plain text.
 * Pure PHP (DOM and mbstring, no WordPress), so it is tested on its own.
 */

/** Error and warning notices in an HTML page or fragment: [['type' => 'error'|'warning', 'text' => string], …]. */
function wp_codebox_check_notices(string $html): array {
	if (stripos($html, 'error') === false && stripos($html, 'notice-warning') === false) {
		return [];
	}
	$doc = new DOMDocument();
	$previous = libxml_use_internal_errors(true);
	// The XML declaration makes libxml read the markup as UTF-8 whatever the page declares.
	$doc->loadHTML('<?xml encoding="UTF-8">' . $html, LIBXML_NOERROR | LIBXML_NOWARNING | LIBXML_NONET);
	libxml_clear_errors();
	libxml_use_internal_errors($previous);
	$class = static fn(string $name): string => "contains(concat(' ', normalize-space(@class), ' '), ' $name ')";
	$is_notice = sprintf('(%s or %s or %s)', $class('notice-error'), $class('notice-warning'), $class('error'));
	// Hidden markup (class "hidden", the hidden attribute, display:none) is a template that page
	// JavaScript shows when something happens, such as the classic editor's "Connection lost".
	$hidden = sprintf("(%s or @hidden or contains(translate(@style, ' ', ''), 'display:none'))", $class('hidden'));
	$xpath = new DOMXPath($doc);
	$notices = [];
	// Outermost notices only: a notice inside another is part of its text.
	foreach ($xpath->query("//div[$is_notice][not(ancestor::div[$is_notice])][not(ancestor-or-self::*[$hidden])]") as $div) {
		foreach (iterator_to_array($xpath->query('.//script|.//style|.//template', $div)) as $node) {
			$node->parentNode->removeChild($node);
		}
		// Block elements end a run of words: <p>A</p><p>B</p> reads "A B", not "AB".
		foreach (iterator_to_array($xpath->query('.//p|.//div|.//br|.//li|.//ul|.//ol|.//h1|.//h2|.//h3|.//h4|.//h5|.//h6|.//tr|.//td|.//th|.//dt|.//dd|.//blockquote|.//pre', $div)) as $node) {
			$node->parentNode->insertBefore($doc->createTextNode(' '), $node);
			$node->parentNode->insertBefore($doc->createTextNode(' '), $node->nextSibling);
		}
		$text = trim(preg_replace('/\s+/u', ' ', (string) $div->textContent));
		if ($text === '') {
			continue; // an empty placeholder that page JavaScript fills
		}
		$classes = ' ' . preg_replace('/\s+/', ' ', (string) $div->getAttribute('class')) . ' ';
		$notices[] = ['type' => strpos($classes, ' notice-warning ') !== false ? 'warning' : 'error', 'text' => mb_substr($text, 0, 500)];
	}
	return $notices;
}
