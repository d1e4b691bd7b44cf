/**
 * Writing a file the caller names into a folder a sandbox could write to, without following what
 * the sandbox left there: restoring a snapshot runs as the host user, and a symbolic link that
 * PHP made in wp-content (`wp-content/x.php` → `/etc/cron.d/x`) would otherwise carry the write to
 * the host.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes `content` to `root/relative`, replacing any symbolic link or other non-folder on the way
 * and any non-file at the end, so the bytes land inside `root` and nowhere else.
 * @param root - a host folder (must exist).
 * @param relative - `/`-separated path below it; empty, `.` and `..` segments are refused.
 * @param content - the bytes.
 * @param onCreated - called with each folder created and with the file (e.g. to give them to a uid).
 * @throws Error for a refused path; the file system's error when writing fails (`ELOOP` if a link
 *   appeared at the file's place meanwhile).
 */
export function writeFileInside(root: string, relative: string, content: Uint8Array, onCreated?: (path: string) => void): void {
  const parts = relative.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) throw new Error(`refused path ${JSON.stringify(relative)}: it must stay below its folder`);
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    const path = join(dir, part);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) {
      if (stat) rmSync(path, { force: true });
      mkdirSync(path);
      onCreated?.(path);
    }
    dir = path;
  }
  const target = join(dir, parts[parts.length - 1]!);
  const stat = lstatSync(target, { throwIfNoEntry: false });
  if (stat && !stat.isFile()) rmSync(target, { recursive: true, force: true });
  const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    let at = 0;
    while (at < content.byteLength) at += writeSync(fd, content, at, content.byteLength - at);
  } finally {
    closeSync(fd);
  }
  onCreated?.(target);
}
