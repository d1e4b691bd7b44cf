/**
 * Starting PHP worker threads, and starting one early. A worker spends its first ~120 ms importing
 * php-wasm (its WebSocket, XML and file-lock dependencies included) before it can boot anything,
 * and the CLI spends about as long loading itself and planning the run before it knows how to
 * boot. `prestartPhpWorker()`, called first thing by a process that is about to boot a sandbox,
 * lets the two overlap on a second core: the thread imports its modules and then waits for its
 * boot options, which the first `PhpWorkerHost` sends it. Deliberately light: importing this
 * module loads nothing but `node:worker_threads`.
 */
import { Worker, type TransferListItem } from "node:worker_threads";

// Run from source (tsx) or from dist: the worker file sits beside this module.
const fromSource = import.meta.url.endsWith(".ts");
const workerUrl = new URL(fromSource ? "./php-worker.ts" : "./php-worker.js", import.meta.url);
/**
 * The worker's own Node flags. Never the host's: a worker inherits `process.execArgv` by default,
 * and flags meant for the host process can keep it from starting (`--input-type=module`, given
 * with `-e`, refuses the worker's file entry) or load what it does not need (`--import tsx` in a
 * built install). From sources the worker needs only the `source` export condition; it loads tsx
 * itself (php-worker-dev.mjs).
 */
const PHP_WORKER_EXEC_ARGV: readonly string[] = fromSource ? ["--conditions=source"] : [];

/** `workerData` of a prestarted worker: it waits for its boot options as its first message. */
export interface AwaitOptionsData {
  awaitOptions: true;
}

let spare: { worker: Worker; exited: boolean } | undefined;

/**
 * Starts one PHP worker thread now, to be booted by the next `startPhpWorkerThread` call of this
 * process. Does nothing when one is waiting already, or when running from TypeScript sources (the
 * development entry imports tsx first, which gains nothing). An unused prestarted thread never
 * keeps the process alive.
 */
export function prestartPhpWorker(): void {
  if (spare || fromSource) return;
  const worker = new Worker(workerUrl, { workerData: { awaitOptions: true } satisfies AwaitOptionsData, execArgv: [...PHP_WORKER_EXEC_ARGV] });
  worker.unref();
  const entry = { worker, exited: false };
  // A thread that failed to start is not handed out; the host then starts a fresh one.
  worker.on("error", () => (entry.exited = true));
  worker.on("exit", () => (entry.exited = true));
  spare = entry;
}

/**
 * A PHP worker thread booting WordPress with `options`: the prestarted one when there is one
 * (sent `options` as its first message), otherwise a new thread with `options` as its
 * `workerData`. `options` must be plain data plus the ports in `transferList`.
 * @returns the thread, and whether it was the prestarted one.
 */
export function startPhpWorkerThread(options: object, transferList: TransferListItem[]): { worker: Worker; prestarted: boolean } {
  const waiting = spare;
  spare = undefined;
  if (waiting && !waiting.exited) {
    waiting.worker.removeAllListeners("error").removeAllListeners("exit");
    waiting.worker.postMessage(options, transferList);
    return { worker: waiting.worker, prestarted: true };
  }
  if (fromSource) {
    // A .ts entry cannot be a worker's main module on Node 20; import it once tsx is loaded.
    const worker = new Worker(new URL("./php-worker-dev.mjs", import.meta.url), {
      workerData: { ...options, __entry: workerUrl.href },
      execArgv: [...PHP_WORKER_EXEC_ARGV],
      transferList,
    });
    return { worker, prestarted: false };
  }
  return { worker: new Worker(workerUrl, { workerData: options, execArgv: [...PHP_WORKER_EXEC_ARGV], transferList }), prestarted: false };
}
