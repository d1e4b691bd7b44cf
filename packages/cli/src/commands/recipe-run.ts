/**
 * `wp-codebox recipe validate|plan|run FILE`: the workspace recipe commands. Typed async functions
 * callable without argv; `recipe-cli.ts` registers them with commander. `run` goes through
 * `planRun` (the whole recipe checked before boot) and `runSession` (bundle always written).
 */
import { dirname, join, resolve } from "node:path";
import {
  BACKEND_NAMES,
  REPORT_PAGE_PATH,
  planRecipe,
  planRun,
  readRecipeFile,
  runSession,
  runRecipeMatrix,
  formatMatrixSummary,
  validateRecipe,
  type RecipeMatrixOutcome,
  formatRecipeIssues,
  type RecipePlan,
  type RunSessionOutcome,
  type RuntimeBackend,
  type SchemaIssue,
  hostAccessCode,
  WpCodeboxError,
  isErrorCode,
  type HostAccessGrants,
} from "@wp-codebox/runtime-core";
import { createBackend } from "./backends.js";
import { CliExitError, EXIT_CODES, bundleVerifyText, reportPageLine } from "../cli-exit-error.js";

/** `recipe validate` output (`--json`): `issues` are `{ path (JSON pointer), message }`. */
export interface RecipeValidateReport {
  recipe: string;
  valid: boolean;
  issues: SchemaIssue[];
}

/**
 * The backend a recipe file runs on: relative paths inside the recipe resolve against its folder;
 * `WP_CODEBOX_OFFLINE=1` in `processEnv` forbids fetching WordPress releases.
 */
function recipeBackend(path: string, processEnv: NodeJS.ProcessEnv = process.env, backendName?: string): RuntimeBackend {
  return createBackend(backendName ?? recipeBackendName(path), { cwd: dirname(path), offline: processEnv.WP_CODEBOX_OFFLINE === "1" });
}

/**
 * The recipe's `runtime.backend` when it names a backend, else undefined (the default). A recipe
 * that cannot be read or names no known backend is left to validation, which lists the issue.
 */
function recipeBackendName(path: string): string | undefined {
  try {
    const name = (readRecipeFile(path) as { runtime?: { backend?: unknown } } | null)?.runtime?.backend;
    return (BACKEND_NAMES as readonly unknown[]).includes(name) ? (name as string) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Validates a recipe file: every problem, each with a JSON pointer; a `secretEnv` value set in
 * `processEnv` that is unsafe to redact is one (`secret-unsafe`), an unset one is not.
 * @throws WpCodeboxError `invalid-recipe` when the file is missing or not JSON.
 */
export async function validateRecipeFile(file: string, cwd: string, processEnv: NodeJS.ProcessEnv = process.env, grants: HostAccessGrants = {}): Promise<RecipeValidateReport> {
  const path = resolve(cwd, file);
  const report = validateRecipe(readRecipeFile(path), path, { backend: recipeBackend(path, processEnv), cwd, secretSafetyEnv: processEnv, ...grants });
  return { recipe: path, valid: report.valid, issues: report.issues };
}

/** The `invalid-recipe` exit (2) for a failed validation, listing every `pointer: message`. */
export function invalidRecipeExit(report: RecipeValidateReport): CliExitError {
  return new CliExitError(
    hostAccessCode(report.issues, "invalid-recipe"),
    `${report.recipe} has ${report.issues.length} problem(s):\n${formatRecipeIssues(report.issues)}\nFix them and run "wp-codebox recipe validate" again (wp-codebox schema recipe prints the JSON Schema).`,
    EXIT_CODES.invalidInput,
    { issues: report.issues },
  );
}

/**
 * Plans a recipe without booting anything.
 * @throws WpCodeboxError `invalid-recipe` listing every problem.
 */
export async function planRecipeFile(file: string, cwd: string, processEnv: NodeJS.ProcessEnv = process.env, grants: HostAccessGrants = {}): Promise<RecipePlan> {
  const path = resolve(cwd, file);
  return planRecipe(readRecipeFile(path), path, { backend: recipeBackend(path, processEnv), cwd, secretSafetyEnv: processEnv, ...grants });
}

/** Human text of a plan. */
export function formatRecipePlan(plan: RecipePlan): string {
  const lines = [`recipe:   ${plan.recipe.name ? `${plan.recipe.name} (${plan.recipe.path})` : plan.recipe.path}`];
  const extensions = plan.runtime.extensions === undefined ? "" : `, PHP extensions ${plan.runtime.extensions.join(", ") || "none"}`;
  lines.push(`runtime:  WordPress ${plan.runtime.wp ?? "(newest bundled)"}, PHP ${plan.runtime.php ?? "8.3"}${extensions}`);
  if (plan.runtime.matrix) lines.push(`matrix:   ${plan.cells.length} cells, run one after the other: ${plan.cells.map((c) => `WordPress ${c.wp ?? "(newest bundled)"} × PHP ${c.php ?? "8.3"}`).join("; ")}`);
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
  const access = plan.hostAccess;
  lines.push(`host:     the recipe's folder ${access.folder}${access.allowPaths.length ? `; --allow-path ${access.allowPaths.join(", ")}` : ""}; network ${access.allowNetwork.length ? `--allow-network ${access.allowNetwork.join(", ")}` : "none granted"}`);
  for (const w of access.widened) lines.push(`  + ${w.pointer}: ${w.path} (outside the folder, allowed by --allow-path ${w.allowedBy})`);
  lines.push(`bundle:   ${plan.artifacts.directory ?? "./wp-codebox-artifacts/<run id>"}${plan.artifacts.includeRuntimeSnapshotBundles ? " (with runtime snapshots)" : ""}`);
  return `${lines.join("\n")}\n`;
}

/** `--clock` / `--seed` as run-request fields. */
function determinismFlags(options: { clock?: string; seed?: string }): { clock?: string; seed?: string } {
  return { ...(options.clock !== undefined ? { clock: options.clock } : {}), ...(options.seed !== undefined ? { seed: options.seed } : {}) };
}

/** The grants of `options` that were given. */
function grantsOf(options: HostAccessGrants): HostAccessGrants {
  return { ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}), ...(options.allowNetwork ? { allowNetwork: options.allowNetwork } : {}) };
}

