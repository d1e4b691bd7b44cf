<?php
grading_assert( shortcode_exists( 'greet' ), 'the greet shortcode is not registered' );
grading_assert_same( 'Hello, Ada!', do_shortcode( '[greet name="Ada"]' ), 'named greeting' );
grading_assert_same( 'Hello, friend!', do_shortcode( '[greet]' ), 'default name' );
grading_assert_same( 'Hello, &lt;b&gt;!', do_shortcode( '[greet name="<b>"]' ), 'the name is escaped' );
