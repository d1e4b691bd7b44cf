/**
 * Reading the files a user names (`@file` args, `code-file`, recipes, episode scripts, task files,
 * policies, PHPUnit entry scripts, the WP-CLI phar): a regular file only, under a size cap per
 * kind, and never a read that can block. A FIFO, socket, device or directory is refused from its
 * `stat` before anything opens it; the open itself is non-blocking and its `fstat` is checked
 * again (the path may have been swapped between the two), and at most cap + 1 bytes are read, so
 * a file that grows or lies about its size (`/proc`) still stops at the cap.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { WpCodeboxError, quoteValue } from "./errors.js";

const MIB = 1024 * 1024;

/** What a user-named file is for; each kind has its own size cap (`INPUT_FILE_CAPS`). */
export type InputFileKind = "arg-file" | "code-file" | "phpunit-entry" | "task-file" | "wp-cli-phar" | "recipe" | "episode-script" | "policy" | "baseline-image";

/**
 * Size cap in bytes per kind of input file. `arg-file` is an `@path` argument value (`--arg
 * steps-json=@flow.json`, a recipe's `"@file"` value).
 */
export const INPUT_FILE_CAPS: Readonly<Record<InputFileKind, number>> = {
  "arg-file": 16 * MIB,
  "code-file": 16 * MIB,
  "phpunit-entry": 16 * MIB,
  "task-file": 16 * MIB,
  "wp-cli-phar": 64 * MIB,
  recipe: 4 * MIB,
  "episode-script": 4 * MIB,
  policy: 1 * MIB,
  "baseline-image": 32 * MIB,
};

/** How the kinds read in messages. */
const KIND_LABELS: Readonly<Record<InputFileKind, string>> = {
  "arg-file": "@file argument",
  "code-file": "code-file",
  "phpunit-entry": "PHPUnit entry script",
  "task-file": "batch task file",
  "wp-cli-phar": "WP-CLI phar",
  recipe: "recipe",
  "episode-script": "episode script",
  policy: "policy file",
  "baseline-image": "baseline image",
};

/** A regular file that passed `checkInputFile`. */
export interface CheckedInputFile {
  /** The path as checked. */
  path: string;
  /** Its size in bytes when checked. */
  sizeBytes: number;
}

/** `1 MiB`, `64 MiB`, `512 bytes`. */
function formatBytes(bytes: number): string {
  return bytes >= MIB && bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}

/** What a non-regular file is, in words (`a FIFO (named pipe)`), or undefined for a regular file. */
export function specialFileType(stats: Pick<Stats, "isFile" | "isDirectory" | "isFIFO" | "isSocket" | "isCharacterDevice" | "isBlockDevice">): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/**
 * Refuses a string holding a NUL byte: no path, login or target can contain one, and Node's file
 * functions would throw a TypeError on it that is no input error.
 * @param value - the value as given.
 * @param what - what it is, for the message (`--artifacts`, `mount target`).
 * @param code - the error code to throw; default `input-file-invalid`.
 * @throws WpCodeboxError `code` with `data.value` (the value quoted, at most 200 characters).
 */
export function assertNoNulByte(value: string, what: string, code: "input-file-invalid" | "invalid-mount" | "invalid-argument" | "artifacts-dir-invalid" | "wordpress-source-invalid" = "input-file-invalid"): void {
  if (!value.includes("\0")) return;
  throw new WpCodeboxError(code, `${what} ${quoteValue(value)} contains a NUL byte, which no path or name may hold: remove it.`, { value: quoteValue(value) });
}

/** A path for `data`: as is when it is one the file system could hold, else quoted and cut. */
function detailPath(path: string): string {
  return path.length <= 4096 && !path.includes("\0") ? path : quoteValue(path);
}

function invalid(path: string, kind: InputFileKind, why: string, extra: Record<string, unknown> = {}, cause?: unknown): WpCodeboxError {
  return new WpCodeboxError(
    "input-file-invalid",
    `The ${KIND_LABELS[kind]} ${quoteValue(path)} ${why}: pass a regular file.`,
    { path: detailPath(path), kind, ...extra },
    cause !== undefined ? { cause } : undefined,
  );
}

function tooLarge(path: string, kind: InputFileKind, sizeBytes?: number): WpCodeboxError {
  const cap = INPUT_FILE_CAPS[kind];
  const size = sizeBytes !== undefined ? ` (${sizeBytes} bytes)` : "";
  return new WpCodeboxError(
    "input-file-too-large",
    `The ${KIND_LABELS[kind]} ${quoteValue(path)} is larger${size} than the ${formatBytes(cap)} cap for ${/^[aeiou]/i.test(KIND_LABELS[kind]) ? "an" : "a"} ${KIND_LABELS[kind]}: pass a smaller file.`,
    { path: detailPath(path), kind, capBytes: cap, ...(sizeBytes !== undefined ? { sizeBytes } : {}) },
  );
}

function fromErrno(path: string, kind: InputFileKind, error: unknown): WpCodeboxError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === "ENOENT" ? "does not exist" : code === "EACCES" || code === "EPERM" ? "cannot be read (permission denied)" : `cannot be read (${code ?? (error as Error).message})`;
  return invalid(path, kind, why, code ? { errno: code } : {}, error);
}

