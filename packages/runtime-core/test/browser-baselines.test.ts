/**
 * Baselines of screenshot steps: the step fields validate as a unit, and every compare path must
 * name a .png inside the script's folder (symlinks followed), before anything boots.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WpCodeboxError, assertBrowserBaselines, browserScriptFolder, checkBrowserBaselines, readBrowserScriptArgs, validateBrowserInteractionScript } from "@wp-codebox/runtime-core";

const root = realpathSync(mkdtempSync(join(tmpdir(), "wp-codebox-baselines-")));
const folder = join(root, "scripts");
const outside = join(root, "elsewhere");
mkdirSync(join(folder, "baselines"), { recursive: true });
mkdirSync(outside);
symlinkSync(outside, join(folder, "link-out"));
after(() => rmSync(root, { recursive: true, force: true }));

const shot = (compare: string) => ({ kind: "screenshot", compare });

test("compare-only fields without compare, and bad values, are refused with their field", () => {
  const cases: [unknown, string, RegExp][] = [
    [{ kind: "screenshot", threshold: 0.1 }, "/0/threshold", /only apply with compare/],
    [{ kind: "screenshot", maxDiffPixels: 3, maxDiffPixelRatio: 0.1 }, "/0/maxDiffPixels", /maxDiffPixels, maxDiffPixelRatio only apply with compare/],
    [{ kind: "screenshot", compare: "a.png", threshold: 1.5 }, "/0/threshold", /1/],
    [{ kind: "screenshot", compare: "a.png", maxDiffPixels: -1 }, "/0/maxDiffPixels", /0/],
    [{ kind: "screenshot", compare: "a.png", maxDiffPixels: 1.5 }, "/0/maxDiffPixels", /integer/],
    [{ kind: "screenshot", compare: "a.png", maxDiffPixelRatio: 2 }, "/0/maxDiffPixelRatio", /1/],
    [{ kind: "screenshot", compare: "" }, "/0/compare", /./],
    [{ kind: "screenshot", mask: [] }, "/0/mask", /./],
    [{ kind: "screenshot", mask: [""] }, "/0/mask/0", /./],
  ];
  for (const [step, path, message] of cases) {
    const result = validateBrowserInteractionScript([step]);
    assert.equal(result.valid, false, JSON.stringify(step));
    assert.equal(result.issues[0]!.path, path, JSON.stringify(result.issues));
    assert.match(result.issues[0]!.message, message);
  }
  // A mask alone is fine: it paints over a plain screenshot too.
  assert.equal(validateBrowserInteractionScript([{ kind: "screenshot", mask: [".date"] }]).valid, true);
});

test("compare paths inside the script's folder resolve; outside, through a symlink out, or not .png are refused", () => {
  const cases: [string, "ok" | RegExp][] = [
    ["home.png", "ok"],
    ["baselines/home.png", "ok"],
    ["baselines/new/not-yet.PNG", "ok"],
    ["../elsewhere/home.png", /^path-not-allowed: baseline .*elsewhere\/home\.png is outside the script's folder/],
    [join(outside, "abs.png"), /^path-not-allowed:/],
    ["link-out/home.png", /^path-not-allowed:/],
    ["baselines/../../x.png", /^path-not-allowed:/],
    ["home.jpg", /must name a \.png file/],
    ["baselines", /must name a \.png file/],
  ];
  for (const [compare, expected] of cases) {
    const { baselines, issues } = checkBrowserBaselines([shot(compare)], folder);
    if (expected === "ok") {
      assert.deepEqual(issues, [], compare);
      assert.equal(baselines[0]!.path, join(folder, compare), compare);
    } else {
      assert.equal(baselines.length, 0, compare);
      assert.match(issues[0]!.message, expected, compare);
    }
  }
});

test("assertBrowserBaselines throws path-not-allowed listing every refused step", () => {
  assert.throws(
    () => assertBrowserBaselines([{ kind: "navigate" }, shot("../a.png"), shot("ok.png"), shot("link-out/b.png")], folder),
    (error: unknown) => {
      assert.ok(error instanceof WpCodeboxError);
      assert.equal(error.code, "path-not-allowed");
      assert.deepEqual((error.details as { issues: { index: number }[] }).issues.map((i) => i.index), [1, 3]);
      return true;
    },
  );
});

test("the script's folder is the @file's folder, else the cwd; readBrowserScriptArgs checks baselines", () => {
  const file = join(folder, "flow.json");
  writeFileSync(file, JSON.stringify([{ kind: "navigate", url: "/" }, shot("../escape.png")]));
  assert.equal(browserScriptFolder({ "steps-json": `@${file}` }, "/"), folder);
  assert.equal(browserScriptFolder({ "steps-json": "@scripts/flow.json" }, root), folder);
  assert.equal(browserScriptFolder({ "steps-json": "[]" }, root), root);
  assert.throws(() => readBrowserScriptArgs({ "steps-json": `@${file}` }, "/"), (e: unknown) => e instanceof WpCodeboxError && e.code === "path-not-allowed");
  // The same path is fine for an inline script run from a folder that contains it.
  assert.equal(readBrowserScriptArgs({ "steps-json": JSON.stringify([shot("scripts/x.png")]) }, root).length, 1);
});
