/**
 * Atomic cache entries shared by concurrent processes. Everything written under the cache folder
 * (WordPress trees, release zips, installed sites with their OPcache seed) goes through here:
 *
 * - an entry is built in a private staging path beside it and renamed into place, so a reader
 *   sees either nothing or a complete entry, never a half-written one;
 * - a complete entry is never deleted or replaced while others may read it (only an incomplete
 *   one is moved aside, under the lock);
 * - one process builds, the others wait on `<entry>.lock` and then use its result. The lock file
 *   records its holder (pid, host, pid namespace, process start, time); a holder that died (same
 *   host, its pid gone or reused) or that stopped refreshing the lock (another host, no heartbeat
 *   for `staleMs`) is taken over.
 *
 * The lock only saves duplicate work: correctness comes from the staging-and-rename, so even two
 * builders (a lock taken over from a holder that was only slow) leave one complete entry.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

/** Who holds a cache lock (the lock file's JSON). */
export interface CacheLockOwner {
  pid: number;
  host: string;
  /** The pid namespace (`/proc/self/ns/pid`), when known: a pid means nothing in another one. */
  ns?: string;
  /** The process's start time in clock ticks since boot (`/proc/PID/stat` field 22), when known: tells a reused pid apart. */
  start?: string;
  /** ISO-8601 time the lock was taken. */
  startedAt: string;
  /** Random; tells two takes of the lock by one process apart. */
  token: string;
}

/** Options of `withCacheLock` and `ensureCacheEntry`. */
export interface CacheLockOptions {
  /** Stops waiting for another builder; the wait then throws `interrupted`. */
  signal?: AbortSignal;
  /** How often a waiter looks at the lock, in ms; default 100. */
  pollMs?: number;
  /**
   * A lock whose holder runs on another host (or whose liveness cannot be read) is stale when
   * its file was not refreshed for this long, in ms; default 120000. Holders refresh it every
   * `staleMs / 4`.
   */
  staleMs?: number;
  /** Called once when this process starts waiting for another holder. */
  onWait?: (owner: CacheLockOwner | undefined) => void;
}

const DEFAULT_POLL_MS = 100;
const DEFAULT_STALE_MS = 120_000;

function processStart(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19];
  } catch {
    return undefined;
  }
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
}

function newOwner(): CacheLockOwner {
  const start = processStart(process.pid);
  const ns = pidNamespace();
  return {
    pid: process.pid,
    host: hostname(),
    ...(ns ? { ns } : {}),
    ...(start ? { start } : {}),
    startedAt: new Date().toISOString(),
    token: randomBytes(6).toString("hex"),
  };
}

