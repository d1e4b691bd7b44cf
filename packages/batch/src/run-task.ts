/**
 * Running one task to a verified bundle under `ROOT/<id>/`: the single place a batch touches a
 * sandbox. It plans the recipe or episode with runtime-core's `planRun` and runs it with
 * `runSession` (boot → execute → bundle → verify → dispose), the same lifecycle as `recipe run`
 * and `episode run`, or, on a lane, on the lane's recycled sandbox (execute → bundle → verify);
 * everything else in this package (local pool, BullMQ worker) only calls `runTaskToBundle`.
 *
 * Bundles are written to `ROOT/.wp-codebox-batch/staging/<id>-<random>`, verified, then renamed to
 * `ROOT/<id>` and described by `ROOT/.wp-codebox-batch/results/<id>.json`. A rename is atomic, so
 * `ROOT/<id>` is either absent or a complete bundle, also when the process is killed mid-task.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  ERROR_CODES,
  WpCodeboxError,
  isMissingInputFile,
  planRun,
  readInputFileSync,
  readInputText,
  runSession,
  verifyArtifactBundle,
  type BatchTaskResult,
  type ErrorCode,
  type RunPlan,
  type RunSessionOutcome,
  type RuntimeBackend,
} from "@wp-codebox/runtime-core";
import { createNamedBackend } from "./task-backend.js";
import { isResumableFingerprint, taskFingerprint } from "./fingerprint.js";
import { runtimeKey, type SandboxLane } from "./lane.js";
import { applyRuntimeOverrides, type ResolvedTask } from "./task-file.js";

/** Folder under the artifacts root that holds batch bookkeeping (never a bundle). */
export const BATCH_STATE_DIR = ".wp-codebox-batch";

/** What a finished task leaves beside its bundle: its result and the fingerprint of the task it ran. */
export interface TaskRecord {
  fingerprint: string;
  result: BatchTaskResult;
}

/** Options of `runTaskToBundle`. */
export interface RunTaskOptions {
  /** The batch's artifacts root; the bundle goes to `<root>/<task id>/`. */
  root: string;
  /** Where secret values named by recipes/scripts are read; default `process.env`. */
  processEnv?: NodeJS.ProcessEnv;
  /** Backend factory (tests); default the backend the task names (`ResolvedTask.backend`, else Playground) with the file's folder as cwd. */
  backend?: (task: ResolvedTask) => RuntimeBackend;
  onProgress?: (message: string) => void;
  /**
   * The lane whose sandbox the task runs on (recycled when its runtime key matches, else booted
   * anew); absent: a sandbox booted for this task alone and disposed after it (`--fresh-sandbox`).
   */
  lane?: SandboxLane;
}

const statePath = (root: string, ...parts: string[]) => join(root, BATCH_STATE_DIR, ...parts);

/**
 * True when a finished result must not be kept on resume: the task did not get a fair run (an
 * internal error, an environment problem, an interrupt, a crashed sandbox), so running it again
 * may well end differently. Results of sandbox work (passed, or failed on its own terms) are kept.
 */
export function isRetryableResult(result: Pick<BatchTaskResult, "exitCode" | "error">): boolean {
  if (RETRY_EXIT_CODES.has(result.exitCode)) return true;
  const code = result.error?.code;
  if (code === undefined) return false;
  if (RETRY_ERROR_CODES.has(code)) return true;
  const category = ERROR_CODES[code as ErrorCode];
  return category === "internal" || category === "environment";
}

/** Exit codes of runs that did not finish on their own terms: 3 environment, 70 internal, 130/143 interrupted. */
const RETRY_EXIT_CODES = new Set([3, 70, 130, 143]);
/** Sandbox-category codes that still say nothing about the task itself. */
const RETRY_ERROR_CODES = new Set(["interrupted", "sandbox-crashed"]);

/**
 * The finished result of `task` under `root`, when its record exists, was written for the same
 * fingerprint, and its bundle exists, verifies and has the recorded id and digest. A result that
 * `isRetryableResult` (internal or environment error, interrupt, crash) or an unresumable
 * fingerprint counts as not finished, unless `includeRetryable` (reading a result just reported).
 * @returns the result marked `resumed: true`, or undefined (the task must run).
 */
