<?php
grading_assert_same( 6, grading_sum_even( array( 1, 2, 3, 4 ) ), 'sum of 1..4' );
grading_assert_same( 6, grading_sum_even( array( 2, 4 ) ), 'the first element counts too' );
grading_assert_same( 0, grading_sum_even( array() ), 'empty list' );
