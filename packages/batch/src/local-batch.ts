/**
 * `wp-codebox batch tasks.jsonl --artifacts DIR` on one machine: validate the whole task file,
 * keep tasks whose bundle already verifies, run the rest on a pool of sandboxes, write
 * `DIR/report.json` and `DIR/junit.xml`.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { WpCodeboxError, probeArtifactsDir, type BatchReport, type BatchTaskResult, type SerializedError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, listWordPressBuilds } from "@wp-codebox/runtime-playground";
import { createExecutor, type Isolation, type TaskStartHook } from "./executor.js";
import { createProgress, type BatchProgress } from "./progress.js";
import { buildReport, writeReportOrKeep, type BatchReportFiles } from "./report.js";
import { decideConcurrency, type ConcurrencyDecision } from "./resources.js";
import { taskFingerprint } from "./fingerprint.js";
import { BATCH_STATE_DIR, clearTask, findFinishedTask, taskRuntimeKey } from "./run-task.js";
import { assertValidTaskFile, validateTaskFile, type ResolvedTask } from "./task-file.js";

/** Options shared by the local and the queued batch. */
export interface BatchCommonOptions {
  tasksFile: string;
  artifactsDir: string;
  /** Relative paths resolve against it; default `process.cwd()`. */
  cwd?: string;
  /** The progress display; default a bar/lines on stderr. */
  progress?: BatchProgress;
  /** Notes (concurrency decision, resumed tasks) go here; default stderr. */
  log?: (message: string) => void;
  /** Environment: `WP_CODEBOX_OFFLINE`, and (local mode) the secret values sandboxes read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** `--allow-path DIR`: host paths the task file, recipes and scripts may name beyond their folders (relative to `cwd`). */
  allowPaths?: readonly string[];
  /** `--allow-network ORIGIN`: hosts the recipes' and scripts' policies may reach (`*` = every host). */
  allowNetwork?: readonly string[];
}

/** Options of `runLocalBatch`. */
export interface LocalBatchOptions extends BatchCommonOptions {
  /** Sandboxes at once; default one per core, capped by memory (see `decideConcurrency`). */
  concurrency?: number;
  isolation?: Isolation;
  /** `--fresh-sandbox`: boot a sandbox for every task (default: each lane keeps its sandbox and recycles it between tasks of one runtime). */
  freshSandbox?: boolean;
  /** Called when a task starts (tests kill its process to simulate a crash). */
  onTaskStart?: TaskStartHook;
}

/** What a batch returns. `exitCode` is 0 when every task passed, else 1. */
export interface BatchOutcome {
  report: BatchReport;
  files: BatchReportFiles;
  /** Set when report.json / junit.xml could not be written (`artifacts-dir-unwritable`); `exitCode` is then 3. */
  reportError?: SerializedError;
  exitCode: number;
  concurrency?: ConcurrencyDecision;
  /** Peak RSS per sandbox process (bytes), process isolation only. */
  peakRssBytes?: number[];
}

/** Validated tasks and absolute paths: what both batch modes start from. */
export interface PreparedBatch {
  tasksFile: string;
  root: string;
  tasks: ResolvedTask[];
}

/**
 * Validates the whole task file (nothing runs on a problem) and checks that `DIR/<id>` is free
 * or a bundle for every task. Creates nothing.
 * @throws WpCodeboxError `invalid-batch` listing every problem with line and pointer;
 *   `artifacts-dir-invalid` when DIR is a file or a `DIR/<id>` is something other than a bundle.
 */
export function prepareBatch(options: BatchCommonOptions): PreparedBatch {
  const cwd = options.cwd ?? process.cwd();
  const tasksFile = resolve(cwd, options.tasksFile);
  const root = resolve(cwd, options.artifactsDir);
  const offline = (options.env ?? process.env).WP_CODEBOX_OFFLINE === "1";
  const backend = createPlaygroundBackend({ cwd: dirname(tasksFile), offline });
  const tasks = assertValidTaskFile(validateTaskFile(tasksFile, {
      backend,
      offline,
      wordpressVersions: listWordPressBuilds().map((b) => b.version),
      cwd,
      ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}),
      ...(options.allowNetwork ? { allowNetwork: options.allowNetwork } : {}),
    }));
  if (existsSync(root) && !statSync(root).isDirectory()) throw new WpCodeboxError("artifacts-dir-invalid", `--artifacts ${root} is a file: pass a directory (it is created if missing).`, { path: root });
  const blocked = tasks.filter((t) => {
    const dir = join(root, t.id);
    if (!existsSync(dir)) return false;
    if (!statSync(dir).isDirectory()) return true;
    return readdirSync(dir).length > 0 && !existsSync(join(dir, "manifest.json"));
  });
  if (blocked.length) {
    throw new WpCodeboxError(
      "artifacts-dir-invalid",
      `${root} already holds ${blocked.map((t) => t.id).join(", ")}, which ${blocked.length === 1 ? "is" : "are"} not a bundle: a task's bundle goes to DIR/<id>. Use an empty --artifacts folder or remove them.`,
      { path: root, ids: blocked.map((t) => t.id) },
    );
  }
  // The folder must take bundles and the report before any task runs.
  probeArtifactsDir(root);
  return { tasksFile, root, tasks };
}

