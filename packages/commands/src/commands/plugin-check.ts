/**
 * `wordpress.check`: finds every place a plugin breaks. In one sandbox it installs a recorder
 * (a must-use plugin that logs every PHP error, WordPress deprecation and failed query), takes an
 * inventory of the site, activates the plugin, takes the inventory again, and exercises what the
 * plugin added, each as the actor a real visitor would be:
 * - admin pages as admin over HTTP (and in Chromium with `browser=true`),
 * - REST routes without path parameters, as admin: GET, or the route's own methods when it has no
 *   GET, with the smallest arguments its schema allows, then OPTIONS (`exerciseRestRoute`),
 * - shortcodes and blocks on a published page, post type archives and a sample single, anonymously,
 * - cron hooks run once with their scheduled args.
 * - WordPress's own screens with the plugin active (front end as anonymous and as a subscriber,
 *   login screens, core wp-admin screens, the plugin's importers), each compared with the same
 *   request before activation (`plugin-check-core-screens.ts`); admin notices are findings.
 * It then deactivates the plugin through the Plugins screen's own link, uninstalls it as that
 * screen's Delete does (`deactivateAsWpAdmin`), and lists what it left behind, files included. Every problem
 * becomes a finding that points at the bundle file proving it (`files/check/…`).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import {
  DEFAULT_CHECK_SURFACE_TIMEOUT_MS,
  WpCodeboxError,
  buildPluginCheckReport,
  describeUnmetRequirement,
  unmetRequirements,
  parseDuration,
  diffInventory,
  findingKey,
  callbackCoverage,
  coverageFails,
  creditProblems,
  failsCheck,
  findingsFromProblems,
  minimalRestArgs,
  pluginCheckJunit,
  summarizePluginCheck,
  type ArtifactFile,
  type CheckSeverity,
  type CheckSurface,
  type PluginCheckReport,
  type PluginInventory,
  type RawFinding,
  type RecordedProblem,
  type ScreenBaseline,
  withoutScreenBaseline,
  CHECK_SOURCES_PATH,
  sourceExcerpt,
  type SourceExcerpt,
} from "@wp-codebox/runtime-core";
import { baselineCoreScreens, exerciseCoreScreens, seedCoreScreens } from "./plugin-check-core-screens.js";
import { phpProgram } from "../php-source/php-assets.js";
import { phpValue } from "../php-source/php-value.js";
import { runScriptInSandbox } from "./browser-actions.js";
import { outcomeFromRun } from "./run-php.js";
import { text, type ActorAuth, type CommandContext, type CommandHandler } from "./command-context.js";

/** Where the recorder writes, inside the sandbox's own wp-content (shared by every PHP worker). */
const CHECK_DIR = "/wordpress/wp-content/.wp-codebox-check";
const PROBLEM_LOG = `${CHECK_DIR}/problems.jsonl`;
const ORIGIN_LOG = `${CHECK_DIR}/origins.jsonl`;
const COVERAGE_LOG = `${CHECK_DIR}/coverage.jsonl`;
/** Why `coverage=lines` is not measured: the one Xdebug the PHP build ships is not offered. */
const LINE_COVERAGE_UNAVAILABLE =
  "line coverage needs Xdebug's coverage mode, and wp-codebox does not load the Xdebug the php-wasm build ships (it is built as a step debugger that waits for an IDE), so only callback coverage is measured";
const RECORDER_PATH = "/wordpress/wp-content/mu-plugins/0-wp-codebox-check.php";
/** PHP workers that serve the core screens' requests at the same time (capped at the cores). */
const CHECK_PARALLEL_WORKERS = 2;
/** Response bodies kept as evidence are cut here (bytes of UTF-8 text). */
const EVIDENCE_CAP_BYTES = 512 * 1024;

type Surface = Omit<CheckSurface, "findings" | "status">;

/** The surface whose work is running; `abandoned` once its time limit passed. */
const surfaceScope = new AsyncLocalStorage<{ abandoned: boolean }>();

/**
 * Refuses PHP work from a surface whose time limit passed: its closure may still be running (a
 * browser step answered by the killed worker), and its requests must not mix with the next
 * surface's (draining the problem log would take the next surface's problems).
 */
function assertSurfaceLive(): void {
  if (surfaceScope.getStore()?.abandoned) throw new WpCodeboxError("timeout", "This surface ran out of time; its remaining work is dropped.");
}

/** State of one check run: evidence files, raw findings and surfaces, in the order they happened. */
export class CheckRun {
  readonly files: ArtifactFile[] = [];
  readonly findings: RawFinding[] = [];
  readonly surfaces: Surface[] = [];
  private fileNumber = 0;
  private adminAuth: ActorAuth | undefined;
  adminId = 1;
  /** Auth of the seeded subscriber (front-end screens), once seeded. */
  subscriberAuth: ActorAuth | undefined;
  /** The Plugins screen as the admin's core-screen request got it (HTTP 200), for deactivation's link. */
  pluginsScreen: { status: number; body: string } | undefined;
  /** Requests `requestAll` runs at the same time: the PHP workers `ctx.parallelWorkers` gave. */
  parallelWorkers = 1;
  /** Limit of each surface in ms (`surface-timeout`). */
  surfaceTimeoutMs = DEFAULT_CHECK_SURFACE_TIMEOUT_MS;

  constructor(
    readonly ctx: CommandContext,
    readonly token: string,
  ) {}

