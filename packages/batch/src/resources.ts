/**
 * How many sandboxes this machine can run at once without swapping.
 */
import { readFileSync, statSync } from "node:fs";
import { availableParallelism, freemem } from "node:os";
import { join } from "node:path";

/**
 * Peak resident memory budgeted per sandbox slot (a child process running a recipe or episode
 * with one PHP worker). `npm run bench:batch` measured about 330 MiB for a run-php recipe; the
 * budget leaves room for plugins, browser-free episodes and snapshots.
 */
export const SANDBOX_MEMORY_BUDGET_BYTES = 512 * 1024 * 1024;
/** Memory left to the rest of the machine. */
export const MEMORY_HEADROOM_BYTES = 1024 * 1024 * 1024;

/**
 * What the cgroup (container) this process runs in allows, when it limits anything. A container's
 * memory limit or CPU quota is not visible to `freemem()` and `availableParallelism()`, which
 * report the host's.
 */
export interface CgroupLimits {
  /** Bytes the cgroup may still use: its memory limit less its current usage (the smallest over its ancestors). */
  memoryAvailableBytes?: number;
  /** CPUs the CPU quota allows: ceil(quota / period) (the smallest over its ancestors). */
  cpus?: number;
  /** Which interface the limits came from. */
  version?: 1 | 2;
}

/** Where `readCgroupLimits` looks; tests point both at a temporary directory. */
export interface CgroupPaths {
  /** The cgroup filesystem; default `/sys/fs/cgroup`. */
  root?: string;
  /** The file naming this process's cgroups (`<id>:<controllers>:<path>` lines); default `/proc/self/cgroup`. */
  self?: string;
}

/**
 * Reads the memory limit and CPU quota of this process's cgroup and its ancestors.
 * cgroup v2 (`<root>/cgroup.controllers` exists): `memory.max` less `memory.current`, and `cpu.max`
 * (`<quota> <period>`); v1: `memory/memory.limit_in_bytes` less `memory/memory.usage_in_bytes`,
 * and `cpu/cpu.cfs_quota_us` / `cpu/cpu.cfs_period_us`. `max` (v2), `-1` (v1 quota) and a
 * missing or unreadable file mean no limit; v1's "unlimited" (about 2^63) is left to the caller's
 * minimum with the host's numbers. Each directory from the process's own cgroup (the path named in
 * `self`, when it exists under `root`; inside a container it usually does not, and the container's
 * cgroup is `root` itself) up to `root` counts; the tightest wins.
 * @returns `{}` when there is no cgroup filesystem or nothing is limited. Never throws.
 */
export function readCgroupLimits(paths: CgroupPaths = {}): CgroupLimits {
  const root = paths.root ?? "/sys/fs/cgroup";
  const own = readText(paths.self ?? "/proc/self/cgroup") ?? "";
  const pathOf = (match: (controllers: string[]) => boolean): string => {
    for (const line of own.split("\n")) {
      const [id, controllers, path] = [line.slice(0, line.indexOf(":")), ...splitOnce(line.slice(line.indexOf(":") + 1))];
      if (path !== undefined && match(controllers.split(",")) && id !== "") return path;
    }
    return "/";
  };
  const limits: CgroupLimits = {};
  const lower = (key: "memoryAvailableBytes" | "cpus", value: number | undefined): void => {
    if (value !== undefined && Number.isFinite(value) && (limits[key] === undefined || value < limits[key]!)) limits[key] = Math.max(0, value);
  };
  if (readText(join(root, "cgroup.controllers")) !== undefined) {
    limits.version = 2;
    for (const dir of lineage(root, pathOf((c) => c.length === 1 && c[0] === ""))) {
      const max = readNumber(join(dir, "memory.max"));
      if (max !== undefined) lower("memoryAvailableBytes", max - (readNumber(join(dir, "memory.current")) ?? 0));
      const [quota, period] = (readText(join(dir, "cpu.max")) ?? "").trim().split(/\s+/);
      lower("cpus", cpusOf(quota, period));
    }
  } else {
    for (const dir of lineage(join(root, "memory"), pathOf((c) => c.includes("memory")))) {
      const max = readNumber(join(dir, "memory.limit_in_bytes"));
      if (max !== undefined) lower("memoryAvailableBytes", max - (readNumber(join(dir, "memory.usage_in_bytes")) ?? 0));
    }
    for (const base of ["cpu", "cpu,cpuacct"]) {
      for (const dir of lineage(join(root, base), pathOf((c) => c.includes("cpu")))) {
        lower("cpus", cpusOf(readText(join(dir, "cpu.cfs_quota_us"))?.trim(), readText(join(dir, "cpu.cfs_period_us"))?.trim()));
      }
    }
    if (limits.memoryAvailableBytes !== undefined || limits.cpus !== undefined) limits.version = 1;
  }
  return limits;
}

