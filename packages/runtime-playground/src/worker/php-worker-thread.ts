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
import { DEFAULT_PHP_VERSION, PHP_VERSIONS_WITH_STACK_CHECK } from "../site/php-versions.js";

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

/**
 * The native stack of a PHP worker thread, in MB. Recursion through PHP's C functions takes native
 * stack for its WebAssembly frames besides PHP's own C stack; the sizes are chosen together
 * (php-worker.ts, `moveCStack` and `PHP_STACK_LIMIT`): the native stack must run out before PHP's
 * C stack does, and, where PHP checks its stack itself (8.3), only after that check. 8 MB there
 * (usort recursion takes up to 5.3 native bytes per byte of C stack, and PHP 8.3 stops at 1 MiB);
 * Node's default of 4 MB elsewhere: a deeper native stack made plain userland recursion on
 * php-wasm's 8.5 build, which recurses natively for every PHP call, take minutes instead of ~18 s
 * to end (the time grows faster than the depth).
 */
export function nativeStackMbFor(phpVersion: string | undefined): number {
  return PHP_VERSIONS_WITH_STACK_CHECK.has(phpVersion ?? DEFAULT_PHP_VERSION) ? 8 : 4;
}

/** Options of a PHP worker thread for `phpVersion`. */
function workerOptions(phpVersion: string | undefined) {
  return { execArgv: [...PHP_WORKER_EXEC_ARGV], resourceLimits: { stackSizeMb: nativeStackMbFor(phpVersion) } };
}

/** `workerData` of a prestarted worker: it waits for its boot options as its first message. */
export interface AwaitOptionsData {
  awaitOptions: true;
  /** The PHP version whose WebAssembly the thread compiles while it waits (php-worker.ts). */
  phpVersion: string;
}

let spare: { worker: Worker; exited: boolean; stackMb: number } | undefined;

/**
 * Starts one PHP worker thread now, to be booted by the next `startPhpWorkerThread` call of this
 * process. Does nothing when one is waiting already, or when running from TypeScript sources (the
 * development entry imports tsx first, which gains nothing). An unused prestarted thread never
 * keeps the process alive.
 * @param phpVersion - the version the command line asks for; default `DEFAULT_PHP_VERSION`. A
 *   sandbox of a version that needs another native stack size starts a thread of its own.
 */
export function prestartPhpWorker(phpVersion?: string): void {
  if (spare || fromSource) return;
  const options = workerOptions(phpVersion);
  const worker = new Worker(workerUrl, { ...options, workerData: { awaitOptions: true, phpVersion: phpVersion ?? DEFAULT_PHP_VERSION } satisfies AwaitOptionsData });
  worker.unref();
  const entry = { worker, exited: false, stackMb: options.resourceLimits.stackSizeMb };
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
export function startPhpWorkerThread(options: { phpVersion: string }, transferList: TransferListItem[]): { worker: Worker; prestarted: boolean } {
  const waiting = spare;
  spare = undefined;
  const threadOptions = workerOptions(options.phpVersion);
  if (waiting && !waiting.exited && waiting.stackMb !== threadOptions.resourceLimits.stackSizeMb) void waiting.worker.terminate();
  else if (waiting && !waiting.exited) {
    waiting.worker.removeAllListeners("error").removeAllListeners("exit");
    waiting.worker.postMessage(options, transferList);
    return { worker: waiting.worker, prestarted: true };
  }
  if (fromSource) {
    // A .ts entry cannot be a worker's main module on Node 20; import it once tsx is loaded.
    const worker = new Worker(new URL("./php-worker-dev.mjs", import.meta.url), { ...threadOptions, workerData: { ...options, __entry: workerUrl.href }, transferList });
    return { worker, prestarted: false };
  }
  return { worker: new Worker(workerUrl, { ...threadOptions, workerData: options, transferList }), prestarted: false };
}