  /** Adds an evidence file under `files/check/<folder>/NN-<name>` and returns its bundle path. */
  evidence(folder: string, name: string, content: string | Uint8Array, contentType: string): string {
    this.fileNumber += 1;
    const dot = name.lastIndexOf(".");
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
    const safe = `${stem.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "item"}${ext}`;
    const path = `files/check/${folder}/${String(this.fileNumber).padStart(3, "0")}-${safe}`;
    const body = typeof content === "string" && Buffer.byteLength(content) > EVIDENCE_CAP_BYTES ? `${Buffer.from(content).subarray(0, EVIDENCE_CAP_BYTES).toString("utf8")}\n[cut at ${EVIDENCE_CAP_BYTES} bytes]\n` : content;
    this.files.push({ path, kind: "check-evidence", contentType, content: body });
    return path;
  }

  /** Runs one step of `php/plugin-check/actions.php`; a fatal becomes a finding on `surface`. */
  async action<T>(surface: string, op: string, params: Record<string, unknown>): Promise<{ result: T | undefined; output: string; evidence: string }> {
    assertSurfaceLive();
    const run = await this.ctx.runPhp(phpProgram({ wp_codebox_check_action: phpValue({ op, userId: this.adminId, ...params }) }, "plugin-check/actions.php"));
    const stdout = text(run.stdout.data);
    const stderr = text(run.stderr.data);
    const evidence = this.evidence("outputs", `${surface}.txt`, `${stdout}${stderr ? `\n--- stderr ---\n${stderr}` : ""}`, "text/plain");
    const lastLine = stdout.slice(stdout.lastIndexOf("\n") + 1);
    let parsed: { result: T; printed: string } | undefined;
    try {
      parsed = JSON.parse(lastLine) as { result: T; printed: string };
    } catch {
      parsed = undefined;
    }
    const outcome = outcomeFromRun(run);
    if (outcome.error && outcome.error.code !== "php-fatal") {
      // php-fatal is recorded by the recorder with its file and line; other exits are reported here.
      this.findings.push({ severity: "error", kind: "php-fatal", surface, message: outcome.error.message, evidence });
    }
    return { result: parsed?.result, output: parsed ? parsed.printed : stdout, evidence };
  }

  /** Reads and empties the problem log; every problem since the last drain belongs to `surface`. */
  async drain(): Promise<RecordedProblem[]> {
    const rows = await this.readLog(PROBLEM_LOG);
    return rows as unknown as RecordedProblem[];
  }

  async readLog(path: string): Promise<Record<string, unknown>[]> {
    assertSurfaceLive();
    const run = await this.ctx.runPhp(`<?php $p = ${phpValue(path)}; $d = @file_get_contents($p); if ($d !== false) { @unlink($p); echo $d; }`);
    return text(run.stdout.data)
      .split("\n")
      .filter((l) => l.trim() !== "")
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  }

  /** Surfaces settled so far, with the baseline each one subtracts (late rows of theirs are theirs). */
  private readonly settled = new Map<string, ScreenBaseline | undefined>();

  /**
   * Drains what the recorder saw since the last call and turns it into findings of `surface`.
   * A row tagged with an earlier surface's request (its WP-Cron run finished late) is credited to
   * that surface instead (`creditProblems`); untagged rows (run-php work) are this surface's.
   * Their evidence is the recorder's log excerpt (message, file, line, stack): HTTP requests do not
   * display PHP errors, as on a production site, so the response alone does not prove the cause.
   * @returns the problems credited to `surface`, after its baseline.
   */
  async settle(surface: string, ignore?: ScreenBaseline): Promise<RecordedProblem[]> {
    const rows = await this.drain();
    this.settled.set(surface, ignore);
    return this.credit(rows, () => surface).get(surface) ?? [];
  }

  /**
   * Turns drained rows into findings, each of the surface `creditProblems` names (a settled one,
   * else `fallback(row)`), after that surface's baseline; one evidence log per surface, in the
   * order the surfaces were settled.
   * @returns the problems kept, per surface id.
   */
  credit(rows: readonly RecordedProblem[], fallback: (row: RecordedProblem) => string): Map<string, RecordedProblem[]> {
    const kept = new Map<string, RecordedProblem[]>();
    const credited = creditProblems(rows, this.settled.keys(), fallback);
    for (const [id, list] of [...credited].sort(([a], [b]) => this.settledOrder(a) - this.settledOrder(b))) {
      const problems = withoutScreenBaseline(list, this.settled.get(id));
      kept.set(id, problems);
      if (problems.length === 0) continue;
      const log = this.evidence("php-errors", `${id}.jsonl`, problems.map((p) => `${JSON.stringify(p)}\n`).join(""), "application/x-ndjson");
      this.findings.push(...findingsFromProblems(problems, id, log));
    }
    return kept;
  }

  private settledOrder(id: string): number {
    const index = [...this.settled.keys()].indexOf(id);
    return index < 0 ? Number.MAX_SAFE_INTEGER : index;
  }

  /** Marks surfaces as settled (with their baselines) before their rows are drained together. */
  markSettled(entries: Iterable<[string, ScreenBaseline | undefined]>): void {
    for (const [id, ignore] of entries) this.settled.set(id, ignore);
  }

  async auth(): Promise<ActorAuth> {
    this.adminAuth ??= await this.ctx.authFor({ userId: this.adminId, label: "admin" });
    return this.adminAuth;
  }

  /**
   * An HTTP request to the sandbox as admin, subscriber or anonymously; the body is kept as
   * evidence unless `keep` is false (evidence is then ""). `json` is sent as a JSON body.
   */
  async request(surface: string, method: string, path: string, actor: "admin" | "anonymous" | "subscriber", options: { keep?: boolean; json?: unknown } = {}): Promise<{ status: number; body: string; evidence: string }> {
    assertSurfaceLive();
    const headers = await this.headers(surface, actor, options.json !== undefined);
    const response = await this.ctx.http({ method, url: new URL(path, this.ctx.siteUrl).toString(), headers, ...(options.json !== undefined ? { body: new TextEncoder().encode(JSON.stringify(options.json)) } : {}) });
    const answer = { status: response.status, body: text(response.body.data), type: response.headers["content-type"]?.[0] };
    return { status: answer.status, body: answer.body, evidence: options.keep === false ? "" : this.keepResponse(surface, answer) };
  }

