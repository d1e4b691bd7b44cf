/**
 * The confinement every native sandbox process runs in: bubblewrap with every namespace of its own
 * (no network but its own loopback, its own PIDs), a file system made only of the system's
 * programs (`/usr`, read-only), PHP's and MariaDB's configuration, and what the caller binds;
 * resource limits set with `prlimit`; and, when the host user is root, an unprivileged uid
 * (`setpriv`), because the kernel does not enforce a process limit on root.
 */
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import type { NativeTools } from "./native-tools.js";
import type { RelayListener } from "./native-network.js";

/** A host path made visible inside the sandbox. */
export interface Bind {
  source: string;
  target: string;
  readOnly: boolean;
}

/**
 * Per-process resource limits (`prlimit`); a value of 0 leaves that limit unset.
 * - `addressSpaceBytes`: virtual memory of each process (a 2 GB string fails to allocate).
 * - `processes`: processes and threads of the sandbox uid (a fork bomb stops there).
 * - `fileSizeBytes`: largest file a process may write.
 */
export interface ResourceLimits {
  addressSpaceBytes: number;
  processes: number;
  fileSizeBytes: number;
}

/** PHP's limits: 1 GiB of address space, 256 processes, files up to 1 GiB. */
export const PHP_LIMITS: Readonly<ResourceLimits> = Object.freeze({ addressSpaceBytes: 1 << 30, processes: 256, fileSizeBytes: 1 << 30 });
/** MariaDB's: it reserves address space freely, so only processes and file size. */
export const MARIADB_LIMITS: Readonly<ResourceLimits> = Object.freeze({ addressSpaceBytes: 0, processes: 256, fileSizeBytes: 4 * (1 << 30) });

/**
 * The uid and gid the processes that build the cached site run as when the host user is root
 * (Debian's `nobody`). A sandbox gets a uid of its own (`allocateSandboxUid`).
 */
export const SANDBOX_UID = 65534;

/** Sandbox uids are drawn from this range (below 65536, which any user namespace maps). */
const SANDBOX_UID_RANGE = { first: 40_000, count: 20_000 } as const;

/**
 * A uid (and gid) for one sandbox, unused on the host. The kernel counts the process limit
 * (`RLIMIT_NPROC`) per uid across the whole host: with one uid for every sandbox, a fork bomb in one
 * sandbox, or many busy ones, would leave another's MariaDB unable to start a thread. Drawn at
 * random, so sandboxes of separate processes seldom share one (two that do share only that limit).
 * @returns a uid in 40000–59999 that /etc/passwd does not list.
 */
export function allocateSandboxUid(): number {
  let used = new Set<number>();
  try {
    used = new Set(readFileSync("/etc/passwd", "utf8").split("\n").map((line) => Number(line.split(":")[2])));
  } catch {
    // no passwd file: any uid in the range is unused
  }
  for (;;) {
    const uid = SANDBOX_UID_RANGE.first + randomInt(SANDBOX_UID_RANGE.count);
    if (!used.has(uid)) return uid;
  }
}

/** The relay processes of a sandbox run as its uid plus this (60000–79999, outside the sandbox range). */
export const RELAY_UID_OFFSET = 20_000;

/** True when processes must drop root (the host user is root). */
export function dropsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** System paths every sandboxed process sees read-only (programs, libraries, their configuration). */
const SYSTEM_READ_ONLY = ["/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/php", "/etc/ssl", "/etc/localtime", "/etc/mysql"];

/**
 * A confined command: its argv, and the environment to spawn it with. The environment is not on
 * the command line (`bwrap --setenv`), where any host user could read a secret in `ps`.
 */
export interface ConfinedCommand {
  argv: string[];
  env: Record<string, string>;
}

/** Folders of the sandbox's own root that binds land in, created world-readable (bubblewrap run by root makes them 0700). */
const SANDBOX_ROOT_DIRS = ["/etc", "/run", "/var", "/var/lib", "/opt", "/internal"];

/**
 * The command line that runs `command` confined: `prlimit … bwrap … -- [setpriv …] command`.
 * Run by root, bubblewrap makes the mounts itself and `setpriv` then drops to `SANDBOX_UID` with
 * no capabilities inside (the sandbox uid could not reach a cache under `/root` to bind it); run
 * by another user, bubblewrap uses a user namespace of its own.
 */
