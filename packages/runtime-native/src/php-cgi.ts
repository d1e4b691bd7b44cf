/**
 * The web-facing PHP of a native sandbox: Debian's `php-cgi` in FastCGI mode (`-b <socket>`),
 * confined exactly like the warm PHP process (same binds, the sandbox's uid, `PHP_LIMITS`, an
 * empty network namespace). Its socket lies in a folder of the sandbox bound read-write, so the
 * host reaches it while the sandbox has no network. `PHP_FCGI_CHILDREN` children share one
 * OPcache (WordPress compiled once). Started on the first request that needs it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, constants, fchmodSync, fchownSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { removeSandboxPath } from "./sandbox-files.js";
import { join } from "node:path";
import { PHP_LIMITS, confinedCommand, dropsRoot, type Bind } from "./bubblewrap.js";
import { killConfined } from "./confined-process.js";
import { fastCgiRequest, waitForSocket, type FastCgiRequest, type FastCgiResponse } from "./fastcgi-client.js";
import { PHP_INI } from "./native-php.js";
import { SANDBOX_PATHS, giveOneToSandbox, phpBinds, type SiteLayout } from "./native-site.js";
import type { NativeTools } from "./native-tools.js";
import type { SandboxNetwork } from "./native-network.js";

/** Where the socket folder is bound inside the sandbox. */
const SOCKET_DIR = "/run/wp-codebox-fcgi";
/** PHP children answering requests at once (a browser loads a page and its REST calls in parallel). */
export const PHP_CGI_CHILDREN = 2;
/** How long php-cgi may take to open its socket (ms). */
const START_TIMEOUT_MS = 15_000;

/** What php-cgi needs to start (the warm process's setup). */
export interface PhpCgiSetup {
  tools: NativeTools;
  layout: SiteLayout;
  treeDir: string;
  extraBinds: Bind[];
  env: Record<string, string>;
  /** The sandbox's network (hosts file, relay ports, proxy environment), read when the process starts. */
  network?: SandboxNetwork;
}

/** How long `whileStopped` lets the pages in flight finish before stopping php-cgi (ms; the default site request limit). */
const DRAIN_LIMIT_MS = 30_000;

export class PhpCgi {
  private child: ChildProcess | undefined;
  private starting: Promise<void> | undefined;
  /** Requests php-cgi is answering now, and who waits for them to end (`whileStopped`). */
  private inflight = 0;
  private drainWaiters: (() => void)[] = [];
  private readonly socketDir: string;
  /** Milliseconds the last start took (for events and the docs' figures). */
  lastStartMs = 0;

  constructor(private readonly setup: PhpCgiSetup) {
    this.socketDir = join(setup.layout.root, "fcgi");
  }

  /** Host path of the FastCGI socket. */
  get socketPath(): string {
    return join(this.socketDir, "php.sock");
  }

  /** True while a php-cgi process runs. */
  get running(): boolean {
    return this.child !== undefined;
  }

