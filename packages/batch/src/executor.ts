/**
 * Executors run tasks (`runTaskToBundle`) N at a time and turn every failure into a task result,
 * so one task never takes the batch down.
 *
 * Each slot is a lane (`lane.ts`): it keeps its sandbox from one task to the next and recycles it
 * when the next task's runtime key matches, so a batch pays a boot per runtime and lane, not per
 * task. A free lane takes the next waiting task of its own runtime key first. `freshSandbox`
 * boots a sandbox for every task instead.
 *
 * - `process` (the default): each slot is a long-lived child process (`executor-child`) that runs
 *   one task at a time and holds the lane's sandbox. A sandbox that crashes its process (a WebAssembly trap that escapes, an
 *   out-of-memory kill, a SIGKILL) fails only its task (`sandbox-crashed`); the slot forks a fresh
 *   child for the next task. A task over its `timeout` has its child killed (`timeout`).
 * - `in-process`: tasks run in this process (each sandbox still has its own PHP worker thread).
 *   It saves one Node process per slot but a crash of the process ends every running task, and a
 *   timed-out task can only be abandoned, not stopped. Used by the benchmark for comparison.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ERROR_CODES, exitCodeForCategory, serializeError, type BatchTaskResult, type ErrorCode, type SerializedError } from "@wp-codebox/runtime-core";
import { SandboxLane } from "./lane.js";
import { runTaskToBundle } from "./run-task.js";
import type { ResolvedTask } from "./task-file.js";

/** How tasks are isolated from each other. */
export type Isolation = "process" | "in-process";

/** Called when a task starts; `pid` is the process running it. */
export type TaskStartHook = (info: { id: string; pid: number }) => void;

/** Runs tasks to bundles; `run` never throws. */
export interface TaskExecutor {
  readonly isolation: Isolation;
  readonly concurrency: number;
  /**
   * Runs one task (waiting for a free slot) and returns its result; failures are results with
   * `bundle: null`. `runtimeKey` (from `taskRuntimeKey`) steers the task to a lane holding a
   * sandbox of that key.
   */
  run(task: ResolvedTask, root: string, onStart?: TaskStartHook, runtimeKey?: string): Promise<BatchTaskResult>;
  /** Peak resident set size per child process seen so far (bytes), for the benchmark. */
  peakRssBytes(): number[];
  /** Stops every child (after running tasks end when `graceful`). */
  close(): Promise<void>;
}

/** Options of `createExecutor`. */
export interface ExecutorOptions {
  concurrency: number;
  isolation?: Isolation;
  /** Environment of the child processes (secret values are read from it); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** A child (and its sandbox) is replaced after this many tasks (bounds slow leaks); default `DEFAULT_MAX_TASKS_PER_CHILD`. */
  maxTasksPerChild?: number;
  /** Boot a sandbox for every task and dispose it after (`--fresh-sandbox`); default false: lanes keep their sandbox. */
  freshSandbox?: boolean;
}

/** Tasks a child process runs before it is replaced: with lanes, also how often a lane boots anew. */
export const DEFAULT_MAX_TASKS_PER_CHILD = 200;

/** A task result for a failure that left no bundle. */
export function failedResult(task: ResolvedTask, error: SerializedError, durationMs: number): BatchTaskResult {
  const category = ERROR_CODES[error.code as ErrorCode] ?? "internal";
  return {
    id: task.id,
    kind: task.kind,
    status: "failed",
    ...(task.matrix ? { matrix: task.matrix } : {}),
    exitCode: exitCodeForCategory(category),
    durationMs: Math.round(durationMs),
    bundle: null,
    error: { code: error.code, message: error.message },
  };
}

function timeoutError(task: ResolvedTask): SerializedError {
  return { code: "timeout", message: `Task ${task.id} exceeded its timeout of ${task.timeoutMs} ms; its sandbox was stopped and no bundle was written.` };
}

