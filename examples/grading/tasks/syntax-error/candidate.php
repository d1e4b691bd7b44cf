<?php
function grading_double( int $n ): int {
	return $n * 2
}
