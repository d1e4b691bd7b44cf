<?php
grading_assert( function_exists( 'grading_slugify' ), 'grading_slugify() is not defined' );
grading_assert_same( 'hello-world', grading_slugify( 'Hello, World!' ), 'punctuation and case' );
grading_assert_same( 'a-b', grading_slugify( '--a   b--' ), 'runs and edges' );
