/**
 * The PHP worker threads of one sandbox: a primary worker (commands, internal helpers, HTTP) and
 * optional extra workers that share HTTP traffic. Every worker shares one file-lock manager, so
 * SQLite's file locks hold across threads. PHP cannot be interrupted from inside, so a worker
 * whose work must stop is terminated and a replacement boots on the same files.
 */
import { MessageChannel } from "node:worker_threads";
import { FileLockManagerInMemory, exposeSyncAPI } from "@php-wasm/universal";
import { WORKER_BOOT_GRACE_MS } from "@wp-codebox/runtime-core";
import { PhpWorkerHost } from "./php-worker-host.js";
import type { WorkerBootOptions, WorkerMount } from "./php-worker-protocol.js";
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
  /** Pool events: `php-worker-failed` `{ message }`, `php-worker-joined` `{ workers }`. */
  onEvent: (type: string, data: Record<string, unknown>) => void;
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

  constructor(private readonly options: PhpWorkerPoolOptions) {}

  /** The worker that runs commands and internal helpers (replaced after a deadline). */
  get primary(): PhpWorkerHost {
    return this.primaryHost;
  }

  /**
   * Boots the primary worker and waits until WordPress is booted in it.
   * @throws `boot-failed` when WordPress does not boot or the worker stops.
   */
  async start(): Promise<void> {
    this.primaryHost = await this.spawn();
    await this.primaryHost.ready;
  }

  private async spawn(): Promise<PhpWorkerHost> {
    const options: WorkerBootOptions = { ...this.options.bootOptions(), mounts: this.options.mounts, processId: this.nextProcessId++ };
    const owned: { close(): void }[] = [];
    if (this.options.workers > 1) {
      // One lock manager for every worker: SQLite's file locks then hold across threads.
      const { port1, port2 } = new MessageChannel();
      await exposeSyncAPI(this.lockManager, port1 as never);
      options.lockPort = port2;
      owned.push(port1);
    }
    return new PhpWorkerHost(options, this.options.onProgress, this.options.onNetworkDenied, owned, this.options.clock);
  }

  /**
   * The worker with the fewest requests in flight. The first call boots the extra HTTP workers in
   * the background (each joins once ready), so command-only runs never pay for them.
   */
  leastBusy(): PhpWorkerHost {
    this.startExtraWorkers();
    let target = this.primaryHost;
    for (const extra of this.extraHosts) if (extra.inFlight < target.inFlight) target = extra;
    return target;
  }

  private startExtraWorkers(): void {
    if (this.extraWorkersStarted) return;
    this.extraWorkersStarted = true;
    const count = Math.max(0, this.options.workers - 1);
    for (let i = 0; i < count; i++) {
      const booting = this.spawn().then(async (host) => {
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
        this.options.onEvent("php-worker-joined", { workers: 1 + this.extraHosts.length });
      });
      this.bootingExtras.push(booting.catch(() => undefined));
    }
  }

  /**
   * Kills the primary worker at once and boots a replacement on the same files; the dead worker's
   * file locks are released first.
   * @param onStopped - runs once the old worker is gone, before the replacement boots.
   */
  async replacePrimary(onStopped?: () => void): Promise<void> {
    const old = this.primaryHost;
    await old.terminate();
    this.lockManager.releaseLocksForProcess(old.processId);
    onStopped?.();
    this.primaryHost = await this.spawn();
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
    await this.primaryHost?.terminate().catch(() => undefined);
    await Promise.all(this.extraHosts.map((h) => h.terminate().catch(() => undefined)));
    await Promise.race([Promise.all(this.bootingExtras), new Promise((r) => setTimeout(r, WORKER_BOOT_GRACE_MS).unref())]);
  }
}
