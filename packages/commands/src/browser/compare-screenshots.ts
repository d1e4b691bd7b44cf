/**
 * Compares a screenshot with its baseline the way Playwright's `toHaveScreenshot` does: pixelmatch
 * with a per-pixel YIQ colour distance `threshold`, then the count of differing pixels against
 * `maxDiffPixels` / `maxDiffPixelRatio`.
 */
import pixelmatch from "pixelmatch";
import { PNG } from "pngjs";
import { readPngHeader, SCREENSHOT_MAX_PIXELS, screenshotImageProblem } from "@wp-codebox/runtime-core";

/** Playwright's names and defaults: `threshold` 0.2, both maxima 0 (no pixel may differ). */
export interface ScreenshotCompareOptions {
  /** Per-pixel colour distance in YIQ space, 0 (exact) to 1 (anything matches). Default 0.2. */
  threshold?: number;
  /** Differing pixels allowed (a count). */
  maxDiffPixels?: number;
  /** Differing pixels allowed as a share of all pixels, 0 to 1. */
  maxDiffPixelRatio?: number;
}

/** Playwright's default per-pixel threshold. */
export const DEFAULT_SCREENSHOT_THRESHOLD = 0.2;

/**
 * What a comparison found. `width`/`height` are the actual image's (CSS pixels × device scale);
 * `diff` is a PNG the size of the larger of both images with differing pixels in red; with
 * different sizes the area outside the smaller image counts as differing.
 */
export interface ScreenshotCompareResult {
  passed: boolean;
  diffPixels: number;
  /** `diffPixels` over the pixels of the compared area, 0 to 1. */
  diffPixelRatio: number;
  /** The differing-pixel count that was still allowed. */
  allowedDiffPixels: number;
  threshold: number;
  width: number;
  height: number;
  baselineWidth: number;
  baselineHeight: number;
  sizeMismatch: boolean;
  /** Absent when the sizes differ so much that the padded area exceeds `SCREENSHOT_MAX_PIXELS`. */
  diff?: Uint8Array;
  /** Why it failed, for the step error; absent when passed. */
  message?: string;
}

/**
 * Decodes a PNG, after its header says it is one this module may decode.
 * @throws Error naming `what` when the bytes are not a PNG, or the header claims an interlaced
 *   image or more than `SCREENSHOT_MAX_PIXELS` pixels (nothing is decoded then).
 */
export function decodePng(bytes: Uint8Array, what: string): PNG {
  assertDecodable(bytes, what);
  try {
    return PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    throw new Error(`${what} is not a readable PNG (${(error as Error).message})`);
  }
}

/** @throws Error when the header says `decodePng` must not decode these bytes. */
function assertDecodable(bytes: Uint8Array, what: string): void {
  const problem = screenshotImageProblem(bytes, what);
  if (problem) throw new Error(problem.startsWith(`${what} is not a PNG`) ? `${what} is not a readable PNG (no PNG signature and IHDR header)` : problem);
}

/** `image` copied onto a transparent canvas of `width`×`height` (top-left aligned). */
function padTo(image: PNG, width: number, height: number): Buffer {
  if (image.width === width && image.height === height) return image.data;
  const out = Buffer.alloc(width * height * 4);
  for (let y = 0; y < image.height; y++) image.data.copy(out, y * width * 4, y * image.width * 4, (y + 1) * image.width * 4);
  return out;
}

/**
 * The number of differing pixels allowed, as Playwright computes it: the smaller of `maxDiffPixels`
 * and `maxDiffPixelRatio` × pixels when both are given, else whichever is given, else 0.
 */
export function allowedDiffPixels(options: ScreenshotCompareOptions, pixels: number): number {
  const byCount = options.maxDiffPixels;
  const byRatio = options.maxDiffPixelRatio !== undefined ? pixels * options.maxDiffPixelRatio : undefined;
  if (byCount !== undefined && byRatio !== undefined) return Math.min(byCount, byRatio);
  return byCount ?? byRatio ?? 0;
}

/**
 * Compares `actual` with `baseline` (both PNG bytes).
 * @returns a {@link ScreenshotCompareResult}; images of different sizes never pass and the
 *   message names both sizes.
 * @throws Error when either image is not a PNG.
 * @example compareScreenshots(png, png).passed === true
 */
export function compareScreenshots(actual: Uint8Array, baseline: Uint8Array, options: ScreenshotCompareOptions = {}): ScreenshotCompareResult {
  const threshold = options.threshold ?? DEFAULT_SCREENSHOT_THRESHOLD;
  const a = decodePng(actual, "the screenshot");
  assertDecodable(baseline, "the baseline");
  // The baseline's size before decoding it: when it differs, the padded area may be far larger than either image.
  const bh = readPngHeader(baseline)!;
  const width = Math.max(a.width, bh.width);
  const height = Math.max(a.height, bh.height);
  if (width * height > SCREENSHOT_MAX_PIXELS) return sizeMismatchWithoutDiff(a, bh, threshold, options);
  const b = decodePng(baseline, "the baseline");
  const diff = new PNG({ width, height });
  const diffPixels = pixelmatch(padTo(b, width, height), padTo(a, width, height), diff.data, width, height, { threshold });
  const pixels = width * height;
  const diffPixelRatio = pixels === 0 ? 0 : diffPixels / pixels;
  const allowed = allowedDiffPixels(options, pixels);
  const sizeMismatch = a.width !== b.width || a.height !== b.height;
  const passed = !sizeMismatch && diffPixels <= allowed;
  const base = {
    passed,
    diffPixels,
    diffPixelRatio,
    allowedDiffPixels: allowed,
    threshold,
    width: a.width,
    height: a.height,
    baselineWidth: b.width,
    baselineHeight: b.height,
    sizeMismatch,
    diff: new Uint8Array(PNG.sync.write(diff)),
  };
  if (passed) return base;
  const ratio = `${(Math.ceil(diffPixelRatio * 10000) / 100).toFixed(2)}%`;
  const message = sizeMismatch
    ? sizeMismatchMessage(a, b)
    : `${diffPixels} pixels (${ratio} of ${pixels}) differ from the baseline at threshold ${threshold}; allowed: ${Math.floor(allowed)}`;
  return { ...base, message };
}

const sizeMismatchMessage = (a: { width: number; height: number }, b: { width: number; height: number }): string =>
  `the screenshot is ${a.width}x${a.height} pixels but the baseline is ${b.width}x${b.height}`;

/** Different sizes whose padded area is too large to compare pixel by pixel: every pixel counts as differing, and there is no diff image. */
function sizeMismatchWithoutDiff(a: PNG, b: { width: number; height: number }, threshold: number, options: ScreenshotCompareOptions): ScreenshotCompareResult {
  const pixels = Math.max(a.width, b.width) * Math.max(a.height, b.height);
  return {
    passed: false,
    diffPixels: pixels,
    diffPixelRatio: 1,
    allowedDiffPixels: allowedDiffPixels(options, pixels),
    threshold,
    width: a.width,
    height: a.height,
    baselineWidth: b.width,
    baselineHeight: b.height,
    sizeMismatch: true,
    message: `${sizeMismatchMessage(a, b)} (too different to draw a diff image)`,
  };
}
