/** PNG headers read before decoding: what a screenshot comparison refuses, from the header alone. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readPngHeader, SCREENSHOT_MAX_PIXELS, screenshotImageProblem } from "../src/png-header.js";

function header(width: number, height: number, options: { interlace?: number; chunk?: string; length?: number } = {}): Uint8Array {
  const bytes = new Uint8Array(33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, options.length ?? 13);
  bytes.set([...(options.chunk ?? "IHDR")].map((c) => c.charCodeAt(0)), 12);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, options.interlace ?? 0], 24);
  return bytes;
}

const cases: { name: string; bytes: Uint8Array; header?: { width: number; height: number; interlaced: boolean }; problem?: RegExp }[] = [
  { name: "an ordinary header", bytes: header(1280, 720), header: { width: 1280, height: 720, interlaced: false } },
  { name: "exactly the pixel cap", bytes: header(SCREENSHOT_MAX_PIXELS / 1024, 1024), header: { width: SCREENSHOT_MAX_PIXELS / 1024, height: 1024, interlaced: false } },
  { name: "one pixel over the cap", bytes: header(SCREENSHOT_MAX_PIXELS + 1, 1), header: { width: SCREENSHOT_MAX_PIXELS + 1, height: 1, interlaced: false }, problem: /more than the 67108864 a screenshot comparison decodes/ },
  { name: "a 30000x30000 bomb", bytes: header(30000, 30000), header: { width: 30000, height: 30000, interlaced: false }, problem: /is 30000x30000 pixels \(900000000\)/ },
  { name: "the largest width and height a header can say", bytes: header(0xffffffff, 0xffffffff), header: { width: 0xffffffff, height: 0xffffffff, interlaced: false }, problem: /more than the/ },
  { name: "interlaced", bytes: header(10, 10, { interlace: 1 }), header: { width: 10, height: 10, interlaced: true }, problem: /interlaced PNG/ },
  { name: "width 0", bytes: header(0, 10), problem: /is not a PNG file/ },
  { name: "height 0", bytes: header(10, 0), problem: /is not a PNG file/ },
  { name: "another chunk first", bytes: header(10, 10, { chunk: "IDAT" }), problem: /is not a PNG file/ },
  { name: "an IHDR of the wrong length", bytes: header(10, 10, { length: 12 }), problem: /is not a PNG file/ },
  { name: "a wrong signature", bytes: header(10, 10).map((b, i) => (i === 1 ? 0x51 : b)), problem: /is not a PNG file/ },
  { name: "32 bytes", bytes: header(10, 10).slice(0, 32), problem: /is not a PNG file/ },
  { name: "no bytes", bytes: new Uint8Array(0), problem: /is not a PNG file/ },
  { name: "text", bytes: new TextEncoder().encode("this is not an image, it is just text, long enough"), problem: /is not a PNG file/ },
];

for (const c of cases) {
  test(`PNG header: ${c.name}`, () => {
    assert.deepEqual(readPngHeader(c.bytes), c.header);
    const problem = screenshotImageProblem(c.bytes, "the baseline b.png");
    if (c.problem) assert.match(problem ?? "", c.problem);
    else assert.equal(problem, undefined);
    if (problem) assert.match(problem, /^the baseline b\.png /);
  });
}

test("a header inside a larger buffer (a view with an offset) is read from the view's start", () => {
  const outer = new Uint8Array(100);
  outer.set(header(7, 9), 10);
  assert.deepEqual(readPngHeader(outer.subarray(10)), { width: 7, height: 9, interlaced: false });
});
