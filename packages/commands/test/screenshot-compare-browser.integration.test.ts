/**
 * Chromium: screenshot steps with `compare` in the script runner, against a small local page
 * (node:http, no WordPress): a mask hides a changing region, limits are honoured, a missing
 * baseline fails with what to do, and `--update-baselines` marks the image and writes it inside
 * the script's folder only.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import type { BrowserInteractionStep } from "@wp-codebox/runtime-core";
import { launchBrowser } from "../src/browser/launch-browser.js";
import { runBrowserInteractionScript } from "../src/browser/run-browser-script.js";
import type { StepBaseline } from "../src/browser/run-step.js";
import { readStepBaselines, writeUpdatedBaselines } from "../src/browser/step-baselines.js";

let browser: Browser;
let server: http.Server;
let baseUrl: string;
let hits = 0;
const folder = realpathSync(mkdtempSync(join(tmpdir(), "wp-codebox-compare-")));

// A fixed panel, plus a number that changes on every load; `?v=b` changes one word.
const page = (variant: string) => `<!doctype html><title>Panel</title>
<style>body{margin:0;font:16px sans-serif} #panel{width:300px;height:120px;background:#234;color:#fff;padding:10px} #random{display:inline-block;width:120px}</style>
<div id="panel"><p id="word">${variant === "b" ? "Changed" : "Stable"} heading</p><span id="random">${(hits++ * 7919) % 100000}</span></div>`;

before(async () => {
  server = http.createServer((req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(page(new URL(req.url ?? "/", "http://x").searchParams.get("v") ?? "a"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(folder, { recursive: true, force: true });
});

const shoot = (extra: Record<string, unknown>, v = "a"): BrowserInteractionStep[] => [
  { kind: "navigate", url: `/?v=${v}` },
  { kind: "screenshot", name: "panel", selector: "#panel", compare: "panel.png", ...extra } as BrowserInteractionStep,
];

async function run(steps: BrowserInteractionStep[], options: { baselines?: Map<number, StepBaseline>; update?: boolean } = {}) {
  const baselines = options.baselines ?? readStepBaselines(steps, folder, options.update ?? false);
  return runBrowserInteractionScript(browser, { baseUrl, steps, allowEvaluate: false, executionId: "exec-1", baselines, updateBaselines: options.update ?? false });
}

test("--update-baselines: the image is marked, written inside the folder, and nothing is compared", async () => {
  const steps = shoot({ mask: ["#random"] });
  const outcome = await run(steps, { update: true });
  assert.equal(outcome.status, "ok", JSON.stringify(outcome.error));
  assert.equal(outcome.steps[1]!.baselineUpdated, "panel.png");
  assert.equal(outcome.steps[1]!.comparison, undefined);
  assert.equal(outcome.assertions.total, 0);
  assert.deepEqual(writeUpdatedBaselines(outcome.screenshots, folder), [join(folder, "panel.png")]);
  assert.deepEqual(new Uint8Array(readFileSync(join(folder, "panel.png"))), outcome.screenshots[0]!.bytes);
});

test("the same page with the changing number masked passes; unmasked it fails on that number alone", async () => {
  const masked = await run(shoot({ mask: ["#random"] }));
  assert.equal(masked.status, "ok", JSON.stringify(masked.error));
  const comparison = masked.steps[1]!.comparison!;
  assert.deepEqual(
    { passed: comparison.passed, diffPixels: comparison.diffPixels, threshold: comparison.threshold, baseline: comparison.baseline, actual: comparison.actual, diff: comparison.diff },
    { passed: true, diffPixels: 0, threshold: 0.2, baseline: "files/browser/baseline-panel.png", actual: "files/browser/screenshot-panel.png", diff: "files/browser/diff-panel.png" },
  );
  assert.deepEqual(masked.assertions.results.map((a) => [a.kind, a.passed]), [["screenshot", true]]);
  assert.ok(masked.screenshots[0]!.baseline && masked.screenshots[0]!.diff, "baseline and diff images travel with the screenshot");

  const unmasked = await run(shoot({}));
  assert.equal(unmasked.status, "error");
  assert.equal(unmasked.error?.code, "assertion-failed");
  assert.match(unmasked.error!.message, /^screenshot step 1: \d+ pixels \([\d.]+% of \d+\) differ from the baseline at threshold 0\.2; allowed: 0 \(baseline panel\.png\)\. See files\/browser\/diff-panel\.png/);
  assert.equal(unmasked.steps[1]!.status, "failed");
  assert.equal(unmasked.steps[1]!.screenshot, "panel", "the compared image is the step's screenshot, no extra failure shot");
  assert.equal(unmasked.steps[1]!.comparison?.passed, false);
});

test("a changed word fails by default and passes within maxDiffPixelRatio / maxDiffPixels", async () => {
  const strict = await run(shoot({ mask: ["#random"] }, "b"));
  assert.equal(strict.status, "error");
  const diffPixels = strict.steps[1]!.comparison!.diffPixels;
  assert.ok(diffPixels > 0);
  const ratio = strict.steps[1]!.comparison!.diffPixelRatio;
  for (const [limits, passes] of [
    [{ maxDiffPixels: diffPixels }, true],
    [{ maxDiffPixels: diffPixels - 1 }, false],
    [{ maxDiffPixelRatio: Math.min(1, ratio * 1.01) }, true],
    [{ maxDiffPixelRatio: ratio * 0.5 }, false],
    [{ threshold: 1 }, true],
  ] as const) {
    const outcome = await run(shoot({ mask: ["#random"], ...limits }, "b"));
    assert.equal(outcome.status === "ok", passes, JSON.stringify({ limits, error: outcome.error }));
    assert.deepEqual(Object.fromEntries(Object.keys(limits).map((k) => [k, (outcome.steps[1]!.comparison as unknown as Record<string, unknown>)[k]])), limits);
  }
});

test("a different size fails naming both sizes", async () => {
  const outcome = await run([{ kind: "navigate", url: "/" }, { kind: "screenshot", name: "panel", compare: "panel.png", mask: ["#random"] } as BrowserInteractionStep]);
  assert.equal(outcome.error?.code, "assertion-failed");
  assert.match(outcome.error!.message, /the screenshot is 1280x720 pixels but the baseline is 320x140/);
});

test("a missing baseline fails the step with baseline-missing and says what --update-baselines does", async () => {
  const steps = [{ kind: "navigate", url: "/" }, { kind: "screenshot", compare: "baselines/none.png" }] as BrowserInteractionStep[];
  const outcome = await run(steps);
  assert.equal(outcome.error?.code, "baseline-missing");
  assert.match(outcome.error!.message, /the baseline baselines\/none\.png does not exist .*Run again with --update-baselines to save this screenshot there as the baseline/);
  assert.equal(outcome.screenshots.length, 1, "the screenshot that would become the baseline is kept");
  assert.equal(existsSync(join(folder, "baselines")), false);
});
