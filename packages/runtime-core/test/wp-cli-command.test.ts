/**
 * The `wordpress.wp-cli` command line, checked offline: every WP-CLI command that needs a MySQL
 * client or another process is refused with `wp-cli-unsupported` (exit 2) wherever it is written
 * (flags before the words, a leading `wp`, upper case), on every path that plans a run (a single
 * command, a recipe step, an episode step), and nothing boots. The sandbox flags are added once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitCodeForCategory, WpCodeboxError } from "../src/errors.js";
import { planRun, type RunRequest } from "../src/session/run-plan.js";
import type { RuntimeBackend } from "../src/runtime.js";
import { UNSUPPORTED_WP_CLI_COMMANDS, parseWpCliCommand, splitCommandLine, wpCliArgv } from "../src/wp-cli-command.js";

const REFUSED: [line: string, command: string, why: RegExp][] = [
  ["db query 'SELECT 1'", "wp db query", /MySQL client binary \(mysql\)/],
  ["wp db query", "wp db query", /MySQL/],
  ["--user=admin db query 'SELECT 1'", "wp db query", /MySQL/],
  ["DB Query", "wp db query", /MySQL/],
  ["db export out.sql --add-drop-table", "wp db export", /mysqldump/],
  ["db import dump.sql", "wp db import", /mysql\)/],
  ["db cli", "wp db cli", /mysql\)/],
  ["db create", "wp db create", /mysql\)/],
  ["db drop --yes", "wp db drop", /mysql\)/],
  ["db reset --yes", "wp db reset", /mysql\)/],
  ["db clean --yes", "wp db clean", /mysql\)/],
  ["db check", "wp db check", /mysqlcheck/],
  ["db optimize", "wp db optimize", /mysqlcheck/],
  ["db repair", "wp db repair", /mysqlcheck/],
  ["shell", "wp shell", /terminal/],
  ["server --port=8080", "wp server", /cannot start processes/],
  ["cli update --yes", "wp cli update", /wp-codebox wp-cli install/],
];

const ALLOWED: [line: string, words: string[]][] = [
  ["post list --format=json", ["post", "list"]],
  ["wp option get blogname", ["option", "get", "blogname"]],
  ["db tables", ["db", "tables"]],
  ["db prefix", ["db", "prefix"]],
  ["db", ["db"]],
  ["eval 'echo 1;'", ["eval", "echo 1;"]],
  // "query" here is a value, not the db subcommand.
  ["post list --s=db query", ["post", "list", "query"]],
  ["cli version", ["cli", "version"]],
];

test("every unsupported command is refused, however the line is written, with its reason", () => {
  const covered = new Set<string>();
  for (const [line, command, why] of REFUSED) {
    assert.throws(
      () => parseWpCliCommand(line),
      (e: unknown) => e instanceof WpCodeboxError && e.code === "wp-cli-unsupported" && e.data.command === command && why.test(e.message) && e.message.includes(`\`${command}\``),
      line,
    );
    covered.add(command);
  }
  // The table above covers the whole list: a new entry needs a case here.
  assert.deepEqual([...covered].sort(), UNSUPPORTED_WP_CLI_COMMANDS.map((c) => `wp ${c.words.join(" ")}`).sort());
  assert.equal(exitCodeForCategory(new WpCodeboxError("wp-cli-unsupported", "x").category), 2);
});

test("other commands pass, with their positional words", () => {
  for (const [line, words] of ALLOWED) assert.deepEqual(parseWpCliCommand(line).words, words, line);
  assert.throws(() => parseWpCliCommand("  wp  "), (e: WpCodeboxError) => e.code === "missing-argument");
  assert.throws(() => parseWpCliCommand(`post create --post_title="open`), (e: WpCodeboxError) => e.code === "invalid-argument");
});

test("wpCliArgv adds --path, --url and --no-color unless the caller gave them", () => {
  const sandbox = { path: "/wordpress", url: "http://127.0.0.1:9400" };
  const cases: [string[], string[]][] = [
    [["option", "get", "home"], ["--path=/wordpress", "--url=http://127.0.0.1:9400", "--no-color"]],
    [["cli", "info", "--color"], ["--path=/wordpress", "--url=http://127.0.0.1:9400"]],
    [["cli", "info", "--no-color", "--path=/other", "--url=http://x"], []],
  ];
  for (const [argv, added] of cases) assert.deepEqual(wpCliArgv(argv, sandbox), ["wp", ...argv, ...added], argv.join(" "));
  assert.deepEqual(splitCommandLine(`post create --post_title="Hello \\"world\\"" 'a b' c\\ d`), ["post", "create", '--post_title=Hello "world"', "a b", "c d"]);
});

test("planRun refuses `wp db query` before boot on the run, recipe and episode paths", () => {
  let created = 0;
  const backend: RuntimeBackend = {
    kind: "fake",
    async create(): Promise<never> {
      created++;
      throw new Error("planRun must not boot");
    },
    preflight: () => ({ wordpressVersion: "6.5.5", phpVersion: "8.3" }),
  };
  const step = { command: "wordpress.wp-cli", args: { command: "db query 'SELECT 1'" } };
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-wp-cli-plan-"));
  const recipe = join(dir, "recipe.json");
  writeFileSync(recipe, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [step] }));
  const requests: RunRequest[] = [
    { kind: "command", command: "wordpress.wp-cli", args: ["command=db query 'SELECT 1'"] },
    { kind: "recipe", file: recipe },
    { kind: "episode", script: { schema: "wp-codebox/episode-script/v1", steps: [{ action: step }] }, baseDir: dir },
  ];
  try {
    for (const request of requests) {
      assert.throws(
        () => planRun(request, { cwd: dir, backend, artifactsDir: join(dir, "out"), processEnv: {} }),
        // A single command throws the code itself; recipes and scripts list it under the step's path.
        (e: unknown) => e instanceof WpCodeboxError && (e.code === "wp-cli-unsupported" || /args\/command.*wp-cli-unsupported.*MySQL/.test(JSON.stringify(e.data))),
        request.kind,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(created, 0);
});
