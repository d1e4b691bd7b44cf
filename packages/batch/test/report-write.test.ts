/**
 * A batch report that cannot be written (the disk failed during the batch) is kept in memory and
 * returned with `artifacts-dir-unwritable`, not thrown as an internal error.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { BatchTaskResult } from "@wp-codebox/runtime-core";
import { buildReport, writeReportOrKeep } from "@wp-codebox/batch";

const dir = mkdtempSync(join(tmpdir(), "wp-codebox-batch-report-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const results: BatchTaskResult[] = [{ id: "a", kind: "recipe", status: "passed", exitCode: 0, durationMs: 5, bundle: { id: "artifact-bundle-sha256-aa", digest: "aa" } }];
const context = { tasksFile: "/x/tasks.jsonl", artifactsDir: dir, mode: "local" as const, concurrency: 1, startedAt: new Date("2030-01-01T00:00:00Z"), finishedAt: new Date("2030-01-01T00:00:01Z") };

test("writeReportOrKeep: written when it can be; a filesystem failure is returned, naming its cause", () => {
  const report = buildReport(["a"], results, context);
  const ok = writeReportOrKeep(join(dir, "out"), report);
  assert.equal(ok.error, undefined);
  assert.equal(JSON.parse(readFileSync(ok.files.reportFile, "utf8")).counts.passed, 1);

  const blocker = join(dir, "now-a-file");
  writeFileSync(blocker, "x");
  const rows: Array<[string, string, string]> = [
    ["a folder under a file", join(blocker, "out"), "ENOTDIR"],
    ["a 300-character folder name", join(dir, "r".repeat(300)), "ENAMETOOLONG"],
  ];
  for (const [name, target, cause] of rows) {
    const lost = writeReportOrKeep(target, report);
    assert.equal(lost.error?.code, "artifacts-dir-unwritable", name);
    assert.equal(lost.error?.data?.cause, cause, name);
    assert.equal(lost.files.reportFile, join(target, "report.json"), name);
  }
});
