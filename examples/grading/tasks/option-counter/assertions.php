<?php
// Holds only on a site no earlier task touched.
grading_assert_same( 1, grading_count_visit(), 'first visit' );
grading_assert_same( 2, grading_count_visit(), 'second visit' );
