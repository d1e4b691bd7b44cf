/**
 * `wp-codebox recipe validate|plan|run FILE`: the workspace recipe commands (SPEC §5). Typed async
 * functions callable without argv; `recipe-cli.ts` registers them with commander.
 */
import { dirname, resolve } from "node:path";
import {
  planRecipe,
  readRecipeFile,
  runRecipe,
  validateRecipe,
  formatRecipeIssues,
  type RecipePlan,
  type RecipeRunOutcome,
  type RuntimeBackend,
  type SchemaIssue,
} from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, listWordPressBuilds } from "@wp-codebox/runtime-playground";
import { CliExitError, EXIT_CODES } from "../cli-exit-error.js";
import { assertUsableArtifactsDir, newRunId } from "./run.js";

/** `recipe validate` output (`--json`): `issues` are `{ path (JSON pointer), message }`. */
export interface RecipeValidateReport {
  recipe: string;
  valid: boolean;
  issues: SchemaIssue[];
}

function offeredVersions(): string[] {
  return listWordPressBuilds().map((b) => b.version);
}

/**
 * Validates a recipe file: every problem, each with a JSON pointer.
 * @throws WpCodeboxError `invalid-recipe` when the file is missing or not JSON.
 */
export async function validateRecipeFile(file: string, cwd: string): Promise<RecipeValidateReport> {
  const path = resolve(cwd, file);
  const report = validateRecipe(readRecipeFile(path), path, { wordpressVersions: offeredVersions() });
  return { recipe: path, valid: report.valid, issues: report.issues };
}

/** The `invalid-recipe` exit (2) for a failed validation, listing every `pointer: message`. */
export function invalidRecipeExit(report: RecipeValidateReport): CliExitError {
  return new CliExitError(
    "invalid-recipe",
    `${report.recipe} has ${report.issues.length} problem(s):\n${formatRecipeIssues(report.issues)}\nFix them and run "wp-codebox recipe validate" again (wp-codebox schema recipe prints the JSON Schema).`,
    EXIT_CODES.invalidInput,
    { issues: report.issues },
  );
}

/**
 * Plans a recipe without booting anything.
 * @throws WpCodeboxError `invalid-recipe` listing every problem.
 */
export async function planRecipeFile(file: string, cwd: string): Promise<RecipePlan> {
  const path = resolve(cwd, file);
  return planRecipe(readRecipeFile(path), path, { wordpressVersions: offeredVersions() });
}

/** Human text of a plan. */
export function formatRecipePlan(plan: RecipePlan): string {
  const lines = [`recipe:   ${plan.recipe.name ? `${plan.recipe.name} (${plan.recipe.path})` : plan.recipe.path}`];
  lines.push(`runtime:  WordPress ${plan.runtime.wp ?? "(newest bundled)"}, PHP ${plan.runtime.php ?? "8.3"}`);
  lines.push("mounts:");
  for (const m of plan.inputs.resolvedMounts) lines.push(`  ${m.source} -> ${m.target} (${m.mode})`);
  if (plan.inputs.resolvedMounts.length === 0) lines.push("  (none)");
  if (Object.keys(plan.inputs.runtimeEnv).length) lines.push(`env:      ${Object.keys(plan.inputs.runtimeEnv).join(", ")}`);
  if (plan.inputs.secretEnv.length) lines.push(`secrets:  ${plan.inputs.secretEnv.join(", ")} (read from your environment, redacted from the bundle)`);
  const network = typeof plan.policy.network === "string" ? plan.policy.network : `allowHosts ${plan.policy.network.allowHosts.join(", ")}`;
  lines.push(`policy:   network ${network}, filesystem ${plan.policy.filesystem}, secrets ${plan.policy.secrets}`);
  for (const c of plan.capabilities) lines.push(`  ${c.autoGranted ? "+ (auto-granted) " : "+ "}${c.capability}: ${c.reason}`);
  lines.push("steps:");
  for (const s of [...plan.setup, ...plan.steps]) {
    lines.push(`  ${s.pointer.padEnd(10)} ${s.phase === "setup" ? "[setup] " : ""}${s.name}: ${s.command}`);
    for (const a of s.args) lines.push(`               ${a.length > 160 ? `${a.slice(0, 160)}…` : a}`);
    const keys = Object.keys(s.expect);
    lines.push(`               expect: ${keys.length ? JSON.stringify(s.expect) : '{"status":"ok"} (default)'}`);
  }
  lines.push(`bundle:   ${plan.artifacts.directory ?? "./wp-codebox-artifacts/<run id>"}${plan.artifacts.includeRuntimeSnapshotBundles ? " (with runtime snapshots)" : ""}`);
  return `${lines.join("\n")}\n`;
}

