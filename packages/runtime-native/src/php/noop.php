<?php
/**
 * Runs nothing. A run without WordPress makes the warm server drop the child it preloaded: that
 * child loaded WordPress (options, caches) before the database was changed from outside PHP.
 */
