<?php
/**
 * Watching the sandbox's changeable files for the warm server (server.php): an inotify instance,
 * opened through PHP's FFI, on every folder of wp-content and on the caller's mounts (a mounted
 * file is watched itself, as a write through the host's path reaches only its own watch). A child
 * that loads WordPress beside a run reads files no check looks at again (a plugin's JSON, a theme's
 * theme.json); any change to them since it was forked makes it stale.
 *
 * Kernel constants are inotify's (linux/inotify.h).
 */

/** Changes that count: contents, metadata, entries created, deleted or moved, the watched thing itself gone. */
const WP_CODEBOX_IN_CHANGES = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800;
const WP_CODEBOX_IN_ISDIR = 0x40000000;
const WP_CODEBOX_IN_Q_OVERFLOW = 0x4000;
/** Watches at most: a wp-content with more folders is not watched (no loading beside a run then). */
const WP_CODEBOX_WATCH_BUDGET = 20000;

/**
 * The watch: `ffi`, `fd`, the folder of each watch descriptor, and `ok` (false once a watch could
 * not be added or events were lost: changes can no longer be told apart from none).
 * @param array|null $set
 * @return array|null null when inotify cannot be used here.
 */
function wp_codebox_fs_watch($set = null) {
	static $watch = null;
	if ($set !== null) {
		$watch = $set;
	}
	return $watch;
}

/**
 * Starts watching wp-content and the mount targets (`$targets`, sandbox paths).
 * @param string[] $targets
 */
function wp_codebox_fs_watch_start(array $targets): void {
	try {
		$ffi = FFI::cdef('int inotify_init1(int flags); int inotify_add_watch(int fd, const char *pathname, uint32_t mask); long read(int fd, void *buf, unsigned long count);', 'libc.so.6');
	} catch (Throwable $e) {
		return;
	}
	// IN_NONBLOCK | IN_CLOEXEC
	$fd = $ffi->inotify_init1(0x800 | 0x80000);
	if ($fd < 0) {
		return;
	}
	wp_codebox_fs_watch(array('ffi' => $ffi, 'fd' => $fd, 'dirs' => array(), 'ok' => true, 'buffer' => FFI::new('char[65536]')));
	wp_codebox_fs_add('/wordpress/wp-content');
	foreach ($targets as $target) {
		wp_codebox_fs_add($target);
	}
}

/** Watches `$path`: a folder with every folder under it (links not followed), or a file. */
function wp_codebox_fs_add(string $path): void {
	$watch = wp_codebox_fs_watch();
	if ($watch === null || !$watch['ok'] || is_link($path) || !file_exists($path)) {
		return;
	}
	if (count($watch['dirs']) >= WP_CODEBOX_WATCH_BUDGET) {
		$watch['ok'] = false;
		wp_codebox_fs_watch($watch);
		return;
	}
	$wd = $watch['ffi']->inotify_add_watch($watch['fd'], $path, WP_CODEBOX_IN_CHANGES);
	if ($wd < 0) {
		$watch['ok'] = false;
		wp_codebox_fs_watch($watch);
		return;
	}
	$watch['dirs'][$wd] = $path;
	wp_codebox_fs_watch($watch);
	if (is_dir($path)) {
		foreach (@scandir($path) ?: array() as $name) {
			if ($name !== '.' && $name !== '..' && is_dir("$path/$name") && !is_link("$path/$name")) {
				wp_codebox_fs_add("$path/$name");
			}
		}
	}
}

/**
 * Reads the changes since the last call (watching the folders made meanwhile).
 * @return bool whether anything changed, or changes can no longer be seen (then always true).
 */
function wp_codebox_fs_changed(): bool {
	$watch = wp_codebox_fs_watch();
	if ($watch === null) {
		return true;
	}
	$changed = !$watch['ok'];
	while (true) {
		$n = (int) $watch['ffi']->read($watch['fd'], $watch['buffer'], 65536);
		if ($n <= 0) {
			break;
		}
		$changed = true;
		$bytes = FFI::string($watch['buffer'], $n);
		for ($at = 0; $at + 16 <= $n;) {
			$event = unpack('lwd/Vmask/Vcookie/Vlen', $bytes, $at);
			$name = rtrim(substr($bytes, $at + 16, $event['len']), "\0");
			$at += 16 + $event['len'];
			if ($event['mask'] & WP_CODEBOX_IN_Q_OVERFLOW) {
				$watch['ok'] = false;
				wp_codebox_fs_watch($watch);
			} elseif (($event['mask'] & WP_CODEBOX_IN_ISDIR) && ($event['mask'] & (0x80 | 0x100)) && isset($watch['dirs'][$event['wd']])) {
				wp_codebox_fs_add($watch['dirs'][$event['wd']] . '/' . $name);
				$watch = wp_codebox_fs_watch();
			}
		}
	}
	return $changed;
}
