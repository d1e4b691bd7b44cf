/**
 * `runSession`: the one run lifecycle every path uses (`run`, `recipe run`, `episode run`, batch
 * tasks, attached runtimes): boot → execute → write the bundle → verify it → dispose. Whatever
 * happens (a failing command, a policy denial, a sandbox that does not boot, an interrupt), a
 * bundle is written and verified and the runtime this session booted is disposed. It never
 * prints and never exits the process: the caller decides what to show.
 */
import { setTimeout as delay } from "node:timers/promises";
import { basename } from "node:path";
import type { BundleViolation } from "../artifact-bundle/verify-artifact-bundle.js";
import { writeArtifactBundle, type BundleStatus, type WriteArtifactBundleOptions } from "../artifact-bundle/write-artifact-bundle.js";
import { bundleWriteError, probeArtifactsDir } from "../artifacts-dir-probe.js";
import { INTERRUPTED_BOOT_GRACE_MS, INTERRUPTED_COMMAND_GRACE_MS } from "../defaults.js";
import { runEpisodeSteps, type EpisodeScriptStepReport, type EpisodeSessionWork } from "../episode/episode-steps.js";
import type { RuntimeEpisodeTrace } from "../episode/episode-trace.js";
import { ERROR_CODES, WpCodeboxError, exitCodeForCategory, serializeError, type ErrorCode, type SerializedError } from "../errors.js";
import { failedExecutionResult } from "../failed-execution-result.js";
import { abortReason, raceInterrupt, valueWithin } from "../interrupt.js";
import { runRecipeSteps, type RecipeReport } from "../recipe/run-recipe.js";
import { createRedactor } from "../redaction.js";
import type { RunPlan } from "./run-plan.js";
import type { ExecutionResult, Runtime, RuntimeArtifacts, RuntimeBackend, RuntimeInfo } from "../runtime.js";

/** Exit status of a run interrupted by SIGINT (128 + 2) and SIGTERM (128 + 15), as shells report them. */
export const INTERRUPT_EXIT_CODES: Readonly<Record<string, number>> = Object.freeze({ SIGINT: 130, SIGTERM: 143 });


/** Options of `runSession`. Give `backend`, `runtime`, or both. */
export interface RunSessionOptions {
  /** Boots the sandbox (`backend.create(plan.createSpec)`); episodes also use it to reset or restore. */
  backend?: RuntimeBackend;
  /**
   * An already-running runtime (e.g. an attach client over a served sandbox): nothing is booted,
   * and the session does not dispose it; its owner does.
   */
  runtime?: Runtime;
  /**
   * Aborting stops the run (reason `"SIGINT"` or `"SIGTERM"`): the bundle is still written, and the
   * sandbox this session booted is disposed. The command running then gets the signal too, so it
   * stops in the sandbox and hands back what PHP printed so far; an attached sandbox stays up.
   */
  signal?: AbortSignal;
  /**
   * How long (ms) an interrupted run waits for the stopped command's own result before recording
   * it without output; default `INTERRUPTED_COMMAND_GRACE_MS`.
   */
  interruptedCommandGraceMs?: number;
  /**
   * The backend hands out a sandbox someone else keeps up (an attached `serve` sandbox, through
   * `attachedBackend`): an interrupt then stops the episode step running there, and the interrupt
   * message says the sandbox stays up instead of "disposed".
   */
  sandboxOutlives?: boolean;
  /** Human-readable progress (boot, each step, bundle, dispose). */
  onProgress?: (message: string) => void;
}

/** The bundle a session wrote, with a fresh verification. */
export interface SessionBundle {
  /** Absolute directory. */
  directory: string;
  /** `artifact-bundle-sha256-<digest>`. */
  id: string;
  /** SHA-256 hex of the bundle. */
  digest: string;
  valid: boolean;
  violations: BundleViolation[];
  /**
   * False when the bundle could not be written after the work ran (a disk that filled up or went
   * read-only): `error` then says why (`artifacts-dir-unwritable`), `id`/`digest` are "", `valid`
   * is false and the outcome's exit code is 3. Absent when the bundle was written.
   */
  written?: false;
  error?: SerializedError;
}

