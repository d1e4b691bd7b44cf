/** PNG headers read before decoding: what a screenshot comparison refuses, from the header alone. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readPngHeader, SCREENSHOT_MAX_PIXELS, screenshotImageProblem } from "../src/png-header.js";

/** A chunk: length, type, data, and a CRC (not checked by the walk, so zero). */
function chunk(type: string, data: Uint8Array = new Uint8Array(0), length = data.byteLength): Uint8Array {
  const bytes = new Uint8Array(12 + data.byteLength);
  new DataView(bytes.buffer).setUint32(0, length);
  bytes.set([...type].map((c) => c.charCodeAt(0)), 4);
  bytes.set(data, 8);
  return bytes;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.byteLength) - p.byteLength);
  return out;
}

/** A whole PNG as far as the walk can tell: the header, then `rest` (by default IDAT and IEND). */
function header(width: number, height: number, options: { interlace?: number; chunk?: string; length?: number; rest?: Uint8Array[] } = {}): Uint8Array {
  return concat(headerOnly(width, height, options), ...(options.rest ?? [chunk("IDAT", new Uint8Array(5)), chunk("IEND")]));
}

/** Signature and IHDR: the 33 bytes `readPngHeader` reads. */
function headerOnly(width: number, height: number, options: { interlace?: number; chunk?: string; length?: number } = {}): Uint8Array {
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
  { name: "width 0", bytes: header(0, 10), problem: /is a 0x10 PNG: an image needs at least one pixel/ },
  { name: "height 0", bytes: header(10, 0), problem: /is a 10x0 PNG: an image needs at least one pixel/ },
  { name: "the header alone (no image data)", bytes: headerOnly(10, 10), header: { width: 10, height: 10, interlaced: false }, problem: /is not a complete PNG \(it has no image data \(IDAT\)\)/ },
  { name: "IEND without IDAT", bytes: header(10, 10, { rest: [chunk("IEND")] }), header: { width: 10, height: 10, interlaced: false }, problem: /it has no image data \(IDAT\)/ },
  { name: "an IDAT cut short", bytes: header(10, 10, { rest: [chunk("IDAT", new Uint8Array(4), 4000)] }), header: { width: 10, height: 10, interlaced: false }, problem: /its IDAT chunk runs past the end of the file/ },
  { name: "no IEND", bytes: header(10, 10, { rest: [chunk("IDAT", new Uint8Array(5))] }), header: { width: 10, height: 10, interlaced: false }, problem: /it ends without an IEND chunk/ },
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
  outer.set(headerOnly(7, 9), 10);
  assert.deepEqual(readPngHeader(outer.subarray(10)), { width: 7, height: 9, interlaced: false });
});
