<?php
function grading_sum_even( array $numbers ): int {
	$sum = 0;
	for ( $i = 1; $i < count( $numbers ); $i++ ) {
		if ( 0 === $numbers[ $i ] % 2 ) {
			$sum += $numbers[ $i ];
		}
	}
	return $sum;
}
