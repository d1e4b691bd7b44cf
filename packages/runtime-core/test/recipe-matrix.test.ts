/**
 * Unit: `runtime.matrix` (cells, conflicts, versions), the `tests: "all-passed"` expectation, and
 * `runRecipeMatrix` over a fake backend (one bundle per cell, the summary, the exit code).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  RECIPE_MATRIX_SUMMARY_SCHEMA,
  WpCodeboxError,
  checkExpectations,
  validateAgainstSchema,
  formatMatrixSummary,
  planRecipe,
  runRecipeMatrix,
  validateRecipe,
  type ExecutionResult,
  type ExecutionSpec,
  type Runtime,
  type RuntimeBackend,
  type RuntimeCreateSpec,
} from "@wp-codebox/runtime-core";

const dir = mkdtempSync(join(tmpdir(), "wp-codebox-matrix-"));
mkdirSync(join(dir, "my-plugin"));
writeFileSync(join(dir, "my-plugin", "my-plugin.php"), "<?php /* Plugin Name: Mine */");
// A PHPUnit entry inside the recipe's folder: a recipe may only name paths there (or granted ones).
mkdirSync(join(dir, "bin"));
writeFileSync(join(dir, "bin", "phpunit"), "#!/usr/bin/env php\n<?php\n");
const recipePath = join(dir, "recipe.json");
after(() => rmSync(dir, { recursive: true, force: true }));

const recipe = (runtime: unknown) => ({
  schema: "wp-codebox/workspace-recipe/v1",
  runtime,
  inputs: { plugins: ["./my-plugin"] },
  steps: [{ command: "wordpress.phpunit", args: { phpunit: "./bin/phpunit" }, expect: { tests: "all-passed" } }],
});

test("a matrix plans every wp × php cell in order; latest and 8.5 are valid versions", () => {
  const plan = planRecipe(recipe({ matrix: { wp: ["6.4", "latest"], php: ["8.2", "8.5"] } }), recipePath, { wordpressVersions: ["6.5", "6.4"] });
  assert.deepEqual(plan.cells, [
    { wp: "6.4", php: "8.2" },
    { wp: "6.4", php: "8.5" },
    { wp: "latest", php: "8.2" },
    { wp: "latest", php: "8.5" },
  ]);
  const onlyPhp = planRecipe(recipe({ wp: "6.5", matrix: { php: ["7.4", "8.3"] } }), recipePath);
  assert.deepEqual(onlyPhp.cells, [{ wp: "6.5", php: "7.4" }, { wp: "6.5", php: "8.3" }]);
  assert.deepEqual(planRecipe(recipe({ php: "8.3" }), recipePath).cells, [{ php: "8.3" }]);
});

test("matrix problems are reported with pointers", () => {
  // PHP versions are the backend's to say; this one offers 7.4–8.5.
  const backend = {
    preflight(spec: RuntimeCreateSpec) {
      if (spec.php !== undefined && !["7.4", "8.0", "8.1", "8.2", "8.3", "8.4", "8.5"].includes(spec.php)) throw new WpCodeboxError("php-version-unavailable", `PHP ${spec.php} is not available.`);
    },
  };
  const issues = (runtime: unknown, offline = false) => validateRecipe(recipe(runtime), recipePath, { wordpressVersions: ["6.5"], offline, backend }).issues.map((i) => i.path);
  assert.deepEqual(issues({ wp: "6.5", matrix: { wp: ["6.4"] } }), ["/runtime/wp"]);
  assert.deepEqual(issues({ php: "8.3", matrix: { php: ["8.2"] } }), ["/runtime/php"]);
  assert.deepEqual(issues({ matrix: {} }), ["/runtime/matrix"]);
  assert.deepEqual(issues({ matrix: { wp: [] } }), ["/runtime/matrix/wp"]);
  assert.deepEqual(issues({ matrix: { php: ["5.6"] } }), ["/runtime/matrix/php/0"]);
  assert.deepEqual(issues({ matrix: { wp: ["6.5", "next"] } }), ["/runtime/matrix/wp/1"]);
  assert.deepEqual(issues({ matrix: { wp: ["6.5", "6.7.1"] } }, true), ["/runtime/matrix/wp/1"]);
});

