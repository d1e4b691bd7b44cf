<?php
add_shortcode(
	'greet',
	function ( $atts ) {
		$atts = shortcode_atts( array( 'name' => 'friend' ), $atts, 'greet' );
		return 'Hello, ' . esc_html( $atts['name'] ) . '!';
	}
);
