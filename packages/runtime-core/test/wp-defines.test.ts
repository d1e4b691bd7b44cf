/**
 * `--define` / `runtime.defines`: names are checked (reserved ones refused with invalid-define),
 * values are data (JSON scalars or text), and every entry point (flag, record, recipe, episode
 * script) refuses the same things before anything boots.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { WpCodeboxError, assertDefines, defineNameProblem, parseDefineFlags, parseDefineValue, planRun, validateRecipe, exitCodeForCategory } from "@wp-codebox/runtime-core";
import { scratchDir } from "../../../test/support/scratch-dir.js";

const isInvalidDefine = (error: unknown) => error instanceof WpCodeboxError && error.code === "invalid-define" && exitCodeForCategory(error.category) === 2;

test("names: a constant name that the sandbox does not own is accepted; every reserved or malformed one is refused", () => {
  const table: [string, boolean][] = [
    ["WP_ENVIRONMENT_TYPE", true],
    ["MY_PLUGIN_FLAG", true],
    ["WP_DEBUG", true],
    ["WP_DEBUG_DISPLAY", true],
    ["SCRIPT_DEBUG", true],
    ["_private", true],
    ["DB_NAME", false],
    ["DB_PASSWORD", false],
    ["db_host", false],
    ["ABSPATH", false],
    ["WPINC", false],
    ["WP_CONTENT_DIR", false],
    ["WP_PLUGIN_DIR", false],
    ["WP_HOME", false],
    ["WP_SITEURL", false],
    ["WP_HTTP_BLOCK_EXTERNAL", false],
    ["WP_ACCESSIBLE_HOSTS", false],
    ["WP_CODEBOX_SELF_HOSTS", false],
    ["SQLITE_DB_FILENAME", false],
    ["PHP_VERSION", false],
    ["E_ALL", false],
    ["__FILE__", false],
    ["TRUE", false],
    ["STDERR", false],
    ["DIRECTORY_SEPARATOR", false],
    ["1ABC", false],
    ["WITH-DASH", false],
    ["", false],
    ["A B", false],
    ["X');system('id", false],
  ];
  for (const [name, ok] of table) assert.equal(defineNameProblem(name) === undefined, ok, `${name}: ${defineNameProblem(name)}`);
});

test("values: JSON scalars are their value, anything else is the text itself (never code)", () => {
  const table: [string, unknown][] = [
    ["true", true],
    ["false", false],
    ["null", null],
    ["42", 42],
    ["-1.5", -1.5],
    ["1e3", 1000],
    ['"quoted text"', "quoted text"],
    ['"42"', "42"],
    ["local", "local"],
    ["", ""],
    ["0x10", "0x10"],
    ["012", "012"],
    ["TRUE", "TRUE"],
    ["[1,2]", "[1,2]"],
    ["'); phpinfo(); //", "'); phpinfo(); //"],
    ['"unterminated', '"unterminated'],
  ];
  for (const [text, value] of table) assert.deepEqual(parseDefineValue(text), value, text);
});

test("--define flags: parsed into a record, a later flag wins; every bad flag is named in one invalid-define", () => {
  assert.deepEqual(parseDefineFlags(["A=1", "B=local", "A=true", "C="]), { A: true, B: "local", C: "" });
  assert.throws(
    () => parseDefineFlags(["DB_NAME=x", "noequals", "=1", "OK=1"]),
    (error: unknown) => isInvalidDefine(error) && ((error as WpCodeboxError).data.problems as unknown[]).length === 3 && /DB_NAME is reserved/.test((error as Error).message),
  );
});

test("records: values must be scalars; names are checked as for the flag", () => {
  assertDefines({ A: "x", B: 1, C: false, D: null });
  for (const bad of [{ A: [1] }, { A: { b: 1 } }, { ABSPATH: "/x" }, { A: Number.POSITIVE_INFINITY }, [], "A=1", null]) {
    assert.throws(() => assertDefines(bad), isInvalidDefine, JSON.stringify(bad));
  }
});

test("every entry point refuses a reserved define before a boot: run flags, a run record, a recipe, an episode script", () => {
  const dir = scratchDir("wp-codebox-defines-");
  const command = { kind: "command" as const, command: "wordpress.run-php", args: ["code=<?php echo 1;"] };
  assert.throws(() => planRun({ ...command, defines: ["DB_HOST=evil"] }, { cwd: dir }), isInvalidDefine);
  assert.throws(() => planRun({ ...command, defines: { WP_SITEURL: "http://x" } }, { cwd: dir }), isInvalidDefine);
  const ok = planRun({ ...command, defines: ["WP_ENVIRONMENT_TYPE=local", "N=3"] }, { cwd: dir });
  assert.deepEqual(ok.createSpec.defines, { WP_ENVIRONMENT_TYPE: "local", N: 3 });

  const recipe = (defines: unknown) => ({ schema: "wp-codebox/workspace-recipe/v1", runtime: { defines }, steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] });
  const recipeIssues = validateRecipe(recipe({ ABSPATH: "/", GOOD: 1 }), join(dir, "r.json")).issues;
  assert.deepEqual(recipeIssues.map((i) => i.path), ["/runtime/defines/ABSPATH"], JSON.stringify(recipeIssues));
  assert.ok(validateRecipe(recipe({ A: [1] }), join(dir, "r.json")).issues.some((i) => i.path.startsWith("/runtime/defines")));
  const recipeFile = join(dir, "good.json");
  writeFileSync(recipeFile, JSON.stringify(recipe({ WP_ENVIRONMENT_TYPE: "staging" })));
  assert.deepEqual(planRun({ kind: "recipe", file: recipeFile }, { cwd: dir }).createSpec.defines, { WP_ENVIRONMENT_TYPE: "staging" });

  const script = (defines: unknown) => ({ schema: "wp-codebox/episode-script/v1", runtime: { defines }, steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }] });
  assert.throws(
    () => planRun({ kind: "episode", script: script({ DB_USER: "x" }), baseDir: dir }, { cwd: dir }),
    (error: unknown) => error instanceof WpCodeboxError && error.code === "invalid-episode-script" && /\/runtime\/defines\/DB_USER/.test(error.message),
  );
  assert.deepEqual(planRun({ kind: "episode", script: script({ MY_FLAG: true }), baseDir: dir }, { cwd: dir }).createSpec.defines, { MY_FLAG: true });
});
