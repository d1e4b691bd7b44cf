import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  WORKSPACE_RECIPE_SCHEMA,
  WpCodeboxError,
  checkExpectations,
  parseJsonPath,
  planRecipe,
  readJsonPath,
  recipeArgsToFlat,
  validateAgainstSchema,
  validateRecipe,
  type ExecutionResult,
  type RuntimeCreateSpec,
} from "@wp-codebox/runtime-core";
import { scratchDir } from "../../../test/support/scratch-dir.js";

/** A backend preflight that offers these WordPress versions and PHP 7.4–8.4. */
function offering(versions: string[]): { preflight(spec: RuntimeCreateSpec): void } {
  return {
    preflight(spec) {
      if (spec.php !== undefined && !["7.4", "8.0", "8.1", "8.2", "8.3", "8.4"].includes(spec.php)) throw new WpCodeboxError("php-version-unavailable", `PHP ${spec.php} is not available.`);
      const wp = spec.wordpress?.version;
      if (wp !== undefined && !versions.includes(wp)) throw new WpCodeboxError("wordpress-version-unavailable", `WordPress ${wp} is not bundled; use one of ${versions.join(", ")}.`);
    },
  };
}

const dir = scratchDir("wp-codebox-recipe-");
mkdirSync(join(dir, "my-plugin"));
writeFileSync(join(dir, "my-plugin", "my-plugin.php"), "<?php /* Plugin Name: Mine */");
writeFileSync(join(dir, "probe.php"), "<?php echo json_encode(['count' => 3]);");
writeFileSync(join(dir, "script.json"), JSON.stringify([{ kind: "navigate", url: "/wp-admin/" }, { kind: "evaluate", expression: "1+1", assert: 2 }]));
const recipePath = join(dir, "recipe.json");

const valid = {
  schema: "wp-codebox/workspace-recipe/v1",
  runtime: { wp: "6.5", php: "8.3" },
  inputs: { plugins: ["./my-plugin"], mounts: [{ source: "./my-plugin", target: "/workspace/data" }], runtimeEnv: { MY_FLAG: "1" }, secretEnv: ["API_TOKEN"] },
  setup: [{ command: "wordpress.run-php", args: { code: "<?php update_option('blogname', 'Demo');" } }],
  steps: [
    { name: "drive", command: "wordpress.browser-actions", args: { steps: [{ kind: "navigate", url: "/wp-admin/" }], "step-timeout": "10s" }, expect: { status: "ok", assertions: "all-passed" } },
    { command: "wordpress.browser-actions", args: { "steps-json": "@script.json" } },
    { command: "wordpress.run-php", args: { "code-file": "./probe.php" }, expect: { stdoutContains: "count", json: { path: "$.count", equals: 3 } } },
  ],
  artifacts: { directory: "./artifacts" },
};

test("a valid recipe validates and plans: paths resolved, derived policy, evaluate auto-granted", () => {
  const report = validateRecipe(valid, recipePath, { backend: offering(["6.5", "6.4"]) });
  assert.deepEqual(report.issues, []);
  const plan = planRecipe(valid, recipePath);
  assert.deepEqual(plan.inputs.plugins, [join(dir, "my-plugin")]);
  assert.equal(plan.inputs.mounts[0]!.mode, "readonly");
  assert.deepEqual(plan.inputs.secretEnv, ["API_TOKEN"]);
  assert.equal(plan.policy.secrets, "scoped");
  assert.equal(plan.policy.network, "deny");
  assert.deepEqual(plan.policy.commands.sort(), ["wordpress.browser-actions", "wordpress.browser-actions.evaluate", "wordpress.run-php"]);
  const evaluate = plan.capabilities.find((c) => c.capability === "wordpress.browser-actions.evaluate")!;
  assert.equal(evaluate.autoGranted, true);
  assert.deepEqual(evaluate.usedBy, ["/steps/1"]);
  assert.match(evaluate.reason, /evaluate/);
  const runPhp = plan.capabilities.find((c) => c.capability === "wordpress.run-php")!;
  assert.equal(runPhp.autoGranted, false);
  assert.deepEqual(runPhp.usedBy, ["/setup/0", "/steps/2"]);
  assert.equal(runPhp.reason, "used by /setup/0, /steps/2");
  assert.equal(plan.capabilities.find((c) => c.capability === "wordpress.browser-actions")!.reason, "used by /steps/0, /steps/1");
  assert.equal(plan.setup.length, 1);
  assert.deepEqual(plan.steps.map((s) => s.pointer), ["/steps/0", "/steps/1", "/steps/2"]);
  assert.ok(plan.steps[0]!.args.includes('steps-json=[{"kind":"navigate","url":"/wp-admin/"}]'));
  assert.ok(plan.steps[1]!.args.includes(`steps-json=@${join(dir, "script.json")}`));
  assert.ok(plan.steps[2]!.args.includes(`code-file=${join(dir, "probe.php")}`));
  assert.equal(plan.artifacts.directory, join(dir, "artifacts"));
});

