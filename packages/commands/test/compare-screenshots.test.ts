/**
 * The screenshot comparison on synthetic PNGs: Playwright's threshold / maxDiffPixels /
 * maxDiffPixelRatio meanings, sizes, and the diff image.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PNG } from "pngjs";
import { SCREENSHOT_MAX_PIXELS } from "@wp-codebox/runtime-core";
import { allowedDiffPixels, compareScreenshots, decodePng } from "../src/browser/compare-screenshots.js";

type Rgb = [number, number, number];

/** A `width`×`height` PNG filled with `fill`, with `changed` pixels (index → colour) on top. */
function png(width: number, height: number, fill: Rgb, changed: Record<number, Rgb> = {}): Uint8Array {
  const image = new PNG({ width, height });
  for (let i = 0; i < width * height; i++) {
    const [r, g, b] = changed[i] ?? fill;
    image.data.set([r, g, b, 255], i * 4);
  }
  return new Uint8Array(PNG.sync.write(image));
}

const white: Rgb = [255, 255, 255];
const black: Rgb = [0, 0, 0];
/** Barely off-white: YIQ distance far under 0.2 of the maximum, over 0. */
const nearWhite: Rgb = [250, 250, 250];
const base = png(10, 10, white);
const tenBlack = Object.fromEntries([...Array(10).keys()].map((i) => [i * 10 + 5, black])) as Record<number, Rgb>;

const cases: { name: string; actual: Uint8Array; options?: Parameters<typeof compareScreenshots>[2]; passed: boolean; diffPixels: number; message?: RegExp }[] = [
  { name: "identical images pass with no differing pixel", actual: png(10, 10, white), passed: true, diffPixels: 0 },
  { name: "one changed pixel fails at the defaults (maxDiffPixels 0)", actual: png(10, 10, white, { 42: black }), passed: false, diffPixels: 1, message: /^1 pixels \(1\.00% of 100\) differ from the baseline at threshold 0\.2; allowed: 0$/ },
  { name: "one changed pixel passes with maxDiffPixels 1", actual: png(10, 10, white, { 42: black }), options: { maxDiffPixels: 1 }, passed: true, diffPixels: 1 },
  { name: "ten changed pixels fail with maxDiffPixels 9", actual: png(10, 10, white, tenBlack), options: { maxDiffPixels: 9 }, passed: false, diffPixels: 10 },
  { name: "ten changed pixels pass with maxDiffPixelRatio 0.1 (10 of 100)", actual: png(10, 10, white, tenBlack), options: { maxDiffPixelRatio: 0.1 }, passed: true, diffPixels: 10 },
  { name: "ten changed pixels fail with maxDiffPixelRatio 0.09", actual: png(10, 10, white, tenBlack), options: { maxDiffPixelRatio: 0.09 }, passed: false, diffPixels: 10 },
  { name: "with both maxima the smaller one applies", actual: png(10, 10, white, tenBlack), options: { maxDiffPixels: 50, maxDiffPixelRatio: 0.05 }, passed: false, diffPixels: 10 },
  { name: "a colour change under the threshold counts as equal", actual: png(10, 10, nearWhite), passed: true, diffPixels: 0 },
  { name: "the same change counts at threshold 0", actual: png(10, 10, nearWhite), options: { threshold: 0 }, passed: false, diffPixels: 100 },
  { name: "black on white differs even at threshold 0.9", actual: png(10, 10, white, { 0: black }), options: { threshold: 0.9 }, passed: false, diffPixels: 1 },
  { name: "a different size fails naming both sizes, even with generous limits", actual: png(12, 10, white), options: { maxDiffPixelRatio: 1 }, passed: false, diffPixels: 20, message: /^the screenshot is 12x10 pixels but the baseline is 10x10$/ },
];

for (const c of cases) {
  test(c.name, () => {
    const result = compareScreenshots(c.actual, base, c.options);
    assert.equal(result.passed, c.passed, result.message);
    assert.equal(result.diffPixels, c.diffPixels);
    if (c.message) assert.match(result.message ?? "", c.message);
    if (c.passed) assert.equal(result.message, undefined);
    // The diff image is a PNG the size of the larger image, red where pixels differ.
    assert.ok(result.diff, "a diff image for images this small");
    const diff = decodePng(result.diff, "diff");
    const actual = decodePng(c.actual, "actual");
    assert.equal(diff.width, Math.max(actual.width, 10));
    assert.equal(diff.height, Math.max(actual.height, 10));
    let red = 0;
    for (let i = 0; i < diff.width * diff.height; i++) if (diff.data[i * 4] === 255 && diff.data[i * 4 + 1] === 0 && diff.data[i * 4 + 2] === 0) red++;
    assert.equal(red, c.diffPixels);
  });
}

