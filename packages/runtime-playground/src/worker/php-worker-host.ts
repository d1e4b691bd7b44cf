/**
 * Main-thread handle on one PHP worker thread: boots it, sends it requests, and terminates it
 * (the only reliable way to stop runaway PHP: php-wasm ignores `max_execution_time`).
 */
import type { Worker } from "node:worker_threads";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { cutAtCharacter } from "./utf8-cut.js";
import type { CappedStream, CorePrecompile, DeferredRequest, SiteReadyOptions, WorkerBootOptions, WorkerEvent, WorkerRequest, WorkerResponse, WorkerRunResult } from "./php-worker-protocol.js";
import type { WorkClock } from "./work-clock.js";
import type { WorkMark } from "./php-determinism.js";
import { startPhpWorkerThread } from "./php-worker-thread.js";

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; message: WorkerRequest };

/** A request a worker had been sent and had not started, moved to its replacement (`takeUnstarted`). */
export type UnstartedCall = Pending;
type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;

/** Thrown (internally) when a worker dies or is terminated while a request is pending. */
export class WorkerGoneError extends Error {}

export class PhpWorkerHost {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gone = false;
  private calls = 0;
  private booted = false;
  /** Requests accepted by `call` and not answered yet (counted from the moment `call` is made). */
  get inFlight(): number {
    return this.calls;
  }
  /** True once WordPress booted and until the worker is gone or its PHP engine crashed. */
  get usable(): boolean {
    return this.booted && !this.gone && this.crashed === undefined;
  }
  /** What php-wasm threw when PHP's engine crashed in this worker (it then runs nothing more). */
  private crashed: string | undefined;
  /**
   * Called once when PHP's engine crashes in this worker (`engineCrashed` in an answer), with what
   * php-wasm threw; resolves once the worker has been replaced. The crashed request's caller gets
   * its answer only then, so its next call already goes to the replacement.
   */
  onEngineCrashed?: (reason: string) => Promise<void>;
  /** Called after each request this worker answered (or lost), and once it is booted. */
  onSettled?: () => void;
  /** Called with each `blocking => false` self-call PHP left, before the reply of the work that made it. */
  onDeferredRequest?: (request: DeferredRequest) => void;
  /** The PHP process id of this worker (for releasing its file locks when it dies). */
  readonly processId: number;
  /** True when this worker's thread was started early by `prestartPhpWorker()` (php-worker-thread.ts). */
  readonly prestarted: boolean;
  /** Resolves with the boot duration in ms once WordPress is booted in the worker. */
  readonly ready: Promise<number>;
  /** The worker's boot steps as they ended, `[step, epoch ms]` (empty until ready), for benches. */
  bootMarks: [string, number][] = [];

  /**
   * @param ownedPorts - main-thread ports that serve only this worker (its end of the file-lock
   *   channel); closed when the worker goes, so they never keep the process alive.
   */
  constructor(
    options: WorkerBootOptions,
    onProgress?: (message: string) => void,
    onNetworkDenied?: (denied: { host: string; port: number }) => void,
    private readonly ownedPorts: { close(): void }[] = [],
    private readonly clock?: WorkClock,
    onSelfCall?: () => void,
  ) {
    this.processId = options.processId;
    if (clock?.active) options = { ...options, determinism: clock.workerSettings(), bootMark: clock.next() };
    ({ worker: this.worker, prestarted: this.prestarted } = startPhpWorkerThread(options, options.lockPort ? [options.lockPort] : []));
    this.worker.unref();
    this.ready = new Promise<number>((resolve, reject) => {
      this.worker.on("message", (message: WorkerResponse | WorkerEvent) => {
        if ("event" in message) {
          if (message.event === "ready") {
            this.clock?.finished(message.clockUs);
            this.printed = new Float64Array(message.printed);
            this.booted = true;
            this.bootMarks = message.bootMarks ?? [];
            resolve(message.bootMs);
            queueMicrotask(() => this.onSettled?.());
          } else if (message.event === "self-call") onSelfCall?.();
          else if (message.event === "deferred-request") this.onDeferredRequest?.(message.request);
          else if (message.event === "boot-failed") {
            reject(new WpCodeboxError("boot-failed", `WordPress failed to boot: ${message.error.message}`, { stack: message.error.stack }));
          } else if (message.event === "progress") onProgress?.(message.message);
          else if (message.event === "engine-message") onProgress?.(`php-wasm: ${message.text}`);
          else if (message.event === "output") this.recordOutput(message);
          else if (message.event === "network-denied") onNetworkDenied?.({ host: message.host, port: message.port });
          return;
        }
        const pending = this.pending.get(message.id);
        if (!pending) return;
        this.pending.delete(message.id);
        const value = message.ok && message.engineCrashed && pending.message.op === "run" ? this.withRecordedOutput(message.id, message.value as WorkerRunResult) : message.ok ? message.value : undefined;
        this.output.delete(message.id);
        const answer = () => (message.ok ? pending.resolve(value) : pending.reject(new Error(message.error.message)));
        if (message.engineCrashed && this.crashed === undefined) {
          this.crashed = message.engineCrashed;
          const replaced = this.onEngineCrashed?.(message.engineCrashed) ?? Promise.resolve();
          replaced.catch(() => undefined).finally(answer);
        } else answer();
      });
      const fail = (error: Error) => {
        this.gone = true;
        this.closePorts();
        reject(new WpCodeboxError("boot-failed", `The PHP worker stopped: ${error.message}`));
        for (const p of this.pending.values()) p.reject(new WorkerGoneError(error.message));
        this.pending.clear();
      };
      this.worker.on("error", fail);
      this.worker.on("exit", (code) => fail(new Error(`worker exited with code ${code}`)));
    });
    // Avoid an unhandled rejection when nobody awaits `ready` before a failure.
    this.ready.catch(() => undefined);
  }