/** A unique sibling name for `path` (`<path>.<tag>-<pid>-<random>`), for staging or discarding. */
export function siblingTempPath(path: string, tag: "staging" | "discard" | "partial"): string {
  return `${path}.${tag}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

/** A file written through `siblingTempPath(…, "partial")` is renamed into place within seconds: one older than this was left by a killed process. */
const STALE_PARTIAL_MS = 60_000;

/**
 * Removes the partial files in `dir` (`<name>.partial-<pid>-<hex>`, from `writeFileAtomic` and
 * `writeFileAtomicAsync`) older than a minute, of the file `name` only when given: a process
 * killed while it wrote one (a downloaded release, a site's OPcache seed) leaves it, and nothing
 * else would remove it. A write in progress (another process on this cache) is younger.
 * @returns how many it removed.
 */
export function sweepStalePartials(dir: string, name?: string, now = Date.now()): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const entry of names) {
    const match = /^(.+)\.partial-\d+-[0-9a-f]+$/.exec(entry);
    if (!match || (name !== undefined && match[1] !== name)) continue;
    const path = join(dir, entry);
    try {
      if (now - statSync(path).mtimeMs < STALE_PARTIAL_MS) continue;
      rmSync(path, { force: true, recursive: true });
      removed++;
    } catch {
      // Gone meanwhile (its writer renamed or removed it).
    }
  }
  return removed;
}

/** The lock file of a cache entry. */
export function cacheLockPath(entryPath: string): string {
  return `${entryPath}.lock`;
}

function readOwner(lockPath: string): CacheLockOwner | undefined {
  try {
    return JSON.parse(readFileSync(lockPath, "utf8")) as CacheLockOwner;
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder recorded in a lock is gone. Same host and pid namespace: its pid no longer
 * runs, or runs another process (a different start time). Otherwise: the file's mtime is older
 * than `staleMs` (holders refresh it while they build).
 */
export function isStaleLock(owner: CacheLockOwner | undefined, mtimeMs: number, staleMs: number, now = Date.now()): boolean {
  const ns = pidNamespace();
  if (owner && typeof owner.pid === "number" && owner.host === hostname() && owner.ns !== undefined && owner.ns === ns) {
    const start = processStart(owner.pid);
    if (start === undefined) return true; // no such process
    if (owner.start !== undefined && start !== owner.start) return true; // pid reused
    return false;
  }
  return now - mtimeMs > staleMs;
}

function tryTake(lockPath: string, owner: CacheLockOwner): boolean {
  // Written in full under a private name, then hard-linked: the lock appears atomically and with
  // its content, and link() refuses when a lock is already there.
  const temp = siblingTempPath(lockPath, "partial");
  writeFileSync(temp, JSON.stringify(owner));
  try {
    linkSync(temp, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Takes a stale lock away, unless it changed hands since it was judged stale. */
function breakStale(lockPath: string, seen: CacheLockOwner | undefined): void {
  const grave = siblingTempPath(lockPath, "discard");
  try {
    renameSync(lockPath, grave);
  } catch {
    return; // someone else broke it first
  }
  const moved = readOwner(grave);
  if (seen && moved && moved.token !== seen.token) {
    // A live lock was taken between the look and the rename: put it back (if nobody took the
    // place meanwhile; if somebody did, two builders run, which staging-and-rename tolerates).
    try {
      linkSync(grave, lockPath);
    } catch {
      // leave it
    }
  }
  rmSync(grave, { force: true });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function interrupted(entryPath: string, owner: CacheLockOwner | undefined, signal: AbortSignal): WpCodeboxError {
  // `data.signal` picks the exit code (130 SIGINT, 143 SIGTERM) as for any interrupt.
  const name = typeof signal.reason === "string" ? signal.reason : "SIGINT";
  return new WpCodeboxError(
    "interrupted",
    `Interrupted while waiting for another process${owner ? ` (pid ${owner.pid} on ${owner.host})` : ""} to finish preparing ${entryPath}. Run the command again.`,
    { signal: name, entry: entryPath, ...(owner ? { holder: { pid: owner.pid, host: owner.host, startedAt: owner.startedAt } } : {}) },
  );
}

/**
 * Runs `fn` while holding the cache lock of `entryPath` (`<entryPath>.lock`), waiting for any
 * other holder first and taking over a stale one (see `isStaleLock`). The lock is released when
 * `fn` settles; while it runs its file is refreshed every `staleMs / 4` ms.
 * @returns what `fn` returns.
 * @throws WpCodeboxError `interrupted` when `options.signal` aborts while waiting; whatever `fn`
 *   throws; filesystem errors creating the lock (e.g. EACCES on the cache folder).
 */
export async function withCacheLock<T>(entryPath: string, fn: () => Promise<T> | T, options: CacheLockOptions = {}): Promise<T> {
  const lockPath = cacheLockPath(entryPath);
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  mkdirSync(dirname(lockPath), { recursive: true });
  const me = newOwner();
  let waited = false;
  for (;;) {
    if (tryTake(lockPath, me)) break;
    const owner = readOwner(lockPath);
    let mtimeMs: number;
    try {
      mtimeMs = statSync(lockPath).mtimeMs;
    } catch {
      continue; // released meanwhile: try again at once
    }
    // A lock file without readable content is one being replaced or broken; judge it by age.
    if (isStaleLock(owner, mtimeMs, staleMs)) {
      breakStale(lockPath, owner);
      continue;
    }
    if (options.signal?.aborted) throw interrupted(entryPath, owner, options.signal);
    if (!waited) {
      waited = true;
      options.onWait?.(owner);
    }
    await sleep(pollMs, options.signal);
    if (options.signal?.aborted) throw interrupted(entryPath, owner, options.signal);
  }
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(lockPath, now, now);
    } catch {
      // the lock was taken over; finishing still publishes atomically
    }
  }, Math.max(1000, Math.floor(staleMs / 4)));
  heartbeat.unref();
  try {
    return await fn();
  } finally {
    clearInterval(heartbeat);
    if (readOwner(lockPath)?.token === me.token) {
      try {
        unlinkSync(lockPath);
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Removes what dead builders left beside `entryPath` (`<name>.staging-*`, `<name>.discard-*`
 * and the same for `<name>.<suffix>` siblings; `<name>.partial-*`). Call only while holding the
 * entry's lock, so no live builder's staging path is touched.
 */
export function sweepEntryLeftovers(entryPath: string): void {
  const dir = dirname(entryPath);
  const name = basename(entryPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Staged or discarded copies of the entry and of its `<name>.<suffix>` siblings; partial files of the entry itself only.
  const mine = new RegExp(`^${escaped}((\\.[a-z]+)*\\.(staging|discard)|\\.partial)-\\d+-[0-9a-f]+`);
  for (const other of names) {
    // `<name>.lock.partial-*` is another process taking the lock right now: never touched.
    if (other.includes(".lock")) continue;
    if (mine.test(other)) rmSync(join(dir, other), { recursive: true, force: true });
  }
}

/**
 * Moves a built `staging` path (file or folder) to `target`. An existing `target` (an incomplete
 * entry: callers check completeness first, under the lock) is moved aside and deleted first.
 */
export function replaceWithStaged(staging: string, target: string): void {
  mkdirSync(dirname(target), { recursive: true });
  const grave = siblingTempPath(target, "discard");
  let moved = false;
  try {
    renameSync(target, grave);
    moved = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  renameSync(staging, target);
  if (moved) rmSync(grave, { recursive: true, force: true });
}

/**
 * Writes a file atomically: to a unique sibling, then renamed over `path` (readers see the old
 * content or the new, never part of it). `writeFileAtomicAsync` does the same without blocking
 * the event loop.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = siblingTempPath(path, "partial");
  try {
    writeFileSync(temp, data);
    renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** `writeFileAtomic`, with the write done by Node's thread pool. */
export async function writeFileAtomicAsync(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = siblingTempPath(path, "partial");
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
}

/** Options of `ensureCacheEntry`. */
export interface CacheEntryOptions extends CacheLockOptions {
  /** Whether `entryPath` holds a complete entry (checked before and, under the lock, again). */
  isComplete: (entryPath: string) => boolean;
  /** Builds the entry at `staging` (a path that does not exist yet: create it there). */
  build: (staging: string) => Promise<void> | void;
}

/**
 * Returns the cache entry at `entryPath`, building it first when it is not complete: under the
 * entry's lock, in a staging path beside it, renamed into place when `build` returns. A failed
 * build leaves nothing behind (its staging path is removed) and rethrows.
 * @returns `built`: whether this call built it (false when it was there or another process built it while this one waited).
 * @throws WpCodeboxError `interrupted` (see `withCacheLock`); whatever `build` throws.
 */
export async function ensureCacheEntry(entryPath: string, options: CacheEntryOptions): Promise<{ path: string; built: boolean }> {
  if (options.isComplete(entryPath)) return { path: entryPath, built: false };
  return withCacheLock(
    entryPath,
    async () => {
      if (options.isComplete(entryPath)) return { path: entryPath, built: false };
      sweepEntryLeftovers(entryPath);
      const staging = siblingTempPath(entryPath, "staging");
      try {
        await options.build(staging);
        replaceWithStaged(staging, entryPath);
      } catch (error) {
        rmSync(staging, { recursive: true, force: true });
        throw error;
      }
      return { path: entryPath, built: true };
    },
    options,
  );
}