/** Options of `recipe run`. */
export interface RecipeRunOptions {
  file: string;
  /** Overrides the recipe's `artifacts.directory`; relative to `cwd`. */
  artifactsDir?: string;
  wpCliPhar?: string;
  cwd: string;
  processEnv: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
  backend?: RuntimeBackend;
}

/**
 * Validates, plans and runs a recipe; the bundle is always written.
 * @returns the outcome (`exitCode` 0 passed, 1 failed expectation, 3 environment, …).
 * @throws WpCodeboxError `invalid-recipe` (every problem, nothing booted), `artifacts-dir-not-empty`.
 */
export async function runRecipeFile(options: RecipeRunOptions): Promise<RecipeRunOutcome> {
  const path = resolve(options.cwd, options.file);
  const plan = planRecipe(readRecipeFile(path), path, { wordpressVersions: offeredVersions(), processEnv: options.processEnv });
  const artifactsDir = options.artifactsDir !== undefined ? resolve(options.cwd, options.artifactsDir) : plan.artifacts.directory ?? resolve(options.cwd, `wp-codebox-artifacts/${newRunId()}`);
  assertUsableArtifactsDir(artifactsDir);
  const secretEnv = Object.fromEntries(plan.inputs.secretEnv.map((name) => [name, options.processEnv[name] ?? ""]));
  const backend = options.backend ?? createPlaygroundBackend({ cwd: dirname(path) });
  return runRecipe(plan, backend, {
    artifactsDir,
    secretEnv,
    ...(options.wpCliPhar !== undefined ? { wpCliPhar: resolve(options.cwd, options.wpCliPhar) } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

/** Human text of a run: one line per step, the failure with expected and actual, the bundle. */
export function formatRecipeRun(outcome: RecipeRunOutcome): string {
  const lines: string[] = [];
  for (const s of outcome.report.steps) {
    const mark = s.status === "passed" ? "ok     " : s.status === "failed" ? "FAILED " : "skipped";
    lines.push(`${mark} ${s.pointer.padEnd(10)} ${s.name}${s.result ? ` (${s.result.status}, ${s.result.durationMs} ms)` : ""}`);
  }
  const f = outcome.report.failure;
  if (f) {
    lines.push("", `failure:  ${f.message}`);
    if (f.expectation) lines.push(`expected: ${JSON.stringify(f.expected)}`, `actual:   ${JSON.stringify(f.actual)}`.slice(0, 2000));
  }
  lines.push("", `outcome:  ${outcome.report.outcome} — ${outcome.report.summary}`, `bundle:   ${outcome.bundle.directory}`, `id:       ${outcome.bundle.id}`, `verify:   ${outcome.bundle.valid ? "valid" : "INVALID"}`);
  return `${lines.join("\n")}\n`;
}

/** The exit error of a run that did not pass (undefined when it passed). */
export function recipeRunExit(outcome: RecipeRunOutcome): CliExitError | undefined {
  if (outcome.exitCode === 0) return undefined;
  if (outcome.error) return new CliExitError(outcome.error.code, outcome.error.message, outcome.exitCode, outcome.error.details ?? {});
  const f = outcome.report.failure;
  return new CliExitError("expectation-failed", `${f?.message ?? "a step failed"}. See files/recipe-report.json in ${outcome.bundle.directory}.`, EXIT_CODES.sandboxFailed);
}
