<?php
add_filter( 'the_title', 'strtoupper' );
