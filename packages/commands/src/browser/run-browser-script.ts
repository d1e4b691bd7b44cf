/**
 * Runs a browser interaction script in a fresh browser context and returns the evidence.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  BROWSER_CLEANUP_TIMEOUT_MS,
  DEFAULT_BROWSER_STEP_TIMEOUT_MS,
  DEFAULT_BROWSER_VIEWPORT,
  DEFAULT_BROWSER_TOTAL_TIMEOUT_MS,
  WpCodeboxError,
  assertValidBrowserInteractionScript,
  type BrowserInteractionStep,
} from "@wp-codebox/runtime-core";
import type {
  BrowserAssertionResult,
  BrowserConsoleEntry,
  BrowserPageError,
  BrowserScreenshot,
  BrowserScriptError,
  BrowserScriptOutcome,
  BrowserStepErrorCode,
  BrowserStepRecord,
} from "./browser-script-outcome.js";
import { startEgressProxy, type EgressProxy } from "./egress-proxy.js";
import { installNetworkGuard, isRequestAllowed, phpFatalStepMessage, stepPhpFatals, type BrowserAllowedHosts } from "./network-guard.js";
import type { ObservedLocatorState } from "./expect-locator-state.js";
import { expectFailureMessage, runStep, stepSelector, type StepBaseline } from "./run-step.js";
import { ScreenshotNamer } from "./screenshot-namer.js";
import { isTimeoutError, raceDeadline } from "./step-deadline.js";

/** A cookie for the run's context (Playwright's `addCookies` shape). */
export type BrowserCookie = Parameters<BrowserContext["addCookies"]>[0][number];

/** Options for {@link runBrowserInteractionScript}. */
export interface RunBrowserScriptOptions {
  /** Sandbox origin, e.g. `http://127.0.0.1:PORT`; always reachable; relative URLs resolve against it. */
  baseUrl: string;
  /**
   * The loopback server that serves `baseUrl` when `baseUrl` is a stable origin no resolver knows
   * (`http://wp-codebox.test`): requests to `baseUrl` are sent there by the per-run proxy.
   */
  loopbackUrl?: string;
  /**
   * Page clock and randomness: `nowMs` installs Playwright's clock at that instant (ms since the
   * epoch); `seed` replaces `Math.random` in every document with a generator seeded by
   * (`seed`, `key`). Absent fields: the host's.
   */
  determinism?: { nowMs?: number; seed?: number; key?: number };
  /** Steps, already validated by the caller (they are checked again here). */
  steps: readonly BrowserInteractionStep[];
  /** Cookies added to the fresh context before the first step (the caller logs in; none = anonymous). */
  cookies?: readonly BrowserCookie[];
  /** Whether `evaluate` steps may run (policy capability `wordpress.browser-actions.evaluate`). */
  allowEvaluate: boolean;
  /** Hosts besides the sandbox origin pages may reach. Default `[]` (none). */
  allowedHosts?: BrowserAllowedHosts;
  /** Per-step limit in ms when a step has no `timeout`. Default 15000; 0 = none. */
  stepTimeoutMs?: number;
  /** Budget in ms for all steps together. Default 120000; 0 = none. */
  timeoutMs?: number;
  /** Viewport in CSS pixels. Default 1280×720. */
  viewport?: { width: number; height: number };
  /** The caller's execution id, copied into every step record. */
  executionId: string;
  /** Screenshot names already used in the bundle, so new ones never overwrite them. */
  reservedScreenshotNames?: Iterable<string>;
  /** Baselines of screenshot steps with `compare`, by step index (read by the caller). */
  baselines?: ReadonlyMap<number, StepBaseline>;
  /** `--update-baselines`: compared screenshots are marked to become the baselines instead. */
  updateBaselines?: boolean;
  /** Also store `page.content()` at the end of the run (even after a failure). Default false. */
  captureFinalHtml?: boolean;
}

/** Limits for the clean-up work after the steps (failure screenshot, title, close), in ms. */
const FAILURE_SCREENSHOT_TIMEOUT_MS = BROWSER_CLEANUP_TIMEOUT_MS;
const CLEANUP_TIMEOUT_MS = BROWSER_CLEANUP_TIMEOUT_MS;

const firstLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error))
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, "")
    .split("\n")[0]!
    .trim();

