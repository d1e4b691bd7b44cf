/**
 * `wp-codebox batch` on one machine, with real WordPress sandboxes: 6 mixed tasks (one failing),
 * resuming, and a sandbox process killed mid-task.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { runLocalBatch, type BatchProgress } from "@wp-codebox/batch";
import type { BatchReport } from "@wp-codebox/runtime-core";
import { FIXTURES, readVerifiedReport, startCli } from "./spawn.js";

const work = mkdtempSync(join(tmpdir(), "wp-codebox-batch-local-"));
after(() => rmSync(work, { recursive: true, force: true }));
const quiet: BatchProgress = { taskDone() {}, note() {}, stop() {} };

test("6 mixed tasks, one failing: 6 verifying bundles, report.json, junit.xml, exit 1; a re-run keeps verified bundles and redoes a tampered one", { timeout: 600_000 }, async () => {
  const out = join(work, "out");
  const run = startCli(["batch", join(FIXTURES, "tasks.jsonl"), "--artifacts", out, "--concurrency", "2", "--json"]);
  const { code } = await run.exited;
  assert.equal(code, 1, run.output());
  const report = await readVerifiedReport(out);
  assert.equal(report.mode, "local");
  assert.deepEqual(
    report.tasks.map((t) => [t.id, t.kind, t.status, t.exitCode]),
    [
      ["recipe-pass", "recipe", "passed", 0],
      ["recipe-fail", "recipe", "failed", 1],
      ["episode-pass", "episode", "passed", 0],
      ["recipe-wp65", "recipe", "passed", 0],
      ["episode-php83", "episode", "passed", 0],
      ["recipe-again", "recipe", "passed", 0],
    ],
  );
  assert.equal(report.tasks[1]!.error?.code, "expectation-failed");
  // Per-task clock and seed reach the sandbox and its bundle.
  const determinism = (id: string) => (JSON.parse(readFileSync(join(out, id, "metadata.json"), "utf8")) as { runtime: { determinism?: unknown } }).runtime.determinism;
  assert.deepEqual(determinism("recipe-again"), { clock: "virtual", start: "2030-01-02T03:04:05.000Z", seed: 7, origin: "stable" });
  assert.deepEqual(determinism("episode-php83"), { clock: "virtual", start: "2030-01-02T03:04:05.000Z", seed: 42, origin: "stable" });
  assert.equal((determinism("recipe-pass") as { clock: string }).clock, "real");
  assert.ok(report.tasks.every((t) => t.bundle && t.durationMs > 0));
  assert.deepEqual(report.counts, { total: 6, passed: 5, failed: 1, resumed: 0 });
  const junit = readFileSync(join(out, "junit.xml"), "utf8");
  assert.match(junit, /<testsuite name="tasks.jsonl" tests="6" failures="1" errors="0"/);
  assert.match(junit, /<testcase classname="recipe" name="recipe-fail"[^>]*>\n\s*<failure type="expectation-failed"/);
  // --json prints the report; progress lines went to stderr.
  assert.match(run.output(), /\[6\/6\]/);
  assert.match(run.output(), /error\[batch-failed\]: 1 of 6 task\(s\) failed/);
  assert.equal(existsSync(join(out, ".wp-codebox-batch", "staging")), false);

  // Tamper with one bundle: the re-run keeps five and runs that one again.
  const review = join(out, "episode-pass", "files", "review.json");
  writeFileSync(review, readFileSync(review, "utf8").replace("{", '{"tampered":true,'));
  const progress: string[] = [];
  // The re-run also covers in-process isolation (every sandbox in this process).
  const again = await runLocalBatch({ tasksFile: join(FIXTURES, "tasks.jsonl"), artifactsDir: out, concurrency: 2, isolation: "in-process", log: () => undefined, progress: { ...quiet, taskDone: (r) => void progress.push(`${r.id}:${r.resumed ? "kept" : "ran"}`) } });
  assert.equal(again.exitCode, 1);
  assert.deepEqual(progress.sort(), ["episode-pass:ran", "episode-php83:kept", "recipe-again:kept", "recipe-fail:kept", "recipe-pass:kept", "recipe-wp65:kept"]);
  const second: BatchReport = await readVerifiedReport(out);
  assert.deepEqual(second.counts, { total: 6, passed: 5, failed: 1, resumed: 5 });
  assert.equal(second.tasks[0]!.bundle!.id, report.tasks[0]!.bundle!.id);
});

test("a task whose sandbox process is killed fails alone as sandbox-crashed; the batch goes on; a matrix recipe runs one task per cell", { timeout: 600_000 }, async () => {
  const out = join(work, "crash");
  const outcome = await runLocalBatch({
    tasksFile: join(FIXTURES, "crash.jsonl"),
    artifactsDir: out,
    concurrency: 2,
    log: () => undefined,
    progress: quiet,
    onTaskStart: ({ id, pid }) => {
      if (id === "crash-me") setTimeout(() => process.kill(pid, "SIGKILL"), 300);
    },
  });
  assert.equal(outcome.exitCode, 1);
  const report = await readVerifiedReport(out);
  assert.deepEqual(report.tasks.map((t) => [t.id, t.status]), [["cells.wp-default-php-8.2", "passed"], ["cells.wp-default-php-8.3", "passed"], ["crash-me", "failed"]]);
  const [cell82, cell83, crashed] = report.tasks;
  assert.deepEqual(cell82!.matrix, { task: "cells", wp: null, php: "8.2" });
  assert.deepEqual(cell83!.matrix, { task: "cells", wp: null, php: "8.3" });
  const php = (id: string) => (JSON.parse(readFileSync(join(out, id, "metadata.json"), "utf8")) as { versions: { php: string } }).versions.php;
  assert.match(php("cells.wp-default-php-8.2"), /^8\.2/);
  assert.match(php("cells.wp-default-php-8.3"), /^8\.3/);
  assert.equal(crashed!.status, "failed");
  assert.equal(crashed!.bundle, null);
  assert.equal(crashed!.error?.code, "sandbox-crashed");
  assert.match(crashed!.error!.message, /signal SIGKILL/);
  assert.equal(existsSync(join(out, "crash-me")), false);
  assert.match(readFileSync(join(out, "junit.xml"), "utf8"), /<error type="sandbox-crashed"/);
});
