/**
 * `wordpress.browser-actions`: drives the sandbox's real wp-admin / front end in Chromium with a
 * `wp-codebox/browser-interaction-script/v1` script and turns the outcome into bundle
 * files under `files/browser/`.
 */
import {
  PolicyDeniedError,
  BROWSER_EVALUATE_CAPABILITY,
  WpCodeboxError,
  quoteValue,
  browserInteractionScriptUsesEvaluate,
  hasCapability,
  parseDuration,
  readBrowserScriptArgs,
  browserScriptFolder,
  type ArtifactFile,
  type BrowserInteractionStep,
  type RuntimePolicy,
} from "@wp-codebox/runtime-core";
import { launchBrowser } from "../browser/launch-browser.js";
import { runBrowserInteractionScript } from "../browser/run-browser-script.js";
import { browserBaselinePath, browserDiffPath, browserScreenshotPath, type BrowserScriptOutcome } from "../browser/browser-script-outcome.js";
import { readStepBaselines, writeUpdatedBaselines } from "../browser/step-baselines.js";
import type { CommandContext, CommandHandler, CommandOutcome } from "./command-context.js";

const jsonl = (rows: unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");

/** Which hosts besides the sandbox a page may reach, from the policy's network rule. */
export function browserAllowedHosts(policy: RuntimePolicy): "all" | string[] {
  if (policy.network === "allow") return "all";
  if (typeof policy.network === "object") return [...policy.network.allowHosts];
  return [];
}

/** Bundle files for one browser run; jsonl files are appended to by later runs in the same bundle. */
export function browserArtifactFiles(executionId: string, outcome: BrowserScriptOutcome): ArtifactFile[] {
  const files: ArtifactFile[] = [
    { path: "files/browser/steps.jsonl", kind: "browser-steps", contentType: "application/x-ndjson", content: jsonl(outcome.steps) },
    {
      path: "files/browser/console.jsonl",
      kind: "browser-console",
      contentType: "application/x-ndjson",
      content: jsonl([
        ...outcome.console.map((c) => ({ execution: executionId, ...c })),
        ...outcome.pageErrors.map((e) => ({ execution: executionId, type: "pageerror", ...e })),
      ]),
    },
    {
      path: "files/browser/network.jsonl",
      kind: "browser-network",
      contentType: "application/x-ndjson",
      content: jsonl(outcome.network.map((n) => ({ execution: executionId, ...n }))),
    },
  ];
  for (const shot of outcome.screenshots) {
    files.push({ path: browserScreenshotPath(shot.name), kind: "browser-screenshot", contentType: "image/png", content: shot.bytes });
    if (shot.baseline) files.push({ path: browserBaselinePath(shot.name), kind: "browser-baseline", contentType: "image/png", content: shot.baseline });
    if (shot.diff) files.push({ path: browserDiffPath(shot.name), kind: "browser-diff", contentType: "image/png", content: shot.diff });
  }
  if (outcome.html !== undefined) {
    files.push({ path: `files/browser/page-${executionId}.html`, kind: "browser-html", contentType: "text/html", content: outcome.html });
  }
  return files;
}

function wantsHtml(capture: string | undefined): boolean {
  return (capture ?? "").split(",").some((v) => v.trim() === "html" || v.trim() === "all");
}

function parseViewport(value: string | undefined): { width: number; height: number } | undefined {
  if (!value) return undefined;
  const m = /^(\d+)x(\d+)$/.exec(value);
  if (!m) throw new WpCodeboxError("invalid-argument", `viewport must look like 1280x720, got ${quoteValue(value)}.`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

/** Runs a script in a fresh browser context for the given actor; shared by browser-actions and -probe. */
export async function runScriptInSandbox(
  ctx: CommandContext,
  args: Record<string, string>,
  steps: BrowserInteractionStep[],
  options: { captureFinalHtml?: boolean; scriptFolder?: string } = {},
): Promise<BrowserScriptOutcome> {
  // Read (and confined) before the browser starts: a refused or unreadable baseline costs no run.
  const baselines = readStepBaselines(steps, options.scriptFolder ?? ctx.cwd, ctx.updateBaselines);
  const actor = await ctx.resolveActor(args.as);
  const cookies = actor.userId > 0 ? (await ctx.authFor(actor)).cookies.map((c) => ({ name: c.name, value: c.value, url: ctx.siteUrl })) : [];
  const browser = await launchBrowser();
  try {
    return await runBrowserInteractionScript(browser, {
      baseUrl: ctx.siteUrl,
      ...(ctx.loopbackUrl !== ctx.siteUrl ? { loopbackUrl: ctx.loopbackUrl } : {}),
      determinism: ctx.browserClock(),
      steps,
      cookies,
      allowEvaluate: hasCapability(ctx.policy, BROWSER_EVALUATE_CAPABILITY),
      allowedHosts: browserAllowedHosts(ctx.policy),
      stepTimeoutMs: args["step-timeout"] !== undefined ? parseDuration(args["step-timeout"]) : undefined,
      timeoutMs: args.timeout !== undefined ? parseDuration(args.timeout) : undefined,
      viewport: parseViewport(args.viewport),
      executionId: ctx.executionId,
      reservedScreenshotNames: ctx.reservedScreenshotNames(),
      captureFinalHtml: options.captureFinalHtml,
      ...(baselines.size ? { baselines, updateBaselines: ctx.updateBaselines } : {}),
    });
  } finally {
    await browser.close().catch(() => undefined);
  }
}

/** Shapes a browser outcome as a command outcome (summary JSON on stdout, files, assertions). */
export function browserOutcome(ctx: CommandContext, outcome: BrowserScriptOutcome): CommandOutcome {
  const summary = {
    status: outcome.status,
    finalUrl: outcome.finalUrl,
    title: outcome.title,
    durationMs: outcome.durationMs,
    steps: outcome.steps.map((s) => ({ index: s.index, kind: s.kind, status: s.status, durationMs: s.durationMs, ...(s.error ? { error: s.error } : {}), ...(s.comparison ? { comparison: s.comparison } : {}) })),
    assertions: outcome.assertions,
    screenshots: outcome.screenshots.map((s) => browserScreenshotPath(s.name)),
    ...(outcome.baselinesUpdated?.length ? { baselinesUpdated: outcome.baselinesUpdated } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
  const stdout = `${JSON.stringify(summary, null, 2)}\n`;
  return {
    status: outcome.status,
    exitCode: outcome.status === "ok" ? 0 : 1,
    stdout,
    stderr: "",
    json: summary,
    files: browserArtifactFiles(ctx.executionId, outcome),
    assertions: outcome.assertions,
    ...(outcome.error
      ? { error: { code: outcome.error.code, message: `step ${outcome.error.index} (${outcome.error.kind}${outcome.error.selector ? ` ${outcome.error.selector}` : ""}): ${outcome.error.message}`, data: { ...outcome.error } } }
      : {}),
  };
}

export const browserActions: CommandHandler = async (ctx, args) => {
  let steps = readBrowserScriptArgs(args, ctx.cwd);
  if (browserInteractionScriptUsesEvaluate(steps) && !hasCapability(ctx.policy, BROWSER_EVALUATE_CAPABILITY)) {
    // Checked before anything runs: page JavaScript from the caller needs its own capability.
    throw new PolicyDeniedError(
      BROWSER_EVALUATE_CAPABILITY,
      `This script has an evaluate step, which needs the capability "${BROWSER_EVALUATE_CAPABILITY}". Grant it with --policy '{"commands":["wordpress.browser-actions","${BROWSER_EVALUATE_CAPABILITY}"]}'.`,
    );
  }
  if (args.url !== undefined) steps = [{ kind: "navigate", url: args.url, description: "start url" } as BrowserInteractionStep, ...steps];
  const scriptFolder = browserScriptFolder(args, ctx.cwd);
  const outcome = await runScriptInSandbox(ctx, args, steps, { captureFinalHtml: wantsHtml(args.capture), scriptFolder });
  // Only a run whose steps all passed replaces baselines: a half-loaded page is no reference.
  if (ctx.updateBaselines && outcome.status === "ok") outcome.baselinesUpdated = writeUpdatedBaselines(outcome.screenshots, scriptFolder);
  return browserOutcome(ctx, outcome);
};

export const browserProbe: CommandHandler = async (ctx, args) => {
  const steps: BrowserInteractionStep[] = [{ kind: "navigate", url: args.url ?? "/" } as BrowserInteractionStep];
  if (args["wait-for"]) steps.push({ kind: "waitFor", selector: args["wait-for"] } as BrowserInteractionStep);
  steps.push({ kind: "screenshot", name: "probe" } as BrowserInteractionStep);
  const outcome = await runScriptInSandbox(ctx, args, steps, { captureFinalHtml: wantsHtml(args.capture) });
  const result = browserOutcome(ctx, outcome);
  const navigation = outcome.network.find((n) => n.resourceType === "document");
  const consoleErrors = outcome.console.filter((c) => c.type === "error").map((c) => c.text);
  const json = { ...(result.json as object), httpStatus: navigation?.status ?? null, consoleErrors, pageErrors: outcome.pageErrors.map((e) => e.message) };
  return { ...result, json, stdout: `${JSON.stringify(json, null, 2)}\n` };
};