  /**
   * Request headers of one check request: the actor's cookies and REST nonce, and the tag the
   * recorder puts on every row of the request (`X-WP-Codebox-Check-Request`, the surface id).
   * @throws WpCodeboxError `check-failed` for the subscriber when it was not created.
   */
  async headers(surface: string, actor: "admin" | "anonymous" | "subscriber", json = false): Promise<Record<string, string>> {
    const headers: Record<string, string> = { "x-wp-codebox-check-request": surface };
    if (actor !== "anonymous") {
      const auth = actor === "admin" ? await this.auth() : this.subscriberAuth;
      if (!auth) throw new WpCodeboxError("check-failed", "The subscriber of the core screens was not created.");
      headers.cookie = auth.cookies.map((c) => `${c.name}=${c.value}`).join("; ");
      headers["x-wp-nonce"] = auth.restNonce;
    }
    if (json) headers["content-type"] = "application/json";
    return headers;
  }

  /** Keeps a response body as evidence under `responses/`; returns its bundle path. */
  keepResponse(surface: string, response: { body: string; type: string | undefined }): string {
    const type = (response.type ?? "text/html").split(";")[0]!.trim() || "text/html";
    return this.evidence("responses", `${surface}.${type.includes("json") ? "json" : "html"}`, response.body, type.includes("json") ? "application/json" : "text/html");
  }

  /**
   * GET requests that run at the same time on the sandbox's PHP workers (`parallelWorkers`), each
   * with the surface time limit. Answers come back in the order asked, whatever order they
   * finished in; nothing is kept as evidence here, so evidence numbering stays in that order.
   * @returns per request its status, body and content type, its duration in ms, or `timedOut`.
   */
  async requestAll(requests: readonly { tag: string; path: string; actor: "admin" | "anonymous" | "subscriber" }[]): Promise<({ status: number; body: string; type: string | undefined; durationMs: number } | { timedOut: true; durationMs: number })[]> {
    const prepared = await Promise.all(requests.map(async (r) => ({ ...r, headers: await this.headers(r.tag, r.actor) })));
    const answers: Awaited<ReturnType<CheckRun["requestAll"]>> = [];
    let next = 0;
    // One lane per worker, each taking the next request in order: a request is sent when a worker
    // can take it, so its duration is its own, not the wait behind the others.
    const lane = async (): Promise<void> => {
      while (next < prepared.length) {
        const index = next++;
        const r = prepared[index]!;
        const started = Date.now();
        try {
          const response = await this.ctx.httpParallel({ method: "GET", url: new URL(r.path, this.ctx.siteUrl).toString(), headers: r.headers }, { deadlineMs: this.surfaceTimeoutMs });
          answers[index] = { status: response.status, body: text(response.body.data), type: response.headers["content-type"]?.[0], durationMs: Date.now() - started };
        } catch (error) {
          if (!(error instanceof WpCodeboxError && error.code === "timeout")) throw error;
          answers[index] = { timedOut: true as const, durationMs: Date.now() - started };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.parallelWorkers) }, lane));
    return answers;
  }

  /**
   * The timeout finding of a surface whose work outlasted `surfaceTimeoutMs` (its worker was
   * replaced). @param where - the plugin's callback behind the surface.
   */
  timeoutFinding(surface: Omit<Surface, "durationMs">, where?: { file: string; line: number }): void {
    const seconds = this.surfaceTimeoutMs / 1000;
    const evidence = this.evidence("timeouts", `${surface.id}.json`, `${JSON.stringify({ ...surface, limitMs: this.surfaceTimeoutMs, workerReplaced: true }, null, 2)}\n`, "application/json");
    this.findings.push({
      severity: "error",
      kind: "timeout",
      surface: surface.id,
      message: `${surface.kind} ${surface.target} did not finish within ${seconds}s (surface-timeout): its PHP worker was stopped and replaced, and the check went on. Look for an endless loop or a request that waits on something that never answers${where ? `, starting at its callback (${where.file}:${where.line})` : ""}.`,
      ...(where ? { file: where.file, line: where.line } : {}),
      evidence,
    });
  }

  async inventory(surface: string): Promise<PluginInventory> {
    const { status, body, evidence } = await this.request(surface, "GET", `/wp-admin/index.php?wp-codebox-check-inventory=${this.token}`, "admin");
    try {
      return JSON.parse(body) as PluginInventory;
    } catch {
      throw new WpCodeboxError("check-failed", `The inventory request answered HTTP ${status} without the inventory: wp-admin did not load (see ${evidence}).`, { status, evidence });
    }
  }

  /**
   * Times one surface; `work` returns its target details. Work that outlasts `surfaceTimeoutMs` is
   * a `timeout` finding: the PHP worker is stopped and replaced (PHP cannot be interrupted from
   * inside), what the recorder logged before the hang is kept, and the check goes on.
   * @param where - the plugin's callback behind the surface (from the inventory), named in a
   *   timeout finding as its file and line.
   */
  async surface(surface: Omit<Surface, "durationMs">, work: () => Promise<Partial<Surface> | void>, where?: { file: string; line: number }): Promise<void> {
    const started = Date.now();
    const scope = { abandoned: false };
    const outcome = await this.ctx.withDeadline(this.surfaceTimeoutMs, () => surfaceScope.run(scope, work));
    if (!outcome.done) {
      scope.abandoned = true;
      this.timeoutFinding(surface, where);
      await this.settle(surface.id);
    }
    this.surfaces.push({ ...surface, ...(outcome.done ? (outcome.value ?? {}) : {}), durationMs: Date.now() - started });
  }

  /** A response ≥ 500 that no PHP fatal explains is a finding of its own. */
  httpFinding(surface: string, status: number, problems: RecordedProblem[], evidence: string, message: string, where?: { file: string; line: number }): void {
    if (status < 500 || problems.some((p) => p.level === "fatal")) return;
    this.findings.push({ severity: "error", kind: "http-error", surface, message: `${message} answered HTTP ${status}`, ...(where ? { file: where.file, line: where.line } : {}), evidence });
  }
}

