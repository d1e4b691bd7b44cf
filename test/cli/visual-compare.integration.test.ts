/**
 * Integration (real WordPress, real Chromium, the CLI): screenshot steps compared with baselines.
 * `run --update-baselines` writes the baselines beside the script; the next run passes on the
 * unchanged page (a changing number masked), passes a changed page within maxDiffPixelRatio, and
 * fails it at the defaults with exit 1 and the diff image in the bundle. A baseline path outside
 * the script's folder is refused before boot. Two sandboxes: one per `run`.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";

const plugin = join(REPO_ROOT, "test/fixtures/plugins/visual-page");
let tmp: string;
let scripts: string;

const panel = (variant: string, compare: Record<string, unknown>) => [
  { kind: "navigate", url: `/?visual=${variant}` },
  { kind: "screenshot", selector: "#panel", mask: ["#random"], ...compare },
];
/** First run writes these baselines; the second compares against them. */
const baselineScript = [...panel("a", { name: "panel", compare: "baselines/panel.png" })];
const compareScript = [
  ...panel("a", { name: "unchanged", compare: "baselines/panel.png" }),
  ...panel("b", { name: "changed-within-ratio", compare: "baselines/panel.png", maxDiffPixelRatio: 0.5 }),
  ...panel("b", { name: "changed", compare: "baselines/panel.png" }),
];

const run = (script: string, artifacts: string, extra: string[] = []) =>
  spawnCli(["run", "--plugin", plugin, "--command", "wordpress.browser-actions", "--arg", `steps-json=@${script}`, "--arg", "as=anonymous", "--artifacts", artifacts, "--json", ...extra]);

before(() => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-visual-"));
  scripts = join(tmp, "scripts");
  mkdirSync(scripts);
  writeFileSync(join(scripts, "baseline.json"), JSON.stringify(baselineScript));
  writeFileSync(join(scripts, "compare.json"), JSON.stringify(compareScript));
  writeFileSync(join(scripts, "escape.json"), JSON.stringify([{ kind: "screenshot", compare: "../outside.png" }]));
  // A decompression bomb's header: 30000x30000 pixels claimed in a few bytes (decoded: 3.6 GB).
  const bomb = Buffer.alloc(97);
  bomb.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  bomb.writeUInt32BE(30000, 16);
  bomb.writeUInt32BE(30000, 20);
  bomb.set([8, 6, 0, 0, 0], 24);
  mkdirSync(join(scripts, "bombs"));
  writeFileSync(join(scripts, "bombs", "huge.png"), bomb);
  writeFileSync(join(scripts, "bomb.json"), JSON.stringify([{ kind: "screenshot", compare: "bombs/huge.png" }]));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test("a baseline outside the script's folder is refused before boot: path-not-allowed, exit 2", async () => {
  const dir = join(tmp, "escape");
  const result = await run(join(scripts, "escape.json"), dir, ["--update-baselines"]);
  assert.equal(result.code, 2, show(result));
  assert.match(result.stderr, /path-not-allowed.*outside\.png is outside the script's folder/s);
  assert.doesNotMatch(result.stderr, /Booting/);
  assert.equal(existsSync(join(tmp, "outside.png")), false);
});

test("a baseline whose header claims 30000x30000 pixels is refused before boot: input-file-invalid, exit 2, nothing decoded", async () => {
  const result = await run(join(scripts, "bomb.json"), join(tmp, "bomb"));
  assert.equal(result.code, 2, show(result));
  assert.match(result.stderr, /input-file-invalid.*The baseline bombs\/huge\.png is 30000x30000 pixels \(900000000\), more than the \d+ a screenshot comparison decodes/s);
  assert.doesNotMatch(result.stderr, /Booting/);
});

test("--update-baselines writes the baseline beside the script, then the page compares: unchanged and within limits pass, changed fails with exit 1 and a diff", async () => {
  const first = await run(join(scripts, "baseline.json"), join(tmp, "update"), ["--update-baselines"]);
  assert.equal(first.code, 0, show(first));
  const written = join(scripts, "baselines/panel.png");
  assert.deepEqual(JSON.parse(first.stdout).result.json.baselinesUpdated, [written]);
  assert.deepEqual(readFileSync(written), readFileSync(join(tmp, "update/files/browser/screenshot-panel.png")));

  const dir = join(tmp, "compare");
  const second = await run(join(scripts, "compare.json"), dir);
  assert.equal(second.code, 1, show(second));
  const result = JSON.parse(second.stdout).result;
  assert.equal(result.error.code, "assertion-failed");
  assert.match(result.error.message, /step 5 \(screenshot #panel\): screenshot step 5: \d+ pixels \([\d.]+% of 44800\) differ from the baseline at threshold 0\.2; allowed: 0/);
  assert.match(second.stderr, /differ from the baseline/);
  assert.deepEqual(result.json.steps.map((s: { status: string }) => s.status), ["ok", "ok", "ok", "ok", "ok", "failed"]);

  assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
  const steps = readFileSync(join(dir, "files/browser/steps.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const comparisons = steps.filter((s) => s.comparison).map((s) => s.comparison);
  assert.deepEqual(comparisons.map((c) => [c.passed, c.diffPixels === 0, c.width, c.height, c.maxDiffPixelRatio]), [
    [true, true, 320, 140, undefined],
    [true, false, 320, 140, 0.5],
    [false, false, 320, 140, undefined],
  ]);
  const failed = comparisons[2];
  assert.deepEqual([failed.actual, failed.baseline, failed.diff], ["files/browser/screenshot-changed.png", "files/browser/baseline-changed.png", "files/browser/diff-changed.png"]);
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { files: { path: string }[] };
  for (const path of [failed.actual, failed.baseline, failed.diff]) assert.ok(manifest.files.some((f) => f.path === path), path);
  assert.deepEqual(readFileSync(join(dir, failed.baseline)), readFileSync(written));
  const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8"));
  assert.deepEqual([review.assertions.total, review.assertions.failed], [3, 1]);
});
