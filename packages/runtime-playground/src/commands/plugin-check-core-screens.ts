/**
 * The core screens of `wordpress.check`: WordPress's own front end, login screens and wp-admin
 * screens (plus the importer screens the plugin registers), visited with the plugin active as the
 * actor a real visitor would be, each compared with the same request before activation. Which
 * screens, and how a baseline is subtracted, is decided in runtime-core (`coreScreens`).
 */
import {
  WpCodeboxError,
  coreScreens,
  editorOf,
  problemKey,
  type CoreScreenLinks,
  type PluginInventory,
  type ScreenBaseline,
} from "@wp-codebox/runtime-core";
import type { CheckRun } from "./plugin-check.js";

/**
 * Seeds what the core screens need (a post in a new category, a page, a subscriber) and logs the
 * subscriber in. Runs before any baseline, so the seeding's own traces are not the plugin's.
 * @returns the URLs of the screens that depend on content or on the site's settings.
 * @throws WpCodeboxError `check-failed` when WordPress could not create the content.
 */
export async function seedCoreScreens(check: CheckRun): Promise<CoreScreenLinks> {
  const seeded = await check.action<{ links?: CoreScreenLinks; subscriberId?: number }>("core-screens-seed", "seed-core", {});
  const links = seeded.result?.links;
  if (!links) throw new WpCodeboxError("check-failed", `Creating the sample post, page and subscriber of the core screens failed (see ${seeded.evidence}).`, { evidence: seeded.evidence });
  const subscriberId = seeded.result?.subscriberId ?? 0;
  if (subscriberId > 0) check.subscriberAuth = await check.ctx.authFor({ userId: subscriberId, label: "subscriber" });
  return links;
}

/**
 * Requests every core screen once before activation and returns, per surface id, the HTTP status
 * and the keys of the problems the recorder logged for that URL. Problems of other requests
 * (WordPress calling itself) and every admin notice seen before activation are added to
 * `siteBaseline`: they are WordPress's wherever they show up later. Responses are not kept.
 */
export async function baselineCoreScreens(check: CheckRun, links: CoreScreenLinks, siteBaseline: Set<string>): Promise<Map<string, ScreenBaseline>> {
  const screens = coreScreens(links).filter((s) => s.skippedReason === undefined && (s.actor !== "subscriber" || check.subscriberAuth));
  const statuses = new Map<string, number>();
  for (const screen of screens) {
    const response = await check.request(`baseline-${screen.id}`, "GET", screen.target, screen.actor, { keep: false });
    statuses.set(screen.id, response.status);
  }
  const keysByTarget = new Map<string, Set<string>>();
  const targets = new Set(screens.map((s) => s.target));
  for (const problem of await check.drain()) {
    const key = problemKey(problem);
    if (problem.uri !== undefined && targets.has(problem.uri) && !problem.level.startsWith("admin-notice")) {
      if (!keysByTarget.has(problem.uri)) keysByTarget.set(problem.uri, new Set());
      keysByTarget.get(problem.uri)!.add(key);
    } else {
      siteBaseline.add(key);
    }
  }
  return new Map(screens.map((s) => [s.id, { status: statuses.get(s.id) ?? 0, keys: keysByTarget.get(s.target) ?? new Set<string>() }]));
}

/**
 * Visits every core screen with the plugin active, one surface each. A problem the same screen
 * had before activation is dropped; a response ≥ 500 is an `http-error` finding only when the
 * screen answered below 500 before. `post-new.php` records which editor it showed.
 */
export async function exerciseCoreScreens(check: CheckRun, links: CoreScreenLinks, added: PluginInventory, baseline: ReadonlyMap<string, ScreenBaseline>): Promise<void> {
  for (const screen of coreScreens(links, added.importers)) {
    const base = { id: screen.id, kind: screen.kind, target: screen.target, actor: screen.actor };
    const skippedReason = screen.skippedReason ?? (screen.actor === "subscriber" && !check.subscriberAuth ? "the sample subscriber could not be created" : undefined);
    if (skippedReason !== undefined) {
      check.surfaces.push({ ...base, durationMs: 0, skippedReason });
      continue;
    }
    await check.surface(
      base,
      async () => {
        const response = await check.request(screen.id, "GET", screen.target, screen.actor);
        const before = baseline.get(screen.id);
        const problems = await check.settle(screen.id, before);
        if (before === undefined || before.status < 500) check.httpFinding(screen.id, response.status, problems, response.evidence, screen.what, screen.callback);
        const editor = screen.target === "/wp-admin/post-new.php" ? editorOf(response.body) : undefined;
        return { httpStatus: response.status, evidence: response.evidence, ...(editor ? { editor } : {}) };
      },
      screen.callback,
    );
  }
}