function checkStats(path: string, kind: InputFileKind, stats: Stats): CheckedInputFile {
  const special = specialFileType(stats);
  if (special) throw invalid(path, kind, `is ${special}`, { fileType: special });
  if (stats.size > INPUT_FILE_CAPS[kind]) throw tooLarge(path, kind, stats.size);
  return { path, sizeBytes: stats.size };
}

/**
 * Checks without opening: the path names a regular file (symlinks followed) within the kind's cap.
 * @param path - host path (absolute, or relative to the process's working directory).
 * @param kind - what the file is for; picks the cap.
 * @returns `{ path, sizeBytes }`.
 * @throws WpCodeboxError `input-file-invalid` (NUL byte, missing, unreadable, FIFO, socket,
 *   device, directory; `data.kind`, `data.fileType`) or `input-file-too-large`
 *   (`data.capBytes`, `data.sizeBytes`).
 */
export function checkInputFile(path: string, kind: InputFileKind): CheckedInputFile {
  assertNoNulByte(path, `The ${KIND_LABELS[kind]} path`);
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw fromErrno(path, kind, error);
  }
  return checkStats(path, kind, stats);
}

// O_NONBLOCK: opening a FIFO swapped in after the stat returns at once instead of waiting for a
// writer; O_NOCTTY: a terminal never becomes our controlling one.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** Options of the readers. */
export interface InputReadOptions {
  /**
   * Called with the real path of the file actually opened (symlinks resolved from the open
   * handle, not from the name), before a byte is read; throws to refuse it. A path checked by
   * name and then read could be swapped for a symlink in between: this checks what was opened.
   */
  confine?: (realPath: string) => void;
}

/** Real path of an open descriptor: Linux names it under /proc; elsewhere the name resolved again. */
function openedRealPath(fd: number, path: string): string {
  try {
    return realpathSync(`/proc/self/fd/${fd}`);
  } catch {
    return realpathSync(path);
  }
}

/**
 * Reads a user-named file's bytes synchronously, for the checks that run before boot (they are
 * synchronous). It cannot block: anything but a regular file is refused before a byte is read.
 * @returns the file's bytes (at most the kind's cap).
 * @throws WpCodeboxError `input-file-invalid` or `input-file-too-large` (see `checkInputFile`).
 */
export function readInputFileSync(path: string, kind: InputFileKind, options: InputReadOptions = {}): Buffer {
  checkInputFile(path, kind);
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw fromErrno(path, kind, error);
  }
  try {
    checkStats(path, kind, fstatSync(fd));
    options.confine?.(openedRealPath(fd, path));
    const cap = INPUT_FILE_CAPS[kind];
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 * MIB, cap + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > cap) throw tooLarge(path, kind);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof WpCodeboxError) throw error;
    throw fromErrno(path, kind, error);
  } finally {
    closeSync(fd);
  }
}

/** `readInputFileSync` decoded as UTF-8. */
export function readInputTextSync(path: string, kind: InputFileKind, options: InputReadOptions = {}): string {
  return readInputFileSync(path, kind, options).toString("utf8");
}

/**
 * Reads a user-named file's bytes without blocking the event loop (signal handlers keep running).
 * @param path - host path.
 * @param kind - what the file is for; picks the cap (`INPUT_FILE_CAPS`).
 * @returns the file's bytes (at most the kind's cap).
 * @throws WpCodeboxError `input-file-invalid` or `input-file-too-large` (see `checkInputFile`).
 * @example const php = await readInputText("./probe.php", "code-file");
 */
export async function readInputFile(path: string, kind: InputFileKind, options: InputReadOptions = {}): Promise<Buffer> {
  checkInputFile(path, kind);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    throw fromErrno(path, kind, error);
  }
  try {
    checkStats(path, kind, await handle.stat());
    options.confine?.(openedRealPath(handle.fd, path));
    const cap = INPUT_FILE_CAPS[kind];
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 * MIB, cap + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > cap) throw tooLarge(path, kind);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof WpCodeboxError) throw error;
    throw fromErrno(path, kind, error);
  } finally {
    await handle.close();
  }
}

/** `readInputFile` decoded as UTF-8. */
export async function readInputText(path: string, kind: InputFileKind): Promise<string> {
  return (await readInputFile(path, kind)).toString("utf8");
}

/**
 * Whether a reader's error says only that the file does not exist (`ENOENT`, `ENOTDIR`). Callers
 * that already had their own code for a missing file (`invalid-recipe`, `invalid-policy`, …)
 * keep it; every other refusal stays `input-file-invalid` / `input-file-too-large`.
 */
export function isMissingInputFile(error: unknown): boolean {
  if (!(error instanceof WpCodeboxError) || error.code !== "input-file-invalid") return false;
  return error.data.errno === "ENOENT" || error.data.errno === "ENOTDIR";
}

/** Which input-file kind (and cap) a command's `path` argument is: `code-file`, `phpunit` → `phpunit-entry`, else `arg-file`. */
export function pathArgumentKind(argument: string): InputFileKind {
  if (argument === "code-file") return "code-file";
  if (argument === "phpunit") return "phpunit-entry";
  return "arg-file";
}
