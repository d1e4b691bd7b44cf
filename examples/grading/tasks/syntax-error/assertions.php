<?php
grading_assert_same( 4, grading_double( 2 ), 'doubles' );
