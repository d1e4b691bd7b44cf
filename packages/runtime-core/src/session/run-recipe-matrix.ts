/**
 * `runRecipeMatrix`: a recipe with `runtime.matrix` runs once per (WordPress, PHP) cell, one after
 * the other, each planned with `planRun` and run with `runSession` in its own fresh sandbox, with
 * its own bundle (`<dir>/wp-<wp>-php-<php>/`), and ends with `<dir>/matrix-summary.json`
 * (`wp-codebox/recipe-matrix-summary/v1`): per cell the outcome, exit code, test counts and bundle.
 */
import { bundleWriteFailure, probeArtifactsDir } from "../artifacts-dir-probe.js";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RuntimeBackend } from "../runtime.js";
import { RECIPE_MATRIX_SUMMARY_SCHEMA_ID, type RecipeMatrixCell, type RecipeMatrixSummary, type TestCounts } from "../test-results.js";
import { assertUsableArtifactsDir, newRunId, planRun, type PlanRunOptions } from "./run-plan.js";
import { runSession, type RunSessionOutcome } from "./run-session.js";
import { REPORT_PAGE_PATH } from "../artifact-bundle/report-page/report-page-data.js";
import { renderMatrixReportPage } from "../artifact-bundle/report-page/index-report-page.js";
import { planRecipe, readRecipeFile } from "../recipe/validate-recipe.js";

/** What `runRecipeMatrix` returns; `exitCode` is 0 when every cell passed, else the first failing cell's. */
export interface RecipeMatrixOutcome {
  summary: RecipeMatrixSummary;
  summaryPath: string;
  exitCode: number;
  outcomes: RunSessionOutcome[];
}

/** Options of `runRecipeMatrix`. */
export interface RunRecipeMatrixOptions extends Omit<PlanRunOptions, "backend" | "runId"> {
  backend: RuntimeBackend;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
  /** Called after each cell (progress output). */
  onCell?: (cell: RecipeMatrixCell, index: number, total: number) => void;
}

/** The bundle folder name of a cell: `wp-6.4-php-8.2` (`default` for an axis the recipe leaves open). */
export function matrixCellId(cell: { wp?: string; php?: string }): string {
  return `wp-${cell.wp ?? "default"}-php-${cell.php ?? "default"}`;
}

function testsOf(bundleDir: string): RecipeMatrixCell["tests"] {
  const reviewPath = join(bundleDir, "files", "review.json");
  if (!existsSync(reviewPath)) return null;
  const tests = (JSON.parse(readFileSync(reviewPath, "utf8")) as { tests?: TestCounts }).tests;
  if (!tests) return null;
  return { total: tests.tests, passed: tests.passed, failed: tests.failures, errors: tests.errors, skipped: tests.skipped + tests.incomplete };
}

/**
 * Runs every cell of the recipe's matrix sequentially. The whole recipe (every cell's versions
 * included) is validated first; then each cell is a recipe run of its own (`planRun` + `runSession`)
 * writing its bundle to `<artifactsDir>/<cell id>/`; finally `<artifactsDir>/matrix-summary.json`
 * and `<artifactsDir>/report.html` (one row per cell, linking to each cell's page).
 * A failing cell does not stop the others; an interrupt does.
 * @param request - the recipe file (relative to `options.cwd`), optionally already parsed, and wp-cli.phar.
 * @throws WpCodeboxError `invalid-recipe` (every problem, nothing booted), `artifacts-dir-not-empty`.
 */
