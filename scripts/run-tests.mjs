#!/usr/bin/env node
// Runs node:test over every *.test.ts under the given folders (Node 20's --test has no globs).
// Usage: node scripts/run-tests.mjs [--unit | --integration | --smoke] [folder …]
//   (default: every package's test/ and test/). A file named *.integration.test.ts boots WordPress,
//   Chromium, redis-server or spawns the CLI; every other test file is a unit test, which needs no
//   build and no outside service. --unit runs only those, --integration only the others, --smoke
//   the few integration files in SMOKE_FILES (CI runs them on a second Node version).
import { readdirSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

// The built CLI's `run` as a user meets it (boots, a fatal, a timeout, refusals before boot, secrets
// kept out of a bundle that verifies): enough to show a Node version runs the product, cheap
// enough for CI.
const SMOKE_FILES = ["test/cli/run.integration.test.ts"];

const args = process.argv.slice(2);
const smoke = args.includes("--smoke");
const only = args.includes("--unit") ? "unit" : args.includes("--integration") ? "integration" : undefined;
const roots = args.filter((a) => a !== "--unit" && a !== "--integration" && a !== "--smoke");
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

const isIntegration = (path) => path.endsWith(".integration.test.ts");
const files = smoke
  ? SMOKE_FILES
  : folders.flatMap((f) => [...walk(f)]).filter((f) => only === undefined || (only === "integration") === isIntegration(f));
if (files.length === 0) {
  console.error(`no test files under ${folders.join(", ")}`);
  process.exit(1);
}
// Integration files each boot WordPress (one core each, mostly): two files at a time on a machine
// with two or more cores; WP_CODEBOX_TEST_CONCURRENCY overrides (1 keeps a small machine responsive).
// Files share the WordPress cache safely: cache entries are built under a lock and renamed into place.
const concurrency = Number(process.env.WP_CODEBOX_TEST_CONCURRENCY) || Math.max(1, Math.min(2, availableParallelism()));
// The default WordPress (named by nobody) is the newest release, which would ask the internet or
// pick up whatever another test cached: the suite pins it to the newest bundled build, offline and
// the same on every machine. Tests about the default itself unset WP_CODEBOX_WP for their own runs
// and serve releases from a loopback mirror.
const env = { ...process.env, WP_CODEBOX_WP: process.env.WP_CODEBOX_WP || "bundled" };
const result = spawnSync(
  process.execPath,
  ["--conditions=source", "--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...files],
  { stdio: "inherit", env },
);
process.exit(result.status ?? 1);