/**
 * `n` slots handed out by index, with runtime-key affinity: a task goes to a free slot that last
 * ran its key (else one that ran nothing, else any), and a freed slot takes the first waiting task
 * of its own key before the oldest waiting one.
 */
export function laneSlots(n: number) {
  const free = Array.from({ length: n }, (_, i) => i);
  const lastKey: (string | undefined)[] = Array.from({ length: n }, () => undefined);
  const waiting: { key: string | undefined; resolve: (slot: number) => void }[] = [];
  const give = (slot: number, key: string | undefined, resolve: (slot: number) => void) => {
    lastKey[slot] = key;
    resolve(slot);
  };
  return {
    acquire: (key?: string) =>
      new Promise<number>((resolve) => {
        if (!free.length) return void waiting.push({ key, resolve });
        let at = free.findIndex((slot) => key !== undefined && lastKey[slot] === key);
        if (at < 0) at = free.findIndex((slot) => lastKey[slot] === undefined);
        const [slot] = free.splice(Math.max(at, 0), 1);
        give(slot!, key, resolve);
      }),
    release: (slot: number) => {
      if (!waiting.length) return void free.push(slot);
      const own = waiting.findIndex((w) => w.key !== undefined && w.key === lastKey[slot]);
      const [next] = waiting.splice(Math.max(own, 0), 1);
      give(slot, next!.key, next!.resolve);
    },
  };
}

/** Creates an executor (see the module comment for the two isolations). */
export function createExecutor(options: ExecutorOptions): TaskExecutor {
  return (options.isolation ?? "process") === "process" ? createProcessExecutor(options) : createInProcessExecutor(options);
}

function createInProcessExecutor(options: ExecutorOptions): TaskExecutor {
  const pool = laneSlots(options.concurrency);
  const lanes = Array.from({ length: options.concurrency }, () => new SandboxLane());
  return {
    isolation: "in-process",
    concurrency: options.concurrency,
    async run(task, root, onStart, runtimeKey) {
      const slot = await pool.acquire(runtimeKey);
      const started = performance.now();
      const lane = lanes[slot]!;
      try {
        onStart?.({ id: task.id, pid: process.pid });
        const running = runTaskToBundle(task, { root, ...(options.env ? { processEnv: options.env } : {}), ...(options.freshSandbox ? {} : { lane }) });
        if (!task.timeoutMs) return await running;
        let timer: NodeJS.Timeout | undefined;
        const expired = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), task.timeoutMs)));
        running.catch(() => undefined);
        const winner = await Promise.race([running, expired]).finally(() => clearTimeout(timer));
        if (winner !== "timeout") return winner;
        // The abandoned task still holds the old lane: the slot's next task gets a new one.
        lanes[slot] = new SandboxLane();
        void lane.discard();
        return failedResult(task, timeoutError(task), performance.now() - started);
      } catch (error) {
        return failedResult(task, serializeError(error), performance.now() - started);
      } finally {
        pool.release(slot);
      }
    },
    peakRssBytes: () => [process.resourceUsage().maxRSS * 1024],
    async close() {
      await Promise.all(lanes.map((lane) => lane.discard()));
    },
  };
}

interface ChildSlot {
  child?: ChildProcess;
  tasks: number;
  peakRss: number;
}

type ChildMessage = { type: "result"; result: BatchTaskResult; maxRssBytes: number } | { type: "error"; error: SerializedError; maxRssBytes: number };

const fromSource = import.meta.url.endsWith(".ts");
const childEntry = fileURLToPath(new URL(fromSource ? "./executor-child.ts" : "./executor-child.js", import.meta.url));

function childExecArgv(): string[] {
  const argv = process.execArgv.filter((a) => !a.startsWith("--inspect") && !a.startsWith("--test"));
  if (fromSource && !argv.some((a) => a.includes("tsx"))) argv.push("--conditions=source", "--import", "tsx");
  return argv;
}

