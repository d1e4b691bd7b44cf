/**
 * Files the host exchanges with a sandbox through a folder the sandbox can write (its internal
 * folder: requests in, errors and responses out). The host runs as root; the sandbox's PHP can
 * leave a symbolic link, a FIFO, a device or a folder at any of those names, or swap a folder for
 * a link while the host works (a plugin's code runs in the preloaded child between commands). So
 * every path below the folder is resolved one step at a time through an open folder descriptor
 * (`/proc/self/fd/N/name`, Linux's `openat`), never following a link; files are written under a
 * fresh name and renamed into place, and only regular files are read, up to a cap.
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fchownSync, fstatSync, lchownSync, lstatSync, mkdirSync, openSync, readSync, readdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { dropsRoot } from "./bubblewrap.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;

function parts(relative: string): string[] {
  const out = relative.split("/");
  if (out.some((p) => p === "" || p === "." || p === "..")) throw new Error(`refused path ${JSON.stringify(relative)}: it must stay below its folder`);
  return out;
}

const at = (dirFd: number, name: string) => `/proc/self/fd/${dirFd}/${name}`;

/**
 * Opens the folder `relative` below `root` (a folder the sandbox cannot replace, such as a bind's
 * host root), one component at a time without following links. With `create`, a missing folder is
 * made and anything else at its name (a link, a file) is removed first.
 * @returns a descriptor of the folder; close it.
 * @throws the file system's error (ENOENT without `create`, ENOTDIR/ELOOP for a link in the way).
 */
