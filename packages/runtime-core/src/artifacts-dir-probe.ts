/**
 * The bundle folder is checked before any work runs, so a read-only disk, a full disk or a name
 * the filesystem refuses is an environment error at once, not a lost result after the run; and a
 * bundle that still cannot be written afterwards is reported as such (`artifacts-dir-unwritable`),
 * not as an internal bug.
 */
import { existsSync, mkdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { WpCodeboxError, type SerializedError } from "./errors.js";

/**
 * Free space the bundle folder's filesystem must have before a run starts, in bytes (64 MiB): room
 * for a typical bundle (results, logs, screenshots, a database export) with margin. Set
 * `WP_CODEBOX_ARTIFACTS_MIN_FREE_BYTES` to change it (`0` turns the check off).
 */
export const ARTIFACTS_MIN_FREE_BYTES = 64 * 1024 * 1024;

/** What each errno means for a bundle folder, and what to try next. */
const CAUSES: Record<string, string> = {
  EROFS: "its filesystem is read-only",
  ENOSPC: "its filesystem is full",
  EDQUOT: "the disk quota is used up",
  ENAMETOOLONG: "the path, or one of its names, is longer than the filesystem allows",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTDIR: "a part of the path is a file, not a folder",
  EEXIST: "a file is in the way",
  EIO: "the disk reported an I/O error",
};

/** The errno code of a Node system error (`EROFS`, …), or undefined. */
function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code) ? code : undefined;
}

/**
 * The real errno behind a failed recursive mkdir: Node's `mkdir(…, { recursive: true })` reports
 * ENOENT on a read-only filesystem, so the first missing folder is created on its own (and removed
 * again) to learn the cause (EROFS, EACCES, …). Returns `cause` when nothing better is found.
 */
function mkdirCause(abs: string, cause: string): string {
  if (cause !== "ENOENT" || existsSync(abs)) return cause;
  let missing = abs;
  while (!existsSync(dirname(missing)) && dirname(missing) !== missing) missing = dirname(missing);
  try {
    mkdirSync(missing);
    rmSync(missing, { recursive: true, force: true });
  } catch (error) {
    return errnoOf(error) ?? cause;
  }
  return cause;
}

/** The path a Node system error names, if any. */
function failedPath(error: unknown): string | undefined {
  const path = (error as { path?: unknown } | null)?.path;
  return typeof path === "string" ? resolve(path) : undefined;
}

function unwritable(directory: string, cause: string, reason: string, extra: Record<string, unknown> = {}): WpCodeboxError {
  return new WpCodeboxError(
    "artifacts-dir-unwritable",
    `Cannot write the bundle to ${directory}: ${reason} (${cause}). Pass --artifacts with a folder on a writable filesystem with free space and a shorter name.`,
    { directory, cause, ...extra },
  );
}

/** The free-space floor: `$WP_CODEBOX_ARTIFACTS_MIN_FREE_BYTES` when a whole number, else `ARTIFACTS_MIN_FREE_BYTES`. */
export function artifactsMinFreeBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.WP_CODEBOX_ARTIFACTS_MIN_FREE_BYTES;
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : ARTIFACTS_MIN_FREE_BYTES;
}

/**
 * Checks that a bundle can be written to `directory`: creates it (and its parents), writes and
 * removes a probe file in it, and checks its filesystem's free space (statfs, space available to
 * this user) against `minFreeBytes`. Leaves the folder behind, empty.
 * @param minFreeBytes - bytes that must be free; default `artifactsMinFreeBytes()` (64 MiB).
 * @throws WpCodeboxError `artifacts-dir-unwritable` (exit 3) with `data.cause` the errno
 *   (`EROFS`, `ENOSPC`, `ENAMETOOLONG`, `EACCES`, …) and, for too little space,
 *   `data.freeBytes` / `data.requiredBytes`.
 */
