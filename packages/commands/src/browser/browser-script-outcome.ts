/**
 * Plain data returned by {@link runBrowserInteractionScript}: JSON-safe except screenshot bytes.
 * The caller turns it into bundle artifacts (steps.jsonl, action-summary.json,
 * screenshot-<name>.png, console.jsonl, network.jsonl, html).
 */
import type { BrowserStepKind } from "@wp-codebox/runtime-core";

/** Codes a failed step can carry (`php-fatal`: a page load of the step died of a PHP fatal error). */
export type BrowserStepErrorCode = "browser-step-failed" | "timeout" | "assertion-failed" | "policy-denied" | "php-fatal" | "baseline-missing";

/**
 * Response header the sandbox server adds when PHP died of a fatal error while serving the
 * request: base64 of the JSON `{ type, message, file, line }`. The browser runner reads it to
 * record the fatal against the step that made the request.
 */
export const PHP_FATAL_HEADER = "x-wp-codebox-php-fatal";

/** A PHP fatal error in a request a page made. */
export interface BrowserPhpFatal {
  url: string;
  status: number | null;
  message: string;
  file: string;
  line: number;
}

/** Why a step failed: stable code and a message that says what to try next. */
export interface BrowserStepError {
  code: BrowserStepErrorCode;
  message: string;
}

/** The run-level error record: the first failing step (the run stops there). */
export interface BrowserScriptError extends BrowserStepError {
  index: number;
  kind: BrowserStepKind;
  selector?: string;
}

/**
 * One record per step, in order (a line of `files/browser/steps.jsonl`).
 * - `execution`: the caller's execution id; `index`: 0-based step index.
 * - `selector`: the step's selector (`from` for drag), when it has one.
 * - `status`: `ok`, `failed` (the first failure), or `skipped` (after a failure; never ran).
 * - `durationMs`: wall time of the step in ms (0 when skipped).
 * - `screenshot`: name of the screenshot this step took (a `screenshot` step, or the failure shot).
 */
export interface BrowserStepRecord {
  execution: string;
  index: number;
  kind: BrowserStepKind;
  selector?: string;
  status: "ok" | "failed" | "skipped";
  durationMs: number;
  screenshot?: string;
  error?: BrowserStepError;
  /** PHP fatal errors in requests this step's pages made (the step then fails with `php-fatal`). */
  phpFatals?: BrowserPhpFatal[];
  /** A screenshot step with `compare`: how its image compared with the baseline. */
  comparison?: BrowserScreenshotComparison;
  /**
   * A screenshot step with `compare` under `--update-baselines`: the script-relative baseline its
   * image replaces (written only when the whole run passed; `baselinesUpdated` lists what was written).
   */
  baselineUpdated?: string;
}

/**
 * How a screenshot compared with its baseline (on the step record). `baseline`, `actual` and
 * `diff` are bundle-relative PNG paths (no `diff` when the sizes differ too much to draw one); `width`/`height` the actual image's in pixels;
 * `diffPixelRatio` 0 to 1; `maxDiffPixels` / `maxDiffPixelRatio` as the step gave them.
 */
export interface BrowserScreenshotComparison {
  passed: boolean;
  baseline: string;
  actual: string;
  diff?: string;
  diffPixels: number;
  diffPixelRatio: number;
  maxDiffPixels?: number;
  maxDiffPixelRatio?: number;
  threshold: number;
  width: number;
  height: number;
}

/** Bundle paths of a screenshot and of its comparison images. */
export const browserScreenshotPath = (name: string): string => `files/browser/screenshot-${name}.png`;
export const browserBaselinePath = (name: string): string => `files/browser/baseline-${name}.png`;
export const browserDiffPath = (name: string): string => `files/browser/diff-${name}.png`;

/** One `expect`, or one `evaluate` with `assert`: what was expected, what was seen. */
export interface BrowserAssertionResult {
  index: number;
  kind: "expect" | "evaluate" | "screenshot";
  selector?: string;
  expected: unknown;
  actual: unknown;
  passed: boolean;
}

/** The assertions block of `action-summary.json` and the review summary. */
export interface BrowserAssertions {
  total: number;
  passed: number;
  failed: number;
  results: BrowserAssertionResult[];
}

/** A PNG taken during the run. `name` matches `[a-z0-9._-]+` and is unique within the run. */
export interface BrowserScreenshot {
  name: string;
  /** Index of the step that took it (the failing step for a failure screenshot). */
  index: number;
  reason: "step" | "failure";
  bytes: Uint8Array;
  /** With `compare`: the baseline as read, and the diff image (written beside the screenshot). */
  baseline?: Uint8Array;
  diff?: Uint8Array;
  /** With `compare` under `--update-baselines`: host path to write `bytes` to (inside the script's folder). */
  updateBaseline?: string;
}

/** A console message from any page of the run. `stepIndex` is the step running then (-1 before the first). */
export interface BrowserConsoleEntry {
  type: string;
  text: string;
  url?: string;
  lineNumber?: number;
  stepIndex: number;
}

/** An uncaught exception in a page. */
export interface BrowserPageError {
  message: string;
  stack?: string;
  stepIndex: number;
}

/**
 * One request the pages made. `status` is the HTTP status, `"blocked"` (another host, not
 * allowed; aborted before leaving the browser), or `"failed"` (with `failure`, e.g. net::ERR_ABORTED).
 * `null` while still in flight when the run ended.
 */
export interface BrowserNetworkEntry {
  url: string;
  method: string;
  resourceType: string;
  status: number | "blocked" | "failed" | null;
  failure?: string;
  stepIndex: number;
  /** PHP died of this fatal error while serving the request. */
  phpFatal?: { message: string; file: string; line: number };
}

/**
 * Everything a run produced. `status` is `error` exactly when a step failed; the evidence
 * gathered up to the failure is always present. `finalUrl` / `title` describe the page at the end.
 */
export interface BrowserScriptOutcome {
  status: "ok" | "error";
  steps: BrowserStepRecord[];
  assertions: BrowserAssertions;
  screenshots: BrowserScreenshot[];
  console: BrowserConsoleEntry[];
  pageErrors: BrowserPageError[];
  network: BrowserNetworkEntry[];
  /** `page.content()` from the last `capture` step taking html (or the end of the run with `captureFinalHtml`). */
  html?: string;
  error?: BrowserScriptError;
  finalUrl: string;
  title: string;
  /** Wall time of the whole run in ms (context creation to close). */
  durationMs: number;
  /** Under `--update-baselines`: the baselines written, as host paths (set by the caller that wrote them). */
  baselinesUpdated?: string[];
}