function classify(error: unknown): BrowserStepErrorCode {
  if (error instanceof WpCodeboxError && error.code === "policy-denied") return "policy-denied";
  return isTimeoutError(error) ? "timeout" : "browser-step-failed";
}

/**
 * Runs `steps` in a new browser context on `browser` (never shared: cookies and storage start
 * empty apart from `options.cookies`) and closes the context afterwards.
 *
 * Each step runs with `step.timeout ?? stepTimeoutMs`, cut to what is left of `timeoutMs`, passed
 * to Playwright and enforced by a timer too, so a hung step (e.g. an `evaluate` that never
 * settles) still ends. The run stops at the first failing step: it gets `status: "failed"` and an
 * error `{ code, message }` (`browser-step-failed`, `timeout`, `assertion-failed`, or
 * `policy-denied`), a failure screenshot `failure-step-<index>` is taken, and later steps are
 * `skipped`. An `evaluate` step with `allowEvaluate: false` fails before any step runs.
 *
 * Every request goes through the network guard: the sandbox origin and `allowedHosts` pass,
 * anything else is aborted (redirect hops included, via a per-run proxy) and logged as `blocked`.
 * Console messages and page errors of every page in the context are recorded.
 *
 * @returns a {@link BrowserScriptOutcome}: `status`, `steps` (one record each), `assertions`
 * (`total`/`passed`/`failed`/`results` for each `expect` and asserted `evaluate`), `screenshots`
 * (PNG bytes, sanitised unique names), `console`, `pageErrors`, `network`, `html?`, `error?`
 * (`{ index, kind, selector?, code, message }`), `finalUrl`, `title`, `durationMs`.
 * Step failures are data; nothing here writes files.
 * @throws WpCodeboxError `invalid-steps-json` for steps that do not validate; Playwright errors
 * from creating the context (e.g. the browser was closed) propagate.
 * @example
 * const browser = await launchBrowser();
 * const outcome = await runBrowserInteractionScript(browser, {
 *   baseUrl: "http://127.0.0.1:9400", executionId: "exec-1", allowEvaluate: false,
 *   steps: [{ kind: "navigate", url: "/wp-admin/" }, { kind: "expect", selector: "#wpadminbar", state: "visible" }],
 * });
 */