export function probeArtifactsDir(directory: string, minFreeBytes = artifactsMinFreeBytes()): void {
  const abs = resolve(directory);
  const step = probeSteps(abs, unwritable);
  if (minFreeBytes <= 0) return;
  let freeBytes: number | undefined;
  step("its free space cannot be read", () => {
    const fs = statfsSync(abs);
    freeBytes = fs.bavail * fs.bsize;
  });
  if (freeBytes !== undefined && freeBytes < minFreeBytes) {
    throw unwritable(abs, "ENOSPC", `only ${freeBytes} bytes are free, less than the ${minFreeBytes} a run needs (WP_CODEBOX_ARTIFACTS_MIN_FREE_BYTES)`, { freeBytes, requiredBytes: minFreeBytes });
  }
}

/**
 * Creates `abs` (and its parents), writes and removes a probe file in it; a filesystem failure
 * becomes `fail(abs, errno, reason)`. Returns the step runner for further checks.
 */
function probeSteps(abs: string, fail: (directory: string, cause: string, reason: string) => WpCodeboxError): (what: string, action: () => void) => void {
  const step = (what: string, action: () => void): void => {
    try {
      action();
    } catch (error) {
      const errno = errnoOf(error);
      if (!errno) throw error;
      const cause = mkdirCause(failedPath(error) ?? abs, errno);
      throw fail(abs, cause, `${what}: ${CAUSES[cause] ?? (error as Error).message}`);
    }
  };
  step("the folder cannot be created", () => mkdirSync(abs, { recursive: true }));
  const probe = join(abs, `.wp-codebox-probe-${randomBytes(4).toString("hex")}`);
  step("a file cannot be written in it", () => writeFileSync(probe, "probe"));
  step("a file cannot be removed from it", () => rmSync(probe));
  return step;
}

/**
 * Checks, before boot, a folder wp-codebox keeps files in outside the bundle: creates it if
 * needed, writes and removes a probe file in it.
 * @param directory - the folder (`resolveCacheDir()`, the sandboxes' scratch base).
 * @param role - what it is, for the message (`"the cache"`).
 * @param variable - the environment variable that chooses it (`"WP_CODEBOX_CACHE_DIR"`).
 * @throws WpCodeboxError `host-dir-unusable` (exit 3) naming the folder, the variable and the
 *   errno (`ENOTDIR`, `EACCES`, `EROFS`, …) as `data.cause`.
 */
export function probeHostDir(directory: string, role: string, variable: string): void {
  probeSteps(resolve(directory), (abs, cause, reason) =>
    new WpCodeboxError("host-dir-unusable", `${role[0]!.toUpperCase()}${role.slice(1)} (${abs}) cannot be used: ${reason} (${cause}). Point ${variable} at a folder you can write in.`, { directory: abs, cause, variable }),
  );
}

/**
 * The error to report when writing a bundle failed after the work ran: a filesystem failure
 * (any Node system error) becomes `artifacts-dir-unwritable` naming its errno; anything else is
 * returned as undefined (the caller rethrows it).
 */
export function bundleWriteError(thrown: unknown, directory: string): SerializedError | undefined {
  if (thrown instanceof WpCodeboxError) return thrown.code === "artifacts-dir-unwritable" ? thrown.toJSON() : undefined;
  const errno = errnoOf(thrown);
  if (!errno) return undefined;
  const cause = mkdirCause(failedPath(thrown) ?? resolve(directory), errno);
  return unwritable(resolve(directory), cause, `writing it failed after the work ran: ${CAUSES[cause] ?? (thrown as Error).message}; the result is printed but not kept`).toJSON();
}

/**
 * For commands whose only product is the bundle (`collect`, MCP `collect_artifacts`): what to
 * throw when writing it failed, a `WpCodeboxError` `artifacts-dir-unwritable` (exit 3) for a
 * filesystem failure, else `thrown` itself.
 */
export function bundleWriteFailure(thrown: unknown, directory: string): unknown {
  const error = bundleWriteError(thrown, directory);
  return error ? new WpCodeboxError("artifacts-dir-unwritable", error.message, error.data ?? {}, { cause: thrown }) : thrown;
}