test("expect tests all-passed: passes only when tests ran and none failed or errored; only on wordpress.phpunit steps", () => {
  const result = (tests: unknown): ExecutionResult =>
    ({ id: "x", command: "wordpress.phpunit", args: [], status: "ok", exitCode: 0, stdout: "", stderr: "", json: { tests }, startedAt: "", finishedAt: "", durationMs: 1 }) as ExecutionResult;
  const check = (tests: unknown) => checkExpectations({ status: "ok", tests: "all-passed" }, result(tests)).find((c) => c.name === "tests")!;
  assert.equal(check({ tests: 4, passed: 4, failures: 0, errors: 0 }).passed, true);
  assert.equal(check({ tests: 5, passed: 4, failures: 1, errors: 0 }).message, "1 of 5 tests failed or errored");
  assert.equal(check({ tests: 0, passed: 0, failures: 0, errors: 0 }).message, "no test ran");
  assert.equal(check(undefined).passed, false);
  const misuse = validateRecipe({ ...recipe({}), steps: [{ command: "wordpress.run-php", args: { code: "1" }, expect: { tests: "all-passed" } }] }, recipePath);
  assert.deepEqual(misuse.issues.map((i) => i.path), ["/steps/0/expect/tests"]);
});

/** A backend whose phpunit "fails" on PHP 8.2 only. */
function fakeBackend(created: RuntimeCreateSpec[]): RuntimeBackend {
  return {
    kind: "fake",
    async create(spec: RuntimeCreateSpec = {}): Promise<Runtime> {
      created.push(spec);
      const results: ExecutionResult[] = [];
      const failing = spec.php === "8.2";
      const tests = { tests: 3, assertions: 3, failures: failing ? 1 : 0, errors: 0, skipped: 0, incomplete: 0, warnings: 0, risky: 0, passed: failing ? 2 : 3 };
      const info = () => ({ id: "fake", backend: "fake", wordpressVersion: spec.wordpress?.version ?? "6.5.5", phpVersion: spec.php ?? "8.3", siteUrl: "", bootMode: "cached" as const, bootDurationMs: 0, mounts: [], policy: spec.policy as never, plugins: [], themes: [] });
      return {
        id: "fake",
        info,
        async execute(exec: ExecutionSpec) {
          const r = { id: `exec-${results.length}`, command: exec.command, args: exec.args ?? [], status: failing ? "error" : "ok", exitCode: failing ? 1 : 0, stdout: "", stderr: "", json: { tests }, startedAt: "", finishedAt: "", durationMs: 1 } as ExecutionResult;
          results.push(r);
          return r;
        },
        async collectArtifacts() {
          return { info: info(), results, events: [], files: [], secrets: [], review: { tests } };
        },
        async dispose() {},
      } as unknown as Runtime;
    },
  } as RuntimeBackend;
}

test("runRecipeMatrix: one bundle per cell, a summary with test counts, the first failing cell's exit code", async () => {
  const created: RuntimeCreateSpec[] = [];
  const out = join(dir, "out");
  const outcome = await runRecipeMatrix({ file: recipePath, recipe: recipe({ matrix: { wp: ["6.4", "6.5"], php: ["8.2", "8.3"] } }) }, { backend: fakeBackend(created), artifactsDir: out, cwd: dir });
  assert.deepEqual(created.map((c) => [c.wordpress?.version, c.php]), [["6.4", "8.2"], ["6.4", "8.3"], ["6.5", "8.2"], ["6.5", "8.3"]]);
  for (const id of ["wp-6.4-php-8.2", "wp-6.4-php-8.3", "wp-6.5-php-8.2", "wp-6.5-php-8.3"]) assert.ok(existsSync(join(out, id, "manifest.json")), id);
  const summary = JSON.parse(readFileSync(join(out, "matrix-summary.json"), "utf8"));
  assert.deepEqual(summary, outcome.summary);
  assert.deepEqual(validateAgainstSchema(RECIPE_MATRIX_SUMMARY_SCHEMA, summary), []);
  assert.deepEqual(summary.counts, { cells: 4, passed: 2, failed: 2 });
  assert.deepEqual(summary.cells.map((c: { id: string; outcome: string; tests: { passed: number; failed: number } }) => [c.id, c.outcome, c.tests.passed, c.tests.failed]), [
    ["wp-6.4-php-8.2", "failed", 2, 1],
    ["wp-6.4-php-8.3", "passed", 3, 0],
    ["wp-6.5-php-8.2", "failed", 2, 1],
    ["wp-6.5-php-8.3", "passed", 3, 0],
  ]);
  assert.equal(outcome.exitCode, 1);
  const table = formatMatrixSummary(outcome.summary);
  assert.match(table, /^wp-6\.4-php-8\.2\s+6\.4\s+8\.2\s+failed\s+2\s+1\s/m);
  assert.match(table, /matrix: failed: 2 of 4 cells passed/);
});