/**
 * The script and line a JavaScript error came from: the first `URL:line:col` of its stack, else
 * the console entry's URL and 0-based line. URLs of the sandbox are made relative to its origin,
 * so findings do not depend on the port.
 */
function jsLocation(siteUrl: string, stack: string | undefined, fallbackUrl: string | undefined, fallbackLine: number | undefined): { file?: string; line?: number } {
  const relative = (url: string) => (url.startsWith(new URL(siteUrl).origin) ? url.slice(new URL(siteUrl).origin.length) : url);
  const m = stack ? /\(?((?:https?|file):\/\/[^\s)]+?):(\d+)(?::\d+)?\)?\s*$/m.exec(stack) : null;
  if (m) return { file: relative(m[1]!), line: Number(m[2]) };
  return { ...(fallbackUrl ? { file: relative(fallbackUrl) } : {}), ...(fallbackLine !== undefined ? { line: fallbackLine + 1 } : {}) };
}

export const pluginCheck: CommandHandler = async (ctx, args) => {
  const failOn = (args["fail-on"] ?? "error") as CheckSeverity;
  const check = new CheckRun(ctx, randomBytes(16).toString("hex"));
  check.adminId = (await ctx.resolveActor("admin")).userId;
  if (args["surface-timeout"] !== undefined) check.surfaceTimeoutMs = parseDuration(args["surface-timeout"]);
  const minCoverage = args["min-callback-coverage"] !== undefined ? Number(args["min-callback-coverage"]) : undefined;
  if (minCoverage !== undefined && !(minCoverage >= 0 && minCoverage <= 100)) {
    throw new WpCodeboxError("invalid-argument", `min-callback-coverage must be a percentage from 0 to 100, got ${args["min-callback-coverage"]}.`, { "min-callback-coverage": args["min-callback-coverage"] });
  }

  // 1. Which plugin, and the recorder.
  const resolved = await check.action<{ error?: string; file: string; dir: string; name: string; version: string; active: boolean }>("resolve", "resolve", { plugin: args.plugin });
  if (!resolved.result || resolved.result.error) {
    throw new WpCodeboxError("invalid-argument", `${resolved.result?.error ?? "The plugin could not be read."} Mount the plugin there (wp-codebox check PLUGIN_DIR does) and pass its folder or main file as plugin=.`, { plugin: args.plugin });
  }
  const plugin = resolved.result;
  // The core screens' requests run two at a time: a second PHP worker boots now, while the site is
  // seeded and inventoried on the primary (more than two did not pay on a 2-core machine).
  check.parallelWorkers = ctx.parallelWorkers(CHECK_PARALLEL_WORKERS);
  await ctx.writeSandboxFile(
    RECORDER_PATH,
    phpProgram({ wp_codebox_check_config: phpValue({ log: PROBLEM_LOG, origins: ORIGIN_LOG, coverage: COVERAGE_LOG, token: check.token, pluginDir: plugin.dir }) }, "plugin-check/collector.php", "plugin-check/inventory.php", "plugin-check/notice-text.php", "plugin-check/notices.php"),
  );

  // 2. The site without the plugin. WordPress's own problems seen here are not the plugin's.
  if (plugin.active) await check.action("deactivation", "deactivate", { file: plugin.file });
  const links = await seedCoreScreens(check);
  const before = await check.inventory("inventory-before");
  const baseline = new Set(findingsFromProblems(await check.drain(), "baseline", "").map(findingKey));
  // The core screens before activation: what they show then is WordPress's, not the plugin's.
  const screenBaseline = await baselineCoreScreens(check, links, baseline);

  // 3. Activation.
  let active = false;
  // Requirements the sandbox does not meet (read from the mounted host folder): reported, and the
  // plugin is not activated, since WordPress would refuse it or it would break in ways that say less.
  const hostSource = ctx.mounts.find((m) => m.target === plugin.dir)?.source;
  const info = ctx.info();
  const unmet = hostSource ? unmetRequirements({ plugins: [hostSource] }, { wordpress: info.wordpressVersion, php: info.phpVersion }) : [];
  await check.surface({ id: "activation", kind: "activation", target: plugin.file, actor: "admin" }, async () => {
    if (unmet.length) {
      const evidence = check.evidence("outputs", "requirements.json", `${JSON.stringify({ unmet }, null, 2)}\n`, "application/json");
      for (const u of unmet) check.findings.push({ severity: "error", kind: "requirements", surface: "activation", message: describeUnmetRequirement(u), evidence });
      return { evidence };
    }
    const activated = await check.action<{ error: { code: string; message: string; output: string | null } | null; active: boolean }>("activation", "activate", { file: plugin.file });
    active = activated.result?.active ?? false;
    const error = activated.result?.error;
    if (error?.code === "unexpected_output" && error.output) {
      const evidence = check.evidence("outputs", "activation-output.html", error.output, "text/html");
      check.findings.push({ severity: "warning", kind: "activation-output", surface: "activation", message: `Activation printed ${Buffer.byteLength(error.output)} bytes of unexpected output: ${error.output.trim().slice(0, 200)}`, evidence });
    }
    await check.settle("activation");
    // Not active afterwards is a failed activation whatever the cause: a fatal (already a finding,
    // with its file and line), a WP_Error, a plugin that deactivated itself, or PHP ending
    // (exit/die) before activate_plugin() returned.
    if (!active && !check.findings.some((f) => f.surface === "activation" && f.kind === "php-fatal")) {
      const message = error
        ? `Activation failed: ${error.message}`
        : activated.result
          ? "The plugin is not active after activation (it deactivated itself or refused to activate)."
          : "Activation did not finish: PHP ended before activate_plugin() returned (does the plugin call exit or die while it loads?).";
      check.findings.push({ severity: "error", kind: "php-fatal", surface: "activation", message, evidence: activated.evidence });
    }
    return { evidence: activated.evidence };
  });

  let after = before;
  if (active) {
    await check.surface({ id: "admin-load", kind: "admin-load", target: "/wp-admin/", actor: "admin" }, async () => {
      after = await check.inventory("inventory-after");
      await check.settle("admin-load");
    });
  }
  const added = diffInventory(before, after);
  check.files.push({ path: "files/check/inventory.json", kind: "check-inventory", contentType: "application/json", content: `${JSON.stringify({ before, after, added }, null, 2)}\n` });

  if (active) await exerciseSurfaces(check, added, args.browser === "true");
  if (active) await exerciseCoreScreens(check, links, added, screenBaseline);

  // 6. Deactivate, uninstall, and what is left.
  let uninstall: PluginCheckReport["uninstall"] = "none";
  const leftovers: PluginCheckReport["leftovers"] = { options: [], tables: [], cronHooks: [], files: [] };
  if (active && args.uninstall !== "false") {
    await check.surface({ id: "deactivation", kind: "deactivation", target: plugin.file, actor: "admin" }, async () => {
      const { how, evidence } = await deactivateAsWpAdmin(check, plugin.file);
      await check.settle("deactivation");
      labelLifecycleFindings(check, "deactivation", how);
      return { evidence, how };
    });
    const how = "uninstall_plugin() as the Plugins screen's Delete runs it (WP_ADMIN, wp-admin/includes/admin.php, current screen plugins), the plugin's files kept";
    await check.surface({ id: "uninstall", kind: "uninstall", target: plugin.file, actor: "admin" }, async () => {
      const done = await check.action<{ uninstall: PluginCheckReport["uninstall"] }>("uninstall", "uninstall", { file: plugin.file });
      uninstall = done.result?.uninstall ?? "none";
      await check.settle("uninstall");
      labelLifecycleFindings(check, "uninstall", how);
      const final = await check.inventory("inventory-after-uninstall");
      await check.drain();
      const left = diffInventory(before, final);
      leftovers.options = left.options;
      leftovers.tables = left.tables;
      leftovers.cronHooks = [...new Set(left.cronHooks.map((c) => c.hook))];
      leftovers.files = left.files;
      const evidence = check.evidence("leftovers", "after-uninstall.json", `${JSON.stringify({ uninstall, leftovers, inventory: final }, null, 2)}\n`, "application/json");
      const origins = await check.readLog(ORIGIN_LOG);
      const originOf = (kind: string, name: string) => origins.find((o) => o.kind === kind && o.name === name) as { file: string; line: number } | undefined;
      const done2 = uninstall === "none" ? "the plugin has no uninstall.php or uninstall hook" : `after ${uninstall} ran`;
      for (const [kind, names] of [["option", leftovers.options], ["table", leftovers.tables], ["cron hook", leftovers.cronHooks]] as const) {
        for (const name of names) {
          const where = originOf(kind, name);
          check.findings.push({ severity: "warning", kind: "leftover", surface: "uninstall", message: `The ${kind} ${name} is still there after deactivation and uninstall (${done2}; uninstall run as ${how}).`, ...(where ? { file: where.file, line: where.line } : {}), evidence });
        }
      }
      // PHP has no hook on file writes: a leftover file points at the first line of the plugin
      // that names it, and says that is how it was placed.
      const names = [...new Set(leftovers.files.map((f) => f.replace(/\/$/, "").split("/").pop()!))];
      const named = names.length ? ((await check.action<Record<string, { file: string; line: number }>>("uninstall-sources", "source-lines", { file: plugin.file, names })).result ?? {}) : {};
      for (const path of leftovers.files) {
        const where = named[path.replace(/\/$/, "").split("/").pop()!];
        const what = path.endsWith("/") ? "folder" : "file";
        check.findings.push({
          severity: "warning",
          kind: "leftover",
          surface: "uninstall",
          message: `The ${what} wp-content/${path} is still there after deactivation and uninstall (${done2}; uninstall run as ${how})${where ? "; the plugin's source names it at this line" : ""}.`,
          ...(where ? { file: where.file, line: where.line } : {}),
          evidence,
        });
      }
      return { evidence, how };
    });
  }
  const ranKeys = new Set((await check.readLog(COVERAGE_LOG)).flatMap((row) => (Array.isArray(row.ran) ? (row.ran as unknown[]).map(String) : [])));
  await ctx.runPhp(`<?php @unlink(${phpValue(RECORDER_PATH)});`);
  const coverage = active ? callbackCoverage({ ...added, callbacks: added.callbacks ?? [] }, ranKeys, minCoverage) : undefined;
  if (coverage && args.coverage === "lines") coverage.lines = { available: false, reason: LINE_COVERAGE_UNAVAILABLE };

  const report = buildPluginCheckReport({
    plugin: { file: plugin.file, name: plugin.name, version: plugin.version, active },
    failOn,
    inventory: added,
    leftovers,
    uninstall,
    surfaces: check.surfaces,
    findings: check.findings,
    baseline,
    ...(coverage ? { coverage } : {}),
  });
  const summary = summarizePluginCheck(report);
  const files: ArtifactFile[] = [
    ...check.files,
    { path: "files/check/report.json", kind: "check-report", contentType: "application/json", content: `${JSON.stringify(report, null, 2)}\n` },
    ...(await findingSourceFiles(ctx, report.findings)),
    { path: "files/check/junit.xml", kind: "check-junit", contentType: "application/xml", content: pluginCheckJunit(report) },
  ];
  const failed = report.status === "failed";
  return {
    status: failed ? "error" : "ok",
    exitCode: failed ? 1 : 0,
    stdout: `${JSON.stringify(report, null, 2)}\n`,
    stderr: summary,
    json: report,
    files,
    ...(failed
      ? {
          error: {
            code: "check-failed",
            message: `${report.findings.filter((f) => failsCheck(f, failOn)).length} finding(s) at or above fail-on=${failOn} (${report.counts.error} error(s), ${report.counts.warning} warning(s), ${report.counts.notice} notice(s) in all)${coverageFails(report.coverage) ? `; ${report.coverage!.percent}% of the plugin's callbacks ran, below min-callback-coverage=${report.coverage!.minPercent}` : ""}; see files/check/report.json.`,
            data: { counts: report.counts, failOn },
          },
        }
      : {}),
  };
};