function createProcessExecutor(options: ExecutorOptions): TaskExecutor {
  const pool = laneSlots(options.concurrency);
  const children: ChildSlot[] = Array.from({ length: options.concurrency }, () => ({ tasks: 0, peakRss: 0 }));
  const maxTasks = options.maxTasksPerChild ?? DEFAULT_MAX_TASKS_PER_CHILD;
  let closed = false;

  function spawnChild(): ChildProcess {
    const child = fork(childEntry, [], { execArgv: childExecArgv(), env: options.env ?? process.env, stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "advanced" });
    // Keep the child's last stderr for crash messages; never let it flood ours.
    let tail = "";
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (tail = (tail + d).slice(-4000)));
    (child as ChildProcess & { stderrTail: () => string }).stderrTail = () => tail;
    return child;
  }

  /** Lets an idle child dispose its sandbox and exit (it exits when disconnected); killed if it hangs. */
  function retire(child: ChildProcess): void {
    const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
    kill.unref();
    child.once("exit", () => clearTimeout(kill));
    if (child.connected) child.disconnect();
    else child.kill("SIGKILL");
  }

  function runOn(slot: ChildSlot, task: ResolvedTask, root: string, onStart?: TaskStartHook): Promise<BatchTaskResult> {
    const started = performance.now();
    if (!slot.child || slot.child.exitCode !== null || slot.child.signalCode !== null || slot.tasks >= maxTasks) {
      if (slot.child && slot.child.exitCode === null) retire(slot.child);
      slot.child = spawnChild();
      slot.tasks = 0;
    }
    const child = slot.child;
    slot.tasks++;
    return new Promise<BatchTaskResult>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let timedOut = false;
      const finish = (result: BatchTaskResult) => {
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(result);
      };
      const onMessage = (message: ChildMessage) => {
        slot.peakRss = Math.max(slot.peakRss, message.maxRssBytes);
        finish(message.type === "result" ? message.result : failedResult(task, message.error, performance.now() - started));
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        slot.child = undefined;
        if (timedOut) return finish(failedResult(task, timeoutError(task), performance.now() - started));
        const tail = (child as ChildProcess & { stderrTail?: () => string }).stderrTail?.().trim().split("\n").slice(-3).join(" | ");
        finish(
          failedResult(
            task,
            {
              code: "sandbox-crashed",
              message: `The sandbox process of task ${task.id} ended ${signal ? `with signal ${signal}` : `with exit code ${code}`} before writing a bundle${tail ? `: ${tail.slice(0, 500)}` : ""}. The other tasks are not affected.`,
            },
            performance.now() - started,
          ),
        );
      };
      child.on("message", onMessage);
      child.on("exit", onExit);
      if (task.timeoutMs) {
        timer = setTimeout(() => {
          timedOut = true;
          child.kill("SIGKILL");
        }, task.timeoutMs);
      }
      child.send({ type: "run", task, root, fresh: options.freshSandbox === true });
      if (child.pid !== undefined) onStart?.({ id: task.id, pid: child.pid });
    });
  }

  return {
    isolation: "process",
    concurrency: options.concurrency,
    async run(task, root, onStart, runtimeKey) {
      const index = await pool.acquire(runtimeKey);
      try {
        if (closed) return failedResult(task, { code: "internal-error", message: "The executor was closed before the task started." }, 0);
        return await runOn(children[index]!, task, root, onStart);
      } catch (error) {
        return failedResult(task, serializeError(error), 0);
      } finally {
        pool.release(index);
      }
    },
    peakRssBytes: () => children.map((c) => c.peakRss).filter((b) => b > 0),
    async close() {
      closed = true;
      await Promise.all(
        children.map(
          (slot) =>
            new Promise<void>((resolve) => {
              const child = slot.child;
              if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
              const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
              child.once("exit", () => {
                clearTimeout(kill);
                resolve();
              });
              child.disconnect();
            }),
        ),
      );
    },
  };
}