/** Options of `recipe run`. */
export interface RecipeRunOptions {
  file: string;
  /** Overrides the recipe's `artifacts.directory`; relative to `cwd`. */
  artifactsDir?: string;
  wpCliPhar?: string;
  /** `--update-baselines`: browser screenshot steps with `compare` write their baselines instead of comparing. */
  updateBaselines?: boolean;
  /** `--clock` / `--seed`: override the recipe's `runtime.clock` / `runtime.seed`. */
  clock?: string;
  seed?: string;
  cwd: string;
  processEnv: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
  /** Aborting it (reason `"SIGINT"`/`"SIGTERM"`) stops the recipe: bundle written, sandbox disposed. */
  interrupt?: AbortSignal;
  backend?: RuntimeBackend;
  /** `--backend playground|native` (default playground), when `backend` is not given. */
  backendName?: string;
  /** `--allow-path DIR`: host paths beyond the recipe's folder it may name (relative to `cwd`). */
  allowPaths?: readonly string[];
  /** `--allow-network ORIGIN`: hosts the recipe's policy may reach (`*` = every host). */
  allowNetwork?: readonly string[];
}

/**
 * Validates, plans and runs a recipe; the bundle is always written.
 * @returns the session outcome (`exitCode` 0 passed, 1 failed expectation, 3 environment, …;
 *   `recipe.report` the step report).
 * @throws WpCodeboxError `invalid-recipe` (every problem, nothing booted), `artifacts-dir-not-empty`,
 *   `invalid-clock`, `invalid-seed`, `seed-with-network` (from `--clock` / `--seed`).
 */