/** Steps 4–5: every surface the plugin added, as the actor a real visitor would be. */
async function exerciseSurfaces(check: CheckRun, added: PluginInventory, browser: boolean): Promise<void> {
  const visited = new Set<string>();
  for (const page of added.adminPages) {
    if (visited.has(page.url)) continue;
    visited.add(page.url);
    const id = `admin-page:${page.url}`;
    await check.surface({ id, kind: "admin-page", target: page.url, actor: "admin" }, async () => {
      const response = await check.request(id, "GET", page.url, "admin");
      const problems = await check.settle(id);
      check.httpFinding(id, response.status, problems, response.evidence, `Admin page ${page.url}`, page.callback);
      return { httpStatus: response.status, evidence: response.evidence };
    }, page.callback);
  }

  if (browser) {
    for (const url of visited) {
      const id = `admin-page-browser:${url}`;
      await check.surface({ id, kind: "admin-page-browser", target: url, actor: "admin" }, async () => {
        const name = `check-${url}`.replace(/[^a-z0-9._-]+/gi, "-").toLowerCase().slice(0, 80);
        const outcome = await runScriptInSandbox(check.ctx, { as: "admin" }, [
          { kind: "navigate", url } as never,
          { kind: "screenshot", name } as never,
        ]);
        const shot = outcome.screenshots[0];
        const evidence = shot ? check.evidence("screenshots", `${shot.name}.png`, shot.bytes, "image/png") : "";
        const log = check.evidence(
          "browser",
          `${name}.jsonl`,
          [...outcome.console.map((c) => ({ source: "console", ...c })), ...outcome.pageErrors.map((e) => ({ source: "pageerror", ...e })), ...outcome.network.map((n) => ({ source: "request", ...n }))].map((r) => `${JSON.stringify(r)}\n`).join(""),
          "application/x-ndjson",
        );
        for (const e of outcome.pageErrors) {
          check.findings.push({ severity: "error", kind: "js-error", surface: id, message: e.message, ...jsLocation(check.ctx.siteUrl, e.stack, undefined, undefined), evidence: evidence || log });
        }
        for (const c of outcome.console.filter((c) => c.type === "error")) {
          // Chromium logs every failed resource load as a console error too; those are failed-request findings.
          if (/^Failed to load resource/.test(c.text)) continue;
          check.findings.push({ severity: "warning", kind: "console-error", surface: id, message: c.text, ...jsLocation(check.ctx.siteUrl, undefined, c.url, c.lineNumber), evidence: log });
        }
        for (const n of outcome.network) {
          const failed = n.status === "failed" || (typeof n.status === "number" && n.status >= 400);
          if (failed) check.findings.push({ severity: "warning", kind: "failed-request", surface: id, message: `${n.method} ${new URL(n.url).pathname}${new URL(n.url).search} → ${n.status}${n.failure ? ` (${n.failure})` : ""}`, evidence: log });
        }
        // A step that failed because PHP died is already a php-fatal finding (the recorder saw it).
        const phpDied = outcome.network.some((n) => n.phpFatal !== undefined);
        if (outcome.error && !phpDied) {
          check.findings.push({ severity: "warning", kind: "failed-request", surface: id, message: `The browser could not finish loading ${url}: ${outcome.error.message}`, evidence: evidence || log });
        }
        await check.settle(id);
        return { evidence: evidence || log };
      });
    }
  }

  for (const route of added.restRoutes) {
    const id = `rest-route:${route.route}`;
    const base = { id, kind: "rest-route" as const, target: route.route, actor: "admin" };
    if (route.pathParams) {
      check.surfaces.push({ ...base, durationMs: 0, skippedReason: "the route has path parameters, so there is no parameter-free request to make" });
      continue;
    }
    await check.surface(base, () => exerciseRestRoute(check, id, route), route.callback);
  }

  // Shortcodes, blocks and post types are seen on the front end: publish what shows them first.
  const posts = [
    ...added.shortcodes.map((s) => ({ key: `shortcode:${s.tag}`, type: "page", title: `wp-codebox check: [${s.tag}]`, content: `[${s.tag}]` })),
    ...added.blocks.map((b) => ({ key: `block:${b.name}`, type: "page", title: `wp-codebox check: ${b.name}`, content: `<!-- wp:${b.name} /-->` })),
    ...added.postTypes.filter((t) => t.public).map((t) => ({ key: `single:${t.name}`, type: t.name, title: `wp-codebox check: a sample ${t.name}`, content: "Sample content." })),
  ];
  const archives = added.postTypes.filter((t) => t.public && t.hasArchive).map((t) => t.name);
  if (posts.length + archives.length === 0) {
    await exerciseCron(check, added);
    return;
  }
  let links: { posts: Record<string, string | null>; archives: Record<string, string | null> } = { posts: {}, archives: {} };
  await check.surface({ id: "content-setup", kind: "content-setup", target: `${posts.length} sample post(s)`, actor: "admin" }, async () => {
    const created = await check.action<typeof links>("content-setup", "create-posts", { posts, archives });
    links = created.result ?? links;
    await check.settle("content-setup");
    return { evidence: created.evidence };
  });
  const front: { id: string; kind: Surface["kind"]; url: string | null | undefined; what: string; where?: { file: string; line: number } }[] = [
    ...added.shortcodes.map((s) => ({ id: `shortcode:[${s.tag}]`, kind: "shortcode" as const, url: links.posts[`shortcode:${s.tag}`], what: `A page with [${s.tag}]`, where: s.callback })),
    ...added.blocks.map((b) => ({ id: `block:${b.name}`, kind: "block" as const, url: links.posts[`block:${b.name}`], what: `A page with the ${b.name} block`, where: b.callback })),
    ...archives.map((t) => ({ id: `post-type-archive:${t}`, kind: "post-type-archive" as const, url: links.archives[t], what: `The ${t} archive` })),
    ...added.postTypes.filter((t) => t.public).map((t) => ({ id: `post-type-single:${t.name}`, kind: "post-type-single" as const, url: links.posts[`single:${t.name}`], what: `A single ${t.name}` })),
  ];
  for (const item of front) {
    const base = { id: item.id, kind: item.kind, target: item.url ?? item.id, actor: "anonymous" };
    if (!item.url) {
      check.surfaces.push({ ...base, durationMs: 0, skippedReason: "WordPress gave no URL for it" });
      continue;
    }
    const url = item.url;
    await check.surface(base, async () => {
      const response = await check.request(item.id, "GET", url, "anonymous");
      const problems = await check.settle(item.id);
      check.httpFinding(item.id, response.status, problems, response.evidence, item.what, item.where);
      return { httpStatus: response.status, evidence: response.evidence };
    }, item.where);
  }
  await exerciseCron(check, added);
}

