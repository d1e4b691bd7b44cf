<?php
/**
 * wp-codebox must-use plugin (every sandbox worker). A sandbox runs with WP_DEBUG on and
 * WP_DEBUG_DISPLAY false, as a developer's test site does; WordPress's wp_debug_mode() then turns
 * PHP's display_errors off, so notices, warnings and wp_trigger_error() messages would go nowhere.
 * This sends them back to stderr, where every command captures them: never into a page's HTML.
 * With WP_DEBUG_DISPLAY true (a --define) WordPress prints them into pages, as it would anywhere.
 */
if (defined('WP_DEBUG') && WP_DEBUG && defined('WP_DEBUG_DISPLAY') && WP_DEBUG_DISPLAY === false) {
  ini_set('display_errors', 'stderr');
}
