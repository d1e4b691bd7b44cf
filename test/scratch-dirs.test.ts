/**
 * Test hygiene: a suite run leaves nothing behind in the temp folder. Every test file that makes
 * a folder with mkdtemp also removes one (rm/rmSync), or makes its folders with `scratchDir`
 * (test/support/scratch-dir.ts), which removes them at exit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function* testFiles(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* testFiles(path);
    else if (name.endsWith(".test.ts")) yield path;
  }
}

test("every test file that makes a temp folder with mkdtemp removes what it made", () => {
  const files = [...testFiles(join(root, "test")), ...readdirSync(join(root, "packages")).flatMap((p) => [...testFiles(join(root, "packages", p, "test"))])];
  assert.ok(files.length > 50, `found ${files.length} test files`);
  const leaking = files.filter((file) => {
    const source = readFileSync(file, "utf8");
    return /\bmkdtemp(Sync)?\(/.test(source) && !/\brm(Sync)?\(|\bscratchDir\(/.test(source);
  });
  assert.deepEqual(leaking.map((f) => relative(root, f)), [], "use scratchDir() from test/support/scratch-dir.ts, or remove the folder in after()");
});