/** REST error codes WordPress answers before the route's callback runs. */
const REST_REFUSALS = new Set(["rest_missing_callback_param", "rest_invalid_param", "rest_forbidden", "rest_cannot_view", "rest_cannot_create", "rest_cannot_edit", "rest_cannot_delete", "rest_no_route", "rest_not_logged_in"]);

/**
 * One REST route as admin: a route with GET is called with GET, one without GET with each of its
 * own methods (JSON body), each with the smallest arguments its handler's `args` allow
 * (`minimalRestArgs`), then OPTIONS. When no call reached a callback (WordPress refused the
 * arguments or the permission callback refused), or no arguments could be made up, the surface is
 * skipped with the reason: its callback never ran, so it did not pass.
 */
async function exerciseRestRoute(check: CheckRun, id: string, route: PluginInventory["restRoutes"][number]): Promise<Partial<Surface>> {
  const path = `/?rest_route=${encodeURIComponent(route.route)}`;
  const hasGet = route.methods.includes("GET");
  const endpoints = route.endpoints ?? [{ methods: route.methods, args: {} }];
  const calls: string[] = [];
  const refused: string[] = [];
  let ran = false;
  let status = 0;
  let evidence = "";
  const called = new Set<string>();
  for (const endpoint of endpoints) {
    const methods = endpoint.methods.filter((m) => (hasGet ? m === "GET" : !["HEAD", "OPTIONS"].includes(m)) && !called.has(m));
    if (methods.length === 0) continue;
    const chosen = minimalRestArgs(endpoint.args);
    if ("reason" in chosen) {
      refused.push(`${methods.join(", ")}: ${chosen.reason}`);
      continue;
    }
    for (const method of methods) {
      called.add(method);
      const query = method === "GET" ? Object.entries(chosen.params).map(([k, v]) => `&${encodeURIComponent(k)}=${encodeURIComponent(typeof v === "string" ? v : Array.isArray(v) ? v.join(",") : JSON.stringify(v))}`).join("") : "";
      const response = await check.request(id, method, `${path}${query}`, "admin", method === "GET" ? {} : { json: chosen.params });
      const problems = await check.settle(id);
      check.httpFinding(id, response.status, problems, response.evidence, `${method} ${route.route}`, route.callback);
      calls.push(`${method} with ${JSON.stringify(chosen.params)} → HTTP ${response.status}`);
      let code: unknown;
      try {
        code = (JSON.parse(response.body) as { code?: unknown }).code;
      } catch {
        code = undefined;
      }
      if (response.status >= 400 && response.status < 500 && typeof code === "string" && REST_REFUSALS.has(code)) {
        refused.push(`${method}: WordPress answered HTTP ${response.status} ${code} before the callback ran`);
      } else {
        ran = true;
      }
      if (!evidence || ran) ({ status, evidence } = response);
    }
  }
  const options = await check.request(`${id}-options`, "OPTIONS", path, "admin");
  const problems = await check.settle(id);
  check.httpFinding(id, options.status, problems, options.evidence, `OPTIONS ${route.route}`, route.callback);
  calls.push(`OPTIONS → HTTP ${options.status}`);
  const how = calls.join("; ");
  if (!ran) {
    return { how, evidence: evidence || options.evidence, skippedReason: `its callback never ran: ${refused.join("; ") || "the route has no method to call"}` };
  }
  return { httpStatus: status, evidence, how };
}