  private readonly output = new Map<number, { stdout: Uint8Array[]; stderr: Uint8Array[]; stdoutBytes: number; stderrBytes: number }>();

  /**
   * A crashed run's result with the output PHP printed before the engine died (the worker could
   * not read its streams any more; the chunks reached this thread as `output` events).
   */
  private withRecordedOutput(id: number, result: WorkerRunResult): WorkerRunResult {
    const entry = this.output.get(id);
    if (!entry) return result;
    const capped = (parts: Uint8Array[], total: number): CappedStream => {
      const data = new Uint8Array(Buffer.concat(parts.map((p) => new Uint8Array(p.buffer, p.byteOffset, p.byteLength))));
      const bytes = Math.max(total, data.byteLength);
      return { data: cutAtCharacter(data, bytes > data.byteLength), bytes, truncated: bytes > data.byteLength };
    };
    return { ...result, stdout: capped(entry.stdout, entry.stdoutBytes), stderr: capped(entry.stderr, entry.stderrBytes) };
  }

  /** `[run id, stdout bytes, stderr bytes]` of the run in the worker, shared with it (see php-worker.ts). */
  private printed: Float64Array | undefined;

  private recordOutput(message: { id: number; stream: "stdout" | "stderr"; data: Uint8Array; bytes: number }): void {
    let entry = this.output.get(message.id);
    if (!entry) this.output.set(message.id, (entry = { stdout: [], stderr: [], stdoutBytes: 0, stderrBytes: 0 }));
    entry[message.stream].push(message.data);
    if (message.stream === "stdout") entry.stdoutBytes = message.bytes;
    else entry.stderrBytes = message.bytes;
  }

  /**
   * Output received so far from requests still running (all of them, in request order): what a
   * run printed before it was killed at its deadline.
   */
  partialOutput(): { stdout: string; stderr: string; stdoutBytes: number; stderrBytes: number } {
    const decoder = new TextDecoder();
    // Capped output is cut at the last complete character, as for a finished run.
    const join = (parts: Uint8Array[], total: number) => {
      const bytes = Buffer.concat(parts.map((p) => new Uint8Array(p.buffer, p.byteOffset, p.byteLength)));
      return decoder.decode(cutAtCharacter(bytes, total > bytes.byteLength));
    };
    // Past the cap the worker sends no more chunks; the running run's totals are in shared memory.
    const printed = this.printed;
    const running = printed ? this.output.get(printed[0]!) : undefined;
    if (running && printed) {
      running.stdoutBytes = Math.max(running.stdoutBytes, printed[1]!);
      running.stderrBytes = Math.max(running.stderrBytes, printed[2]!);
    }
    const all = [...this.output.entries()].sort(([a], [b]) => a - b).map(([, e]) => e);
    return {
      stdout: all.map((e) => join(e.stdout, e.stdoutBytes)).join(""),
      stderr: all.map((e) => join(e.stderr, e.stderrBytes)).join(""),
      stdoutBytes: all.reduce((n, e) => n + e.stdoutBytes, 0),
      stderrBytes: all.reduce((n, e) => n + e.stderrBytes, 0),
    };
  }