/**
 * What `runSession` returns. Values that reach the caller (results, reports, errors) are
 * redacted like the bundle.
 * - `status`: the bundle's review status, `ok` | `error` | `timed-out`.
 * - `exitCode`: 0 ok; 1 the sandbox work failed (a command error, a failed expectation, a failed
 *   episode step, or the sandbox did not boot); 2/3/70 when a command could not run, by the error's
 *   category (e.g. 3 `browser-unavailable`); 130/143 interrupted; 70 when the bundle did not verify.
 * - `error`: set when boot failed, a command could not run, or the run was interrupted.
 * - `command` / `recipe` / `episode`: the kind-specific outcome.
 */
export interface RunSessionOutcome {
  runId: string;
  kind: RunPlan["kind"];
  status: BundleStatus;
  exitCode: number;
  summary: string;
  error?: SerializedError;
  bundle: SessionBundle;
  /** Facts of the runtime that ran the work; absent when none booted. */
  runtimeInfo?: RuntimeInfo;
  command?: { result: ExecutionResult };
  recipe?: { report: RecipeReport };
  episode?: { trace?: RuntimeEpisodeTrace; steps: EpisodeScriptStepReport[]; allOk: boolean };
}

/**
 * The error of an interrupted session. `owned`: the session booted the sandbox and disposes it;
 * otherwise the sandbox is someone else's (an attached `serve` sandbox): its command was stopped
 * and it stays up.
 */
function interruptedError(signal: string, directory: string, owned = true, duringBoot = false): SerializedError {
  return {
    code: "interrupted",
    message: duringBoot
      ? `Interrupted by ${signal} while the sandbox was booting: the boot was stopped and a partial bundle written to ${directory}. Run the command again to finish the work.`
      : owned
        ? `Interrupted by ${signal}: the sandbox was disposed and a partial bundle written to ${directory}. Run the command again to finish the work.`
        : `Interrupted by ${signal}: the command was stopped in the attached sandbox, which wp-codebox serve keeps running (attach again to go on), and a partial bundle written to ${directory}.`,
    data: { signal, ...(owned ? {} : { attached: true }), ...(duringBoot ? { phase: "boot" } : {}) },
  };
}

/** Errors thrown by `create`/`execute` become session errors; anything that is not a WpCodeboxError is an internal bug. */
function asSessionError(thrown: unknown): SerializedError {
  if (thrown instanceof WpCodeboxError) return thrown.toJSON();
  const serialized = serializeError(thrown);
  if (serialized.code !== "internal-error") return serialized;
  const { message } = serialized;
  return { code: "internal-error", message: `${message} (an unexpected failure: please report it with the bundle attached)` };
}

/**
 * The runtime's artifacts, or, when they cannot be had any more (an attached `serve` stopped during
 * the run), what this process knows: the runtime's info and an `artifacts-unavailable` event with
 * the error. The session still writes its bundle, with the failed result.
 */
async function collectOrRecordLoss(runtime: Runtime, spec: Parameters<Runtime["collectArtifacts"]>[0]): Promise<RuntimeArtifacts> {
  try {
    return await runtime.collectArtifacts(spec);
  } catch (thrown) {
    const error = asSessionError(thrown);
    return { info: runtime.info(), results: [], events: [{ at: new Date().toISOString(), type: "artifacts-unavailable", data: { code: error.code, message: error.message } }], files: [], secrets: [] };
  }
}

/** The exit code an error maps to: its category's, or 130/143 for an interrupt. */
export function exitCodeForError(error: SerializedError): number {
  if (error.code === "interrupted") return INTERRUPT_EXIT_CODES[String(error.data?.signal)] ?? INTERRUPT_EXIT_CODES.SIGINT!;
  return exitCodeForCategory(ERROR_CODES[error.code as ErrorCode] ?? "internal");
}