/**
 * Deactivates the plugin as a person does: the Deactivate link of wp-admin's Plugins screen (its
 * nonce included), requested as admin. When the screen shows no such link, or the plugin is still
 * active afterwards, `deactivate_plugins()` runs with wp-admin's includes loaded, and `how` says so.
 */
async function deactivateAsWpAdmin(check: CheckRun, file: string): Promise<{ how: string; evidence: string }> {
  // The Plugins screen the core screens just showed the admin (nothing ran since), else a new request.
  let screen = check.pluginsScreen;
  if (!screen) {
    screen = await check.request("deactivation-screen", "GET", "/wp-admin/plugins.php", "admin", { keep: false });
    // What the Plugins screen itself shows was checked as its own surface (admin-screen).
    await check.drain();
  }
  let link: string | undefined;
  for (const m of screen.body.matchAll(/href="([^"]*plugins\.php\?action=deactivate&(?:amp;)?[^"]*)"/g)) {
    const href = m[1]!.replace(/&amp;/g, "&");
    if (new URLSearchParams(href.slice(href.indexOf("?") + 1)).get("plugin") === file) {
      link = new URL(href, new URL("/wp-admin/", check.ctx.siteUrl)).pathname + href.slice(href.indexOf("?"));
      break;
    }
  }
  let how = "";
  let evidence = "";
  if (link) {
    const response = await check.request("deactivation", "GET", link, "admin");
    evidence = response.evidence;
    how = `GET ${link.replace(/_wpnonce=[^&]*/, "_wpnonce=…")} as admin, the Deactivate link of the Plugins screen (HTTP ${response.status})`;
    const state = await check.action<{ active: boolean }>("deactivation-state", "is-active", { file });
    if (state.result?.active === false) return { how, evidence };
    how += ", which left the plugin active; then ";
  } else {
    how = `the Plugins screen (HTTP ${screen.status}) showed no Deactivate link for ${file}; `;
  }
  const done = await check.action("deactivation", "deactivate", { file });
  return { how: `${how}deactivate_plugins() with wp-admin/includes/admin.php loaded`, evidence: evidence || done.evidence };
}