export async function runBrowserInteractionScript(browser: Browser, options: RunBrowserScriptOptions): Promise<BrowserScriptOutcome> {
  const steps = assertValidBrowserInteractionScript([...options.steps]);
  const started = Date.now();
  const sandboxOrigin = new URL(options.baseUrl).origin;
  const allowedHosts = options.allowedHosts ?? [];
  const stepTimeoutMs = options.stepTimeoutMs ?? DEFAULT_BROWSER_STEP_TIMEOUT_MS;
  const totalTimeoutMs = options.timeoutMs ?? DEFAULT_BROWSER_TOTAL_TIMEOUT_MS;
  const runDeadline = totalTimeoutMs > 0 ? started + totalTimeoutMs : Infinity;
  const namer = new ScreenshotNamer(options.reservedScreenshotNames);

  const records: BrowserStepRecord[] = [];
  const assertions: BrowserAssertionResult[] = [];
  const screenshots: BrowserScreenshot[] = [];
  const consoleEntries: BrowserConsoleEntry[] = [];
  const pageErrors: BrowserPageError[] = [];
  let html: string | undefined;
  let failure: BrowserScriptError | undefined;
  let stepIndex = -1;

  const loopback = options.loopbackUrl ? new URL(options.loopbackUrl).origin : undefined;
  const mapToLoopback = loopback && loopback !== sandboxOrigin ? (url: string) => (url.startsWith(sandboxOrigin) ? `${loopback}${url.slice(sandboxOrigin.length)}` : url) : undefined;
  // The proxy also maps a stable sandbox origin to its loopback server, so it runs whenever one is set.
  const proxy: EgressProxy | undefined =
    allowedHosts === "all" && !mapToLoopback
      ? undefined
      : await startEgressProxy((url) => allowedHosts === "all" || isRequestAllowed(url, sandboxOrigin, allowedHosts), mapToLoopback);
  let context: BrowserContext | undefined;
  try {
    context = await browser.newContext({
      baseURL: sandboxOrigin,
      viewport: options.viewport ?? { ...DEFAULT_BROWSER_VIEWPORT },
      serviceWorkers: "block", // a service worker's fetches would bypass the routes
      acceptDownloads: false,
      // "<-loopback>" sends loopback traffic through the proxy too (Chromium bypasses it by default).
      ...(proxy ? { proxy: { server: proxy.server, bypass: "<-loopback>" } } : {}),
    });
    const network = await installNetworkGuard(context, sandboxOrigin, allowedHosts, () => stepIndex);
    context.on("console", (message) => {
      const location = message.location();
      consoleEntries.push({ type: message.type(), text: message.text(), url: location.url || undefined, lineNumber: location.url ? location.lineNumber : undefined, stepIndex });
    });
    context.on("weberror", (webError) => {
      const error = webError.error();
      pageErrors.push({ message: error.message, stack: error.stack, stepIndex });
    });
    if (options.determinism?.nowMs !== undefined) await context.clock.install({ time: options.determinism.nowMs });
    if (options.determinism?.seed !== undefined) await context.addInitScript(seededMathRandom, { seed: options.determinism.seed, key: options.determinism.key ?? 0 });
    if (options.cookies?.length) await context.addCookies([...options.cookies]);
    const page = await context.newPage();

    const denied = options.allowEvaluate ? -1 : steps.findIndex((s) => s.kind === "evaluate");
    for (const [index, step] of steps.entries()) {
      const selector = stepSelector(step);
      const base = { execution: options.executionId, index, kind: step.kind, ...(selector !== undefined ? { selector } : {}) };
      if (failure || (denied >= 0 && index !== denied)) {
        records.push({ ...base, status: "skipped", durationMs: 0 });
        continue;
      }
      stepIndex = index;
      const stepStarted = Date.now();
      const ownLimit = step.timeout ?? stepTimeoutMs;
      const remaining = runDeadline - stepStarted;
      const limitedByTotal = remaining <= (ownLimit > 0 ? ownLimit : Infinity);
      const limitMs = Math.max(0, Math.min(ownLimit > 0 ? ownLimit : Infinity, remaining));
      const timeoutMessage = limitedByTotal
        ? `${step.kind} step ${index}: Timeout ${totalTimeoutMs}ms exceeded (total budget for the script). Raise the timeout arg or shorten the script.`
        : `${step.kind} step ${index}: Timeout ${limitMs}ms exceeded. Check the selector or raise the step's timeout (or step-timeout).`;
      let error: { code: BrowserStepErrorCode; message: string } | undefined;
      let screenshot: string | undefined;
      let lastExpect: BrowserAssertionResult | undefined;
      let compared: Pick<BrowserStepRecord, "comparison" | "baselineUpdated"> = {};
      try {
        if (limitMs <= 0) throw new WpCodeboxError("timeout", timeoutMessage);
        const effect = await raceDeadline(
          runStep(step, { page, baseUrl: sandboxOrigin, index, timeoutMs: Number.isFinite(limitMs) ? limitMs : 0, deadline: stepStarted + limitMs - Math.min(250, limitMs / 4), allowEvaluate: options.allowEvaluate, namer, ...(options.baselines ? { baselines: options.baselines } : {}), updateBaselines: options.updateBaselines ?? false, onExpectObserved: (a) => (lastExpect = a) }),
          limitMs,
          () => new WpCodeboxError("timeout", timeoutMessage),
        );
        if (effect.assertion) assertions.push(effect.assertion);
        if (effect.screenshot) {
          screenshots.push(effect.screenshot);
          screenshot = effect.screenshot.name;
        }
        if (effect.html !== undefined) html = effect.html;
        compared = { ...(effect.comparison ? { comparison: effect.comparison } : {}), ...(effect.baselineUpdated !== undefined ? { baselineUpdated: effect.baselineUpdated } : {}) };
        if (effect.failure) error = effect.failure;
        else if (effect.assertion && !effect.assertion.passed) error = { code: "assertion-failed", message: effect.assertionMessage ?? `${step.kind} step ${index}: assertion failed.` };
      } catch (caught) {
        const code = classify(caught);
        const message =
          code === "timeout" ? timeoutMessage
          : code === "policy-denied" ? firstLine(caught)
          : `${step.kind} step ${index}${selector !== undefined ? ` (${selector})` : ""}: ${firstLine(caught)}`;
        if (step.kind === "expect" && code === "timeout" && lastExpect) {
          // The timer ended a slow poll: still an unmet expectation, reported with what was seen last.
          assertions.push(lastExpect);
          error = { code: "assertion-failed", message: expectFailureMessage(index, step, lastExpect.actual as ObservedLocatorState, limitMs) };
        } else {
          if (step.kind === "expect") {
            assertions.push({ index, kind: "expect", selector: step.selector, expected: { state: step.state }, actual: { error: message }, passed: false });
          }
          error = { code, message };
        }
      }
      // A page load of this step that died of a PHP fatal error fails the step.
      await settle(network.flush(), CLEANUP_TIMEOUT_MS);
      const phpFatals = stepPhpFatals(network.entries, index);
      // The fatal is the cause when the step also failed (a navigation to a page that died, say).
      if (phpFatals.length) error = { code: "php-fatal", message: `${phpFatalStepMessage(step.kind, index, phpFatals)}${error ? `; the step itself: ${error.message}` : ""}` };
      const fatalsField = phpFatals.length ? { phpFatals } : {};
      const durationMs = Date.now() - stepStarted;
      if (!error) {
        records.push({ ...base, status: "ok", durationMs, ...(screenshot ? { screenshot } : {}), ...compared, ...fatalsField });
        continue;
      }
      failure = { index, kind: step.kind, ...(selector !== undefined ? { selector } : {}), ...error };
      // A screenshot step that failed its comparison already holds the picture that matters.
      const shot = screenshot !== undefined ? undefined : await takeFailureScreenshot(page, index, namer);
      if (shot) screenshots.push(shot);
      const shotName = shot?.name ?? screenshot;
      records.push({ ...base, status: "failed", durationMs, ...(shotName ? { screenshot: shotName } : {}), error, ...compared, ...fatalsField });
    }

    if (options.captureFinalHtml) html = (await settle(page.content(), CLEANUP_TIMEOUT_MS)) ?? html;
    const title = (await settle(page.title(), CLEANUP_TIMEOUT_MS)) ?? "";
    const finalUrl = page.url();
    // Requests that finished after their step ended (late fetches) still count against it.
    await settle(network.flush(), CLEANUP_TIMEOUT_MS);
    for (const record of records) {
      if (record.status !== "ok" || record.phpFatals) continue;
      const late = stepPhpFatals(network.entries, record.index);
      if (!late.length) continue;
      record.phpFatals = late;
      if (!failure) {
        record.status = "failed";
        record.error = { code: "php-fatal", message: phpFatalStepMessage(record.kind, record.index, late) };
        failure = { index: record.index, kind: record.kind, ...(record.selector !== undefined ? { selector: record.selector } : {}), ...record.error };
      }
    }
    await network.uninstall();
    const passed = assertions.filter((a) => a.passed).length;
    return {
      status: failure ? "error" : "ok",
      steps: records,
      assertions: { total: assertions.length, passed, failed: assertions.length - passed, results: assertions },
      screenshots,
      console: consoleEntries,
      pageErrors,
      network: network.entries.map((entry) => ({ ...entry })),
      ...(html !== undefined ? { html } : {}),
      ...(failure ? { error: failure } : {}),
      finalUrl,
      title,
      durationMs: Date.now() - started,
    };
  } finally {
    if (context) await settle(context.close(), CLEANUP_TIMEOUT_MS);
    await proxy?.close();
  }
}

/** Resolves with the value, or `undefined` on error or after `ms`. */
async function settle<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  try {
    return await raceDeadline(promise, ms, () => new Error("timed out"));
  } catch {
    return undefined;
  }
}

async function takeFailureScreenshot(page: Page, index: number, namer: ScreenshotNamer): Promise<BrowserScreenshot | undefined> {
  const bytes = await settle(page.screenshot({ timeout: FAILURE_SCREENSHOT_TIMEOUT_MS }), FAILURE_SCREENSHOT_TIMEOUT_MS + 500);
  return bytes ? { name: namer.next(`failure-step-${index}`), index, reason: "failure", bytes: new Uint8Array(bytes) } : undefined;
}


/**
 * Init script (runs in every document before its scripts): `Math.random` becomes mulberry32 seeded
 * from (`seed`, `key`), so client ids and other page randomness repeat under the same seed.
 */
function seededMathRandom({ seed, key }: { seed: number; key: number }): void {
  let state = (Math.imul(seed % 4294967296 >>> 0, 2654435761) ^ Math.floor(seed / 4294967296) ^ Math.imul(key >>> 0, 40503)) >>> 0;
  Math.random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