export async function runRecipeMatrix(request: { file: string; recipe?: unknown; wpCliPhar?: string; clock?: string; seed?: string | number }, options: RunRecipeMatrixOptions): Promise<RecipeMatrixOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const path = resolve(cwd, request.file);
  const document = (request.recipe ?? readRecipeFile(path)) as Record<string, unknown> & { runtime?: Record<string, unknown> };
  const grants = { ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}), ...(options.allowNetwork ? { allowNetwork: options.allowNetwork } : {}) };
  const plan = planRecipe(document, path, { ...(options.processEnv ? { processEnv: options.processEnv } : {}), backend: options.backend, cwd, ...grants });
  const artifactsDir = options.artifactsDir !== undefined ? resolve(cwd, options.artifactsDir) : plan.artifacts.directory ?? resolve(cwd, `wp-codebox-artifacts/${newRunId()}`);
  assertUsableArtifactsDir(artifactsDir);
  probeArtifactsDir(artifactsDir);
  mkdirSync(artifactsDir, { recursive: true });
  const cells: RecipeMatrixCell[] = [];
  const outcomes: RunSessionOutcome[] = [];
  for (const [index, cell] of plan.cells.entries()) {
    if (options.signal?.aborted) break;
    const id = matrixCellId(cell);
    const { matrix: _matrix, ...fixed } = document.runtime ?? {};
    const cellRecipe = { ...document, runtime: { ...fixed, ...cell } };
    options.onProgress?.(`Matrix cell ${index + 1}/${plan.cells.length}: WordPress ${cell.wp ?? "(default)"}, PHP ${cell.php ?? "(default)"}`);
    const cellPlan = planRun(
      {
        kind: "recipe",
        file: path,
        recipe: cellRecipe,
        ...(request.wpCliPhar !== undefined ? { wpCliPhar: request.wpCliPhar } : {}),
        ...(request.clock !== undefined ? { clock: request.clock } : {}),
        ...(request.seed !== undefined ? { seed: request.seed } : {}),
      },
      { cwd, ...(options.processEnv ? { processEnv: options.processEnv } : {}), artifactsDir: join(artifactsDir, id), backend: options.backend, ...grants },
    );
    const outcome = await runSession(cellPlan, { backend: options.backend, ...(options.signal ? { signal: options.signal } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
    outcomes.push(outcome);
    const result: RecipeMatrixCell = {
      id,
      wp: cell.wp ?? null,
      php: cell.php ?? null,
      outcome: outcome.recipe?.report.outcome ?? (outcome.exitCode === 0 ? "passed" : "failed"),
      exitCode: outcome.exitCode,
      summary: outcome.recipe?.report.summary ?? outcome.summary,
      tests: testsOf(outcome.bundle.directory),
      bundle: { directory: outcome.bundle.directory, id: outcome.bundle.id, digest: outcome.bundle.digest, valid: outcome.bundle.valid },
      ...(outcome.error ? { error: { code: outcome.error.code, message: outcome.error.message } } : {}),
    };
    cells.push(result);
    options.onCell?.(result, index, plan.cells.length);
  }
  const failed = cells.filter((c) => c.outcome !== "passed" || c.exitCode !== 0);
  const incomplete = cells.length < plan.cells.length;
  const summary: RecipeMatrixSummary = {
    schema: RECIPE_MATRIX_SUMMARY_SCHEMA_ID,
    recipe: plan.recipe,
    outcome: failed.length || incomplete ? "failed" : "passed",
    counts: { cells: plan.cells.length, passed: cells.length - failed.length, failed: plan.cells.length - (cells.length - failed.length) },
    cells,
  };
  const summaryPath = join(artifactsDir, "matrix-summary.json");
  try {
    writeFileSync(summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
    writeFileSync(join(artifactsDir, REPORT_PAGE_PATH), renderMatrixReportPage(summary));
  } catch (thrown) {
    // Each cell was already reported (onCell); the lost summary is an environment failure, not a bug.
    throw bundleWriteFailure(thrown, artifactsDir);
  }
  const exitCode = failed[0]?.exitCode ?? (incomplete ? outcomes.at(-1)?.exitCode || 130 : 0);
  return { summary, summaryPath, exitCode, outcomes };
}

/** The summary as a plain-text table: cell, outcome, tests passed/failed, bundle. */
export function formatMatrixSummary(summary: RecipeMatrixSummary): string {
  const rows = [["cell", "WordPress", "PHP", "outcome", "tests passed", "tests failed", "bundle"]];
  for (const c of summary.cells) {
    rows.push([
      c.id,
      c.wp ?? "default",
      c.php ?? "default",
      c.error ? `${c.outcome} (${c.error.code})` : c.outcome,
      c.tests ? String(c.tests.passed) : "-",
      c.tests ? String(c.tests.failed + c.tests.errors) : "-",
      c.bundle.directory,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join("  "));
  lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  lines.push("", `matrix: ${summary.outcome}: ${summary.counts.passed} of ${summary.counts.cells} cells passed`);
  return `${lines.join("\n")}\n`;
}