  /**
   * Sends one request; rejects with `WorkerGoneError` if the worker is terminated meanwhile.
   * @param options.partOfBoot - PHP work that continues the worker's boot: it takes no virtual
   *   clock mark of its own (no new start instant, same entropy stream as the boot).
   * @param options.mark - PHP work outside the sandbox's sequence of work: it runs at this mark
   *   and takes none of the clock's (`WorkClock.outsideMark`).
   */
  async call<T>(request: DistributiveOmit<WorkerRequest, "id">, options: { partOfBoot?: boolean; mark?: WorkMark } = {}): Promise<T> {
    // PHP work gets its virtual start instant and entropy stream when it is dispatched.
    const given = options.mark;
    const mark = given ? () => given : (request.op === "run" || request.op === "http") && !options.partOfBoot ? () => this.clock?.next() : undefined;
    return this.send(request, mark, (value) => this.clock?.finished((value as { clockUs?: number } | null)?.clockUs)) as Promise<T>;
  }

  private async send(request: DistributiveOmit<WorkerRequest, "id">, mark: (() => WorkMark | undefined) | undefined, onAnswer?: (value: unknown) => void): Promise<unknown> {
    this.calls += 1;
    try {
      await this.ready;
      if (this.gone) throw new WorkerGoneError("worker is gone");
      const id = this.nextId++;
      const marked = mark?.();
      const message = { ...request, id, ...(marked ? { mark: marked } : {}) } as WorkerRequest;
      return await new Promise((resolve, reject) => {
        this.pending.set(id, {
          resolve: (value) => {
            onAnswer?.(value);
            resolve(value);
          },
          reject,
          message,
        });
        this.worker.postMessage(message);
      });
    } finally {
      this.calls -= 1;
      this.onSettled?.();
    }
  }

  /**
   * Takes off this worker the requests it was sent and has not started: the worker runs one
   * request at a time in the order sent, so every pending request but the oldest (the one
   * running) is still waiting in its queue. For a worker about to be replaced: they go to the
   * replacement (`adopt`) instead of failing with the work that made it stop.
   */
  takeUnstarted(): UnstartedCall[] {
    // A crashed worker started none of them (it runs nothing after the crash).
    const waiting = this.crashed === undefined ? [...this.pending.keys()].slice(1) : [...this.pending.keys()];
    return waiting.map((id) => {
      const call = this.pending.get(id)!;
      this.pending.delete(id);
      this.output.delete(id);
      return call;
    });
  }

  /**
   * Sends requests taken from a replaced worker (`takeUnstarted`), in their order, with the
   * virtual start instants they were given; their callers get this worker's answers.
   */
  adopt(calls: UnstartedCall[]): void {
    for (const call of calls) {
      const { id: _old, ...request } = call.message;
      this.send(request as DistributiveOmit<WorkerRequest, "id">, undefined).then(call.resolve, call.reject);
    }
  }

  private closePorts(): void {
    for (const port of this.ownedPorts.splice(0)) {
      try {
        port.close();
      } catch {
        // already closed
      }
    }
  }

  /**
   * Lets a worker booted with `awaitSite` mount the site and boot WordPress: its files are ready.
   * @param late - boot options known only now (where the site is, how to install it), replacing the ones it was booted with.
   */
  releaseSite(late: SiteReadyOptions = {}): void {
    if (!this.gone) this.worker.postMessage({ op: "site-ready", late });
  }

  /**
   * Gives a worker booted with `awaitSite` the core scripts to compile into OPcache while it waits
   * for its site (boot option `precompile`, known only once the WordPress tree is there). Ignored
   * once the site is released, or when the worker compiles a list given at boot.
   */
  releaseCore(precompile: CorePrecompile): void {
    if (!this.gone) this.worker.postMessage({ op: "core-ready", precompile });
  }

  /** Kills the thread at once (≈20 ms), whatever PHP is doing. */
  async terminate(): Promise<void> {
    this.closePorts();
    if (this.gone) return;
    this.gone = true;
    await this.worker.terminate();
  }
}
