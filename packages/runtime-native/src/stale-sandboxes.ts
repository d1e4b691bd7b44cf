/**
 * Sandbox folders whose process died without cleaning up (SIGKILL, a crash, the machine's OOM
 * killer): each is some 50 MB of MariaDB data and wp-content in the host's temporary directory.
 * Every sandbox folder records the process that made it; a later boot removes the folders whose
 * process is gone. Folders without that record are left alone.
 */
import { lstatSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Prefix of every sandbox folder in the temporary directory. */
export const SANDBOX_DIR_PREFIX = "wp-codebox-native-";
const OWNER_FILE = "owner.json";

/** A process's start time in clock ticks since boot (`/proc/<pid>/stat`), or undefined when it is gone. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (in parentheses) may hold spaces: fields are counted after its end.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** This process's PID namespace (`pid:[4026531836]`): pids mean something only within one. */
function pidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

/**
 * Records the current process as the owner of a sandbox folder (`owner.json`: pid, start time, so a
 * pid reused by another process does not count as the owner, and PID namespace, so a process of
 * another container sharing the temporary directory is never judged by a pid it cannot see).
 */
export function markSandboxOwner(root: string): void {
  writeFileSync(join(root, OWNER_FILE), JSON.stringify({ pid: process.pid, start: processStart(process.pid) ?? null, pidns: pidNamespace() }));
}

/**
 * Removes the sandbox folders in `dir` whose owner process is gone. Never throws: a folder that
 * cannot be read or removed is left.
 * @returns the folders removed (full paths).
 */
export function sweepStaleSandboxes(dir: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.startsWith(SANDBOX_DIR_PREFIX));
  } catch {
    return removed;
  }
  for (const name of names) {
    const root = join(dir, name);
    try {
      const file = join(root, OWNER_FILE);
      if (!lstatSync(file).isFile()) continue;
      const owner = JSON.parse(readFileSync(file, "utf8")) as { pid?: unknown; start?: unknown; pidns?: unknown };
      if (typeof owner.pid !== "number" || !Number.isInteger(owner.pid) || owner.pid <= 0) continue;
      if (owner.pidns !== pidNamespace()) continue;
      const start = processStart(owner.pid);
      if (start !== undefined && (owner.start === null || start === owner.start)) continue;
      rmSync(root, { recursive: true, force: true });
      removed.push(root);
    } catch {
      // no owner record, unreadable, or removed meanwhile by another process
    }
  }
  return removed;
}
