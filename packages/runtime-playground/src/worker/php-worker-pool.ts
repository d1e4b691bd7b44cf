/**
 * The PHP worker threads of one sandbox: a primary worker (commands, internal helpers, HTTP) and
 * optional extra workers that share HTTP traffic. Every worker shares one file-lock manager, so
 * SQLite's file locks hold across threads. PHP cannot be interrupted from inside, so a worker
 * whose work must stop is terminated and a replacement boots on the same files.
 *
 * Loopback HTTP requests wait here, in arrival order, for an idle worker. A request PHP made to its
 * own site and waits for (a self-call) cannot be answered by the worker that made it, so while every
 * worker is busy such a request gets a worker of its own, booted on demand (up to
 * `MAX_SELF_CALL_WORKERS`) and kept for later self-calls.
 */
import { MessageChannel } from "node:worker_threads";
import { FileLockManagerInMemory, exposeSyncAPI } from "@php-wasm/universal";
import { MAX_SELF_CALL_WORKERS, WORKER_BOOT_GRACE_MS } from "@wp-codebox/runtime-core";
import { PhpWorkerHost } from "./php-worker-host.js";
import type { MemoryFsRestore } from "../fs/memory-fs-boot-state.js";
import type { CorePrecompile, DeferredRequest, SiteReadyOptions, WorkerBootOptions, WorkerMount } from "./php-worker-protocol.js";
import type { WorkClock } from "./work-clock.js";

/** What a `PhpWorkerPool` needs to boot its workers. */
export interface PhpWorkerPoolOptions {
  /** Workers serving HTTP in parallel; 1 = the primary worker only. */
  workers: number;
  /** Boot options of a new worker, without its mounts and process id (the pool adds those). */
  bootOptions: () => Omit<WorkerBootOptions, "mounts" | "processId">;
  /** Host folders every worker mounts, in order; `mountEverywhere` appends to this same list. */
  mounts: WorkerMount[];
  onProgress?: (message: string) => void;
  /** A raw PHP socket the network guard refused (`php-network-guard.ts`). */
  onNetworkDenied: (denied: { host: string; port: number }) => void;
  /**
   * Pool events: `php-worker-failed` `{ message }`, `php-worker-joined` `{ workers, reason? }`,
   * `php-worker-starting` `{ reason: "self-call" }`, `php-worker-replaced`
   * `{ reason: "engine-crashed", message }` (PHP's engine died under a request; the pool replaced
   * that worker on its own).
   */
  onEvent: (type: string, data: Record<string, unknown>) => void;
  /** Runs when a worker the pool replaced on its own is gone, before its replacement boots. */
  onWorkerStopped?: () => void;
  /** PHP in some worker opened a connection to its own site (before it is connected). */
  onSelfCall: () => void;
  /** A `blocking => false` self-call a worker handed over when the PHP work that made it ended. */
  onDeferredRequest: (request: DeferredRequest) => void;
  /** Virtual clock and entropy streams of the sandbox's PHP work. */
  clock: WorkClock;
}

export class PhpWorkerPool {
  /** Primary worker: commands, internal helpers and HTTP. */
  private primaryHost!: PhpWorkerHost;
  /** Extra workers that share HTTP traffic (joined once booted). */
  private readonly extraHosts: PhpWorkerHost[] = [];
  private readonly lockManager = new FileLockManagerInMemory();
  private extraWorkersStarted = false;
  private readonly bootingExtras: Promise<void>[] = [];
  private nextProcessId = 1;
  private disposed = false;
  /** HTTP work waiting for an idle worker, in arrival order. */
  private readonly queue: { start: (host: PhpWorkerHost) => void; fail: (error: Error) => void; waitingSelfCall: () => boolean; fromSandbox: boolean }[] = [];
  /**
   * Workers booted for commands' parallel requests (`addHttpWorkers`): they serve those and PHP's
   * own requests, not a browser's, which keeps the configured worker count (on 2 cores a second
   * worker made the browser slower).
   */
  private readonly parallelHosts = new Set<PhpWorkerHost>();
  private selfCallWorkersBooting = 0;
  private selfCallWorkersStarted = 0;

