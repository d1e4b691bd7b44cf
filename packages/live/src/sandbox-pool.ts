/**
 * The sandboxes a `serve` process keeps booted. `shared` mode: one sandbox every session uses (a
 * developer and their scripts see the same site). `pool` mode: N sandboxes booted from one spec;
 * each session takes one for itself, and a returned one is recycled in the background (reset plus
 * forgotten records when the runtime can, else disposed and re-booted).
 */
import { SerialQueue, WpCodeboxError } from "@wp-codebox/runtime-core";
import { DEFAULT_POOL_WAIT_MS } from "./control-protocol.js";
import type { LiveRuntime } from "./live-runtime.js";

/**
 * Loads WordPress once (`/robots.txt`), so the first session does not pay the first WordPress load
 * of a fresh PHP worker (about 0.3 s more than the next ones: WebAssembly code compiled on first
 * use, scripts not yet in OPcache's memory) nor the first request of a recycled one (which builds
 * again what a worker keeps between requests). `/robots.txt` runs all of WordPress's loading
 * without rendering a theme page: about 75 ms against 280 ms for the home page, and a recycled
 * sandbox is handed out that much sooner. Not a command: nothing is recorded. Failures are
 * ignored.
 */
async function warmUp(runtime: LiveRuntime): Promise<void> {
  const url = runtime.info().siteUrl;
  if (!/^https?:\/\//.test(url)) return;
  try {
    const response = await fetch(`${url}/robots.txt`, { redirect: "manual", signal: AbortSignal.timeout(60_000) });
    await response.arrayBuffer();
  } catch {
    // The sandbox still works; only its first request is slower.
  }
}

/** One booted sandbox and the queue that serialises calls on it. */
export interface PooledSandbox {
  id: string;
  runtime: LiveRuntime;
  queue: SerialQueue;
  state: "ready" | "leased" | "recycling";
  /** Sessions holding it (shared mode: any number; pool mode: at most one). */
  sessions: number;
}

/** A lifecycle event of the pool (`sandbox-booted`, `sandbox-leased`, `sandbox-recycled`, …). */
export type PoolEvent = { type: string; data?: Record<string, unknown> };

export interface SandboxPoolOptions {
  /** Boots one sandbox from the serve spec. */
  create: () => Promise<LiveRuntime>;
  /** Pool size; `0` or absent = shared mode with one sandbox. */
  size?: number;
  onEvent?: (event: PoolEvent) => void;
}

export class SandboxPool {
  readonly mode: "shared" | "pool";
  readonly size: number;
  private readonly sandboxes: PooledSandbox[] = [];
  private preparing = 0;
  private disposed = false;
  private readonly waiters: Array<() => void> = [];
  /** Requests waiting for a pooled sandbox, in arrival order (the first takes the next free one). */
  private readonly queued: object[] = [];
  private readonly background = new Set<Promise<unknown>>();

  constructor(private readonly options: SandboxPoolOptions) {
    this.mode = options.size && options.size > 0 ? "pool" : "shared";
    this.size = Math.max(1, options.size ?? 1);
  }

  private emit(type: string, data?: Record<string, unknown>): void {
    this.options.onEvent?.({ type, ...(data ? { data } : {}) });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.background.add(p);
    void p.finally(() => this.background.delete(p)).catch(() => undefined);
    return p;
  }

  /** Boots one sandbox and adds it as ready. */
  private async boot(): Promise<PooledSandbox> {
    this.preparing += 1;
    try {
      const runtime = await this.options.create();
      if (this.disposed) {
        await runtime.dispose().catch(() => undefined);
        throw new WpCodeboxError("runtime-disposed", "The live server stopped while a sandbox was booting.");
      }
      await warmUp(runtime);
      const sandbox: PooledSandbox = { id: runtime.info().id, runtime, queue: new SerialQueue(), state: "ready", sessions: 0 };
      this.sandboxes.push(sandbox);
      this.emit("sandbox-booted", { sandbox: sandbox.id, siteUrl: runtime.info().siteUrl, bootMs: runtime.info().bootDurationMs });
      this.wake();
      return sandbox;
    } finally {
      this.preparing -= 1;
    }
  }

  /**
   * Boots the first sandbox (resolves when it is ready: the site URL works) and the rest of the
   * pool one after another in the background (two cores boot one at a time best).
   * @throws what the backend throws for the first sandbox (`boot-failed`, …).
   */
  async start(): Promise<PooledSandbox> {
    // Tracked, so that a dispose() during the first boot returns only once it is disposed too.
    const first = await this.track(this.boot());
    if (this.size > 1) {
      this.track(
        (async () => {
          for (let i = 1; i < this.size && !this.disposed; i++) {
            await this.boot().catch((error: Error) => this.emit("sandbox-boot-failed", { message: error.message }));
          }
        })(),
      );
    }
    return first;
  }

  /** The first sandbox (what `serve` prints the URLs of). */
  get primary(): PooledSandbox | undefined {
    return this.sandboxes[0];
  }

  counts(): { size: number; ready: number; leased: number; preparing: number } {
    return {
      size: this.size,
      ready: this.sandboxes.filter((s) => s.state === "ready").length,
      leased: this.sandboxes.filter((s) => s.state === "leased").length,
      preparing: this.preparing + this.sandboxes.filter((s) => s.state === "recycling").length,
    };
  }

  /** True while a call runs or waits on any sandbox. */
  busy(): boolean {
    return this.sandboxes.some((s) => s.queue.depth > 0);
  }

  /** Epoch ms of the latest site request or command any sandbox saw (0 when unknown). */
  lastActivityAt(): number {
    return Math.max(0, ...this.sandboxes.map((s) => s.runtime.lastActivityAt?.() ?? 0));
  }

  /**
   * Takes a sandbox for a session. Shared mode: the one sandbox. Pool mode: a ready one; when every
   * sandbox is taken, waits up to `waitMs` for one to come back (a session detaching or expiring, a
   * boot or a reset ending). Waiting requests are served in arrival order; event `sandbox-wait` says
   * one started waiting.
   * @param signal - aborting it (the client went away) stops the wait with its reason.
   * @throws `pool-exhausted` when none became free in time; `runtime-disposed` after dispose.
   */
  async lease(waitMs = DEFAULT_POOL_WAIT_MS, signal?: AbortSignal): Promise<PooledSandbox> {
    const deadline = Date.now() + waitMs;
    let waited = false;
    const ticket = {};
    try {
      for (;;) {
        if (this.disposed) throw new WpCodeboxError("runtime-disposed", "The live server is shutting down.");
        signal?.throwIfAborted();
        const free = this.mode === "shared" ? this.sandboxes[0] : this.queueTurn(ticket) ? this.sandboxes.find((s) => s.state === "ready") : undefined;
        if (free) {
          free.sessions += 1;
          if (this.mode === "pool") free.state = "leased";
          this.emit("sandbox-leased", { sandbox: free.id, ...(waited ? { waited: true } : {}), ...this.counts() });
          return free;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new WpCodeboxError(
            "pool-exhausted",
            `All ${this.size} pooled sandboxes are taken and none came back within ${waitMs} ms. Detach another session, or start serve with a larger --pool.`,
            { ...this.counts(), waitMs },
          );
        }
        if (!waited) {
          waited = true;
          this.queued.push(ticket);
          this.emit("sandbox-wait", { waitMs, waiting: this.queued.length, ...this.counts() });
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, left);
          signal?.addEventListener("abort", done);
          this.waiters.push(done);
        });
      }
    } finally {
      const i = this.queued.indexOf(ticket);
      if (i >= 0) this.queued.splice(i, 1);
      // The next in line may take what this request did not.
      if (waited) this.wake();
    }
  }

  /** True when a request may take a ready sandbox now: nobody waits, or it is the longest-waiting one. */
  private queueTurn(ticket: object): boolean {
    return this.queued.length === 0 || this.queued[0] === ticket;
  }

  /** Ends a session's hold; a pooled sandbox is recycled in the background, then handed out again. */
  release(sandbox: PooledSandbox): void {
    sandbox.sessions = Math.max(0, sandbox.sessions - 1);
    this.emit("sandbox-released", { sandbox: sandbox.id });
    if (this.mode !== "pool" || sandbox.sessions > 0 || this.disposed) return;
    sandbox.state = "recycling";
    this.track(
      sandbox.queue.run(async () => {
        const started = Date.now();
        try {
          if (!sandbox.runtime.recycle) throw new Error("no recycle()");
          await sandbox.runtime.recycle();
          // A recycle may replace the PHP worker (the Playground runtime does): warm the new one up.
          await warmUp(sandbox.runtime);
          sandbox.state = "ready";
          this.emit("sandbox-recycled", { sandbox: sandbox.id, how: "reset", durationMs: Date.now() - started });
          this.wake();
        } catch {
          // Not resettable (or the reset failed): replace it with a freshly booted one.
          this.sandboxes.splice(this.sandboxes.indexOf(sandbox), 1);
          await sandbox.runtime.dispose().catch(() => undefined);
          if (this.disposed) return;
          const fresh = await this.boot().catch((error: Error) => {
            this.emit("sandbox-boot-failed", { message: error.message });
            return undefined;
          });
          if (fresh) this.emit("sandbox-recycled", { sandbox: fresh.id, replaced: sandbox.id, how: "reboot", durationMs: Date.now() - started });
        }
      }),
    );
  }

  /** Disposes every sandbox (waiting for running calls and background boots). Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.wake();
    await Promise.all([...this.background].map((p) => p.catch(() => undefined)));
    await Promise.all(this.sandboxes.map((s) => s.runtime.dispose().catch(() => undefined)));
    this.sandboxes.length = 0;
  }
}