export function confinedCommand(tools: NativeTools, options: { binds: Bind[]; chdir: string; limits: ResourceLimits; env?: Record<string, string>; uid?: number; relay?: RelayListener[] }, command: string[]): ConfinedCommand {
  const { limits } = options;
  const prlimit = [tools.prlimit, "--core=0"];
  if (limits.addressSpaceBytes > 0) prlimit.push(`--as=${limits.addressSpaceBytes}`);
  if (limits.processes > 0) prlimit.push(`--nproc=${limits.processes}`);
  if (limits.fileSizeBytes > 0) prlimit.push(`--fsize=${limits.fileSizeBytes}`);
  prlimit.push("--");
  const root = dropsRoot();
  const namespaces = root ? ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"] : ["--unshare-all"];
  const relay = options.relay ?? [];
  // Without root, the relay's low port (80) needs the capability inside bubblewrap's user namespace.
  const bwrap = [tools.bwrap, ...namespaces, ...(!root && relay.length ? ["--cap-add", "CAP_NET_BIND_SERVICE"] : []), "--die-with-parent", "--new-session"];
  for (const dir of SANDBOX_ROOT_DIRS) bwrap.push("--perms", "0755", "--dir", dir);
  for (const path of SYSTEM_READ_ONLY) bwrap.push("--ro-bind-try", path, path);
  bwrap.push("--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64");
  bwrap.push("--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp");
  // Folders above a bind that nothing else provides (/workspace for /workspace/x): bubblewrap run by
  // root would make them 0700, which the sandbox's uid could not even look into.
  for (const dir of bindParents(options.binds)) bwrap.push("--perms", "0755", "--dir", dir);
  for (const bind of options.binds) bwrap.push(bind.readOnly ? "--ro-bind" : "--bind", bind.source, bind.target);
  bwrap.push("--chdir", options.chdir, "--");
  const uid = options.uid ?? SANDBOX_UID;
  const setpriv = root
    ? [tools.setpriv, `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    : [];
  // Only these variables reach the sandbox: the process is spawned with exactly this environment.
  const env = { PATH: "/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8", TMPDIR: "/tmp", ...(options.env ?? {}) };
  if (relay.length === 0) return { argv: [...prlimit, ...bwrap, ...setpriv, ...command], env };
  // The relays start first, in the background, as the sandbox's uid with only the capability to
  // bind a low port (root drops to it with setpriv); then the command replaces the shell.
  // A uid of their own: the warm PHP server ends every run by killing all its uid's processes
  // (in this PID namespace), which must not take the relays with it.
  const relayUid = uid + RELAY_UID_OFFSET;
  const relaySetpriv = root
    ? [tools.setpriv, `--reuid=${relayUid}`, `--regid=${relayUid}`, "--clear-groups", "--inh-caps=-all,+net_bind_service", "--ambient-caps=-all,+net_bind_service", "--bounding-set=-all,+net_bind_service", "--no-new-privs", "--"]
    : [];
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const relays = relay.map((l) => [...relaySetpriv, tools.socat, `TCP4-LISTEN:${l.port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${l.socket}`].map(quote).join(" ") + " </dev/null >/dev/null 2>&1 &");
  const script = `${relays.join("\n")}\nexec "$@"`;
  return { argv: [...prlimit, ...bwrap, "/bin/sh", "-c", script, "sh", ...setpriv, ...command], env };
}

/**
 * The folders above the bind targets that no bind, system path or root folder provides, parents
 * first (`/workspace` for a bind at `/workspace/code`; none for `/wordpress/wp-content/plugins/x`,
 * which lies inside the bind at `/wordpress`).
 */
export function bindParents(binds: readonly Bind[]): string[] {
  const provided = [...binds.map((b) => b.target), ...SYSTEM_READ_ONLY, ...SANDBOX_ROOT_DIRS, "/tmp", "/proc", "/dev"];
  const inside = (path: string) => provided.some((p) => path === p || path.startsWith(`${p}/`));
  const out: string[] = [];
  for (const bind of binds) {
    const parts = bind.target.split("/").filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = `/${parts.slice(0, i).join("/")}`;
      if (!inside(dir) && !out.includes(dir)) out.push(dir);
    }
  }
  return out;
}