  constructor(private readonly options: PhpWorkerPoolOptions) {}

  /** The worker that runs commands and internal helpers (replaced after a deadline). */
  get primary(): PhpWorkerHost {
    return this.primaryHost;
  }

  /**
   * Boots the primary worker and waits until WordPress is booted in it.
   * @param siteReady - given when the site's files are still being made (a first boot installing
   *   the site): called once the worker is started, so that what it starts (unpacking a release
   *   blocks this thread) comes after; the worker loads and starts PHP meanwhile and boots
   *   WordPress once the promise resolves.
   * @param late - with `siteReady`: `coreReady()` (called after it) resolves with the core scripts
   *   the worker compiles while it waits (`PhpWorkerHost.releaseCore`; undefined: none), and
   *   `site()` gives the boot options known only once the site is ready (`PhpWorkerHost.releaseSite`).
   * @throws `boot-failed` when WordPress does not boot or the worker stops; what `siteReady` rejects with.
   */
  async start(siteReady?: () => Promise<void>, late: { coreReady?: () => Promise<CorePrecompile | undefined> | undefined; site?: () => SiteReadyOptions } = {}): Promise<void> {
    const host = await this.spawn(siteReady !== undefined);
    this.primaryHost = host;
    if (siteReady) {
      const ready = siteReady();
      // Rejections are siteReady's to report.
      late.coreReady?.()?.then((precompile) => precompile && host.releaseCore(precompile), () => undefined);
      await ready;
      host.releaseSite(late.site?.() ?? {});
    }
    await host.ready;
  }

  private async spawn(awaitSite = false): Promise<PhpWorkerHost> {
    // A sandbox's site is an installed one: its worker may boot before the site comes.
    const siteAfterBoot = awaitSite && !this.options.clock?.active;
    const options: WorkerBootOptions = { ...this.options.bootOptions(), mounts: this.options.mounts, processId: this.nextProcessId++, ...(awaitSite ? { awaitSite } : {}), ...(siteAfterBoot ? { siteAfterBoot } : {}) };
    const owned: { close(): void }[] = [];
    // One lock manager for every worker, the primary of a one-worker sandbox included: a worker
    // booted later (for a self-call, or for a command's parallel requests) shares the same SQLite
    // files, and their file locks only hold across threads when every worker takes them here.
    const { port1, port2 } = new MessageChannel();
    await exposeSyncAPI(this.lockManager, port1 as never);
    options.lockPort = port2;
    owned.push(port1);
    const host = new PhpWorkerHost(options, this.options.onProgress, this.options.onNetworkDenied, owned, this.options.clock, this.options.onSelfCall);
    host.onSettled = () => this.pump();
    host.onDeferredRequest = this.options.onDeferredRequest;
    host.onEngineCrashed = async (message) => {
      await this.replace(host, this.options.onWorkerStopped);
      this.options.onEvent("php-worker-replaced", { reason: "engine-crashed", message });
    };
    return host;
  }

  /** Every worker booted and not terminated (the primary first). */
  all(): PhpWorkerHost[] {
    return [this.primaryHost, ...this.extraHosts].filter((h) => h !== undefined);
  }

