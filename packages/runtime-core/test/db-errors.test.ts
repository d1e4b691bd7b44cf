/**
 * Unit: database errors in results: a recipe step can demand none with
 * `expect: { dbErrors: 0 }`, and review.json counts them per command and in total.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RECIPE_EXPECT_SCHEMA, checkExpectations, validateAgainstSchema, verifyArtifactBundle, writeArtifactBundle, type ExecutionResult } from "@wp-codebox/runtime-core";

const query = "SELECT GROUP_CONCAT(post_title SEPARATOR '|') FROM wp_posts";
const base = { id: "exec-1", command: "wordpress.run-php", args: [], status: "ok", exitCode: 0, stdout: "", stderr: "", startedAt: "2026-01-01T00:00:00.000Z", finishedAt: "2026-01-01T00:00:00.001Z", durationMs: 1 } satisfies ExecutionResult;
const withError: ExecutionResult = { ...base, dbErrors: [{ query, message: 'near "SEPARATOR": syntax error' }] };

test("expect dbErrors: 0 fails on a step with a database error and names it; passes without", () => {
  assert.deepEqual(validateAgainstSchema(RECIPE_EXPECT_SCHEMA, { dbErrors: 0 }), []);
  assert.notDeepEqual(validateAgainstSchema(RECIPE_EXPECT_SCHEMA, { dbErrors: -1 }), []);
  const failed = checkExpectations({ dbErrors: 0 }, withError).find((c) => c.name === "dbErrors")!;
  assert.equal(failed.passed, false);
  assert.equal(failed.actual, 1);
  assert.match(failed.message, /expected 0 database errors, got 1 \(first: near "SEPARATOR": syntax error in SELECT GROUP_CONCAT/);
  assert.equal(checkExpectations({ dbErrors: 0 }, base).find((c) => c.name === "dbErrors")!.passed, true);
  assert.equal(checkExpectations({ dbErrors: 1 }, withError).find((c) => c.name === "dbErrors")!.passed, true);
  assert.equal(checkExpectations({}, withError).some((c) => c.name === "dbErrors"), false, "not checked unless asked: the run stays ok");
});

test("review.json counts database errors per command and in total; the bundle verifies", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-dberrors-"));
  try {
    const info = { id: "r", backend: "fake", wordpressVersion: "6.5.5", phpVersion: "8.3", siteUrl: "", bootMode: "installed", bootDurationMs: 0, mounts: [], policy: { commands: [] }, plugins: [], themes: [] };
    const bundle = await writeArtifactBundle(join(dir, "b"), { info: info as never, results: [withError, { ...base, id: "exec-2" }], events: [], files: [] });
    const review = JSON.parse(readFileSync(join(bundle.directory, "files/review.json"), "utf8")) as { status: string; dbErrors: number; commands: { dbErrors?: number }[] };
    assert.equal(review.status, "ok");
    assert.equal(review.dbErrors, 1);
    assert.deepEqual(review.commands.map((c) => c.dbErrors), [1, undefined]);
    const commands = readFileSync(join(bundle.directory, "files/commands.jsonl"), "utf8");
    assert.match(commands, /"dbErrors":\[\{"query":"SELECT GROUP_CONCAT/);
    assert.equal((await verifyArtifactBundle(bundle.directory)).valid, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