/** `base/<path>` and each parent up to `base`, the ones that exist as cgroup directories (deepest first). */
function lineage(base: string, path: string): string[] {
  const parts = path.split("/").filter((p) => p !== "" && p !== "." && p !== "..");
  const dirs: string[] = [];
  for (let n = parts.length; n >= 0; n--) {
    const dir = join(base, ...parts.slice(0, n));
    if (n === 0 || statSync(dir, { throwIfNoEntry: false })?.isDirectory()) dirs.push(dir);
  }
  return dirs;
}

function cpusOf(quota: string | undefined, period: string | undefined): number | undefined {
  const q = Number(quota);
  const p = Number(period);
  if (quota === undefined || quota === "max" || !Number.isFinite(q) || q <= 0 || !Number.isFinite(p) || p <= 0) return undefined;
  return Math.max(1, Math.ceil(q / p));
}

function splitOnce(text: string): [string, string | undefined] {
  const i = text.indexOf(":");
  return i === -1 ? [text, undefined] : [text.slice(0, i), text.slice(i + 1)];
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** A whole number of bytes, or undefined for `max`, a missing file or anything else. */
function readNumber(file: string): number | undefined {
  const text = readText(file)?.trim();
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** The numbers behind a concurrency decision. */
export interface ConcurrencyDecision {
  concurrency: number;
  /** CPUs: `availableParallelism()`, lowered to the cgroup's CPU quota. */
  cores: number;
  /** Bytes: `freemem()` (MemAvailable), lowered to what the cgroup's memory limit leaves. */
  availableBytes: number;
  /** Most slots the available memory holds. */
  memoryCap: number;
  /** The cgroup limits that were read (or injected); `{}` when none. */
  cgroup: CgroupLimits;
  /** Set when a requested concurrency was lowered. */
  lowered?: { requested: number; reason: string };
}

/** The machine's numbers, injectable for tests; each missing one is read from the system. */
export interface ResourceProbe {
  cores?: number;
  availableBytes?: number;
  /** The cgroup's limits; default `readCgroupLimits(cgroupPaths)`. Pass `{}` for none. */
  cgroup?: CgroupLimits;
  /** Where to read the cgroup limits when `cgroup` is not given. */
  cgroupPaths?: CgroupPaths;
}

/**
 * The default is one sandbox per CPU; both the default and a requested value are capped by
 * available memory (less 1 GiB, 512 MiB per sandbox), so the machine never swaps. In a container,
 * CPUs are lowered to the cgroup's CPU quota and available memory to what its memory limit leaves
 * (see `readCgroupLimits`): the host's numbers would start sandboxes the container cannot hold.
 */
export function decideConcurrency(requested?: number, probe: ResourceProbe = {}): ConcurrencyDecision {
  const cgroup = probe.cgroup ?? readCgroupLimits(probe.cgroupPaths);
  const hostCores = probe.cores ?? availableParallelism();
  const hostBytes = probe.availableBytes ?? freemem();
  const cores = Math.max(1, Math.min(hostCores, cgroup.cpus ?? Infinity));
  const availableBytes = Math.min(hostBytes, cgroup.memoryAvailableBytes ?? Infinity);
  const memoryCap = Math.max(1, Math.floor((availableBytes - MEMORY_HEADROOM_BYTES) / SANDBOX_MEMORY_BUDGET_BYTES));
  const wanted = requested ?? cores;
  const concurrency = Math.max(1, Math.min(wanted, memoryCap));
  const where = availableBytes < hostBytes ? " (the cgroup memory limit less its usage)" : "";
  return {
    concurrency,
    cores,
    availableBytes,
    memoryCap,
    cgroup,
    ...(requested !== undefined && concurrency < requested
      ? { lowered: { requested, reason: `${Math.round(availableBytes / 2 ** 20)} MiB available${where} holds ${memoryCap} sandbox(es) of ${SANDBOX_MEMORY_BUDGET_BYTES / 2 ** 20} MiB after ${MEMORY_HEADROOM_BYTES / 2 ** 20} MiB headroom` } }
      : {}),
  };
}