  /**
   * Runs one piece of HTTP work on the first idle worker, waiting in arrival order while every
   * worker is busy. Loopback traffic from outside (a browser) boots the extra HTTP workers on its
   * first request (each joins once ready), so command-only runs never pay for them.
   * @param waitingSelfCall - true while this is a self-call whose caller waits for the answer:
   *   it then gets a worker of its own if none is idle.
   * @throws when the pool is disposed before a worker takes the work.
   */
  serveHttp<T>(work: (host: PhpWorkerHost) => Promise<T>, options: { fromSandbox: boolean; waitingSelfCall: () => boolean }): Promise<T> {
    if (!options.fromSandbox) this.startExtraWorkers();
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ start: (host) => work(host).then(resolve, reject), fail: reject, waitingSelfCall: options.waitingSelfCall, fromSandbox: options.fromSandbox });
      this.pump();
    });
  }

  /** Hands queued work to idle workers; starts a worker for a self-call that would deadlock. */
  private pump(): void {
    if (this.disposed) {
      for (const item of this.queue.splice(0)) item.fail(new Error("the runtime was disposed"));
      return;
    }
    // In arrival order, each to the first idle worker it may use.
    for (let i = 0; i < this.queue.length; ) {
      const item = this.queue[i]!;
      const idle = [this.primaryHost, ...this.extraHosts].find((h) => h?.usable && h.inFlight === 0 && (item.fromSandbox || !this.parallelHosts.has(h)));
      if (!idle) {
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      item.start(idle);
    }
    this.maybeStartSelfCallWorker();
  }

  private maybeStartSelfCallWorker(): void {
    if (!this.queue.some((q) => q.waitingSelfCall())) return;
    if (this.selfCallWorkersBooting > 0 || this.selfCallWorkersStarted >= MAX_SELF_CALL_WORKERS) return;
    this.selfCallWorkersBooting += 1;
    this.selfCallWorkersStarted += 1;
    this.options.onEvent("php-worker-starting", { reason: "self-call" });
    const booting = this.spawn()
      .then((host) => this.adoptExtra(host, { reason: "self-call" }))
      .catch((error: Error) => this.options.onEvent("php-worker-failed", { message: error.message }))
      .finally(() => {
        this.selfCallWorkersBooting -= 1;
        this.pump();
      });
    this.bootingExtras.push(booting);
  }

  private startExtraWorkers(): void {
    if (this.extraWorkersStarted) return;
    this.extraWorkersStarted = true;
    const count = Math.max(0, this.options.workers - 1);
    for (let i = 0; i < count; i++) {
      const booting = this.spawn().then((host) => this.adoptExtra(host, {}));
      this.bootingExtras.push(booting.catch(() => undefined));
    }
  }

  /** Extra workers booted for commands' parallel requests (`addHttpWorkers`), booting or joined. */
  private parallelWorkersStarted = 0;

  /**
   * Boots extra HTTP workers in the background until `total` workers (the primary included) can
   * serve a command's parallel requests (`serveHttp` with `fromSandbox: true`; a browser's requests
   * stay on the configured workers); requests queued
   * meanwhile go to the workers already there. Counts the configured extra workers once they were
   * started; never boots more than `total - 1` for this purpose over the pool's life.
   * @param total - workers wanted in all, e.g. 2 on a 2-core machine.
   */
  addHttpWorkers(total: number): void {
    const have = 1 + (this.extraWorkersStarted ? Math.max(0, this.options.workers - 1) : 0) + this.parallelWorkersStarted;
    for (let i = have; i < total; i++) {
      this.parallelWorkersStarted += 1;
      const booting = this.spawn().then((host) => {
        this.parallelHosts.add(host);
        return this.adoptExtra(host, { reason: "parallel-requests" });
      });
      this.bootingExtras.push(booting.catch((error: Error) => this.options.onEvent("php-worker-failed", { message: error.message })));
    }
  }

  /**
   * Waits for a spawned extra worker's boot and adds it to the pool; a worker that failed to boot
   * is reported (`php-worker-failed`) and terminated, and one that finished after dispose is
   * terminated. `detail` goes into the `php-worker-joined` event (e.g. `{ reason: "self-call" }`).
   */
  private async adoptExtra(host: PhpWorkerHost, detail: Record<string, unknown>): Promise<void> {
    try {
      await host.ready;
    } catch (error) {
      this.options.onEvent("php-worker-failed", { message: (error as Error).message });
      await host.terminate();
      return;
    }
    // Terminated only after its boot handshake finished: a worker killed mid-handshake
    // leaves the lock channel's ports open and the process could not exit.
    if (this.disposed) return host.terminate();
    this.extraHosts.push(host);
    this.options.onEvent("php-worker-joined", { workers: 1 + this.extraHosts.length, ...detail });
  }

  /**
   * Kills a worker at once and boots a replacement on the same files; the dead worker's file
   * locks are released first. Requests it had been sent and had not started (queued behind the
   * work that made it stop) go to the replacement; only the running one fails (`WorkerGoneError`).
   * The primary's replacement is ready when this resolves; an extra worker's joins the pool once
   * booted.
   * @param onStopped - runs once the old worker is gone, before the replacement boots.
   */
  replace(host: PhpWorkerHost, onStopped?: () => void): Promise<void> {
    // Two deadlines can pass for one worker (a command's and a site request's): one replacement.
    let replacing = this.replacing.get(host);
    if (!replacing) {
      replacing = this.replaceOnce(host, onStopped).finally(() => this.replacing.delete(host));
      this.replacing.set(host, replacing);
    }
    return replacing;
  }

  private readonly replacing = new Map<PhpWorkerHost, Promise<void>>();

  /**
   * Files the runtime wrote into the primary's in-memory file system (`writeFile`), by path. A
   * replacement primary (`replace`) gets them again: the requests moved to it may be the rest of a
   * command whose first request wrote its program there (run-php's code file, WP-CLI's phar).
   * Forgotten when every worker starts over (`restartAll`, `recycleAll`).
   */
  private readonly primaryFiles = new Map<string, Uint8Array>();

  /** Writes a file into the primary's in-memory file system, and into every replacement of it. */
  async writeFile(path: string, data: Uint8Array | string): Promise<void> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    this.primaryFiles.delete(path); // re-inserted last: replayed in the order written
    this.primaryFiles.set(path, bytes);
    await this.primaryHost.call({ op: "write-file", path, data: bytes });
  }

  private async replaceOnce(host: PhpWorkerHost, onStopped?: () => void): Promise<void> {
    const extra = this.extraHosts.indexOf(host);
    if (host !== this.primaryHost && extra < 0) return; // replaced already
    if (extra >= 0) this.extraHosts.splice(extra, 1);
    const unstarted = host.takeUnstarted();
    await host.terminate();
    this.lockManager.releaseLocksForProcess(host.processId);
    onStopped?.();
    if (this.disposed) {
      for (const call of unstarted) call.reject(new Error("the runtime was disposed"));
      return;
    }
    const replacement = await this.spawn();
    if (host === this.primaryHost) {
      // Before the moved requests: a command whose earlier request wrote one of these still finds it.
      for (const [path, data] of this.primaryFiles) replacement.call({ op: "write-file", path, data }).catch(() => undefined);
    }
    replacement.adopt(unstarted);
    if (host === this.primaryHost) {
      this.primaryHost = replacement;
      return;
    }
    if (this.parallelHosts.delete(host)) this.parallelHosts.add(replacement);
    const booting = this.adoptExtra(replacement, { reason: "replaced" });
    this.bootingExtras.push(booting);
  }

  /**
   * Runs `work` on `host` with a time limit: work that outlasts `timeoutMs` is given up, and the
   * worker, which PHP cannot be interrupted inside, is replaced (`replace`). The one deadline
   * mechanism for work on a worker: a `wordpress.check` surface, a site request.
   * @returns `{ done: true, value }`, or `{ done: false }` once the worker was replaced.
   */
  async withDeadline<T>(host: PhpWorkerHost, timeoutMs: number, work: () => Promise<T>, onStopped?: () => void): Promise<{ done: true; value: T } | { done: false }> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"timed-out">((resolve) => (timer = setTimeout(() => resolve("timed-out"), timeoutMs)));
    const running = work().then((value) => ({ value }));
    running.catch(() => undefined); // the call in flight fails when its worker is replaced below
    try {
      const winner = await Promise.race([running, deadline]);
      if (winner !== "timed-out") return { done: true as const, value: winner.value };
    } finally {
      clearTimeout(timer);
    }
    await this.replace(host, onStopped);
    return { done: false as const };
  }

  /**
   * Kills every worker and boots a fresh primary on the same host files: everything a worker keeps
   * in memory (its in-memory file system, `/tmp` included, and PHP's state) starts over as at boot.
   * Extra HTTP workers boot again on the next browser request.
   * @param onStopped - runs once every old worker is gone, before the replacement boots (the host
   *   files may be changed there).
   * @throws `boot-failed` when the replacement does not boot.
   */
  async restartAll(onStopped?: () => void): Promise<void> {
    this.primaryFiles.clear();
    const old = this.all();
    this.extraHosts.length = 0;
    this.extraWorkersStarted = false;
    this.selfCallWorkersStarted = 0;
    this.parallelWorkersStarted = 0;
    this.parallelHosts.clear();
    await Promise.all(old.map((h) => h.terminate()));
    for (const h of old) this.lockManager.releaseLocksForProcess(h.processId);
    onStopped?.();
    this.primaryHost = await this.spawn();
    await this.primaryHost.ready;
  }

  /**
   * Gives the workers back as at boot, for the next session of a warm pool, without a boot where
   * it can: extra HTTP workers are stopped (they boot again on the next browser request), then the
   * primary's in-memory file system is put back as it was when it became ready (op
   * `restore-boot-fs`: what was created since is deleted, with PHP's caches of it). When that is
   * refused (a file that was there at boot was changed, moved or removed) or the primary is not
   * idle, every worker is replaced as `restartAll` does (~1–2 s instead of milliseconds).
   * @param onQuiet - runs while no worker runs PHP, before the primary is restored or replaced
   *   (the host files may be changed there).
   * @param forgetUnder - virtual folders whose host files changed: a restored worker forgets its
   *   cached entries there.
   * @returns `"restored"`, or `"restarted"` with the reason the fast way was refused.
   * @throws `boot-failed` when a replacement does not boot.
   */
  async recycleAll(onQuiet: () => void, forgetUnder: string[]): Promise<{ how: "restored" } | { how: "restarted"; reason: string }> {
    this.primaryFiles.clear();
    const extras = this.extraHosts.splice(0);
    this.extraWorkersStarted = false;
    this.selfCallWorkersStarted = 0;
    this.parallelWorkersStarted = 0;
    this.parallelHosts.clear();
    await Promise.all(extras.map((h) => h.terminate()));
    for (const h of extras) this.lockManager.releaseLocksForProcess(h.processId);
    const primary = this.primaryHost;
    let reason = "the PHP worker was busy or gone";
    if (primary.usable && primary.inFlight === 0) {
      onQuiet();
      const result = await primary.call<MemoryFsRestore>({ op: "restore-boot-fs" }).catch((error: Error): MemoryFsRestore => ({ restored: false, reason: error.message }));
      if (result.restored) {
        // The host files under these were put back (site) or emptied (workspace): the worker must
        // not keep its cached entries of them.
        for (const vfsPath of forgetUnder) await primary.call({ op: "forget-cached-files", vfsPath });
        return { how: "restored" };
      }
      reason = result.reason;
    }
    await this.restartAll(onQuiet);
    return { how: "restarted", reason };
  }

  /**
   * Mounts a host folder in every worker, now and in workers booted later (replacements, extra
   * HTTP workers). A `vfsPath` mounted already is left as it is.
   */
  async mountEverywhere(mount: WorkerMount): Promise<void> {
    if (this.options.mounts.some((m) => m.vfsPath === mount.vfsPath)) return;
    // Recorded first: a worker booted later mounts it too.
    this.options.mounts.push(mount);
    await Promise.all([this.primaryHost, ...this.extraHosts].map((h) => h.call({ op: "mount", mount })));
  }

  /** Terminates every worker; extra workers still booting terminate themselves once booted (bounded wait). */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.pump();
    await this.primaryHost?.terminate().catch(() => undefined);
    await Promise.all(this.extraHosts.map((h) => h.terminate().catch(() => undefined)));
    await Promise.race([Promise.all(this.bootingExtras), new Promise((r) => setTimeout(r, WORKER_BOOT_GRACE_MS).unref())]);
  }
}
