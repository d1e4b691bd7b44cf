/**
 * Lanes: `batch --concurrency 2` keeps each lane's sandbox and recycles it between tasks of one
 * runtime. One batch carries every probe: 60 tasks that each look for every trace an earlier task
 * could leave (option, wp-content and upload files, transient, object cache, cron event, user,
 * login session, must-use plugin, in-memory file, a deleted PHP file, process environment, a
 * secret of another task; in the browser: cookie, localStorage, sessionStorage, a login) and then
 * leave each one themselves, so the next task on that sandbox
 * fails if anything leaked; seeded tasks of another runtime that must print the same bytes first
 * or later in their lane; a task with a secret.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { runLocalBatch, type BatchProgress } from "@wp-codebox/batch";
import { FIXTURES, readVerifiedReport } from "./spawn.js";

const work = mkdtempSync(join(tmpdir(), "wp-codebox-batch-lanes-"));
after(() => rmSync(work, { recursive: true, force: true }));
const quiet: BatchProgress = { taskDone() {}, note() {}, stop() {} };

const events = (dir: string) => readFileSync(join(dir, "files", "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
const firstStdout = (dir: string) => (JSON.parse(readFileSync(join(dir, "files", "commands.jsonl"), "utf8").split("\n")[0]!) as { stdout: string }).stdout;

test("68 tasks on 2 lanes: no task sees another's traces, seeded output repeats on a recycled sandbox, every bundle verifies", { timeout: 900_000 }, async () => {
  const out = join(work, "out");
  const outcome = await runLocalBatch({
    tasksFile: join(FIXTURES, "lanes", "tasks.jsonl"),
    artifactsDir: out,
    concurrency: 2,
    env: { ...process.env, WP_CODEBOX_BATCH_TEST_SECRET: "s3cret-value-21-chars" },
    log: () => undefined,
    progress: quiet,
  });
  const report = await readVerifiedReport(out);
  const failed = report.tasks.filter((t) => t.status !== "passed").map((t) => `${t.id}: ${t.error?.code} ${t.error?.message}`);
  assert.deepEqual(failed, []);
  assert.equal(outcome.exitCode, 0);
  assert.deepEqual(report.counts, { total: 68, passed: 68, failed: 0, resumed: 0 });

  // The probes prove something only if later ones ran on a sandbox an earlier one used.
  const recycled = report.tasks.filter((t) => events(join(out, t.id)).some((e) => e.type === "runtime-recycled"));
  const restarted = recycled.filter((t) => events(join(out, t.id)).some((e) => e.type === "runtime-recycled" && e.data?.workers !== "restored"));
  // One boot per lane and runtime (probes, browser probes, seeded, secret): at most 8 of 68 tasks boot.
  assert.ok(recycled.length >= 60, `only ${recycled.length} task(s) ran on a recycled sandbox`);
  assert.deepEqual(restarted.map((t) => t.id), [], "a recycle replaced the PHP workers (as slow as a boot)");

  // Seeded tasks: the same random bytes and the same instants, to the microsecond, on a fresh sandbox and on a recycled one.
  const seeded = ["seeded-1", "seeded-2", "seeded-3", "seeded-4"].map((id) => ({ id, recycled: recycled.some((t) => t.id === id), out: JSON.parse(firstStdout(join(out, id))) as { time: number; bytes: string; mt: number } }));
  assert.ok(seeded.some((s) => s.recycled) && seeded.some((s) => !s.recycled), JSON.stringify(seeded));
  for (const s of seeded) {
    assert.equal(s.out.bytes, seeded[0]!.out.bytes, s.id);
    assert.equal(s.out.mt, seeded[0]!.out.mt, s.id);
    assert.equal(s.out.time, seeded[0]!.out.time, s.id);
  }
  // Browser probes (cookie, localStorage, sessionStorage, a login) ran on recycled sandboxes too, and saw nothing.
  assert.ok(["browser-2", "browser-3"].some((id) => recycled.some((t) => t.id === id)), "a browser probe ran on a recycled sandbox");
  // The secret task ran on a sandbox of its own (its value is part of the runtime key) and no probe saw it.
  assert.ok(!recycled.some((t) => t.id === "secret"));
});
