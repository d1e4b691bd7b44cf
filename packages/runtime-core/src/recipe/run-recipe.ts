/**
 * `runRecipe`: runs a planned recipe in one sandbox (setup, then steps), checks each step's
 * expectations, and always writes a verifiable artifact bundle with `files/recipe-report.json`.
 * Backend-agnostic: any `RuntimeBackend` works.
 */
import { randomUUID } from "node:crypto";
import { ERROR_CODES, exitCodeForCategory, serializeError, type ErrorCode } from "../errors.js";
import { writeArtifactBundle } from "../artifact-bundle/write-artifact-bundle.js";
import { createRedactor } from "../redaction.js";
import { failedExecutionResult } from "../failed-execution-result.js";
import { verifyArtifactBundle } from "../artifact-bundle/verify-artifact-bundle.js";
import type { ExecutionResult, Runtime, RuntimeArtifacts, RuntimeBackend, RuntimeCreateSpec, RuntimeInfo } from "../runtime.js";
import { checkExpectations, type ExpectationCheck } from "./recipe-expectations.js";
import type { PlannedRecipeStep, RecipePlan } from "./validate-recipe.js";

/** Schema id of `files/recipe-report.json`. */
export const RECIPE_REPORT_SCHEMA_ID = "wp-codebox/workspace-recipe-report/v1";