test("an invalid recipe reports every problem with a JSON pointer", () => {
  const bad = {
    schema: "wp-codebox/workspace-recipe/v1",
    bogus: true,
    runtime: { wp: "9.9", php: "5.6" },
    inputs: {
      plugins: ["./missing-plugin"],
      mounts: [
        { source: "./nope", target: "/workspace/x" },
        { source: "./my-plugin", target: "/wordpress/wp-content/../../etc" },
        { source: "./my-plugin", target: "/etc/passwd" },
      ],
    },
    steps: [
      { command: "wordpress.nope" },
      { command: "wordpress.browser-actions.evaluate" },
      { command: "wordpress.run-php", args: { code: "<?php echo 1;", colour: "red" } },
      { command: "wordpress.browser-actions", args: { steps: [{ kind: "navigate", url: "/" }, { kind: "click" }, { kind: "teleport" }] } },
      { command: "wordpress.run-php", args: { code: "<?php echo 1;" }, expect: { json: { path: "count", equals: 1 }, stdoutMatches: "(", colour: 1 } },
    ],
  };
  const { valid: ok, issues } = validateRecipe(bad, recipePath, { backend: offering(["6.5"]), wordpressVersions: ["6.5"], offline: true });
  assert.equal(ok, false);
  const paths = issues.map((i) => i.path);
  for (const expected of [
    "/bogus",
    "/runtime/php",
    "/inputs/plugins/0",
    "/inputs/mounts/0",
    "/inputs/mounts/1",
    "/inputs/mounts/2",
    "/steps/0/command",
    "/steps/1/command",
    "/steps/2/args/colour",
    "/steps/3/args/steps/1/selector",
    "/steps/3/args/steps/2/kind",
    "/steps/4/expect/colour",
  ]) {
    assert.ok(paths.includes(expected), `missing ${expected} in ${JSON.stringify(issues, null, 1)}`);
  }
  assert.match(issues.find((i) => i.path === "/inputs/mounts/0")!.message, /mount-source-missing/);
  assert.match(issues.find((i) => i.path === "/inputs/mounts/1")!.message, /mount-escape/);
  assert.match(issues.find((i) => i.path === "/inputs/mounts/2")!.message, /mount-target-outside-sandbox/);
  // Expectation details are only checked once the expect block has the right shape.
  const second = validateRecipe({ ...bad, bogus: undefined, steps: [{ command: "wordpress.run-php", args: { code: "1" }, expect: { json: { path: "count", equals: 1 }, stdoutMatches: "(" } }] }, recipePath);
  assert.ok(second.issues.some((i) => i.path === "/steps/0/expect/json/path"));
  assert.ok(second.issues.some((i) => i.path === "/steps/0/expect/stdoutMatches"));
  // A version that is not bundled is fetched from the release mirror, unless offline.
  const third = validateRecipe({ ...valid, runtime: { wp: "9.9" } }, recipePath, { wordpressVersions: ["6.5"], offline: true });
  assert.deepEqual(third.issues.map((i) => i.path), ["/runtime/wp"]);
  assert.deepEqual(validateRecipe({ ...valid, runtime: { wp: "9.9" } }, recipePath, { wordpressVersions: ["6.5"] }).issues, []);
});

test("an explicit policy.commands is authoritative; secrets must be set when planning", () => {
  const { issues } = validateRecipe({ ...valid, policy: { commands: ["wordpress.run-php", "wordpress.browser-actions"] } }, recipePath);
  assert.deepEqual(issues.map((i) => i.path), ["/steps/1"]);
  assert.throws(() => planRecipe(valid, recipePath, { processEnv: {} }), (e: Error & { code?: string }) => e.code === "invalid-recipe" && /\/inputs\/secretEnv\/0: API_TOKEN is not set/.test(e.message));
});

test("args conversion and the schema are one contract", () => {
  assert.deepEqual(recipeArgsToFlat({ code: "x", n: 2, steps: [1], "body-json": { a: 1 } }).args, ["code=x", "n=2", "steps-json=[1]", 'body-json={"a":1}']);
  assert.deepEqual(validateAgainstSchema(WORKSPACE_RECIPE_SCHEMA, valid), []);
});

test("expectations: JSONPath subset, status default, expected and actual recorded", () => {
  assert.deepEqual(parseJsonPath('$.a.b[0]["odd key"]'), { segments: ["a", "b", 0, "odd key"] });
  assert.ok("error" in parseJsonPath("a.b"));
  assert.deepEqual(readJsonPath({ a: [{ b: 2 }] }, ["a", 0, "b"]), { found: true, value: 2 });
  const result = { id: "x", command: "wordpress.run-php", args: [], status: "ok", exitCode: 0, stdout: '{"count":2}', stderr: "", json: { count: 2 }, startedAt: "", finishedAt: "", durationMs: 1 } satisfies ExecutionResult;
  const checks = checkExpectations({ stdoutContains: "count", json: { path: "$.count", equals: 3 } }, result);
  assert.deepEqual(checks.map((c) => [c.name, c.passed]), [["status", true], ["stdoutContains", true], ["json", false]]);
  assert.deepEqual(checks[2]!.actual, { path: "$.count", value: 2 });
  assert.deepEqual(checks[2]!.expected, { path: "$.count", equals: 3 });
  assert.equal(checkExpectations(undefined, { ...result, status: "error" })[0]!.passed, false);
});