export async function runRecipeFile(options: RecipeRunOptions): Promise<RunSessionOutcome> {
  const path = resolve(options.cwd, options.file);
  const backend = options.backend ?? recipeBackend(path, options.processEnv, options.backendName);
  const plan = planRun(
    { kind: "recipe", file: path, ...(options.wpCliPhar !== undefined ? { wpCliPhar: options.wpCliPhar } : {}), ...(options.updateBaselines ? { updateBaselines: true } : {}), ...determinismFlags(options) },
    { cwd: options.cwd, processEnv: options.processEnv, ...(options.artifactsDir !== undefined ? { artifactsDir: options.artifactsDir } : {}), backend, ...grantsOf(options) },
  );
  return runSession(plan, { backend, ...(options.interrupt ? { signal: options.interrupt } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
}

/** True when the recipe file declares `runtime.matrix` (run it with `runRecipeMatrixFile`). */
export function recipeHasMatrix(file: string, cwd: string): boolean {
  const value = readRecipeFile(resolve(cwd, file)) as { runtime?: { matrix?: unknown } } | null;
  return typeof value === "object" && value !== null && value.runtime?.matrix !== undefined;
}

/**
 * Runs a matrix recipe: every (wp, php) cell in its own sandbox, one after the other, one bundle
 * per cell under the artifacts directory and `matrix-summary.json` beside them.
 * @throws WpCodeboxError `invalid-recipe` (nothing booted), `artifacts-dir-not-empty`.
 */
export async function runRecipeMatrixFile(options: RecipeRunOptions & { onCell?: (text: string) => void }): Promise<RecipeMatrixOutcome> {
  const path = resolve(options.cwd, options.file);
  if (options.updateBaselines) {
    // Every cell would overwrite the same files: baselines come from one WordPress and PHP.
    throw new WpCodeboxError("invalid-argument", `--update-baselines cannot be used with a runtime.matrix recipe (each cell would overwrite the same baselines). Write them from one cell: copy the recipe with a single runtime.wp/runtime.php and run that with --update-baselines.`, { recipe: path });
  }
  return runRecipeMatrix(
    { file: path, ...(options.wpCliPhar !== undefined ? { wpCliPhar: options.wpCliPhar } : {}), ...determinismFlags(options) },
    {
      cwd: options.cwd,
      processEnv: options.processEnv,
      backend: options.backend ?? recipeBackend(path, options.processEnv, options.backendName),
      ...grantsOf(options),
      ...(options.artifactsDir !== undefined ? { artifactsDir: options.artifactsDir } : {}),
      ...(options.interrupt ? { signal: options.interrupt } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onCell: (cell, index, total) => options.onCell?.(`cell ${index + 1}/${total} ${cell.id}: ${cell.outcome} (exit ${cell.exitCode}) — ${cell.summary}\n`),
    },
  );
}

/** Human text of a matrix run: the summary table and where the summary JSON is. */
export function formatRecipeMatrixRun(outcome: RecipeMatrixOutcome): string {
  return `${formatMatrixSummary(outcome.summary)}summary: ${outcome.summaryPath}\nreport:  ${join(dirname(outcome.summaryPath), REPORT_PAGE_PATH)}\n`;
}

/** The exit error of a matrix run that did not pass (undefined when every cell passed). */
export function recipeMatrixExit(outcome: RecipeMatrixOutcome): CliExitError | undefined {
  if (outcome.exitCode === 0) return undefined;
  const failed = outcome.summary.cells.filter((c) => c.outcome !== "passed" || c.exitCode !== 0);
  const first = failed[0];
  return new CliExitError(
    // The cell summary's schema types its code as a string; every code it holds is a registered one.
    isErrorCode(first?.error?.code) ? first.error.code : first ? "expectation-failed" : "interrupted",
    `${outcome.summary.counts.failed} of ${outcome.summary.counts.cells} matrix cells failed or did not run${failed.length ? ` (${failed.map((c) => c.id).join(", ")}); first: ${first!.summary}` : ""} See ${outcome.summaryPath}.`,
    outcome.exitCode,
    { cells: failed.map((c) => c.id) },
  );
}

/** Human text of a run: one line per step, the failure with expected and actual, the bundle. */
export function formatRecipeRun(outcome: RunSessionOutcome): string {
  const lines: string[] = [];
  const report = outcome.recipe!.report;
  for (const s of report.steps) {
    const mark = s.status === "passed" ? "ok     " : s.status === "failed" ? "FAILED " : "skipped";
    lines.push(`${mark} ${s.pointer.padEnd(10)} ${s.name}${s.result ? ` (${s.result.status}, ${s.result.durationMs} ms)` : ""}`);
  }
  const f = report.failure;
  if (f) {
    lines.push("", `failure:  ${f.message}`);
    if (f.expectation) lines.push(`expected: ${JSON.stringify(f.expected)}`, `actual:   ${JSON.stringify(f.actual)}`.slice(0, 2000));
  }
  lines.push("", `outcome:  ${report.outcome} — ${report.summary}`, `bundle:   ${outcome.bundle.directory}`, `id:       ${outcome.bundle.id}`, `verify:   ${bundleVerifyText(outcome.bundle)}`);
  return `${lines.join("\n")}\n${reportPageLine(outcome.bundle)}`;
}
