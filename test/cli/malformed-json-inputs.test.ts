/**
 * Every JSON input a user may get from someone else (recipe, episode script, policy file, a
 * command's JSON argument file, a batch task file and the recipe it names, a bundle's manifest) is
 * refused before boot when it does not parse, and the error says where the syntax breaks without
 * quoting the file: a malformed file can hold a secret, and errors go to stderr, result files and
 * bundles. The same inputs, valid JSON but nested 100,000 levels deep, are refused the same way
 * (exit 2, or a failed verification), never a stack overflow reported as an internal error.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scratchDir } from "../support/scratch-dir.ts";
import { show, spawnCli } from "./spawn-cli.ts";

const SECRET = "sk_live_51Hx0123456789abcdefSECRET";
// Starting with the secret: V8's own message would quote the file's first bytes.
const MALFORMED = `${SECRET}\n{"token": 1}`;
// A stray word on line 3: V8's message gives an offset, which the error turns into line and column.
const MALFORMED_MIDWAY = `{\n  "token": "${SECRET}",\n  ${SECRET}\n}`;

const dir = scratchDir("malformed-json");
const bad = join(dir, "bad.json");
writeFileSync(bad, MALFORMED);
writeFileSync(join(dir, "midway.json"), MALFORMED_MIDWAY);
writeFileSync(join(dir, "tasks.jsonl"), `{"id": "t1", "recipe": "bad.json"}\n`);
writeFileSync(join(dir, "bad-line.jsonl"), `{"id": "t1", ${SECRET}}\n`);
mkdirSync(join(dir, "bundle"));
writeFileSync(join(dir, "bundle", "manifest.json"), MALFORMED_MIDWAY);
// Valid JSON, far deeper than any real input: every reader recursed on it after parsing.
const DEEP = `{"schema": "wp-codebox/workspace-recipe/v1", "name": "deep", "steps": [{"name": "a", "command": "wordpress.run-php", "args": {"code": "<?php echo 1;"}, "expect": {"json": {"path": "$.a", "equals": ${"[".repeat(100_000)}${"]".repeat(100_000)}}}}]}`;
const deep = join(dir, "deep.json");
writeFileSync(deep, DEEP);
writeFileSync(join(dir, "deep-line.jsonl"), `{"id": "t1", "recipe": "deep.json", "x": ${"[".repeat(100_000)}${"]".repeat(100_000)}}\n`);
writeFileSync(join(dir, "deep-tasks.jsonl"), `{"id": "t1", "recipe": "deep.json"}\n`);
mkdirSync(join(dir, "deep-bundle"));
writeFileSync(join(dir, "deep-bundle", "manifest.json"), DEEP);

const cases: { name: string; argv: string[]; code: number; error: RegExp }[] = [
  { name: "a recipe", argv: ["recipe", "run", bad, "--json"], code: 2, error: /invalid-recipe/ },
  { name: "a recipe, midway", argv: ["recipe", "run", join(dir, "midway.json"), "--json"], code: 2, error: /invalid-recipe.*line 3, column 3/s },
  { name: "an episode script", argv: ["episode", "run", bad, "--json"], code: 2, error: /invalid-episode-script/ },
  { name: "a policy file", argv: ["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--policy", bad, "--json"], code: 2, error: /invalid-policy/ },
  { name: "a command's JSON argument file", argv: ["run", "--command", "wordpress.rest-request", "--arg", "route=/", "--arg", `params-json=@${bad}`, "--json"], code: 2, error: /invalid-json-arg/ },
  { name: "a batch task file line", argv: ["batch", join(dir, "bad-line.jsonl"), "--artifacts", join(dir, "out-1"), "--json"], code: 2, error: /line 1/ },
  { name: "the recipe a batch task names", argv: ["batch", join(dir, "tasks.jsonl"), "--artifacts", join(dir, "out-2"), "--json"], code: 2, error: /bad\.json/ },
];

for (const c of cases) {
  test(`malformed JSON in ${c.name}: refused before boot, located, not quoted`, async () => {
    const run = await spawnCli(c.argv, { env: { WP_CODEBOX_CACHE_DIR: join(dir, "cache") } });
    assert.equal(run.code, c.code, show(run));
    const out = run.stdout + run.stderr;
    assert.match(out, c.error, show(run));
    assert.match(out, /line \d+, column \d+|unexpected token|expected/i, show(run));
    assert.ok(!out.includes(SECRET.slice(0, 8)), `the secret leaked:\n${show(run)}`);
    assert.doesNotMatch(out, /booting|Booting/, show(run));
  });
}

test("a bundle whose manifest is malformed fails verification without quoting it", async () => {
  const run = await spawnCli(["artifacts", "verify", join(dir, "bundle"), "--json"]);
  assert.notEqual(run.code, 0, show(run));
  assert.match(run.stdout + run.stderr, /manifest\.json is not valid JSON: .*line 3, column 3/, show(run));
  assert.ok(!(run.stdout + run.stderr).includes(SECRET.slice(0, 8)), show(run));
});

const deepCases: { name: string; argv: string[]; error: RegExp }[] = [
  { name: "a recipe (run)", argv: ["recipe", "run", deep, "--artifacts", join(dir, "deep-out-1"), "--json"], error: /invalid-recipe/ },
  { name: "a recipe (validate)", argv: ["recipe", "validate", deep, "--json"], error: /invalid-recipe/ },
  { name: "an episode script", argv: ["episode", "run", deep, "--json"], error: /invalid-episode-script/ },
  { name: "a policy file", argv: ["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--policy", deep, "--json"], error: /invalid-policy/ },
  { name: "a command's JSON argument file", argv: ["run", "--command", "wordpress.rest-request", "--arg", "route=/", "--arg", `params-json=@${deep}`, "--json"], error: /invalid-json-arg/ },
  { name: "a batch task file line", argv: ["batch", join(dir, "deep-line.jsonl"), "--artifacts", join(dir, "deep-out-2"), "--json"], error: /line 1/ },
  { name: "the recipe a batch task names", argv: ["batch", join(dir, "deep-tasks.jsonl"), "--artifacts", join(dir, "deep-out-3"), "--json"], error: /deep\.json/ },
];

for (const c of deepCases) {
  test(`JSON nested 100,000 deep in ${c.name}: refused before boot with exit 2, not an internal error`, async () => {
    const run = await spawnCli(c.argv, { env: { WP_CODEBOX_CACHE_DIR: join(dir, "cache") } });
    assert.equal(run.code, 2, show(run));
    const out = run.stdout + run.stderr;
    assert.match(out, c.error, show(run));
    assert.match(out, /nest deeper than \d+ levels at line 1, column \d+/, show(run));
    assert.doesNotMatch(out, /internal-error|call stack/i, show(run));
    assert.doesNotMatch(out, /booting|Booting/, show(run));
  });
}

test("a bundle whose manifest nests 100,000 deep fails verification, not with an internal error", async () => {
  const run = await spawnCli(["artifacts", "verify", join(dir, "deep-bundle"), "--json"]);
  assert.equal(run.code, 1, show(run));
  assert.match(run.stdout + run.stderr, /manifest\.json is not valid JSON: arrays and objects nest deeper than \d+ levels/, show(run));
});
