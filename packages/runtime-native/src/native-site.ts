/**
 * A native site on the host: a folder holding MariaDB's data directory, wp-content, the
 * configuration PHP reads and the files a run exchanges with the runtime; and the private MariaDB
 * server of such a folder, on a unix socket inside it. The same layout serves the site cache
 * (one installed site per WordPress release) and each sandbox (a copy of it).
 */
import { spawnSync } from "node:child_process";
import { chownSandboxTree } from "./sandbox-files.js";
import { cpSync, existsSync, lchownSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { MARIADB_LIMITS, SANDBOX_UID, confinedCommand, dropsRoot, type Bind } from "./bubblewrap.js";
import { startConfined, type ConfinedProcess } from "./confined-process.js";
import type { NativeTools } from "./native-tools.js";

/** The PHP programs of this package (wp-config.php, db.php drop-in, runner, installer). */
export const PHP_DIR = fileURLToPath(new URL("../src/php/", import.meta.url));

/** Where things are inside the sandbox. */
export const SANDBOX_PATHS = Object.freeze({
  wordpress: "/wordpress",
  content: "/wordpress/wp-content",
  /** Read-only: wp-config.php and its config.json. */
  config: "/etc/wp-codebox",
  /** Read-write: last-error.json, db-errors.jsonl, code files. */
  internal: "/internal/wp-codebox",
  /** MariaDB's socket folder. */
  dbRun: "/run/mysqld",
  dbData: "/var/lib/mysql",
  socket: "/run/mysqld/mysqld.sock",
  /** Read-only: this package's PHP programs (`PHP_DIR`). */
  programs: "/opt/wp-codebox",
});

/** Host paths of a native site folder. */
export interface SiteLayout {
  root: string;
  data: string;
  content: string;
  config: string;
  internal: string;
  run: string;
  /** The uid (and gid) its processes run as when the host user is root. */
  uid: number;
}

/**
 * The layout of a site folder.
 * @param uid - what its processes run as when the host user is root: the cache's builds use
 *   `SANDBOX_UID`, each sandbox one of its own (`allocateSandboxUid`).
 */
export function siteLayout(root: string, uid: number = SANDBOX_UID): SiteLayout {
  return { root, data: join(root, "data"), content: join(root, "wp-content"), config: join(root, "config"), internal: join(root, "internal"), run: join(root, "run"), uid };
}

/**
 * Makes a folder (and what it holds, symlinks themselves not their targets) `uid`'s, when sandboxed
 * processes drop root. The walk goes through folder descriptors (`chownSandboxTree`): a folder the
 * sandbox swaps for a link meanwhile never hands it the host file the link names.
 */
export function giveToSandbox(path: string, uid: number = SANDBOX_UID): void {
  if (dropsRoot()) chownSandboxTree(path, uid);
}

/** Makes one file or folder (not what it holds) `uid`'s, when sandboxed processes drop root. */
export function giveOneToSandbox(path: string, uid: number = SANDBOX_UID): void {
  if (dropsRoot()) lchownSync(path, uid, uid);
}

/** Creates the empty folders of a layout (owned by the layout's uid). */
export function createLayout(layout: SiteLayout): void {
  for (const dir of [layout.root, layout.data, layout.content, layout.config, layout.internal, join(layout.internal, "opcache"), layout.run]) mkdirSync(dir, { recursive: true });
  giveToSandbox(layout.root, layout.uid);
}

/** Copies a folder tree, sharing blocks where the file system can (reflink), keeping owners. */
export function copyTree(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  const cp = spawnSync("cp", ["-a", "--reflink=auto", from, to], { encoding: "utf8" });
  if (cp.status !== 0) cpSync(from, to, { recursive: true });
}

/**
 * Writes wp-config.php and its config.json (the constants, JSON scalars).
 * @param treeHasConfig - the WordPress tree ships a wp-config.php of its own: ours is bound over it.
 */
export function writeSiteConfig(layout: SiteLayout, constants: Record<string, string | number | boolean | null>): void {
  mkdirSync(layout.config, { recursive: true });
  // Its own mtime: a file changed just now would make the server's preloaded WordPress look stale.
  cpSync(join(PHP_DIR, "wp-config.php"), join(layout.config, "wp-config.php"), { preserveTimestamps: true });
  writeFileSync(join(layout.config, "config.json"), JSON.stringify({ constants }));
}

/** The binds PHP gets: WordPress read-only, wp-content, configuration, internal files, the DB socket. */
export function phpBinds(layout: SiteLayout, treeDir: string): Bind[] {
  // WordPress reads wp-config.php from its root, or from the folder above when the root has none.
  const configTarget = existsSync(join(treeDir, "wp-config.php")) ? `${SANDBOX_PATHS.wordpress}/wp-config.php` : "/wp-config.php";
  return [
    { source: treeDir, target: SANDBOX_PATHS.wordpress, readOnly: true },
    { source: layout.content, target: SANDBOX_PATHS.content, readOnly: false },
    { source: layout.config, target: SANDBOX_PATHS.config, readOnly: true },
    { source: join(layout.config, "wp-config.php"), target: configTarget, readOnly: true },
    { source: layout.internal, target: SANDBOX_PATHS.internal, readOnly: false },
    { source: layout.run, target: SANDBOX_PATHS.dbRun, readOnly: true },
    { source: PHP_DIR, target: SANDBOX_PATHS.programs, readOnly: true },
  ];
}

/** MariaDB settings for a small disposable database (durability traded for speed). */
const MARIADB_OPTIONS = [
  "--no-defaults",
  `--datadir=${SANDBOX_PATHS.dbData}`,
  "--innodb-log-file-size=4M",
  "--innodb-data-file-path=ibdata1:4M:autoextend",
];
const MARIADB_SERVER_OPTIONS = [
  `--socket=${SANDBOX_PATHS.socket}`,
  `--pid-file=${SANDBOX_PATHS.dbRun}/mysqld.pid`,
  `--log-error=${SANDBOX_PATHS.dbData}/error.log`,
  "--skip-networking",
  "--skip-name-resolve",
  "--skip-log-bin",
  "--performance-schema=0",
  "--innodb-buffer-pool-size=16M",
  "--innodb-doublewrite=0",
  "--innodb-flush-log-at-trx-commit=0",
  // Tables a sandbox creates (and reset() copies back) live in the system tablespace: no file per table.
  "--innodb-file-per-table=0",
  "--innodb-flush-method=nosync",
  "--innodb-buffer-pool-load-at-startup=0",
  "--innodb-buffer-pool-dump-at-shutdown=0",
  "--max-connections=32",
  "--character-set-server=utf8mb4",
  "--collation-server=utf8mb4_unicode_ci",
];

function mariadbBinds(layout: SiteLayout): Bind[] {
  return [
    { source: layout.data, target: SANDBOX_PATHS.dbData, readOnly: false },
    { source: layout.run, target: SANDBOX_PATHS.dbRun, readOnly: false },
  ];
}

/**
 * Initialises an empty MariaDB data directory (`mariadb-install-db`, confined).
 * @throws `boot-failed` with what the installer printed.
 */
export function installDataDir(tools: NativeTools, layout: SiteLayout): void {
  const argv = confinedCommand(tools, { binds: mariadbBinds(layout), chdir: "/", limits: MARIADB_LIMITS, uid: layout.uid }, [
    tools.mariadbInstallDb,
    ...MARIADB_OPTIONS,
    "--auth-root-authentication-method=normal",
    "--skip-test-db",
    "--skip-name-resolve",
    // The sandbox has no resolvable host name; grants use localhost only.
    "--force",
  ]);
  const run = spawnSync(argv.argv[0]!, argv.argv.slice(1), { encoding: "utf8", timeout: 120_000, env: argv.env });
  if (run.status !== 0) {
    throw new WpCodeboxError("boot-failed", `mariadb-install-db failed (exit ${run.status}): ${`${run.stderr}\n${run.stdout}`.trim().slice(-800)}`);
  }
}

/** A private MariaDB server listening on the socket of a site folder. */
export class MariaDbServer {
  private constructor(private readonly process: ConfinedProcess, private readonly layout: SiteLayout) {}

  /**
   * Starts mariadbd on a layout's data directory and waits until its socket answers.
   * @param timeoutMs - how long to wait for the socket (ms).
   * @throws `boot-failed` when it exits or does not listen in time (with its error log).
   */
  static async start(tools: NativeTools, layout: SiteLayout, timeoutMs = 30_000): Promise<MariaDbServer> {
    rmSync(join(layout.run, "mysqld.sock"), { force: true });
    const argv = confinedCommand(tools, { binds: mariadbBinds(layout), chdir: "/", limits: MARIADB_LIMITS, uid: layout.uid }, [tools.mariadbd, ...MARIADB_OPTIONS, ...MARIADB_SERVER_OPTIONS]);
    const process = startConfined(argv, 64 << 10);
    const server = new MariaDbServer(process, layout);
    let exited = false;
    process.done.then(() => (exited = true), () => (exited = true));
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(join(layout.run, "mysqld.sock"))) {
      if (exited || Date.now() > deadline) {
        server.kill();
        const log = spawnSync("tail", ["-c", "800", join(layout.data, "error.log")], { encoding: "utf8" }).stdout ?? "";
        throw new WpCodeboxError("boot-failed", `The sandbox's MariaDB server did not start${exited ? "" : ` within ${timeoutMs} ms`}: ${log.trim() || "(no error log)"}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    return server;
  }

  /**
   * Stops the server cleanly (its data directory is consistent afterwards): `shutdown` runs the
   * SQL `SHUTDOWN` (bubblewrap does not pass signals on, and kills its child when it dies itself);
   * the server is killed after `timeoutMs`.
   */
  async stop(shutdown: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
    const timer = setTimeout(() => this.kill(), timeoutMs);
    try {
      await shutdown();
    } catch {
      this.kill();
    }
    await this.process.done.catch(() => undefined);
    clearTimeout(timer);
  }

  /** Kills the server at once (its data directory is thrown away). */
  kill(): void {
    this.process.kill();
  }

  /** Resolves when the server has exited. */
  get exited(): Promise<unknown> {
    return this.process.done.catch(() => undefined);
  }

  get socketPath(): string {
    return join(this.layout.run, "mysqld.sock");
  }
}
