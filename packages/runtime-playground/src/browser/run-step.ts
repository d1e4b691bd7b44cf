/**
 * Runs one step of a browser interaction script: each kind maps onto one Playwright action.
 */
import { isDeepStrictEqual } from "node:util";
import type { Page } from "playwright-core";
import { BROWSER_EVALUATE_CAPABILITY, PolicyDeniedError, type BrowserInteractionStep, type ExpectStep } from "@wp-codebox/runtime-core";
import type { BrowserAssertionResult, BrowserScreenshot } from "./browser-script-outcome.js";
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
  /** Receives each observation of an `expect` step while it polls. */
  onExpectObserved?: (assertion: BrowserAssertionResult) => void;
}

/** What a step produced besides succeeding. An assertion with `passed: false` fails the step. */
export interface StepEffect {
  assertion?: BrowserAssertionResult;
  /** Why the assertion failed, phrased for the step error. */
  assertionMessage?: string;
  screenshot?: BrowserScreenshot;
  html?: string;
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
      const bytes = step.selector !== undefined
        ? await page.locator(step.selector).screenshot({ timeout })
        : await page.screenshot({ fullPage: step.fullPage ?? false, timeout });
      const name = ctx.namer.next(step.name ?? `step-${ctx.index}`);
      return { screenshot: { name, index: ctx.index, reason: "step", bytes: new Uint8Array(bytes) } };
    }
    case "capture": {
      const what = step.what ?? "all";
      // Console, page errors and network are recorded for the whole run; html is a snapshot.
      return what === "html" || what === "all" ? { html: await page.content() } : {};
    }
  }
}
