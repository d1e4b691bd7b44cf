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
  type RecordedProblem,
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
 * and the keys of the problems the recorder logged for that screen's request. The requests run at
 * the same time on the sandbox's PHP workers (`CheckRun.requestAll`); each row is credited by the
 * request tag the recorder put on it. Problems of other requests (WordPress calling itself, such as
 * the WP-Cron run a screen spawned) and every admin notice seen before activation are added to
 * `siteBaseline`: they are WordPress's wherever they show up later. Responses are not kept.
 */
export async function baselineCoreScreens(check: CheckRun, links: CoreScreenLinks, siteBaseline: Set<string>): Promise<Map<string, ScreenBaseline>> {
  const screens = coreScreens(links).filter((s) => s.skippedReason === undefined && (s.actor !== "subscriber" || check.subscriberAuth));
  const tagged = new Map(screens.map((s) => [`baseline-${s.id}`, s]));
  const answers = await check.requestAll([...tagged].map(([tag, s]) => ({ tag, path: s.target, actor: s.actor })));
  // Keyed by URL: a screen's baseline is every problem a request for its URL showed, whichever actor asked.
  const keysByTarget = new Map<string, Set<string>>();
  for (const problem of await check.drain()) {
    const key = problemKey(problem);
    const screen = problem.request !== undefined ? tagged.get(problem.request) : undefined;
    if (screen !== undefined && problem.uri === screen.target && !problem.level.startsWith("admin-notice")) {
      if (!keysByTarget.has(screen.target)) keysByTarget.set(screen.target, new Set());
      keysByTarget.get(screen.target)!.add(key);
    } else {
      siteBaseline.add(key);
    }
  }
  return new Map(screens.map((s, i) => {
    const answer = answers[i]!;
    return [s.id, { status: "status" in answer ? answer.status : 0, keys: keysByTarget.get(s.target) ?? new Set<string>() }];
  }));
}

/**
 * Visits every core screen with the plugin active, one surface each, the requests at the same
 * time on the sandbox's PHP workers; surfaces, evidence and findings are recorded in the screens'
 * order once every request answered. A problem the same screen had before activation is dropped;
 * a response ≥ 500 is an `http-error` finding only when the screen answered below 500 before; a
 * request past the surface time limit is a `timeout` finding (its worker was replaced).
 * `post-new.php` records which editor it showed.
 */
export async function exerciseCoreScreens(check: CheckRun, links: CoreScreenLinks, added: PluginInventory, baseline: ReadonlyMap<string, ScreenBaseline>): Promise<void> {
  const screens = coreScreens(links, added.importers).map((screen) => ({
    screen,
    base: { id: screen.id, kind: screen.kind, target: screen.target, actor: screen.actor },
    skippedReason: screen.skippedReason ?? (screen.actor === "subscriber" && !check.subscriberAuth ? "the sample subscriber could not be created" : undefined),
  }));
  const visited = screens.filter((s) => s.skippedReason === undefined);
  const answers = await check.requestAll(visited.map(({ screen }) => ({ tag: screen.id, path: screen.target, actor: screen.actor as "admin" | "anonymous" | "subscriber" })));
  const answerOf = new Map(visited.map(({ screen }, i) => [screen.id, answers[i]!]));
  check.markSettled(visited.map(({ screen }) => [screen.id, baseline.get(screen.id)]));
  // A row of no screen's request (none is expected) goes to the screen of its URL, else the last one.
  const rows = await check.drain();
  const evidenceOf = new Map<string, string>();
  for (const { screen } of visited) {
    const answer = answerOf.get(screen.id)!;
    if ("status" in answer) evidenceOf.set(screen.id, check.keepResponse(screen.id, answer));
  }
  const fallback = (row: RecordedProblem) => visited.find(({ screen }) => screen.target === row.uri)?.screen.id ?? visited[visited.length - 1]!.screen.id;
  const problemsOf = visited.length ? check.credit(rows, fallback) : new Map<string, RecordedProblem[]>();
  for (const { screen, base, skippedReason } of screens) {
    if (skippedReason !== undefined) {
      check.surfaces.push({ ...base, durationMs: 0, skippedReason });
      continue;
    }
    const answer = answerOf.get(screen.id)!;
    if (!("status" in answer)) {
      check.timeoutFinding(base, screen.callback);
      check.surfaces.push({ ...base, durationMs: answer.durationMs });
      continue;
    }
    const evidence = evidenceOf.get(screen.id)!;
    const before = baseline.get(screen.id);
    const problems = problemsOf.get(screen.id) ?? [];
    if (before === undefined || before.status < 500) check.httpFinding(screen.id, answer.status, problems, evidence, screen.what, screen.callback);
    if (screen.target === "/wp-admin/plugins.php" && screen.actor === "admin" && answer.status === 200) check.pluginsScreen = { status: answer.status, body: answer.body };
    const editor = screen.target === "/wp-admin/post-new.php" ? editorOf(answer.body) : undefined;
    check.surfaces.push({ ...base, httpStatus: answer.status, evidence, ...(editor ? { editor } : {}), durationMs: answer.durationMs });
  }
}
