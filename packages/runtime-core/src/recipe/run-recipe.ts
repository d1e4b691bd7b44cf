/**
 * The recipe part of a run session: executes a planned recipe's setup steps, then its steps, on
 * a booted runtime, checks each step's expectations, and describes the outcome for the bundle
 * (`files/recipe-report.json`, `files/recipe-plan.json`, a `recipe` block in the review).
 * `runSession` owns boot, bundle and dispose.
 */
import { serializeError, type ErrorCode, type SerializedError } from "../errors.js";
import { failedExecutionResult } from "../failed-execution-result.js";
import { raceInterrupt, valueWithin } from "../interrupt.js";
import { INTERRUPTED_COMMAND_GRACE_MS } from "../defaults.js";
import type { ArtifactFile, ExecutionResult, Runtime } from "../runtime.js";
import { checkExpectations, type ExpectationCheck } from "./recipe-expectations.js";
import type { PlannedRecipeStep, RecipePlan } from "./validate-recipe.js";

/** Schema id of `files/recipe-report.json`. */
export const RECIPE_REPORT_SCHEMA_ID = "wp-codebox/workspace-recipe-report/v1";

/** What happened to one step. `skipped` steps never ran (an earlier step failed). */
export interface RecipeStepReport extends Pick<PlannedRecipeStep, "pointer" | "phase" | "index" | "name" | "command" | "args"> {
  status: "passed" | "failed" | "skipped";
  executionId?: string;
  result?: { status: ExecutionResult["status"]; exitCode: number; durationMs: number; error?: { code: ErrorCode; message: string } };
  expectations: ExpectationCheck[];
}

/** `files/recipe-report.json`. `failure` names the first failed step and expectation. */
export interface RecipeReport {
  schema: typeof RECIPE_REPORT_SCHEMA_ID;
  version: 1;
  recipe: RecipePlan["recipe"];
  outcome: "passed" | "failed";
  summary: string;
  failure?: {
    pointer: string;
    name: string;
    phase: "setup" | "step" | "boot";
    /** The expectation that failed (`status`, `json`, …); absent when the sandbox did not boot. */
    expectation?: string;
    expected?: unknown;
    actual?: unknown;
    message: string;
  };
  counts: { passed: number; failed: number; skipped: number };
  steps: RecipeStepReport[];
}

/** What the recipe part of a session produced. */
export interface RecipeSessionWork {
  report: RecipeReport;
  /** Results recorded for steps whose `execute` threw (they are not in the runtime's own list). */
  extraResults: ExecutionResult[];
  /** The first error that stopped a command from running (policy denial, no browser …). */
  error?: SerializedError;
  files: ArtifactFile[];
  extraReview: Record<string, unknown>;
  extraMetadata: Record<string, unknown>;
}

/**
 * Runs `plan`'s setup steps, then its steps, in order, on `runtime` (undefined: the sandbox did
 * not boot, `bootError` says why, every step is skipped). A step whose expectations fail (no
 * `expect` means status ok) stops the run; later steps are recorded as skipped. A thrown `execute`
 * (policy denial, missing browser or WP-CLI) is recorded as the step's error result.
 * @param shouldStop - checked before each step; true (an interrupt) skips the rest.
 * @param interrupt - an interrupt (Ctrl-C) that also ends the step running now: the step fails
 *   with `interrupted`. With `stopInSandbox` the command is also stopped in the sandbox and its
 *   own result, with what PHP printed until the signal, is the step's (waiting at most `graceMs`,
 *   default `INTERRUPTED_COMMAND_GRACE_MS`); without it, the caller disposes the sandbox.
 */
