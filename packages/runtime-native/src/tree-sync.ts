/**
 * Making a folder tree the same as another one again by touching only what differs: what `reset()`
 * does to a sandbox's wp-content. The destination's root is never removed or replaced (the warm PHP
 * process has it bind-mounted; removing it would leave that process an empty folder), nor are the
 * protected paths (mount points of the caller's mounts) or the folders holding them.
 */
import { spawnSync } from "node:child_process";
import { cpSync, lstatSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync, type BigIntStats } from "node:fs";
import { join } from "node:path";

/** What a sync changed: entries copied from the source, and entries removed from the destination. */
export interface TreeSyncResult {
  copied: string[];
  removed: string[];
}

export interface TreeSyncOptions {
  /**
   * Paths relative to the roots (`/`-separated, e.g. `plugins/mine`) left alone: never removed,
   * replaced or looked into. The folders holding them are kept (their other entries are synced).
   */
  protect?: readonly string[];
  /** Called with each destination path the sync copied, e.g. to give it to the sandbox's uid. */
  onCopied?: (path: string) => void;
  /**
   * The destination's entries whose status changed at or after this time (ctime, ns since the
   * epoch) are copied again even when size, mtime and mode match: a write that keeps the size and
   * sets the mtime back (`touch -d`) still moves the ctime, which no unprivileged process can set.
   */
  changedSinceNs?: bigint;
}

type Kind = "file" | "dir" | "link" | "other";

function kindOf(stat: BigIntStats): Kind {
  return stat.isFile() ? "file" : stat.isDirectory() ? "dir" : stat.isSymbolicLink() ? "link" : "other";
}

/**
 * A time (ns, the file system's clock) after every change made so far in `dir`'s file system and
 * before any later one: the ctime of a marker file in `dir`, written again until it is past the
 * first write's (timestamps move in clock ticks of a few ms). For `changedSinceNs`.
 */
export function ctimeStamp(dir: string): bigint {
  const marker = join(dir, ".ctime-stamp");
  writeFileSync(marker, "");
  const first = statSync(marker, { bigint: true }).ctimeNs;
  for (;;) {
    writeFileSync(marker, "");
    const now = statSync(marker, { bigint: true }).ctimeNs;
    if (now > first) return now;
  }
}

/** Same version: a file's size, mtime (ns) and mode; a link's target; a folder's mode (its entries are compared one by one). */
function same(from: string, to: string, a: BigIntStats, b: BigIntStats, changedSinceNs: bigint | undefined): boolean {
  const kind = kindOf(a);
  if (changedSinceNs !== undefined && kind !== "dir" && b.ctimeNs >= changedSinceNs) return false;
  if (kind !== kindOf(b)) return false;
  if (kind === "link") return readlinkSync(from) === readlinkSync(to);
  if (a.mode !== b.mode) return false;
  if (kind === "dir") return true;
  return a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/** Copies one entry (a whole folder for a folder) keeping mtimes and owners, sharing blocks where the file system can. */
function copyEntry(from: string, to: string): void {
  const cp = spawnSync("cp", ["-a", "--reflink=auto", "--no-target-directory", from, to], { encoding: "utf8" });
  if (cp.status !== 0) cpSync(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
}

/**
 * Makes `to` hold what `from` holds: entries that differ (kind, size, mtime, mode, link target) are
 * replaced, missing ones copied, extra ones removed; equal ones are not touched.
 * @param from - source folder (host path).
 * @param to - destination folder (host path); must exist.
 * @returns the relative paths copied and removed.
 * @throws the file system's error when an entry cannot be read, removed or copied.
 */
export function syncTree(from: string, to: string, options: TreeSyncOptions = {}): TreeSyncResult {
  const protectedPaths = new Set((options.protect ?? []).map((p) => p.replace(/^\/+|\/+$/g, "")).filter(Boolean));
  const holders = new Set<string>();
  for (const path of protectedPaths) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) holders.add(parts.slice(0, i).join("/"));
  }
  const result: TreeSyncResult = { copied: [], removed: [] };
  const copy = (rel: string) => {
    const target = join(to, rel);
    copyEntry(join(from, rel), target);
    result.copied.push(rel);
    options.onCopied?.(target);
  };
  const remove = (rel: string) => {
    rmSync(join(to, rel), { recursive: true, force: true });
    result.removed.push(rel);
  };
  // `hasSource`: false inside a folder only the destination has (it holds a protected path).
  // The destination is the sandbox's: only a real folder is looked into, never a link to one
  // (a link in place of a folder holding a mount point would have this walk empty a host folder).
  const walk = (rel: string, hasSource: boolean) => {
    const sourceNames = hasSource ? readdirSync(join(from, rel)) : [];
    const sources = new Set(sourceNames);
    for (const name of readdirSync(join(to, rel))) {
      const path = rel ? `${rel}/${name}` : name;
      if (sources.has(name) || protectedPaths.has(path)) continue;
      if (holders.has(path) && lstatSync(join(to, path)).isDirectory()) walk(path, false);
      else remove(path);
    }
    for (const name of sourceNames) {
      const path = rel ? `${rel}/${name}` : name;
      if (protectedPaths.has(path)) continue;
      const a = lstatSync(join(from, path), { bigint: true });
      const b = lstatSync(join(to, path), { bigint: true, throwIfNoEntry: false });
      if (holders.has(path) && b?.isDirectory()) {
        walk(path, a.isDirectory());
        continue;
      }
      if (b === undefined) {
        copy(path);
      } else if (kindOf(a) === "dir" && kindOf(b) === "dir") {
        if (a.mode !== b.mode) {
          remove(path);
          copy(path);
        } else {
          walk(path, true);
        }
      } else if (!same(join(from, path), join(to, path), a, b, options.changedSinceNs)) {
        remove(path);
        copy(path);
      }
    }
  };
  walk("", true);
  return result;
}