/**
 * Lifecycle findings say how their step was run. One the plugin already caused on another surface
 * (its admin_init code runs in the deactivation request too) keeps its message, so it stays one
 * finding seen on both.
 */
function labelLifecycleFindings(check: CheckRun, surface: "deactivation" | "uninstall", how: string): void {
  const earlier = new Set(check.findings.filter((f) => f.surface !== surface).map(findingKey));
  for (const f of check.findings) {
    if (f.surface === surface && !earlier.has(findingKey(f)) && !f.message.includes(`(${surface} run as `)) f.message = `${f.message} (${surface} run as ${how})`;
  }
}

async function exerciseCron(check: CheckRun, added: PluginInventory): Promise<void> {
  const seen = new Set<string>();
  for (const event of added.cronHooks) {
    const key = `${event.hook}:${JSON.stringify(event.args)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const id = `cron-hook:${event.hook}${event.args.length ? `:${JSON.stringify(event.args)}` : ""}`;
    await check.surface({ id, kind: "cron-hook", target: event.hook, actor: "cron" }, async () => {
      const ran = await check.action(id, "run-cron", { hook: event.hook, args: event.args });
      await check.settle(id);
      return { evidence: ran.evidence };
    });
  }
}

/** Most distinct `file:line` excerpts, and most distinct files read, for `files/check/sources.json`. */
const SOURCE_EXCERPTS_MAX = 200;
const SOURCE_FILES_MAX = 50;
const SOURCE_FILE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * `files/check/sources.json` (kind `check-sources`): the lines around each finding's `file:line`,
 * read from the sandbox, for the bundle's report page. None when no finding names a readable file.
 */
async function findingSourceFiles(ctx: CommandContext, findings: readonly { file?: string; line?: number }[]): Promise<ArtifactFile[]> {
  const excerpts: SourceExcerpt[] = [];
  const sources = new Map<string, string | null>();
  for (const f of findings) {
    if (excerpts.length >= SOURCE_EXCERPTS_MAX) break;
    if (typeof f.file !== "string" || typeof f.line !== "number" || !f.file.startsWith("/wordpress/") || f.file.split("/").includes("..")) continue;
    if (excerpts.some((e) => e.file === f.file && e.line === f.line)) continue;
    if (!sources.has(f.file)) {
      if (sources.size >= SOURCE_FILES_MAX) continue;
      const bytes = await ctx.readSandboxFile(f.file).catch(() => null);
      sources.set(f.file, bytes && bytes.byteLength <= SOURCE_FILE_MAX_BYTES ? new TextDecoder().decode(bytes) : null);
    }
    const source = sources.get(f.file);
    const excerpt = source ? sourceExcerpt(source, f.line) : undefined;
    if (excerpt) excerpts.push({ file: f.file, line: f.line, ...excerpt });
  }
  if (!excerpts.length) return [];
  return [{ path: CHECK_SOURCES_PATH, kind: "check-sources", contentType: "application/json", content: `${JSON.stringify({ excerpts }, null, 2)}\n` }];
}
