<?php
function grading_count_visit(): int {
	$visits = (int) get_option( 'grading_visits', 0 ) + 1;
	update_option( 'grading_visits', $visits );
	return $visits;
}