export async function runRecipeSteps(
  plan: RecipePlan,
  runtime: Runtime | undefined,
  bootError: SerializedError | undefined,
  progress: (message: string) => void,
  shouldStop: () => boolean = () => false,
  interrupt?: { signal: AbortSignal; stopInSandbox: boolean; graceMs?: number },
): Promise<RecipeSessionWork> {
  const all: PlannedRecipeStep[] = [...plan.setup, ...plan.steps];
  const reports: RecipeStepReport[] = all.map((s) => ({
    pointer: s.pointer,
    phase: s.phase,
    index: s.index,
    name: s.name,
    command: s.command,
    args: s.args,
    status: "skipped",
    expectations: [],
  }));
  let failure: RecipeReport["failure"];
  let error: SerializedError | undefined = bootError;
  const extraResults: ExecutionResult[] = [];
  if (bootError) failure = { pointer: "", name: "boot", phase: "boot", message: `The sandbox did not boot: ${bootError.code}: ${bootError.message}` };
  if (runtime) {
    for (let i = 0; i < all.length && !shouldStop(); i++) {
      const step = all[i]!;
      const report = reports[i]!;
      progress(`${step.pointer} ${step.name}`);
      let result: ExecutionResult;
      const started = Date.now();
      const executing = runtime.execute({
        command: step.command,
        args: step.args,
        ...(step.timeoutMs !== undefined ? { timeoutMs: step.timeoutMs } : {}),
        ...(interrupt?.stopInSandbox ? { signal: interrupt.signal } : {}),
      });
      const ran = await raceInterrupt(executing, interrupt?.signal);
      if (ran.kind === "value") result = ran.value;
      else if (ran.kind === "failed") {
        const serialized = serializeError(ran.thrown);
        error ??= serialized;
        result = failedExecutionResult(step, serialized);
        extraResults.push(result);
      } else {
        // Interrupted mid-step: the step failed, and it says so (not "passed" after the fact). A
        // command stopped in the sandbox hands back its own result, with what PHP printed so far.
        const stopped = interrupt?.stopInSandbox ? await valueWithin(executing, interrupt.graceMs ?? INTERRUPTED_COMMAND_GRACE_MS) : undefined;
        if (stopped) result = stopped;
        else {
          result = failedExecutionResult(step, { code: "interrupted", message: `Interrupted by ${ran.signal} before the step finished.`, data: { signal: ran.signal } }, started);
          extraResults.push(result);
        }
        Object.assign(report, { status: "failed", executionId: result.id, result: { status: result.status, exitCode: result.exitCode, durationMs: result.durationMs, error: result.error }, expectations: [] });
        failure = { pointer: step.pointer, name: step.name, phase: step.phase, message: `${step.pointer} (${step.name}): interrupted by ${ran.signal} before it finished` };
        progress(`INTERRUPTED ${failure.message}`);
        break;
      }
      const checks = checkExpectations(step.expect, result);
      const failed = checks.find((c) => !c.passed);
      Object.assign(report, {
        status: failed ? "failed" : "passed",
        executionId: result.id,
        result: {
          status: result.status,
          exitCode: result.exitCode,
          durationMs: result.durationMs,
          ...(result.error ? { error: { code: result.error.code, message: result.error.message } } : {}),
        },
        expectations: checks,
      });
      if (failed) {
        failure = {
          pointer: step.pointer,
          name: step.name,
          phase: step.phase,
          expectation: failed.name,
          expected: failed.expected,
          actual: failed.actual,
          message: `${step.pointer} (${step.name}): ${failed.message}`,
        };
        progress(`FAILED ${failure.message}`);
        break;
      }
    }
  }

  const counts = {
    passed: reports.filter((r) => r.status === "passed").length,
    failed: reports.filter((r) => r.status === "failed").length,
    skipped: reports.filter((r) => r.status === "skipped").length,
  };
  const outcome = failure ? "failed" : "passed";
  const summary = failure
    ? `Recipe failed at ${failure.pointer || "boot"}: ${failure.message} (${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped).`
    : `Recipe passed: ${counts.passed} step(s), every expectation met.`;
  const report: RecipeReport = {
    schema: RECIPE_REPORT_SCHEMA_ID,
    version: 1,
    recipe: plan.recipe,
    outcome,
    summary,
    ...(failure ? { failure } : {}),
    counts,
    steps: reports,
  };
  return {
    report,
    extraResults,
    ...(error ? { error } : {}),
    files: [
      { path: "files/recipe-report.json", kind: "recipe-report", contentType: "application/json", content: `${JSON.stringify(report, null, 2)}\n` },
      { path: "files/recipe-plan.json", kind: "recipe-plan", contentType: "application/json", content: `${JSON.stringify(plan, null, 2)}\n` },
    ],
    extraReview: {
      recipe: {
        outcome,
        counts,
        ...(failure ? { failure } : {}),
        steps: reports.map((r) => ({ pointer: r.pointer, name: r.name, command: r.command, status: r.status, ...(r.executionId ? { executionId: r.executionId } : {}) })),
      },
    },
    extraMetadata: { recipe: { path: plan.recipe.path, ...(plan.recipe.name ? { name: plan.recipe.name } : {}) } },
  };
}
