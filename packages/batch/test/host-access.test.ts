/**
 * A task file is a shared input too: the recipes and scripts it names must lie in its folder, and
 * what they name in theirs, unless `--allow-path` / `--allow-network` grant more; the grants are
 * carried in each task to whichever process runs it. No sandbox boots here.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { assertValidTaskFile, validateTaskLines } from "@wp-codebox/batch";

const root = mkdtempSync(join(tmpdir(), "wp-codebox-batch-access-"));
after(() => rmSync(root, { recursive: true, force: true }));
const dir = join(root, "tasks");
const outside = join(root, "private");
mkdirSync(dir);
mkdirSync(join(outside, "plugin"), { recursive: true });
writeFileSync(join(outside, "secret.php"), "<?php echo 'TOPSECRET';");
writeFileSync(join(outside, "plugin", "plugin.php"), "<?php /* Plugin Name: P */");
const okRecipe = { schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] };
const okScript = { schema: "wp-codebox/episode-script/v1", steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }] };
writeFileSync(join(outside, "recipe.json"), JSON.stringify(okRecipe));
writeFileSync(join(outside, "script.json"), JSON.stringify(okScript));
const files: Record<string, unknown> = {
  "reads-out.recipe.json": { ...okRecipe, steps: [{ command: "wordpress.run-php", args: { "code-file": "../private/secret.php" } }] },
  "mounts-out.recipe.json": { ...okRecipe, inputs: { plugins: ["../private/plugin"] } },
  "network.recipe.json": { ...okRecipe, policy: { network: "allow" } },
  "reads-out.episode.json": { ...okScript, plugins: ["../private/plugin"] },
  "code-file-out.episode.json": { ...okScript, steps: [{ action: { command: "wordpress.run-php", args: { "code-file": "../private/secret.php" } } }] },
  "network.episode.json": { ...okScript, policy: { network: { allowHosts: ["example.com"] } }, runtime: { clock: "real" } },
};
for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(value));

const cases: { name: string; line: Record<string, unknown>; pointer: string; code: "path-not-allowed" | "network-not-allowed"; grants: { allowPaths?: string[]; allowNetwork?: string[] } }[] = [
  { name: "recipe path outside the task file's folder", line: { id: "t", recipe: "../private/recipe.json" }, pointer: "/recipe", code: "path-not-allowed", grants: { allowPaths: [outside] } },
  { name: "episode path outside the task file's folder (absolute)", line: { id: "t", episode: join(outside, "script.json") }, pointer: "/episode", code: "path-not-allowed", grants: { allowPaths: [outside] } },
  { name: "a recipe that reads outside its folder", line: { id: "t", recipe: "reads-out.recipe.json" }, pointer: "/recipe", code: "path-not-allowed", grants: { allowPaths: [outside] } },
  { name: "a recipe that mounts outside its folder", line: { id: "t", recipe: "mounts-out.recipe.json" }, pointer: "/recipe", code: "path-not-allowed", grants: { allowPaths: [outside] } },
  { name: "a recipe whose policy allows every host", line: { id: "t", recipe: "network.recipe.json" }, pointer: "/recipe", code: "network-not-allowed", grants: { allowNetwork: ["*"] } },
  { name: "a script that mounts outside its folder", line: { id: "t", episode: "reads-out.episode.json" }, pointer: "/episode", code: "path-not-allowed", grants: { allowPaths: [outside] } },
  { name: "a script whose action reads outside its folder", line: { id: "t", episode: "code-file-out.episode.json" }, pointer: "/episode", code: "path-not-allowed", grants: { allowPaths: [outside] } },
  { name: "a script whose policy allows a host", line: { id: "t", episode: "network.episode.json" }, pointer: "/episode", code: "network-not-allowed", grants: { allowNetwork: ["example.com"] } },
];

for (const c of cases) {
  test(`task file: ${c.name} is refused (${c.code}) and allowed by the grant, which the task carries`, () => {
    const text = JSON.stringify(c.line);
    const refused = validateTaskLines(text, dir, {}, join(dir, "tasks.jsonl"));
    assert.equal(refused.valid, false);
    assert.ok(refused.issues.some((i) => i.pointer === c.pointer && i.message.includes(`${c.code}:`)), JSON.stringify(refused.issues));
    assert.ok(!JSON.stringify(refused.issues).includes("TOPSECRET"));
    assert.throws(() => assertValidTaskFile(refused), (error: unknown) => error instanceof WpCodeboxError && error.code === c.code);
    const granted = validateTaskLines(text, dir, c.grants, join(dir, "tasks.jsonl"));
    assert.deepEqual(granted.issues, []);
    assert.deepEqual(granted.tasks[0]!.grants, {
      allowPaths: (c.grants.allowPaths ?? []).map((p) => realpathSync(p)),
      allowNetwork: c.grants.allowNetwork ?? [],
    });
  });
}

test("task file: files inside its folder need no grant and carry none", () => {
  writeFileSync(join(dir, "ok.recipe.json"), JSON.stringify(okRecipe));
  const v = validateTaskLines(JSON.stringify({ id: "ok", recipe: "ok.recipe.json" }), dir);
  assert.deepEqual(v.issues, []);
  assert.equal(v.tasks[0]!.grants, undefined);
});