/** What happened to one step. `skipped` steps never ran (an earlier step failed). */
export interface RecipeStepReport extends Pick<PlannedRecipeStep, "pointer" | "phase" | "index" | "name" | "command" | "args"> {
  status: "passed" | "failed" | "skipped";
  executionId?: string;
  result?: { status: ExecutionResult["status"]; exitCode: number; durationMs: number; error?: { code: string; message: string } };
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

/** Options of `runRecipe`. */
export interface RunRecipeOptions {
  /** Bundle directory (created; must be empty); default the plan's, else required. */
  artifactsDir: string;
  /** Values of `plan.inputs.secretEnv`, read by the caller from its environment. */
  secretEnv?: Record<string, string>;
  /** Host path of wp-cli.phar (`--wp-cli-phar`). */
  wpCliPhar?: string;
  onProgress?: (message: string) => void;
}

/** What `runRecipe` returns; `exitCode` follows the CLI rules (0 passed, 1 failed, 3 environment …). */
export interface RecipeRunOutcome {
  report: RecipeReport;
  exitCode: number;
  /** Set when the sandbox failed to boot or a command could not run (policy denial, no browser …). */
  error?: { code: string; message: string; details?: Record<string, unknown> };
  bundle: { directory: string; id: string; digest: string; valid: boolean };
}

/**
 * Runs `plan` in a fresh sandbox from `backend`: setup steps, then steps, in order. A step whose
 * expectations fail (no `expect` means status ok) stops the run; later steps are recorded as
 * skipped. A thrown `execute` (policy denial, missing browser or WP-CLI) is recorded as the
 * step's error result. The sandbox is always disposed and the bundle always written.
 * @returns the report, the exit code (0 all passed; 1 a failed expectation; the error's category
 *   code when a command could not run or the sandbox did not boot) and the verified bundle.
 * @throws WpCodeboxError `artifacts-dir-not-empty` or bundle-writing errors only.
 */
export async function runRecipe(plan: RecipePlan, backend: RuntimeBackend, options: RunRecipeOptions): Promise<RecipeRunOutcome> {
  const progress = options.onProgress ?? (() => undefined);
  const secretEnv = options.secretEnv ?? {};
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
  const createSpec: RuntimeCreateSpec = {
    ...(plan.runtime.wp !== undefined ? { wordpress: { version: plan.runtime.wp } } : {}),
    ...(plan.runtime.php !== undefined ? { php: plan.runtime.php } : {}),
    mounts: plan.inputs.mounts,
    plugins: plan.inputs.plugins,
    themes: plan.inputs.themes,
    policy: plan.policy,
    env: plan.inputs.runtimeEnv,
    secretEnv,
    ...(options.wpCliPhar !== undefined ? { wpCliPhar: options.wpCliPhar } : {}),
    onProgress: progress,
  };
  let runtime: Runtime | undefined;
  let failure: RecipeReport["failure"];
  let error: RecipeRunOutcome["error"];
  const extraResults: ExecutionResult[] = [];
  try {
    progress(`Booting a sandbox for recipe ${plan.recipe.name ?? plan.recipe.path}`);
    try {
      runtime = await backend.create(createSpec);
    } catch (thrown) {
      error = serializeError(thrown);
      failure = { pointer: "", name: "boot", phase: "boot", message: `The sandbox did not boot: ${error.code}: ${error.message}` };
    }
    if (runtime) {
      for (let i = 0; i < all.length; i++) {
        const step = all[i]!;
        const report = reports[i]!;
        progress(`${step.pointer} ${step.name}`);
        let result: ExecutionResult;
        try {
          result = await runtime.execute({ command: step.command, args: step.args, ...(step.timeoutMs !== undefined ? { timeoutMs: step.timeoutMs } : {}) });
        } catch (thrown) {
          const serialized = serializeError(thrown);
          error ??= serialized;
          result = failedExecutionResult(step, serialized);
          extraResults.push(result);
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

    let artifacts: RuntimeArtifacts = runtime
      ? await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: plan.artifacts.includeRuntimeSnapshotBundles })
      : { info: placeholderInfo(plan), results: [], events: [{ at: new Date().toISOString(), type: "boot-failed", data: { code: error?.code ?? "boot-failed" } }], files: [], secrets: [] };
    artifacts = {
      ...artifacts,
      results: [...artifacts.results, ...extraResults],
      secrets: [...new Set([...artifacts.secrets, ...Object.values(secretEnv).filter((v) => v.length > 0)])],
      files: [
        ...artifacts.files,
        { path: "files/recipe-report.json", kind: "recipe-report", contentType: "application/json", content: `${JSON.stringify(report, null, 2)}\n` },
        { path: "files/recipe-plan.json", kind: "recipe-plan", contentType: "application/json", content: `${JSON.stringify(plan, null, 2)}\n` },
      ],
    };
    progress(`Writing the artifact bundle to ${options.artifactsDir}`);
    const written = await writeArtifactBundle(options.artifactsDir, artifacts, {
      status: failure ? "error" : "ok",
      summary,
      extraReview: {
        recipe: {
          outcome,
          counts,
          ...(failure ? { failure } : {}),
          steps: reports.map((r) => ({ pointer: r.pointer, name: r.name, command: r.command, status: r.status, ...(r.executionId ? { executionId: r.executionId } : {}) })),
        },
      },
      extraMetadata: { recipe: { path: plan.recipe.path, ...(plan.recipe.name ? { name: plan.recipe.name } : {}) } },
    });
    const verification = await verifyArtifactBundle(written.directory);
    const exitCode = error ? exitCodeForCategory(ERROR_CODES[error.code as ErrorCode] ?? "internal") : failure ? 1 : 0;
    // What the caller prints (stdout, --json) is redacted like the bundle.
    const redactor = createRedactor(artifacts.secrets);
    return {
      report: redactor.redactValue(report),
      exitCode,
      ...(error ? { error: redactor.redactValue(error) } : {}),
      bundle: { directory: written.directory, id: written.id, digest: written.digest, valid: verification.valid },
    };
  } finally {
    if (runtime) {
      progress("Disposing the sandbox");
      await runtime.dispose().catch(() => undefined);
    }
  }
}

function placeholderInfo(plan: RecipePlan): RuntimeInfo {
  return {
    id: `runtime-not-booted-${randomUUID()}`,
    backend: "unknown",
    wordpressVersion: plan.runtime.wp ?? "unknown",
    phpVersion: plan.runtime.php ?? "unknown",
    siteUrl: "",
    bootMode: "cached",
    bootDurationMs: 0,
    mounts: plan.inputs.resolvedMounts,
    policy: plan.policy,
    plugins: plan.inputs.plugins,
    themes: plan.inputs.themes,
  };
}


