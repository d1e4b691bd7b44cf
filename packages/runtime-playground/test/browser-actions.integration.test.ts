/**
 * Integration: `wordpress.browser-actions` on a real WordPress and Chromium: a script drives a real
 * admin UI (drag, fill, select, save) and its effect is checked in the database; an invalid script
 * lists every issue with its index and field; a failing second step stops the run with its own
 * record and a screenshot; `evaluate` steps need their own capability. One runtime shared by the file.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WpCodeboxError, verifyArtifactBundle, writeArtifactBundle } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/plugins/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-browser-"));
let runtime: PlaygroundRuntime;

before(async () => {
  runtime = await createPlaygroundBackend().create({
    plugins: [join(fixtures, "sortable-board")],
    policy: { commands: ["wordpress.browser-actions", "wordpress.browser-probe", "wordpress.run-php"] },
  });
});
after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const board = [
  { kind: "navigate", url: "/wp-admin/tools.php?page=sortable-board" },
  { kind: "expect", selector: "#board .board-item", state: "visible", count: 3 },
  { kind: "drag", from: "#board .board-item[data-id='gamma']", to: "#board .board-item[data-id='alpha']" },
  { kind: "fill", selector: "#caption", value: "Sprint 42" },
  { kind: "select", selector: "#color", value: "blue" },
  { kind: "hover", selector: "#hint" },
  { kind: "expect", selector: "#hint-shown", state: "visible" },
  { kind: "click", selector: "role=button[name='Save board']" },
  { kind: "expect", selector: "#board-saved", state: "visible" },
  { kind: "expect", selector: "#stored-order", state: "visible", text: "gamma" },
  { kind: "screenshot", name: "after save" },
];

test("the sortable board is driven as admin; every step ok, all assertions pass", async () => {
  const result = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify(board)}`] });
  const summary = result.json as { steps: { status: string }[]; assertions: { total: number; passed: number; failed: number } };
  assert.equal(result.status, "ok", result.stdout);
  assert.ok(summary.steps.every((s) => s.status === "ok"));
  assert.equal(summary.assertions.failed, 0);
  assert.equal(summary.assertions.total, summary.assertions.passed);
  assert.equal(summary.assertions.total, 4);
  const stored = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('corpus_sortable_board')['order'];"] });
  assert.match(stored.stdout, /^gamma,/);
});

test("a failing second step is recorded and nothing after it runs", async () => {
  const steps = [
    { kind: "navigate", url: "/wp-admin/tools.php?page=sortable-board" },
    { kind: "click", selector: "#does-not-exist", timeout: 1000 },
    { kind: "fill", selector: "#caption", value: "never" },
  ];
  const result = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify(steps)}`] });
  assert.equal(result.status, "error");
  const summary = result.json as { steps: { index: number; status: string }[] };
  assert.deepEqual(summary.steps.map((s) => s.status), ["ok", "failed", "skipped"]);
  assert.equal((result.error?.data as { index: number }).index, 1);
});

test("an evaluate step without the capability is denied before any step runs", async () => {
  const steps = [{ kind: "navigate", url: "/" }, { kind: "evaluate", expression: "1 + 1", assert: 2 }];
  await assert.rejects(
    runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify(steps)}`] }),
    (error: unknown) => error instanceof WpCodeboxError && error.code === "policy-denied",
  );
});

test("an invalid script lists every issue with its index; nothing runs", async () => {
  const steps = [{ kind: "teleport" }, { kind: "click" }, { kind: "drag", from: "#a" }];
  await assert.rejects(runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify(steps)}`] }), (error: unknown) => {
    assert.ok(error instanceof WpCodeboxError);
    assert.equal(error.code, "invalid-steps-json");
    const issues = (error.data as { issues: { index: number }[] }).issues;
    assert.deepEqual([...new Set(issues.map((i) => i.index))].sort(), [0, 1, 2]);
    return true;
  });
});

test("browser-probe renders the front page anonymously", async () => {
  const result = await runtime.execute({ command: "wordpress.browser-probe", args: ["url=/", "as=anonymous"] });
  assert.equal(result.status, "ok", result.stdout);
  assert.equal((result.json as { httpStatus: number }).httpStatus, 200);
  assert.match((result.json as { title: string }).title, /wp-codebox/);
});

test("publish a post through the block editor, then see it on the front end", async () => {
  const script = readFileSync(fileURLToPath(new URL("../../../examples/browser/block-editor-publish.json", import.meta.url)), "utf8");
  // 60 s a step: on a loaded CI machine the title field was present at once but its click waited
  // out 30 s (the step error does not say what held it).
  const result = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${script}`, "step-timeout=60s", "timeout=300s"] });
  assert.equal(result.status, "ok", result.stdout);
  const summary = result.json as { finalUrl: string; assertions: { failed: number } };
  assert.equal(summary.assertions.failed, 0);
  const post = await runtime.execute({
    command: "wordpress.run-php",
    args: ["code=<?php $p = get_posts(['post_status' => 'publish', 'title' => 'Hello from wp-codebox']); echo json_encode(['n' => count($p), 'content' => $p ? $p[0]->post_content : '']);"],
  });
  assert.equal((post.json as { n: number }).n, 1);
  assert.match((post.json as { content: string }).content, /A paragraph typed in the editor\./);
});

test("the bundle carries steps, summary, screenshots and the review assertions, and verifies", async () => {
  const dir = join(scratch, "bundle");
  await writeArtifactBundle(dir, await runtime.collectArtifacts());
  assert.deepEqual((await verifyArtifactBundle(dir)).violations, []);
  const steps = readFileSync(join(dir, "files/browser/steps.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.ok(steps.length >= board.length + 3, "steps of every browser command are appended");
  assert.ok(existsSync(join(dir, "files/browser/screenshot-after-save.png")));
  const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8"));
  assert.equal(review.assertions.total, review.assertions.passed + review.assertions.failed);
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
  const kinds = new Set(manifest.files.map((f: { kind: string }) => f.kind));
  for (const kind of ["browser-steps", "browser-action-summary", "browser-screenshot", "browser-console", "browser-network"]) assert.ok(kinds.has(kind), kind);
});