  /**
   * Starts php-cgi when it is not running, and waits for its socket.
   * @throws Error when php-cgi exits or does not open its socket within 15 s.
   */
  ensure(): Promise<void> {
    if (this.held) return this.held.then(() => this.ensure());
    if (this.child && !this.starting) return Promise.resolve();
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<void> {
    const started = Date.now();
    mkdirSync(this.socketDir, { recursive: true });
    giveOneToSandbox(this.socketDir, this.setup.layout.uid);
    removeSandboxPath(this.socketDir, "php.sock");
    const ini = PHP_INI.flatMap((setting) => ["-d", setting]);
    const { argv, env } = confinedCommand(
      this.setup.tools,
      {
        binds: [...phpBinds(this.setup.layout, this.setup.treeDir), ...this.setup.extraBinds, ...(this.setup.network?.binds ?? []), { source: this.socketDir, target: SOCKET_DIR, readOnly: false }],
        chdir: SANDBOX_PATHS.wordpress,
        limits: PHP_LIMITS,
        env: { ...this.setup.env, ...(this.setup.network?.env ?? {}), PHP_FCGI_CHILDREN: String(PHP_CGI_CHILDREN), PHP_FCGI_MAX_REQUESTS: "0" },
        uid: this.setup.layout.uid,
        relay: this.setup.network?.listeners ?? [],
      },
      // OPcache in shared memory (the children share it); the path PHP runs is SCRIPT_FILENAME
      // exactly (no guessing from PATH_TRANSLATED).
      [this.setup.tools.phpCgi, ...ini, "-d", "opcache.enable=1", "-d", "opcache.file_cache_only=0", "-d", "realpath_cache_ttl=3600", "-d", "cgi.fix_pathinfo=0", "-d", "expose_php=0", "-b", `${SOCKET_DIR}/php.sock`],
    );
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], env });
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString("utf8");
    });
    child.once("error", () => undefined);
    this.child = child;
    let exitCode: number | null | undefined;
    child.once("close", (code) => {
      if (this.child === child) this.child = undefined;
      exitCode = code;
    });
    try {
      await waitForSocket(this.socketPath, START_TIMEOUT_MS, () => (exitCode !== undefined ? `php-cgi exited (${String(exitCode)}) before opening its socket: ${stderr.trim().slice(0, 800)}` : undefined));
    } catch (error) {
      if (this.child === child) this.kill();
      throw new Error(`${(error as Error).message} ${exitCode === undefined ? stderr.trim().slice(0, 800) : ""}`.trim());
    }
    try {
      this.lockSocketDir();
    } catch (error) {
      if (this.child === child) this.kill();
      throw error;
    }
    this.lastStartMs = Date.now() - started;
  }

  /**
   * Once php-cgi listens, its socket folder becomes root's again (read-only to the sandbox), and its
   * socket must be a socket: the host connects by path, and connecting follows a link, so PHP must
   * not be able to swap `php.sock` for a link to another socket on the host.
   * @throws Error when something other than php-cgi's socket has the name.
   */
  private lockSocketDir(): void {
    if (!dropsRoot()) return;
    const fd = openSync(this.socketDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      fchownSync(fd, 0, 0);
      fchmodSync(fd, 0o755);
    } finally {
      closeSync(fd);
    }
    const stat = lstatSync(this.socketPath, { throwIfNoEntry: false });
    if (!stat?.isSocket() || stat.uid !== this.setup.layout.uid) throw new Error(`php-cgi's socket ${this.socketPath} was replaced (not its socket): refused to connect through it`);
  }

  /**
   * Runs one request (starting php-cgi first when needed).
   * @throws what `ensure` and `fastCgiRequest` throw.
   */
  async request(request: FastCgiRequest, options: { capBytes: number; signal?: AbortSignal }): Promise<FastCgiResponse> {
    await this.ensure();
    this.inflight += 1;
    try {
      return await fastCgiRequest(this.socketPath, request, options);
    } finally {
      this.inflight -= 1;
      if (this.inflight === 0) for (const wake of this.drainWaiters.splice(0)) wake();
    }
  }

  /** Resolves once no request is in flight, or after `limitMs` (ms) whichever comes first. */
  private drained(limitMs: number): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private held: Promise<void> | undefined;

  /**
   * Runs `step` with php-cgi stopped and not started again until it ends (requests arriving
   * meanwhile wait; requests already running are let finish first, for up to 30 s): for host steps, as root, on folders PHP can write (reset's wp-content sync).
   * @returns what `step` returns; throws what it throws.
   */
  async whileStopped<T>(step: () => Promise<T> | T): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const before = this.held;
    this.held = held;
    try {
      await before;
      await this.starting?.catch(() => undefined);
      // Pages already running end first (a browser's page during a pool's recycle), up to the
      // site request limit's default; new ones wait above.
      await this.drained(DRAIN_LIMIT_MS);
      this.kill();
      return await step();
    } finally {
      if (this.held === held) this.held = undefined;
      release();
    }
  }

  /** Kills php-cgi and its children (bubblewrap's PID namespace dies with it); the next request starts a new one. */
  kill(): void {
    const child = this.child;
    this.child = undefined;
    if (child) killConfined(child);
  }
}