/**
 * Creates DIR, finds tasks finished by an earlier run (bundle present, verifying, same task) and
 * clears the leftovers of the others so they start clean.
 * @returns results of the finished tasks (marked `resumed`) and the tasks still to run.
 */
export async function resumeBatch(prepared: PreparedBatch): Promise<{ finished: BatchTaskResult[]; pending: ResolvedTask[] }> {
  mkdirSync(join(prepared.root, BATCH_STATE_DIR), { recursive: true });
  const finished: BatchTaskResult[] = [];
  const pending: ResolvedTask[] = [];
  for (const task of prepared.tasks) {
    const done = await findFinishedTask(prepared.root, task, taskFingerprint(task));
    if (done) finished.push(done);
    else {
      clearTask(prepared.root, task.id);
      pending.push(task);
    }
  }
  return { finished, pending };
}

/** Removes the staging folder once no task of this batch can still write to it. */
export function cleanStaging(root: string): void {
  rmSync(join(root, BATCH_STATE_DIR, "staging"), { recursive: true, force: true });
}

/**
 * Tasks with their runtime keys (`taskRuntimeKey`), grouped: stable order within a group, groups
 * in the order of their first task. A task that cannot be planned has no key and stays in place
 * at the end (it fails when it runs).
 */
export async function groupByRuntime(tasks: readonly ResolvedTask[], processEnv: NodeJS.ProcessEnv): Promise<{ task: ResolvedTask; key: string | undefined }[]> {
  const keyed = await Promise.all(tasks.map(async (task) => ({ task, key: await taskRuntimeKey(task, processEnv) })));
  const groups = new Map<string | undefined, { task: ResolvedTask; key: string | undefined }[]>();
  for (const entry of keyed) groups.set(entry.key, [...(groups.get(entry.key) ?? []), entry]);
  const unkeyed = groups.get(undefined) ?? [];
  groups.delete(undefined);
  return [...[...groups.values()].flat(), ...unkeyed];
}

/**
 * Runs a batch on this machine.
 * @returns the report (also written to DIR), exit code 0 when every task passed, else 1.
 * @throws what `prepareBatch` throws (exit 2), before anything runs.
 */
export async function runLocalBatch(options: LocalBatchOptions): Promise<BatchOutcome> {
  const log = options.log ?? ((m: string) => void process.stderr.write(`${m}\n`));
  const startedAt = new Date();
  const prepared = prepareBatch(options);
  const decision = decideConcurrency(options.concurrency);
  if (decision.lowered) log(`wp-codebox: concurrency lowered from ${decision.lowered.requested} to ${decision.concurrency}: ${decision.lowered.reason}`);
  const { finished, pending } = await resumeBatch(prepared);
  const concurrency = Math.max(1, Math.min(decision.concurrency, pending.length || 1));
  const why =
    options.concurrency === undefined ? `; default: ${decision.cores} core(s), memory available for ${decision.memoryCap}` : "";
  log(
    pending.length === 0
      ? `wp-codebox: ${prepared.tasks.length} task(s), all kept from an earlier run; nothing to run`
      : `wp-codebox: ${prepared.tasks.length} task(s), ${finished.length} kept from an earlier run, running ${pending.length} with ${concurrency} sandbox(es) at once (${options.isolation ?? "process"} isolation, ${options.freshSandbox ? "a fresh sandbox per task" : "each lane keeps its sandbox"}${why})`,
  );
  const progress = options.progress ?? createProgress({ total: prepared.tasks.length });
  const results: BatchTaskResult[] = [...finished];
  for (const r of finished) progress.taskDone(r);
  const executor = createExecutor({ concurrency, isolation: options.isolation ?? "process", ...(options.env ? { env: options.env } : {}), ...(options.freshSandbox ? { freshSandbox: true } : {}) });
  // Tasks of one runtime side by side, so a lane recycles its sandbox instead of booting another.
  const keyed = await groupByRuntime(pending, options.env ?? process.env);
  try {
    await Promise.all(
      keyed.map(async ({ task, key }) => {
        const result = await executor.run(task, prepared.root, options.onTaskStart, key);
        results.push(result);
        progress.taskDone(result);
      }),
    );
  } finally {
    progress.stop();
    await executor.close();
  }
  cleanStaging(prepared.root);
  const report = buildReport(
    prepared.tasks.map((t) => t.id),
    results,
    { tasksFile: prepared.tasksFile, artifactsDir: prepared.root, mode: "local", concurrency, startedAt, finishedAt: new Date() },
  );
  const { files, error: reportError } = writeReportOrKeep(prepared.root, report);
  if (reportError) return { report, files, reportError, exitCode: 3, concurrency: decision, peakRssBytes: executor.peakRssBytes() };
  return { report, files, exitCode: report.counts.failed > 0 ? 1 : 0, concurrency: decision, peakRssBytes: executor.peakRssBytes() };
}
