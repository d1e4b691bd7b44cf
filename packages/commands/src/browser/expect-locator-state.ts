/**
 * The `expect` step: polls a locator until its state, text and count match, or time runs out.
 */
import type { Locator } from "playwright-core";
import type { ExpectStep } from "@wp-codebox/runtime-core";

/** What an `expect` step saw: match count, the asserted state's observed value, the first match's text. */
export interface ObservedLocatorState {
  count: number;
  state: string;
  text?: string | null;
}

/** Result of {@link expectLocatorState}. */
export interface ExpectOutcome {
  passed: boolean;
  expected: { state: ExpectStep["state"]; text?: string; count?: number };
  actual: ObservedLocatorState;
}

const POLL_INTERVAL_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function observe(locator: Locator, step: ExpectStep, timeoutMs: number): Promise<ObservedLocatorState> {
  const count = await locator.count();
  const first = locator.first();
  const options = { timeout: Math.max(1, Math.min(timeoutMs, 1000)) };
  let state: string;
  switch (step.state) {
    case "attached":
    case "detached":
      state = count > 0 ? "attached" : "detached";
      break;
    case "visible":
    case "hidden":
      state = count > 0 && (await first.isVisible()) ? "visible" : "hidden";
      break;
    case "enabled":
    case "disabled":
      state = count === 0 ? "detached" : (await first.isEnabled(options)) ? "enabled" : "disabled";
      break;
    case "checked":
    case "unchecked":
      state = count === 0 ? "detached" : (await first.isChecked(options)) ? "checked" : "unchecked";
      break;
    case "editable":
      state = count === 0 ? "detached" : (await first.isEditable(options)) ? "editable" : "not-editable";
      break;
  }
  const observed: ObservedLocatorState = { count, state };
  if (step.text !== undefined) observed.text = count > 0 ? await first.innerText(options) : null;
  return observed;
}

function matches(step: ExpectStep, seen: ObservedLocatorState): boolean {
  if (seen.state !== step.state) return false;
  if (step.count !== undefined && seen.count !== step.count) return false;
  if (step.text !== undefined && !(seen.text ?? "").includes(step.text)) return false;
  return true;
}

/**
 * Checks `step` against `locator` every 100 ms until it matches or `deadline` (epoch ms) passes.
 * With several matches, `state` and `text` are those of the first (`count` pins the number);
 * `hidden` also holds when nothing matches, as in Playwright. `text` is a substring of innerText.
 * Errors from Playwright (e.g. `checked` on a non-checkbox) propagate. `onObserve` receives every
 * non-final observation (so a caller whose timer fires first can still report what was seen).
 */
export async function expectLocatorState(
  locator: Locator,
  step: ExpectStep,
  deadline: number,
  onObserve?: (outcome: ExpectOutcome) => void,
): Promise<ExpectOutcome> {
  const expected: ExpectOutcome["expected"] = { state: step.state };
  if (step.text !== undefined) expected.text = step.text;
  if (step.count !== undefined) expected.count = step.count;
  for (;;) {
    const actual = await observe(locator, step, deadline - Date.now());
    onObserve?.({ passed: false, expected, actual });
    if (matches(step, actual)) return { passed: true, expected, actual };
    if (Date.now() + POLL_INTERVAL_MS >= deadline) return { passed: false, expected, actual };
    await sleep(POLL_INTERVAL_MS);
  }
}