export async function findFinishedTask(
  root: string,
  task: ResolvedTask,
  fingerprint = taskFingerprint(task),
  options: { includeRetryable?: boolean } = {},
): Promise<BatchTaskResult | undefined> {
  const recordFile = statePath(root, "results", `${task.id}.json`);
  if (!existsSync(recordFile)) return undefined;
  let record: TaskRecord;
  try {
    record = JSON.parse(readFileSync(recordFile, "utf8")) as TaskRecord;
  } catch {
    return undefined;
  }
  if (record.fingerprint !== fingerprint || !record.result?.bundle) return undefined;
  if (!options.includeRetryable && !isResumableFingerprint(fingerprint)) return undefined;
  if (!options.includeRetryable && isRetryableResult(record.result)) return undefined;
  const bundleDir = join(root, task.id);
  if (!existsSync(join(bundleDir, "manifest.json"))) return undefined;
  if (!(await bundleMatches(bundleDir, record.result.bundle))) return undefined;
  return { ...record.result, resumed: true };
}

/** True when the bundle in `dir` verifies and carries `expected`'s id and digest. */
export async function bundleMatches(dir: string, expected: { id: string; digest: string }): Promise<boolean> {
  const verification = await verifyArtifactBundle(dir);
  if (!verification.valid) return false;
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { bundle?: { id?: string; digest?: string }; id?: string; digest?: string };
    const id = manifest.bundle?.id ?? manifest.id;
    const digest = manifest.bundle?.digest ?? manifest.digest;
    return id === expected.id && (digest === undefined || digest === expected.digest);
  } catch {
    return false;
  }
}

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Writes the task's record (after its bundle is in place). */
export function writeTaskRecord(root: string, task: ResolvedTask, result: BatchTaskResult, fingerprint = taskFingerprint(task)): void {
  const record: TaskRecord = { fingerprint, result };
  writeAtomic(statePath(root, "results", `${task.id}.json`), `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes a task's record and bundle (a stale or broken earlier run) before it runs again. */
export function clearTask(root: string, id: string): void {
  rmSync(statePath(root, "results", `${id}.json`), { force: true });
  rmSync(join(root, id), { recursive: true, force: true });
}

/**
 * Plans a task as `recipe run` / `episode run` would: reads its file, applies the task's runtime
 * overrides and the batch's grants.
 * @throws WpCodeboxError what `planRun` throws; `invalid-recipe` / `invalid-episode-script` when
 *   the file cannot be read or parsed.
 */
export async function planTask(task: ResolvedTask, options: { processEnv: NodeJS.ProcessEnv; artifactsDir: string; backend?: RuntimeBackend }): Promise<RunPlan> {
  let document: unknown;
  try {
    document = applyRuntimeOverrides(JSON.parse(await readInputText(task.file, task.kind === "recipe" ? "recipe" : "episode-script")), task.kind, task.runtime);
  } catch (error) {
    if (error instanceof WpCodeboxError && !isMissingInputFile(error)) throw error;
    throw new WpCodeboxError(task.kind === "recipe" ? "invalid-recipe" : "invalid-episode-script", `Cannot read ${task.file}: ${(error as Error).message}`, { path: task.file });
  }
  const request = task.kind === "recipe" ? { kind: "recipe" as const, file: task.file, recipe: document } : { kind: "episode" as const, file: task.file, script: document, baseDir: dirname(task.file) };
  return planRun(request, { cwd: dirname(task.file), processEnv: options.processEnv, artifactsDir: options.artifactsDir, ...(options.backend ? { backend: options.backend } : {}), ...(task.grants ? task.grants : {}) });
}

/**
 * The runtime key of a task (see `runtimeKey`), for grouping a batch's tasks so a lane keeps its
 * sandbox. Nothing boots and nothing is written.
 * @returns the key, or undefined when the task cannot be planned here (it then fails when it runs).
 */
export async function taskRuntimeKey(task: ResolvedTask, processEnv: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  try {
    return `${task.backend ?? "playground"}:${runtimeKey((await planTask(task, { processEnv, artifactsDir: join(BATCH_STATE_DIR, "plan") })).createSpec)}`;
  } catch {
    return undefined;
  }
}

/**
 * Runs one task (in a fresh sandbox, or on `options.lane`'s) and leaves its verified bundle at `<root>/<id>/` with its record.
 * A recipe whose expectations fail, or an episode with a failed step, is a `failed` result with a
 * bundle; `exitCode` is what `recipe run` / `episode run` would exit with.
 * @returns the task's result (`bundle` set).
 * @throws WpCodeboxError when no bundle could be written: what `planRun` throws
 *   (`invalid-recipe`/`invalid-episode-script` when the file changed, a secret not set here, …)
 *   and `bundle-invalid`.
 */
export async function runTaskToBundle(task: ResolvedTask, options: RunTaskOptions): Promise<BatchTaskResult> {
  const { root } = options;
  const processEnv = options.processEnv ?? process.env;
  const fingerprint = taskFingerprint(task);
  const stage = statePath(root, "staging", `${task.id}-${randomUUID().slice(0, 8)}`);
  mkdirSync(dirname(stage), { recursive: true });
  const started = performance.now();
  const backend = options.backend?.(task) ?? createNamedBackend(task.backend, { cwd: dirname(task.file), offline: processEnv.WP_CODEBOX_OFFLINE === "1" });
  const progress = options.onProgress;
  try {
    const plan = await planTask(task, { processEnv, artifactsDir: stage, backend });
    const outcome = options.lane ? await runOnLane(options.lane, plan, backend, progress) : await runSession(plan, { backend, ...(progress ? { onProgress: progress } : {}) });
    const failure = outcome.recipe?.report.failure;
    const failedStep = outcome.episode?.steps.find((s) => s.kind === "action" && s.status !== "ok");
    const error = outcome.error
      ? { code: outcome.error.code, message: outcome.error.message }
      : failure
        ? { code: "expectation-failed", message: failure.message }
        : failedStep
          ? { code: failedStep.errorCode ?? "episode-step-failed", message: `step ${failedStep.index + 1}${failedStep.name ? ` (${failedStep.name})` : ""}: ${failedStep.command} ended ${failedStep.status}` }
          : outcome.exitCode !== 0
            ? { code: "internal-error", message: outcome.summary }
            : undefined;
    const result: Omit<BatchTaskResult, "durationMs"> = {
      id: task.id,
      kind: task.kind,
      status: outcome.exitCode === 0 ? "passed" : "failed",
      ...(task.matrix ? { matrix: task.matrix } : {}),
      exitCode: outcome.exitCode,
      bundle: { id: outcome.bundle.id, digest: outcome.bundle.digest },
      ...(error ? { error } : {}),
    };
    if (outcome.bundle.written === false) {
      const lost = outcome.bundle.error!;
      throw new WpCodeboxError(lost.code as "artifacts-dir-unwritable", lost.message, lost.data ?? {});
    }
    if (!outcome.bundle.valid) {
      throw new WpCodeboxError("bundle-invalid", `The bundle of task ${task.id} failed verification right after it was written (a wp-codebox bug; please report it).`, { task: task.id });
    }
    const final: BatchTaskResult = { ...result, durationMs: Math.round(performance.now() - started) };
    commitBundle(root, task, stage, final, fingerprint);
    return final;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Runs a plan on the lane's sandbox. A sandbox that did not boot is recorded by `runSession` as
 * for a fresh boot (its `create` answers with the same error, without booting again); a session
 * that ended with an error leaves its sandbox in doubt, so the lane drops it.
 */
async function runOnLane(lane: SandboxLane, plan: RunPlan, backend: RuntimeBackend, progress?: (message: string) => void): Promise<RunSessionOutcome> {
  const onProgress = progress ? { onProgress: progress } : {};
  const sandbox = await lane.acquire(backend, { ...plan.createSpec, ...onProgress });
  if ("bootError" in sandbox) {
    const failing: RuntimeBackend = { ...backend, create: () => Promise.reject(sandbox.bootError) };
    return runSession(plan, { backend: failing, ...onProgress });
  }
  let outcome: RunSessionOutcome | undefined;
  try {
    outcome = await runSession(plan, { runtime: sandbox.runtime, backend, ...onProgress });
    return outcome;
  } finally {
    if (!outcome || outcome.error) await lane.discard();
  }
}

/**
 * Moves a verified staged bundle to `<root>/<id>` and writes the record. When another run of the
 * same task (a BullMQ retry racing a worker that was presumed dead) already put a bundle there,
 * that one is kept.
 */
function commitBundle(root: string, task: ResolvedTask, stage: string, result: BatchTaskResult, fingerprint: string): void {
  const target = join(root, task.id);
  rmSync(statePath(root, "results", `${task.id}.json`), { force: true });
  if (existsSync(target)) rmSync(target, { recursive: true, force: true });
  try {
    renameSync(stage, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
    return; // a concurrent run of the same task won the rename; its record describes its bundle
  }
  writeTaskRecord(root, task, result, fingerprint);
}