test("results carry sizes, the threshold used and the ratio", () => {
  const result = compareScreenshots(png(10, 10, white, tenBlack), base, { maxDiffPixelRatio: 0.5 });
  assert.deepEqual(
    { w: result.width, h: result.height, bw: result.baselineWidth, bh: result.baselineHeight, t: result.threshold, r: result.diffPixelRatio, a: result.allowedDiffPixels },
    { w: 10, h: 10, bw: 10, bh: 10, t: 0.2, r: 0.1, a: 50 },
  );
});

test("allowedDiffPixels follows Playwright: min of both, else either, else 0", () => {
  assert.equal(allowedDiffPixels({}, 1000), 0);
  assert.equal(allowedDiffPixels({ maxDiffPixels: 7 }, 1000), 7);
  assert.equal(allowedDiffPixels({ maxDiffPixelRatio: 0.01 }, 1000), 10);
  assert.equal(allowedDiffPixels({ maxDiffPixels: 7, maxDiffPixelRatio: 0.01 }, 1000), 7);
  assert.equal(allowedDiffPixels({ maxDiffPixels: 70, maxDiffPixelRatio: 0.01 }, 1000), 10);
});

test("bytes that are not a PNG are refused, naming which image", () => {
  assert.throws(() => compareScreenshots(base, new TextEncoder().encode("not a png")), /the baseline is not a readable PNG/);
  assert.throws(() => compareScreenshots(new Uint8Array([1, 2, 3]), base), /the screenshot is not a readable PNG/);
});

/** PNG signature and an IHDR chunk claiming `width`×`height` (CRC and image data omitted: only the header is read). */
/** A header and empty IDAT and IEND chunks: complete as far as the chunk walk sees, never decoded here. */
function pngHeaderOnly(width: number, height: number, interlace = 0): Uint8Array {
  const bytes = new Uint8Array(33 + 24);
  bytes.set([0, 0, 0, 0, 0x49, 0x44, 0x41, 0x54, 0, 0, 0, 0, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82], 33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, interlace], 24);
  return bytes;
}

// A baseline's header is read before a byte is decoded: a decompression bomb (a few hundred KB of
// zlib claiming 30000x30000 pixels) would otherwise take gigabytes, synchronously, past any deadline.
const refused: { name: string; baseline: Uint8Array; message: RegExp }[] = [
  { name: "a 30000x30000 bomb", baseline: pngHeaderOnly(30000, 30000), message: /the baseline is 30000x30000 pixels \(900000000\), more than the \d+ a screenshot comparison decodes/ },
  { name: "one pixel over the cap", baseline: pngHeaderOnly(SCREENSHOT_MAX_PIXELS + 1, 1), message: /more than the \d+ a screenshot comparison decodes/ },
  { name: "an interlaced PNG (its inflate is not bounded by the size)", baseline: pngHeaderOnly(10, 10, 1), message: /interlaced PNG/ },
  { name: "a header claiming width 0", baseline: pngHeaderOnly(0, 10), message: /the baseline is a 0x10 PNG: an image needs at least one pixel/ },
  { name: "a signature without IHDR", baseline: pngHeaderOnly(10, 10).map((b, i) => (i === 12 ? 0x58 : b)), message: /the baseline is not a readable PNG/ },
  { name: "a truncated header", baseline: pngHeaderOnly(10, 10).slice(0, 20), message: /the baseline is not a readable PNG/ },
];
for (const c of refused) {
  test(`a baseline is refused from its header alone: ${c.name}`, () => {
    const before = process.memoryUsage().rss;
    assert.throws(() => compareScreenshots(base, c.baseline), c.message);
    // Nothing was decoded: far less than one decoded 10-megapixel image (40 MB) was allocated.
    assert.ok(process.memoryUsage().rss - before < 40 * 1024 * 1024);
  });
}

test("sizes so different that the padded area exceeds the cap fail without decoding the baseline or drawing a diff", () => {
  // Each image alone is within the cap; side by side they would need 10 x 60,000,000 pixels.
  const result = compareScreenshots(base, pngHeaderOnly(1, 60_000_000), { maxDiffPixelRatio: 1 });
  assert.equal(result.passed, false);
  assert.equal(result.sizeMismatch, true);
  assert.equal(result.diff, undefined);
  assert.equal(result.diffPixelRatio, 1);
  assert.match(result.message ?? "", /^the screenshot is 10x10 pixels but the baseline is 1x60000000 \(too different to draw a diff image\)$/);
});
