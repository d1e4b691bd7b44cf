#!/usr/bin/env node
// Runs node:test over every *.test.ts under the given folders (Node 20's --test has no globs).
// Usage: node scripts/run-tests.mjs [folder …]   (default: every package's test/ and test/)
import { readdirSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const roots = process.argv.slice(2);
const folders = roots.length
  ? roots
  : [...readdirSync("packages").map((p) => join("packages", p, "test")), "test"].filter((d) => existsSync(d));

function* walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "fixtures" && name !== "node_modules") yield* walk(path);
    } else if (name.endsWith(".test.ts")) yield path;
  }
}

const files = folders.flatMap((f) => [...walk(f)]);
if (files.length === 0) {
  console.error(`no test files under ${folders.join(", ")}`);
  process.exit(1);
}
// Integration files each boot WordPress; one file at a time keeps a 2-core machine responsive.
const result = spawnSync(
  process.execPath,
  ["--conditions=source", "--import", "tsx", "--test", "--test-concurrency=1", ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