/** Runtime facts for the bundle of a sandbox that never booted: what the plan asked for. */
function notBootedInfo(plan: RunPlan, backend: RuntimeBackend | undefined): RuntimeInfo {
  const wordpress = plan.createSpec.wordpress;
  return {
    id: plan.runId,
    backend: backend?.kind ?? "unknown",
    wordpressVersion: plan.preflight.wordpressVersion ?? wordpress?.version ?? (wordpress?.path ? `custom:${wordpress.path}` : "unknown"),
    phpVersion: plan.preflight.phpVersion ?? plan.createSpec.php ?? "unknown",
    siteUrl: "",
    bootMode: "cached",
    bootDurationMs: 0,
    mounts: plan.mounts,
    policy: plan.policy,
    plugins: (plan.createSpec.plugins ?? []).map((p) => basename(p)),
    themes: (plan.createSpec.themes ?? []).map((t) => basename(t)),
  };
}

/** What the kind-specific part hands to the bundle writer. */
interface WorkResult {
  artifacts: RuntimeArtifacts;
  status: BundleStatus;
  /** The review summary; undefined: the bundle writer's default (results counted by status). */
  summary?: string;
  exitCode: number;
  error?: SerializedError;
  write: Omit<WriteArtifactBundleOptions, "status" | "summary">;
  outcome: Pick<RunSessionOutcome, "command" | "recipe" | "episode">;
}

/**
 * Runs a plan from `planRun`: boots a sandbox (or uses `options.runtime`), executes the plan's
 * work, writes the bundle to `plan.artifactsDir`, verifies it, and disposes the sandbox it booted.
 * - command: one `execute`; a thrown `execute` (policy denial …) is recorded as an error result.
 * - recipe: setup then steps with their expectations; `files/recipe-report.json`, `files/recipe-plan.json`.
 * - episode: reset, steps, snapshots, observations; `files/runtime-episode-trace.json` and its events.
 * A sandbox that does not boot still gets a bundle: the plan's runtime facts, a `boot-failed`
 * event and, for a command, a synthetic error result.
 * @returns the outcome (see `RunSessionOutcome`): bundle directory, id, digest, verification,
 *   status, exit code, the redacted kind-specific outcome.
 * @throws WpCodeboxError `invalid-argument` when neither `backend` nor `runtime` is given;
 *   `artifacts-dir-unwritable` before anything boots when `plan.artifactsDir` cannot be created or
 *   written or has too little space (`probeArtifactsDir`); errors writing the bundle
 *   (`artifacts-dir-not-empty` if the directory filled up since planning, `invalid-artifact-path`,
 *   `bundle-invalid`). A filesystem failure while writing it is not thrown: the outcome then has
 *   `bundle.written: false` with the error and exit code 3. Every failure of the work is a result.
 * @example
 * const backend = createPlaygroundBackend();
 * const plan = planRun({ kind: "recipe", file: "recipe.json" }, { backend });
 * const { exitCode, bundle } = await runSession(plan, { backend });
 */
