/**
 * A ledger past its memory budget keeps large output and file contents in files, and hands back
 * exactly what a ledger that kept everything in memory does: the same results, the same files
 * (a .jsonl file appended across commands included), whole or per execution.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ArtifactFile, ExecutionResult, RuntimeInfo } from "@wp-codebox/runtime-core";
import { EvidenceLedger } from "../src/evidence/evidence-ledger.js";
import type { CommandOutcome } from "@wp-codebox/commands";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-spill-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const info: RuntimeInfo = { id: "runtime-test", backend: "test", wordpressVersion: "6.5.5", phpVersion: "8.3" } as RuntimeInfo;
const big = (seed: string, size: number) => seed.repeat(Math.ceil(size / seed.length)).slice(0, size);

function result(n: number, stdout: string, extra: Partial<ExecutionResult> = {}): ExecutionResult {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
  return { id: `exec-${n}`, command: "wordpress.browser-actions", args: [], status: "ok", exitCode: 0, stdout, stderr: n % 2 ? big("warn ", 6000) : "", startedAt: at, finishedAt: at, durationMs: 1, ...extra };
}

function outcome(files: ArtifactFile[]): CommandOutcome {
  return { status: "ok", exitCode: 0, stdout: "", stderr: "", files };
}

/** The same work recorded into a ledger: big and small output, JSON, a PNG, a page replaced, steps.jsonl across commands. */
function record(ledger: EvidenceLedger): void {
  const png = new Uint8Array(50_000).map((_, i) => (i * 7) % 256);
  ledger.recordCommand(result(1, big("<p>page</p>", 40_000)), outcome([
    { path: "files/browser/screenshot-a.png", kind: "browser-screenshot", contentType: "image/png", content: png },
    { path: "files/browser/steps.jsonl", kind: "browser-steps", contentType: "application/x-ndjson", content: `${big('{"step":1}', 9000)}\n` },
  ]));
  ledger.recordCommand(result(2, "small", { json: { body: big("x", 30_000), status: 200 } }), outcome([
    { path: "files/browser/steps.jsonl", kind: "browser-steps", contentType: "application/x-ndjson", content: `${big('{"step":2}', 9000)}\n` },
    { path: "files/browser/page.html", kind: "browser-html", contentType: "text/html", content: big("<b>1</b>", 20_000) },
  ]));
  ledger.recordCommand(result(3, ""), outcome([
    { path: "files/browser/steps.jsonl", kind: "browser-steps", contentType: "application/x-ndjson", content: '{"step":3}\n' },
    { path: "files/browser/page.html", kind: "browser-html", contentType: "text/html", content: big("<b>2</b>", 20_000) },
  ]));
  ledger.recordCommand(result(4, "timed out"), "timed-out");
}

/** What a bundle would be written from, with byte contents as arrays so that deepEqual compares them. */
function comparable(artifacts: ReturnType<EvidenceLedger["collect"]>) {
  return {
    results: artifacts.results.map((r) => ({ ...r })),
    files: artifacts.files.map((f) => ({ ...f, content: typeof f.content === "string" ? f.content : [...f.content] })),
    review: artifacts.review,
  };
}

describe("evidence past the memory budget goes to files, and comes back the same", () => {
  const memory = new EvidenceLedger();
  const spilled = new EvidenceLedger();
  const dir = join(scratch, "evidence");
  spilled.spillTo(dir, 0);
  record(memory);
  record(spilled);

  it("the whole collection is equal", () => {
    assert.deepEqual(comparable(spilled.collect(info, [], [])), comparable(memory.collect(info, [], [])));
    const steps = spilled.collect(info, [], []).files.find((f) => f.path === "files/browser/steps.jsonl")!;
    assert.deepEqual(String(steps.content).split("\n").filter(Boolean).map((l) => l.slice(0, 10)), ['{"step":1}', '{"step":2}', '{"step":3}']);
  });

  it("each execution's own part is equal, its .jsonl lines alone", () => {
    for (const id of ["exec-1", "exec-2", "exec-3"]) {
      assert.deepEqual(comparable(spilled.collect(info, [], [], { executions: [id] })), comparable(memory.collect(info, [], [], { executions: [id] })), id);
    }
    const first = spilled.collect(info, [], [], { executions: ["exec-1"] }).files.find((f) => f.path === "files/browser/steps.jsonl")!;
    assert.equal(String(first.content), `${big('{"step":1}', 9000)}\n`);
  });

  it("memory holds only small values; the large ones are files in the folder", () => {
    // A ledger with a folder and room to spare holds everything (and counts it).
    const roomy = new EvidenceLedger();
    roomy.spillTo(join(scratch, "roomy-count"));
    record(roomy);
    assert.ok(roomy.heldBytes > 200_000, String(roomy.heldBytes));
    assert.ok(spilled.heldBytes < 1_000, String(spilled.heldBytes));
    assert.ok(readdirSync(dir).length >= 8, readdirSync(dir).join(","));
  });

  it("reading a value twice gives equal content, and the record is not changed by it", () => {
    const a = spilled.collect(info, [], []);
    const b = spilled.collect(info, [], []);
    assert.equal(a.results[0]!.stdout, b.results[0]!.stdout);
    assert.deepEqual(a.results[1]!.json, { body: big("x", 30_000), status: 200 });
    (a.results[1]!.json as { status: number }).status = 500;
    assert.equal((spilled.collect(info, [], []).results[1]!.json as { status: number }).status, 200);
  });

  it("forget() removes the spilled files", () => {
    spilled.forget();
    assert.equal(existsSync(dir), false);
    assert.deepEqual(spilled.collect(info, [], []).results, []);
    assert.equal(spilled.heldBytes, 0);
  });

  it("under the budget nothing is written", () => {
    const roomy = new EvidenceLedger();
    const roomyDir = join(scratch, "roomy");
    roomy.spillTo(roomyDir);
    record(roomy);
    assert.equal(existsSync(roomyDir), false);
    assert.deepEqual(comparable(roomy.collect(info, [], [])), comparable(memory.collect(info, [], [])));
  });
});
