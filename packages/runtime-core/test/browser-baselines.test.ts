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

test("compare paths inside the script's folder resolve; absolute, outside, through a symlink out, or not .png are refused", () => {
  const cases: [string, "ok" | RegExp][] = [
    ["home.png", "ok"],
    ["baselines/home.png", "ok"],
    ["baselines/new/not-yet.PNG", "ok"],
    ["../elsewhere/home.png", /^path-not-allowed: baseline .*elsewhere\/home\.png is outside the script's folder/],
    [join(outside, "abs.png"), /^path-not-allowed: compare ".*abs\.png" is an absolute path/],
    // Absolute is refused even inside the folder: a baseline is named where the script lives.
    [join(folder, "baselines", "home.png"), /^path-not-allowed: compare ".*home\.png" is an absolute path/],
    ["link-out/home.png", /^path-not-allowed:/],
    ["baselines/../../x.png", /^path-not-allowed:/],
    // Where the path points is checked before what it names: an escape is path-not-allowed whatever its suffix.
    ["../../etc/passwd", /^path-not-allowed: baseline .*passwd is outside/],
    ["/etc/passwd", /^path-not-allowed: compare "\/etc\/passwd" is an absolute path/],
    ["link-out/notes.txt", /^path-not-allowed:/],
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
      assert.deepEqual((error.data as { issues: { index: number }[] }).issues.map((i) => i.index), [1, 3]);
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

test("readBrowserScriptArgs reads each existing baseline's PNG header and chunks before boot: bombs, interlaced, empty, cut-short and non-PNG files are input-file-invalid", () => {
  const header = (width: number, height: number, interlace = 0) => {
    // The header, then empty IDAT and IEND chunks: the pre-boot check walks the chunks too.
    const b = Buffer.alloc(33 + 24);
    b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    b.set([0, 0, 0, 0, 0x49, 0x44, 0x41, 0x54, 0, 0, 0, 0, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82], 33);
    b.writeUInt32BE(width, 16);
    b.writeUInt32BE(height, 20);
    b.set([8, 6, 0, 0, interlace], 24);
    return b;
  };
  const cases: [string, Buffer, RegExp | "ok"][] = [
    ["small.png", header(800, 600), "ok"],
    ["bomb.png", header(30000, 30000), /The baseline baselines\/bomb\.png is 30000x30000 pixels \(900000000\)/],
    ["interlaced.png", header(10, 10, 1), /interlaced PNG/],
    ["text.png", Buffer.from("GIF89a is not a PNG, whatever its name says......"), /is not a PNG file/],
    ["header-only.png", header(10, 10).subarray(0, 33), /is not a complete PNG \(it has no image data \(IDAT\)\)/],
    ["empty.png", header(0, 0), /is a 0x0 PNG: an image needs at least one pixel/],
  ];
  for (const [name, bytes, expected] of cases) {
    writeFileSync(join(folder, "baselines", name), bytes);
    const read = () => readBrowserScriptArgs({ "steps-json": JSON.stringify([shot(`baselines/${name}`)]) }, folder);
    if (expected === "ok") assert.equal(read().length, 1);
    else assert.throws(read, (e: unknown) => e instanceof WpCodeboxError && e.code === "input-file-invalid" && expected.test(e.message), name);
  }
  // A baseline that does not exist yet is fine: the run fails it as baseline-missing, or writes it.
  assert.equal(readBrowserScriptArgs({ "steps-json": JSON.stringify([shot("baselines/not-yet.png")]) }, folder).length, 1);
});