export async function runSession(plan: RunPlan, options: RunSessionOptions): Promise<RunSessionOutcome> {
  const { backend, signal } = options;
  if (!backend && !options.runtime) throw new WpCodeboxError("invalid-argument", "runSession needs a backend to boot a sandbox, or a running runtime.");
  const progress = options.onProgress ?? (() => undefined);
  const owned = options.runtime === undefined;
  // Whether the sandbox goes with this session (what an interrupt message may claim).
  const disposes = owned && options.sandboxOutlives !== true;
  const startedMs = Date.now();
  // Before any work: a bundle folder that cannot take the bundle is an environment error now, not a lost result later.
  probeArtifactsDir(plan.artifactsDir);
  let runtime: Runtime | undefined = options.runtime;
  let booting: Promise<Runtime> | undefined;
  let interrupted: SerializedError | undefined;
  const stop = () => {
    if (!interrupted && signal?.aborted) interrupted = interruptedError(abortReason(signal), plan.artifactsDir, disposes);
    return interrupted !== undefined;
  };
  try {
    let bootError: SerializedError | undefined;
    if (!runtime) {
      progress(`Booting a sandbox (run ${plan.runId})`);
      booting = backend!.create({ ...plan.createSpec, onProgress: progress, ...(signal ? { signal } : {}) });
      const booted = await raceInterrupt(booting, signal);
      if (booted.kind === "value") runtime = booted.value;
      else if (booted.kind === "interrupted") bootError = interrupted = interruptedError(booted.signal, plan.artifactsDir, disposes, true);
      else bootError = asSessionError(booted.thrown);
      if (runtime) {
        const info = runtime.info();
        progress(`Booted WordPress ${info.wordpressVersion} on PHP ${info.phpVersion} in ${info.bootDurationMs} ms (${info.bootMode} site)`);
      } else if (booted.kind === "interrupted") progress(`The sandbox did not boot: interrupted by ${booted.signal}`);
      else progress(`The sandbox did not boot: ${bootError!.code}: ${bootError!.message}`);
    }

    const bootEvent = () => ({ at: new Date().toISOString(), type: bootError?.code === "interrupted" ? "boot-interrupted" : "boot-failed", data: { code: bootError?.code ?? "boot-failed" } });
    const baseArtifacts = (spec?: Parameters<Runtime["collectArtifacts"]>[0]): Promise<RuntimeArtifacts> =>
      runtime ? collectOrRecordLoss(runtime, spec) : Promise.resolve({ info: notBootedInfo(plan, backend), results: [], events: [bootEvent()], files: [], secrets: [] });

    let work: WorkResult;
    if (plan.kind === "command") {
      const { command } = plan;
      let result: ExecutionResult | undefined;
      let error = bootError;
      if (runtime) {
        progress(`Running ${command.command}`);
        // The interrupt stops the command in the sandbox too: an attached serve sandbox would run
        // it on to its own timeout, and a stopped command hands back what PHP printed so far.
        const executing = runtime.execute({
          command: command.command,
          args: command.args,
          ...(command.timeoutMs !== undefined ? { timeoutMs: command.timeoutMs } : {}),
          ...(signal ? { signal } : {}),
        });
        const executed = await raceInterrupt(executing, signal);
        if (executed.kind === "value") result = executed.value;
        else if (executed.kind === "interrupted") {
          error = interrupted = interruptedError(executed.signal, plan.artifactsDir, disposes);
          result = await valueWithin(executing, options.interruptedCommandGraceMs ?? INTERRUPTED_COMMAND_GRACE_MS);
        } else error = asSessionError(executed.thrown);
      }
      let artifacts = await baseArtifacts();
      if (!result) {
        result = failedExecutionResult(command, error!, startedMs);
        artifacts = { ...artifacts, results: [...artifacts.results, result] };
      }
      const summary = !error
        ? undefined
        : runtime
          ? `${command.command} did not complete: error[${error.code}]: ${error.message}`
          : `The sandbox did not boot, so ${command.command} did not run: error[${error.code}]: ${error.message}`;
      work = {
        artifacts,
        status: error ? "error" : result.status,
        ...(summary !== undefined ? { summary } : {}),
        exitCode: result.status === "ok" ? 0 : 1,
        ...(error ? { error } : {}),
        write: { extraMetadata: { runId: plan.runId } },
        outcome: { command: { result } },
      };
    } else if (plan.kind === "recipe") {
      const done = await runRecipeSteps(plan.recipe, runtime, bootError, progress, stop, signal ? { signal, stopInSandbox: true, graceMs: options.interruptedCommandGraceMs ?? INTERRUPTED_COMMAND_GRACE_MS } : undefined);
      const artifacts = await baseArtifacts({ includeRuntimeSnapshotBundles: plan.recipe.artifacts.includeRuntimeSnapshotBundles });
      const failed = done.report.outcome === "failed";
      work = {
        artifacts: { ...artifacts, results: [...artifacts.results, ...done.extraResults], files: [...artifacts.files, ...done.files] },
        status: failed || done.error ? "error" : "ok",
        summary: done.report.summary,
        exitCode: failed ? 1 : 0,
        ...(done.error ? { error: done.error } : {}),
        write: { extraReview: done.extraReview, extraMetadata: { runId: plan.runId, ...done.extraMetadata } },
        outcome: { recipe: { report: done.report } },
      };
    } else {
      let done: EpisodeSessionWork = { steps: [], allOk: false };
      // The signal stops the running step in the sandbox (recorded in the trace), whoever owns it.
      if (runtime) done = await runEpisodeSteps(plan, runtime, backend, progress, stop, signal);
      const error = bootError ?? done.error;
      const artifacts = done.artifacts ?? (await baseArtifacts());
      const failedStep = done.trace?.steps.find((s) => s.execution.status !== "ok");
      const summary = done.trace
        ? `Episode ${done.trace.id}: ${done.trace.steps.length} step(s), ${done.trace.steps.filter((s) => s.execution.status === "ok").length} ok, ${done.trace.snapshots.length} snapshot(s).${error ? ` Stopped: error[${error.code}]: ${error.message}` : ""}`
        : `The episode did not start: error[${error?.code}]: ${error?.message}`;
      work = {
        artifacts,
        status: failedStep ? failedStep.execution.status : error ? "error" : "ok",
        summary,
        exitCode: done.allOk ? 0 : 1,
        ...(error ? { error } : {}),
        write: { extraMetadata: { runId: plan.runId } },
        outcome: { episode: { ...(done.trace ? { trace: done.trace } : {}), steps: done.steps, allOk: done.allOk } },
      };
    }
    stop();
    const error = interrupted ?? work.error;
    const secrets = [...new Set([...work.artifacts.secrets, ...plan.secrets])];

    progress(`Writing the artifact bundle to ${plan.artifactsDir}`);
    let written: Awaited<ReturnType<typeof writeArtifactBundle>>;
    try {
      written = await writeArtifactBundle(
        plan.artifactsDir,
        { ...work.artifacts, secrets },
        { ...work.write, status: error ? "error" : work.status, ...(work.summary !== undefined ? { summary: work.summary } : {}) },
      );
    } catch (thrown) {
      // The disk failed after the work ran: the result is still returned, marked, with exit 3.
      const lost = bundleWriteError(thrown, plan.artifactsDir);
      if (!lost) throw thrown;
      progress(`The bundle could not be written: ${lost.message}`);
      const redactor = createRedactor(secrets);
      return {
        runId: plan.runId,
        kind: plan.kind,
        status: error ? "error" : work.status,
        exitCode: exitCodeForError(lost),
        summary: redactor.redact(work.summary ?? `${plan.actions.length} command(s); status ${work.status}`),
        ...(error ? { error: redactor.redactValue(error) } : {}),
        bundle: { directory: plan.artifactsDir, id: "", digest: "", valid: false, violations: [], written: false, error: redactor.redactValue(lost) },
        ...(runtime ? { runtimeInfo: runtime.info() } : {}),
        ...redactor.redactValue(work.outcome),
      };
    }
    // writeArtifactBundle has verified it (it throws bundle-invalid otherwise): no second read.
    const verification: { valid: boolean; violations: BundleViolation[] } = { valid: written.valid, violations: [] };
    let exitCode = error ? exitCodeForError(error) : work.exitCode;
    if (!verification.valid && exitCode === 0) exitCode = 70;
    // What the caller prints is held to the same rule as the bundle: no secret value leaves redacted.
    const redactor = createRedactor(secrets);
    return {
      runId: plan.runId,
      kind: plan.kind,
      status: error ? "error" : work.status,
      exitCode,
      summary: redactor.redact(work.summary ?? `${plan.actions.length} command(s); status ${work.status}`),
      ...(error ? { error: redactor.redactValue(error) } : {}),
      bundle: { directory: written.directory, id: written.id, digest: written.digest, valid: verification.valid, violations: verification.violations },
      ...(runtime ? { runtimeInfo: runtime.info() } : {}),
      ...redactor.redactValue(work.outcome),
    };
  } finally {
    if (owned && runtime) {
      progress("Disposing the sandbox");
      await runtime.dispose().catch(() => undefined);
    } else if (owned && booting) {
      // Interrupted mid-boot: wait (bounded) for the boot to settle, then dispose what it made.
      const late = await Promise.race([booting.then((r) => r, () => undefined), delay(INTERRUPTED_BOOT_GRACE_MS, undefined, { ref: false })]);
      await late?.dispose().catch(() => undefined);
    }
  }
}
