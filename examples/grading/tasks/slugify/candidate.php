<?php
function grading_slugify( string $text ): string {
	return trim( preg_replace( '/[^a-z0-9]+/', '-', strtolower( $text ) ), '-' );
}
