/**
 * Runs one step of a browser interaction script: each kind maps onto one Playwright action.
 */
import { isDeepStrictEqual } from "node:util";
import type { Page } from "playwright-core";
import { BROWSER_EVALUATE_CAPABILITY, PolicyDeniedError, type BrowserInteractionStep, type ExpectStep } from "@wp-codebox/runtime-core";
import type { ScreenshotStep } from "@wp-codebox/runtime-core";
import {
  browserBaselinePath,
  browserDiffPath,
  browserScreenshotPath,
  type BrowserAssertionResult,
  type BrowserScreenshot,
  type BrowserScreenshotComparison,
  type BrowserStepError,
} from "./browser-script-outcome.js";
import { expectLocatorState, type ExpectOutcome, type ObservedLocatorState } from "./expect-locator-state.js";
import type { ScreenshotNamer } from "./screenshot-namer.js";

/** What {@link runStep} needs besides the step. */
export interface StepContext {
  page: Page;
  /** Sandbox origin; relative URLs resolve against it. */
  baseUrl: string;
  index: number;
  /** Playwright timeout in ms for this step; 0 = none. */
  timeoutMs: number;
  /**
   * Epoch ms by which polling steps (`expect`) should report; a little before the hard limit, so a
   * failed expectation is an `assertion-failed` with what was seen, not a bare timeout. `Infinity` = no limit.
   */
  deadline: number;
  allowEvaluate: boolean;
  namer: ScreenshotNamer;
  /** Baselines of screenshot steps with `compare`, by step index (`bytes` undefined: no such file). */
  baselines?: ReadonlyMap<number, StepBaseline>;
  /** `--update-baselines`: a compared screenshot becomes the new baseline instead of being compared. */
  updateBaselines?: boolean;
  /** Receives each observation of an `expect` step while it polls. */
  onExpectObserved?: (assertion: BrowserAssertionResult) => void;
}

/** A baseline as the caller read it: script-relative `compare`, absolute `path`, the bytes when it exists. */
export interface StepBaseline {
  compare: string;
  path: string;
  bytes?: Uint8Array;
}

/** What a step produced besides succeeding. An assertion with `passed: false` fails the step. */
export interface StepEffect {
  assertion?: BrowserAssertionResult;
  /** Why the assertion failed, phrased for the step error. */
  assertionMessage?: string;
  screenshot?: BrowserScreenshot;
  html?: string;
  comparison?: BrowserScreenshotComparison;
  /** The script-relative baseline this step will write (`--update-baselines`). */
  baselineUpdated?: string;
  /** A failure that is neither a thrown error nor an assertion (a missing baseline). */
  failure?: BrowserStepError;
}

/** The selector a step record shows (`from` for drag). */
export function stepSelector(step: BrowserInteractionStep): string | undefined {
  if (step.kind === "drag") return step.from;
  return "selector" in step && typeof step.selector === "string" ? step.selector : undefined;
}

const json = (value: unknown) => JSON.stringify(value) ?? "undefined";

/** The `assertion-failed` message of an `expect` step; `limitMs` 0 = no limit. */
export function expectFailureMessage(index: number, step: ExpectStep, actual: ObservedLocatorState, limitMs: number): string {
  const wanted = [`to be ${step.state}`, step.text !== undefined ? `with text containing ${json(step.text)}` : "", step.count !== undefined ? `with count ${step.count}` : ""]
    .filter(Boolean)
    .join(" ");
  const seen = [actual.state, `count ${actual.count}`, actual.text !== undefined ? `text ${json(actual.text)}` : ""].filter(Boolean).join(", ");
  const waited = limitMs > 0 ? ` after ${limitMs}ms` : "";
  return `expect step ${index}: ${step.selector} ${wanted}; got ${seen}${waited}. Check the selector and the page state (a screenshot was taken).`;
}

/**
 * Runs `step` on `ctx.page`. Playwright errors propagate (the caller classifies them).
 * @throws PolicyDeniedError (`policy-denied`) for `evaluate` when `allowEvaluate` is false.
 */