function openDir(root: string, relative: string[], create: boolean, uid: number | undefined): number {
  let fd = openSync(root, O_RDONLY | O_DIRECTORY);
  for (const name of relative) {
    let next: number;
    try {
      next = openSync(at(fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (!create || (code !== "ENOENT" && code !== "ENOTDIR" && code !== "ELOOP")) {
        closeSync(fd);
        throw error;
      }
      rmSync(at(fd, name), { recursive: true, force: true });
      mkdirSync(at(fd, name), { mode: 0o755 });
      next = openSync(at(fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      if (uid !== undefined && dropsRoot()) fchownSync(next, uid, uid);
    }
    closeSync(fd);
    fd = next;
  }
  return fd;
}

/**
 * Writes `content` to `root/relative` without following anything the sandbox left there: folders
 * on the way are opened without following links (a link or file in their place is replaced by a
 * folder), the bytes go to a new file created exclusively, which is then renamed over whatever had
 * the name (a link, a FIFO, a folder is removed first).
 * @param root - host folder the sandbox cannot replace (e.g. the host side of its internal bind).
 * @param relative - `/`-separated path below it (`request.json`, `code/code.php`).
 * @param uid - owner given to the file and created folders when sandboxed processes drop root.
 * @throws Error for a path with empty, `.` or `..` segments; the file system's error otherwise.
 */
export function writeSandboxFile(root: string, relative: string, content: string | Uint8Array, uid?: number): void {
  const names = parts(relative);
  const name = names.pop()!;
  const bytes = typeof content === "string" ? Buffer.from(content) : content;
  const dirFd = openDir(root, names, true, uid);
  try {
    const temp = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
    const fd = openSync(at(dirFd, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    try {
      let done = 0;
      while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done);
      if (uid !== undefined && dropsRoot()) fchownSync(fd, uid, uid);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(at(dirFd, temp), at(dirFd, name));
    } catch {
      // A folder (or a non-empty one) holds the name: rename cannot replace it.
      rmSync(at(dirFd, name), { recursive: true, force: true });
      renameSync(at(dirFd, temp), at(dirFd, name));
    }
  } finally {
    closeSync(dirFd);
  }
}

/** A regular file read from a sandbox folder: its first `maxBytes` bytes, whether it had more, and its size (bytes) when opened. */
export interface SandboxFileContent {
  data: Buffer;
  truncated: boolean;
  size: number;
}

/**
 * Removes `root/relative` whatever it is (a folder with what it holds), without following a link
 * on the way; nothing when it is missing.
 */
export function removeSandboxPath(root: string, relative: string): void {
  const names = parts(relative);
  const name = names.pop()!;
  let dirFd: number;
  try {
    dirFd = openDir(root, names, false, undefined);
  } catch {
    return;
  }
  try {
    rmSync(at(dirFd, name), { recursive: true, force: true });
  } finally {
    closeSync(dirFd);
  }
}

/**
 * Reads `root/relative` if it is a regular file, never following a link nor opening a FIFO or
 * device for long (a FIFO would block the host; `/dev/zero` would never end).
 * @param maxBytes - bytes read at most (the rest is left unread and `truncated` set).
 * @returns undefined when the path is missing or not a regular file (a link, FIFO, folder…).
 */
export function readSandboxFile(root: string, relative: string, maxBytes: number): SandboxFileContent | undefined {
  const names = parts(relative);
  const name = names.pop()!;
  let dirFd: number;
  try {
    dirFd = openDir(root, names, false, undefined);
  } catch {
    return undefined;
  }
  let fd: number;
  try {
    fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return undefined;
  } finally {
    closeSync(dirFd);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const size = Math.min(stat.size, maxBytes);
    const data = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const n = readSync(fd, data, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return { data: data.subarray(0, done), truncated: stat.size > maxBytes, size: stat.size };
  } finally {
    closeSync(fd);
  }
}

/**
 * True when something (of any kind, a dangling link too) has the name `root/relative`, without
 * following a link on the way.
 */
export function sandboxPathExists(root: string, relative: string): boolean {
  const names = parts(relative);
  const name = names.pop()!;
  let dirFd: number;
  try {
    dirFd = openDir(root, names, false, undefined);
  } catch {
    return false;
  }
  try {
    return lstatSync(at(dirFd, name), { throwIfNoEntry: false }) !== undefined;
  } finally {
    closeSync(dirFd);
  }
}

/**
 * Gives `path` and everything below it to `uid` (owner and group) without following a link: each
 * folder is opened without following links and changed through its descriptor, entries are
 * changed with lchown through their folder's descriptor. A folder swapped for a link while the
 * walk runs is then only the link, never the host file or folder it points at.
 * @param path - a host path whose folders on the way the sandbox cannot replace (a layout folder).
 * @throws the file system's error for `path` itself; entries vanishing during the walk are skipped.
 */
export function chownSandboxTree(path: string, uid: number): void {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTDIR" && code !== "ELOOP") throw error;
    lchownSync(path, uid, uid);
    return;
  }
  const walk = (dirFd: number) => {
    fchownSync(dirFd, uid, uid);
    for (const name of readdirSync(`/proc/self/fd/${dirFd}`)) {
      let child: number | undefined;
      try {
        child = openSync(at(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOTDIR" || code === "ELOOP") {
          try {
            lchownSync(at(dirFd, name), uid, uid);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
          }
        } else if (code !== "ENOENT") throw error;
      }
      if (child === undefined) continue;
      try {
        walk(child);
      } finally {
        closeSync(child);
      }
    }
  };
  try {
    walk(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes `root/relative` a folder (or, with `kind` "file", an empty regular file when it is not one
 * already), with each folder on the way a real folder: a link, file or FIFO in the place of one is
 * removed and a folder made, all through folder descriptors, never following a link. What is made
 * is given to `uid` when sandboxed processes drop root.
 * @returns how many folders or files were made (0 when everything was in place).
 * @throws Error for a path with empty, `.` or `..` segments; the file system's error otherwise.
 */
export function makeSandboxPath(root: string, relative: string, kind: "file" | "dir", uid: number): number {
  const names = parts(relative);
  let made = 0;
  let fd = openSync(root, O_RDONLY | O_DIRECTORY);
  try {
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const wanted = i === names.length - 1 ? kind : "dir";
      const stat = lstatSync(at(fd, name), { throwIfNoEntry: false });
      if (stat && (wanted === "file" ? stat.isFile() : stat.isDirectory())) {
        if (wanted === "file") break;
      } else {
        if (stat) rmSync(at(fd, name), { recursive: true, force: true });
        if (wanted === "file") {
          const file = openSync(at(fd, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
          try {
            if (dropsRoot()) fchownSync(file, uid, uid);
          } finally {
            closeSync(file);
          }
          made++;
          break;
        }
        mkdirSync(at(fd, name), { mode: 0o755 });
        made++;
      }
      // Opened without following: a link swapped in after the check fails here (ELOOP/ENOTDIR).
      const next = openSync(at(fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      if (!stat?.isDirectory() && dropsRoot()) fchownSync(next, uid, uid);
      closeSync(fd);
      fd = next;
    }
  } finally {
    closeSync(fd);
  }
  return made;
}
