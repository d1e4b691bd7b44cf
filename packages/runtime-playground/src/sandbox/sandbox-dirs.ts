/**
 * Sandbox temp directories still in use. If the process exits without disposing its runtimes
 * (a second Ctrl-C, `process.exit` in a caller), they are removed synchronously on exit, so no
 * `wp-codebox-*` folder is left in the temp directory. A process killed outright (SIGKILL) runs no
 * handler; the next sandbox created in the same place sweeps its folder (`sweepStaleSandboxDirs`).
 */
import { accessSync, constants, readFileSync, readdirSync, readlinkSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";

const live = new Set<string>();
let hooked = false;

/** Written into each sandbox directory: which process owns it (see `sweepStaleSandboxDirs`). */
const OWNER_FILE = ".wp-codebox-owner.json";

interface Owner {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat field 22): tells a reused pid apart. */
  start: string;
  /** The pid namespace (/proc/self/ns/pid): a pid means nothing in another one. */
  ns: string;
  host: string;
}

function processStart(pid: number): string | undefined {
  try {
    // Fields after the command name (which may hold spaces); starttime is field 22.
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19];
  } catch {
    return undefined;
  }
}

function self(): Owner | undefined {
  try {
    const start = processStart(process.pid);
    return start ? { pid: process.pid, start, ns: readlinkSync("/proc/self/ns/pid"), host: hostname() } : undefined;
  } catch {
    return undefined;
  }
}

/** Records a sandbox directory to remove on process exit. */
export function trackSandboxDir(dir: string): void {
  const owner = self();
  if (owner) writeFileSync(join(dir, OWNER_FILE), JSON.stringify(owner));
  live.add(dir);
  if (!hooked) {
    hooked = true;
    process.once("exit", () => {
      for (const d of live) rmSync(d, { recursive: true, force: true });
    });
  }
}

/** Removes a sandbox directory now and stops tracking it. */
export function removeSandboxDir(dir: string): void {
  live.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Where sandbox temp directories go (a copy of wp-content each, ~14 MB, deleted on dispose):
 * `$WP_CODEBOX_TMPDIR`; else `$TMPDIR` when the caller set it; else `/dev/shm` on Linux when it
 * is writable with at least 1 GiB free (memory-backed: copying and deleting the tree took
 * 25 + 5 ms there against 100–600 + 330–420 ms on the disk-backed /tmp of our 2-core machine);
 * else the OS temp dir.
 */
export function sandboxTempBase(): string {
  if (process.env.WP_CODEBOX_TMPDIR) return process.env.WP_CODEBOX_TMPDIR;
  if (process.env.TMPDIR || process.platform !== "linux") return tmpdir();
  try {
    accessSync("/dev/shm", constants.W_OK);
    const fs = statfsSync("/dev/shm");
    if (fs.bavail * fs.bsize >= 2 ** 30) return "/dev/shm";
  } catch {
    // not there or not writable
  }
  return tmpdir();
}

const swept = new Set<string>();

/**
 * Removes `wp-codebox-*` sandbox directories under `base` whose owning process is gone: one that
 * was killed (SIGKILL) never ran its clean-up, and under /dev/shm its copy of wp-content would hold
 * ~14 MB of memory until reboot. Only directories this code marked are touched, and only when
 * their owner ran on this host in this pid namespace and that pid is no longer the same process.
 * Runs once per base and process; Linux only (elsewhere it does nothing).
 * @returns the directories removed.
 */
export function sweepStaleSandboxDirs(base: string): string[] {
  const me = self();
  if (!me || swept.has(base)) return [];
  swept.add(base);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(base).filter((name) => name.startsWith("wp-codebox-"));
  } catch {
    return removed;
  }
  for (const name of names) {
    const dir = join(base, name);
    if (live.has(dir)) continue;
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8")) as Owner;
    } catch {
      continue; // not ours, not a sandbox, or still being created
    }
    if (owner.ns !== me.ns || owner.host !== me.host || typeof owner.pid !== "number") continue;
    if (processStart(owner.pid) === owner.start) continue; // still running
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