export async function runStep(step: BrowserInteractionStep, ctx: StepContext): Promise<StepEffect> {
  const { page, timeoutMs: timeout } = ctx;
  switch (step.kind) {
    case "navigate":
      await page.goto(new URL(step.url, ctx.baseUrl).href, { waitUntil: step.waitUntil ?? "load", timeout });
      return {};
    case "click":
      await page.locator(step.selector).click({ timeout });
      return {};
    case "fill":
      await page.locator(step.selector).fill(step.value, { timeout });
      return {};
    case "type":
      await page.locator(step.selector).pressSequentially(step.value, { timeout });
      return {};
    case "press":
      if (step.selector !== undefined) await page.locator(step.selector).press(step.key, { timeout });
      else await page.keyboard.press(step.key);
      return {};
    case "hover":
      await page.locator(step.selector).hover({ timeout });
      return {};
    case "drag": {
      const from = page.locator(step.from);
      if (typeof step.to === "string") {
        await from.dragTo(page.locator(step.to), { timeout });
        return {};
      }
      await from.hover({ timeout });
      await page.mouse.down();
      await page.mouse.move(step.to.x, step.to.y, { steps: 10 });
      await page.mouse.up();
      return {};
    }
    case "select":
      await page.locator(step.selector).selectOption("values" in step ? step.values : step.value, { timeout });
      return {};
    case "waitFor":
      if ("selector" in step) await page.locator(step.selector).waitFor({ state: step.state ?? "visible", timeout });
      else if ("url" in step) await page.waitForURL(step.url.includes("*") ? step.url : new URL(step.url, ctx.baseUrl).href, { timeout });
      else await page.waitForLoadState(step.loadState, { timeout });
      return {};
    case "evaluate": {
      if (!ctx.allowEvaluate) {
        throw new PolicyDeniedError(
          BROWSER_EVALUATE_CAPABILITY,
          `evaluate step ${ctx.index} runs page JavaScript, which needs the capability "${BROWSER_EVALUATE_CAPABILITY}": add it to the policy's "commands" list or remove the step.`,
        );
      }
      const actual: unknown = await page.evaluate(step.expression);
      if (!Object.hasOwn(step, "assert")) return {};
      const passed = isDeepStrictEqual(actual, step.assert);
      const assertion: BrowserAssertionResult = { index: ctx.index, kind: "evaluate", expected: step.assert, actual: actual ?? null, passed };
      return passed
        ? { assertion }
        : { assertion, assertionMessage: `evaluate step ${ctx.index}: expected ${json(step.assert)}, got ${json(actual)}. Fix the expression or the assert value.` };
    }
    case "expect": {
      const toAssertion = (o: ExpectOutcome): BrowserAssertionResult => ({ index: ctx.index, kind: "expect", selector: step.selector, expected: o.expected, actual: o.actual, passed: o.passed });
      const outcome = await expectLocatorState(page.locator(step.selector), step, ctx.deadline, (o) => ctx.onExpectObserved?.(toAssertion(o)));
      const assertion = toAssertion(outcome);
      if (outcome.passed) return { assertion };
      return { assertion, assertionMessage: expectFailureMessage(ctx.index, step, outcome.actual, timeout) };
    }
    case "screenshot": {
      // Playwright paints masked elements over (#FF00FF boxes) in the image it returns.
      const options = { timeout, ...(step.mask ? { mask: step.mask.map((s) => page.locator(s)) } : {}) };
      const bytes = step.selector !== undefined
        ? await page.locator(step.selector).screenshot(options)
        : await page.screenshot({ ...options, fullPage: step.fullPage ?? false });
      const name = ctx.namer.next(step.name ?? `step-${ctx.index}`);
      const screenshot: BrowserScreenshot = { name, index: ctx.index, reason: "step", bytes: new Uint8Array(bytes) };
      return step.compare === undefined ? { screenshot } : compareWithBaseline(step, step.compare, screenshot, ctx);
    }
    case "capture": {
      const what = step.what ?? "all";
      // Console, page errors and network are recorded for the whole run; html is a snapshot.
      return what === "html" || what === "all" ? { html: await page.content() } : {};
    }
  }
}

/**
 * The `compare` half of a screenshot step: under `--update-baselines` the image is marked to be
 * written as the baseline; otherwise it is compared and the step's assertion says how it went.
 * @throws Error when the baseline is not a PNG (the step then fails as browser-step-failed).
 */
async function compareWithBaseline(step: ScreenshotStep, compare: string, screenshot: BrowserScreenshot, ctx: StepContext): Promise<StepEffect> {
  const baseline = ctx.baselines?.get(ctx.index);
  if (!baseline) throw new Error(`no baseline was resolved for ${compare}`);
  if (ctx.updateBaselines) return { screenshot: { ...screenshot, updateBaseline: baseline.path }, baselineUpdated: compare };
  if (baseline.bytes === undefined) {
    return {
      screenshot,
      failure: {
        code: "baseline-missing",
        message: `screenshot step ${ctx.index}: the baseline ${compare} does not exist (${baseline.path}). Run again with --update-baselines to save this screenshot there as the baseline; review it and commit it beside the script.`,
      },
    };
  }
  // Loaded here, not with the catalog: its PNG codec would cost every command's start.
  const { compareScreenshots } = await import("./compare-screenshots.js");
  const result = compareScreenshots(screenshot.bytes, baseline.bytes, {
    ...(step.threshold !== undefined ? { threshold: step.threshold } : {}),
    ...(step.maxDiffPixels !== undefined ? { maxDiffPixels: step.maxDiffPixels } : {}),
    ...(step.maxDiffPixelRatio !== undefined ? { maxDiffPixelRatio: step.maxDiffPixelRatio } : {}),
  });
  const limits = {
    ...(step.maxDiffPixels !== undefined ? { maxDiffPixels: step.maxDiffPixels } : {}),
    ...(step.maxDiffPixelRatio !== undefined ? { maxDiffPixelRatio: step.maxDiffPixelRatio } : {}),
  };
  const name = screenshot.name;
  const comparison: BrowserScreenshotComparison = {
    passed: result.passed,
    baseline: browserBaselinePath(name),
    actual: browserScreenshotPath(name),
    ...(result.diff ? { diff: browserDiffPath(name) } : {}),
    diffPixels: result.diffPixels,
    diffPixelRatio: result.diffPixelRatio,
    ...limits,
    threshold: result.threshold,
    width: result.width,
    height: result.height,
  };
  const assertion: BrowserAssertionResult = {
    index: ctx.index,
    kind: "screenshot",
    expected: { baseline: compare, width: result.baselineWidth, height: result.baselineHeight, threshold: result.threshold, ...limits },
    actual: { diffPixels: result.diffPixels, diffPixelRatio: result.diffPixelRatio, width: result.width, height: result.height },
    passed: result.passed,
  };
  const effect: StepEffect = { screenshot: { ...screenshot, baseline: baseline.bytes, ...(result.diff ? { diff: result.diff } : {}) }, comparison, assertion };
  if (result.passed) return effect;
  return {
    ...effect,
    assertionMessage: `screenshot step ${ctx.index}: ${result.message} (baseline ${compare}).${comparison.diff ? ` See ${comparison.diff} (differences in red);` : ""} if the change is intended, run again with --update-baselines.`,
  };
}
