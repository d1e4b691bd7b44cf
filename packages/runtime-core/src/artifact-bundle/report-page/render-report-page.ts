/**
 * `report.html`: one self-contained page per bundle for a person to read. Pure: the page is a
 * function of `ReportPageData` (the bundle's own redacted files). Every value from the bundle is
 * escaped; links and images point only at bundle paths; the page has no script at all.
 */
import { BUNDLE_PATHS } from "../bundle-layout.js";
import type { ExecutionResult } from "../../runtime.js";
import { CHECK_SOURCES_PATH, type ReportPageData } from "./report-page-data.js";
import { badge, bundleHref, capText, escapeHtml as esc, fileLink, formatDuration, htmlDocument, table } from "./html.js";
import type { SourceExcerpt } from "./source-excerpt.js";

/** Most characters of one stdout/stderr shown on the page; the rest is in the linked file. */
export const REPORT_PAGE_OUTPUT_CHARS = 20_000;
/** Most rows of one list (steps, requests, findings, files) shown on the page. */
export const REPORT_PAGE_MAX_ROWS = 500;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Renders the page of one bundle.
 * @param data - from `readReportPageData`.
 * @returns the complete HTML document (UTF-8 text).
 */
export function renderReportPage(data: ReportPageData): string {
  const page = new PageReader(data);
  const review = page.json(BUNDLE_PATHS.review) ?? {};
  const metadata = page.json(BUNDLE_PATHS.metadata) ?? {};
  const results = page.jsonl(BUNDLE_PATHS.commands) as unknown as ExecutionResult[];
  const check = page.jsonOfKind("check-report");
  const recipe = page.jsonOfKind("recipe-report");
  const trace = page.jsonOfKind("runtime-episode-trace");
  const phpunit = page.jsonOfKind("phpunit-results");
  const replay = page.jsonOfKind("episode-replay-report");
  const browserSteps = page.jsonlOfKind("browser-steps");

  const what = check
    ? `check ${check.plugin?.name ?? check.plugin?.file ?? ""}`
    : recipe
      ? `recipe ${recipe.recipe?.name ?? recipe.recipe?.path ?? ""}`
      : trace
        ? `episode ${metadata.episode?.name ?? trace.id ?? ""}`
        : results.map((r) => r.command).join(", ") || "no commands";
  const outcome = check?.status ?? recipe?.outcome ?? review.status;
  const sections: { id: string; title: string; html: string }[] = [];
  const add = (id: string, title: string, html: string) => html && sections.push({ id, title, html });

  if (check) add("check", "Check", renderCheck(page, check));
  if (recipe) add("recipe", "Recipe", renderRecipe(recipe));
  if (trace) add("episode", "Episode", renderEpisode(page, trace));
  if (replay) add("replay", "Replay", renderReplay(replay));
  if (browserSteps.length) add("browser", "Browser", renderBrowser(page, browserSteps));
  if (phpunit) add("phpunit", "PHPUnit", renderPhpunit(phpunit));
  if (!check && !browserSteps.length) add("screenshots", "Screenshots", renderScreenshots(page, page.files.filter((f) => f.contentType === "image/png" && !f.path.includes("/runtime-snapshots/"))));
  add("commands", "Commands", renderCommands(page, results));
  add("files", "Files", renderFiles(page));

  const durationMs = runDuration(results, review);
  const versions = metadata.versions ?? {};
  const verification = data.bundle.verification;
  const verified =
    verification.state === "sealed-by-writer"
      ? `${badge("sealed")} written with the bundle, whose writer verifies it once sealed (a failure ends the run with bundle-invalid); check it any time with <code>wp-codebox artifacts verify DIR</code>`
      : verification.valid
        ? `${badge("ok")} valid (checked when this page was written)`
        : `${badge("invalid")} ${verification.violations.length} violation(s)<ul>${verification.violations.slice(0, 50).map((v) => `<li>${esc(v)}</li>`).join("")}</ul>`;
  const facts = table(
    ["", ""],
    [
      ["Status", `${badge(outcome)}${outcome !== review.status && review.status ? ` ${badge(review.status)}` : ""}`],
      ["Run", esc(what)],
      ["Summary", esc(review.summary)],
      ["WordPress", esc(versions.wordpress)],
      ["PHP", esc(versions.php)],
      ["Duration", esc(formatDuration(durationMs))],
      ["Bundle id", `<code>${esc(data.bundle.id ?? "unknown")}</code>`],
      ["Verified", verified],
      ...(review.redaction?.applied ? [["Redaction", `${esc(review.redaction.count)} secret occurrence(s) redacted, here as in every bundle file`]] : []),
    ].map(([a, b]) => [`<strong>${esc(a)}</strong>`, b ?? ""]),
    "facts",
  ).replace(/<thead>.*?<\/thead>/, "");
  const nav = `<nav>${sections.map((s) => `<a href="#${s.id}">${esc(s.title)}</a>`).join("")}</nav>`;
  const body = `<header><h1>wp-codebox: ${esc(what)}</h1>${facts}${nav}</header>\n${sections
    .map((s) => `<section id="${s.id}"><h2>${esc(s.title)}</h2>\n${s.html}</section>`)
    .join("\n")}`;
  return htmlDocument(`wp-codebox ${String(outcome ?? "")}: ${what}`, body);
}

/** Parsed bundle files, with bundle links relative to the page. */
class PageReader {
  readonly files: ReportPageData["files"];
  readonly base: string;
  constructor(private readonly data: ReportPageData) {
    this.files = data.files;
    this.base = data.base;
  }
  json(path: string): Json | undefined {
    const text = this.data.texts[path];
    if (text === undefined) return undefined;
    try {
      const value: unknown = JSON.parse(text);
      return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
    } catch {
      return undefined;
    }
  }
  jsonl(path: string): Json[] {
    const text = this.data.texts[path];
    if (text === undefined) return [];
    const rows: Json[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const value: unknown = JSON.parse(line);
        if (value !== null && typeof value === "object" && !Array.isArray(value)) rows.push(value as Json);
      } catch {
        // A line cut by the read limit: the file itself is linked.
      }
    }
    return rows;
  }
  jsonOfKind(kind: string): Json | undefined {
    const file = this.files.find((f) => f.kind === kind);
    return file ? this.json(file.path) : undefined;
  }
  jsonlOfKind(kind: string): Json[] {
    return this.files.filter((f) => f.kind === kind).flatMap((f) => this.jsonl(f.path));
  }
  has(path: string): boolean {
    return this.files.some((f) => f.path === path);
  }
  link(path: string, label?: string): string {
    return this.has(path) ? fileLink(path, this.base, label) : esc(label ?? path);
  }
  /** An `<img>` of a bundle PNG (lazy, alt text = caption), linked to the full image. */
  image(path: string, caption: string, className = ""): string {
    const href = this.has(path) ? bundleHref(path, this.base) : undefined;
    if (href === undefined) return `<span class="muted">${esc(caption)} (image ${esc(path)} is not in the bundle)</span>`;
    return `<a href="${esc(href)}"><img${className ? ` class="${esc(className)}"` : ""} src="${esc(href)}" alt="${esc(caption)}"></a>`;
  }
  figure(path: string, caption: string): string {
    return `<figure>${this.image(path, caption)}<figcaption>${esc(caption)}</figcaption></figure>`;
  }
}

function runDuration(results: readonly ExecutionResult[], review: Json): number | undefined {
  const starts = results.map((r) => Date.parse(r.startedAt)).filter(Number.isFinite);
  const ends = results.map((r) => Date.parse(r.finishedAt)).filter(Number.isFinite);
  if (starts.length && ends.length) return Math.max(...ends) - Math.min(...starts);
  const sum = (review.commands ?? []).reduce((n: number, c: Json) => n + (typeof c.durationMs === "number" ? c.durationMs : 0), 0);
  return sum || undefined;
}

function location(file: unknown, line: unknown): string {
  if (typeof file !== "string" || !file) return "";
  return `<code>${esc(file)}${typeof line === "number" ? `:${line}` : ""}</code>`;
}

function short(value: unknown, max = 400): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const cut = capText(text ?? "", max);
  return esc(cut.text) + (cut.cut ? "…" : "");
}

function limited<T>(rows: readonly T[], what: string): { rows: readonly T[]; note: string } {
  if (rows.length <= REPORT_PAGE_MAX_ROWS) return { rows, note: "" };
  return { rows: rows.slice(0, REPORT_PAGE_MAX_ROWS), note: `<p class="muted">First ${REPORT_PAGE_MAX_ROWS} of ${rows.length} ${esc(what)}; the bundle file has them all.</p>` };
}

// ---------------------------------------------------------------- commands

function renderCommands(page: PageReader, results: readonly ExecutionResult[]): string {
  if (results.length === 0) return `<p class="muted">No commands ran.</p>`;
  const full = page.link(BUNDLE_PATHS.commands);
  return results
    .slice(0, REPORT_PAGE_MAX_ROWS)
    .map((r, i) => {
      const error = r.error
        ? `<p>${badge(r.error.code)} ${esc(r.error.message)} ${location(r.error.data?.file, r.error.data?.line)}</p>`
        : "";
      const args = (r.args ?? []).length ? `<h4>Arguments</h4><pre>${esc((r.args ?? []).join("\n"))}</pre>` : "";
      const output = (name: "stdout" | "stderr") => {
        const text = r[name] ?? "";
        if (!text) return "";
        const cut = capText(text, REPORT_PAGE_OUTPUT_CHARS);
        const truncated = r.truncated?.[name] ? ` (the sandbox kept the first ${esc(r[`${name}Bytes`] ?? "")} bytes)` : "";
        const more = cut.cut ? `<p class="muted">Showing the first ${REPORT_PAGE_OUTPUT_CHARS} characters of ${text.length}: the full ${name} is in ${full}.</p>` : "";
        return `<h4>${name}${truncated}</h4><pre>${esc(cut.text)}</pre>${more}`;
      };
      const db = (r.dbErrors ?? []).length ? `<h4>Database errors</h4>${table(["Message", "Query"], (r.dbErrors ?? []).map((d) => [esc(d.message), `<code>${short(d.query, 2000)}</code>`]))}` : "";
      const background = (r.backgroundErrors ?? []).length
        ? `<h4>PHP errors in requests</h4>${table(["Kind", "Message", "Where", "Request"], (r.backgroundErrors ?? []).map((b) => [esc(b.kind), esc(b.message), location(b.file, b.line), esc(`${b.method} ${b.url} → ${b.status}`)]))}`
        : "";
      const refs = (r.artifactRefs ?? []).length ? `<h4>Files</h4><ul>${(r.artifactRefs ?? []).slice(0, 50).map((a) => `<li>${page.link(a.path)} <span class="muted">${esc(a.kind)}</span></li>`).join("")}</ul>` : "";
      const open = r.status !== "ok" || results.length <= 3 ? " open" : "";
      return `<details${open} id="command-${i + 1}"><summary>${badge(r.status)} <code>${esc(r.command)}</code> exit ${esc(r.exitCode)} · ${esc(formatDuration(r.durationMs))}</summary>${error}${args}${output("stdout")}${output("stderr")}${db}${background}${refs}</details>`;
    })
    .join("\n");
}

// ---------------------------------------------------------------- browser

function renderBrowser(page: PageReader, steps: readonly Json[]): string {
  const parts: string[] = [];
  const byExecution = new Map<string, Json[]>();
  for (const s of steps) byExecution.set(String(s.execution ?? ""), [...(byExecution.get(String(s.execution ?? "")) ?? []), s]);
  const summary = page.jsonOfKind("browser-action-summary");
  for (const [execution, list] of byExecution) {
    const { rows, note } = limited(list, "steps");
    const stepRows = rows.map((s) => {
      const shot = typeof s.screenshot === "string" && s.screenshot ? page.image(`files/browser/screenshot-${s.screenshot}.png`, `screenshot ${s.screenshot}`, "step") : "";
      const error = s.error ? `${badge(s.error.code)} ${esc(s.error.message)}` : "";
      const fatals = (s.phpFatals ?? []).map((f: Json) => `<div>${esc(f.message)} ${location(f.file, f.line)}</div>`).join("");
      return [esc(Number(s.index) + 1), esc(s.kind), s.selector ? `<code>${esc(s.selector)}</code>` : "", esc(formatDuration(s.durationMs)), badge(s.status), error + fatals, shot];
    });
    parts.push(`<h3>Steps${byExecution.size > 1 ? ` of <code>${esc(execution)}</code>` : ""}</h3>${table(["#", "Kind", "Selector", "Duration", "Status", "Error", "Screenshot"], stepRows, "steps")}${note}`);
    const comparisons = list.filter((s) => s.comparison && typeof s.comparison === "object");
    for (const s of comparisons) parts.push(renderComparison(page, s));
  }
  const assertions = summary?.assertions?.results ?? [];
  if (assertions.length) {
    parts.push(
      `<h3>Assertions (${esc(summary?.assertions?.passed)}/${esc(summary?.assertions?.total)} passed)</h3>${table(
        ["Step", "Kind", "Selector", "Expected", "Actual", "Result"],
        assertions.slice(0, REPORT_PAGE_MAX_ROWS).map((a: Json) => [esc(Number(a.index) + 1), esc(a.kind), a.selector ? `<code>${esc(a.selector)}</code>` : "", `<code>${short(a.expected)}</code>`, `<code>${short(a.actual)}</code>`, badge(a.passed ? "passed" : "failed")]),
      )}`,
    );
  }
  const consoleErrors = page.jsonlOfKind("browser-console").filter((c) => c.type === "error" || c.type === "pageerror");
  if (consoleErrors.length) {
    const { rows, note } = limited(consoleErrors, "console errors");
    parts.push(`<h3>Console errors</h3>${table(["Step", "Type", "Message", "Where"], rows.map((c) => [esc(typeof c.stepIndex === "number" ? c.stepIndex + 1 : ""), esc(c.type), short(c.text ?? c.message, 2000), `${esc(c.url ?? "")}${c.lineNumber ? `:${esc(c.lineNumber)}` : ""}`]))}${note}`);
  }
  const failedRequests = page.jsonlOfKind("browser-network").filter((n) => n.failure || (typeof n.status === "number" && n.status >= 400));
  if (failedRequests.length) {
    const { rows, note } = limited(failedRequests, "failed requests");
    parts.push(`<h3>Failed requests</h3>${table(["Step", "Method", "URL", "Status"], rows.map((n) => [esc(typeof n.stepIndex === "number" ? n.stepIndex + 1 : ""), esc(n.method), short(n.url, 600), esc(n.failure ?? n.status)]))}${note}`);
  }
  const shots = page.files.filter((f) => f.kind === "browser-screenshot");
  if (shots.length) parts.push(`<h3>Screenshots</h3><div class="shots">${shots.map((f) => page.figure(f.path, f.path.split("/").pop()!)).join("")}</div>`);
  return parts.join("\n");
}

/** A screenshot step compared with its baseline: the three images side by side. */
function renderComparison(page: PageReader, step: Json): string {
  const c = step.comparison as Json;
  const sizes = c.width !== undefined ? ` · ${esc(c.width)}×${esc(c.height)}` : "";
  const diff = c.diffPixels !== undefined ? ` · ${esc(c.diffPixels)} pixel(s) differ (ratio ${esc(c.diffPixelRatio)})` : "";
  const images = (["baseline", "actual", "diff"] as const)
    .filter((k) => typeof c[k] === "string")
    .map((k) => page.figure(c[k] as string, k))
    .join("");
  const message = c.message ? `<p>${esc(c.message)}</p>` : "";
  return `<h3>Comparison of ${esc(step.screenshot ?? `step ${Number(step.index) + 1}`)} ${badge(c.passed ? "passed" : "failed")}</h3><p class="muted">${sizes}${diff}</p>${message}<div class="compare">${images}</div>`;
}

function renderScreenshots(page: PageReader, pngs: ReportPageData["files"]): string {
  if (!pngs.length) return "";
  const { rows, note } = limited(pngs, "screenshots");
  return `<div class="shots">${rows.map((f) => page.figure(f.path, f.path.split("/").pop()!)).join("")}</div>${note}`;
}

// ---------------------------------------------------------------- check

function renderCheck(page: PageReader, report: Json): string {
  const parts: string[] = [];
  const counts = report.counts ?? {};
  parts.push(`<p>${badge(report.status)} ${esc(report.plugin?.name)} ${esc(report.plugin?.version)} (<code>${esc(report.plugin?.file)}</code>) · errors ${esc(counts.error)}, warnings ${esc(counts.warning)}, notices ${esc(counts.notice)} · fails on ${esc(report.failOn)}</p>`);
  const excerpts = new Map<string, SourceExcerpt>();
  for (const e of (page.json(CHECK_SOURCES_PATH)?.excerpts ?? []) as SourceExcerpt[]) excerpts.set(`${e.file}:${e.line}`, e);

  const findings = (report.findings ?? []) as Json[];
  parts.push(`<h3>Findings (${findings.length})</h3>`);
  if (!findings.length) parts.push(`<p class="muted">No findings.</p>`);
  const groups = new Map<string, Json[]>();
  for (const f of findings.slice(0, REPORT_PAGE_MAX_ROWS)) {
    const key = typeof f.file === "string" && f.file ? f.file : "(no file)";
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  for (const [file, list] of groups) {
    const items = list
      .sort((a, b) => (a.line ?? 0) - (b.line ?? 0))
      .map((f) => {
        const excerpt = excerpts.get(`${f.file}:${f.line}`);
        const cause = f.cause ? ` ${badge(`cause: ${f.cause}`)}` : "";
        const evidence = typeof f.evidence === "string" && f.evidence ? ` · evidence ${page.link(f.evidence)}` : "";
        return `<div class="finding"><p>${badge(f.severity)} <strong>${esc(f.kind)}</strong>${cause} ${location(f.file, f.line)}<br>${esc(f.message)}<br><span class="muted">on ${esc((f.surfaces ?? [f.surface]).join(", "))}${f.occurrences > 1 ? ` · ${esc(f.occurrences)} times` : ""}</span>${evidence}</p>${excerpt ? renderExcerpt(excerpt) : ""}</div>`;
      })
      .join("");
    parts.push(`<details open class="file-group"><summary><code>${esc(file)}</code> · ${list.length} finding(s)</summary>${items}</details>`);
  }

  const surfaces = (report.surfaces ?? []) as Json[];
  if (surfaces.length) {
    const { rows, note } = limited(surfaces, "surfaces");
    parts.push(
      `<h3>Surfaces (${surfaces.length})</h3>${table(
        ["Surface", "Kind", "Target", "Actor", "Status", "HTTP", "Duration", "Findings", "Evidence"],
        rows.map((s) => [esc(s.id), esc(s.kind), `<code>${short(s.target, 300)}</code>`, esc(s.actor), `${badge(s.status)}${s.skippedReason ? ` <span class="muted">${esc(s.skippedReason)}</span>` : ""}`, esc(s.httpStatus ?? ""), esc(formatDuration(s.durationMs)), esc(s.findings), typeof s.evidence === "string" ? page.link(s.evidence, "evidence") : ""]),
      )}${note}`,
    );
  }
  const coverage = report.coverage as Json | undefined;
  if (coverage && typeof coverage === "object") {
    const callbacks = (coverage.callbacks ?? []) as Json[];
    const { rows, note } = limited(callbacks, "callbacks");
    parts.push(
      `<h3>Coverage: callbacks run ${esc(coverage.ran)}/${esc(coverage.registered)}</h3>${table(
        ["Kind", "Hook / name", "Callback", "Where", "Ran"],
        rows.map((c) => [esc(c.kind), esc(c.hook ?? c.name ?? c.tag ?? ""), `<code>${short(c.callback ?? "", 200)}</code>`, location(c.file, c.line), c.ran ? `<span class="badge good">ran</span>` : `<span class="badge bad">never ran</span>`]),
      )}${note}`,
    );
    const lines = (coverage.lines ?? coverage.files) as Json | undefined;
    if (lines && typeof lines === "object") parts.push(`<h4>Line coverage</h4><pre>${esc(JSON.stringify(lines, null, 2).slice(0, REPORT_PAGE_OUTPUT_CHARS))}</pre>`);
  }
  const left = report.leftovers as Json | undefined;
  const leftItems = left ? Object.entries(left).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [esc(k), `<code>${short(x, 300)}</code>`]) : [])) : [];
  if (leftItems.length) parts.push(`<h3>Left after uninstall (${esc(report.uninstall)})</h3>${table(["Kind", "Name"], leftItems)}`);
  const shots = page.files.filter((f) => f.contentType === "image/png" && f.path.startsWith("files/check/"));
  if (shots.length) parts.push(`<h3>Screenshots of browser surfaces</h3><div class="shots">${shots.map((f) => page.figure(f.path, f.path.split("/").pop()!)).join("")}</div>`);
  return parts.join("\n");
}

/** Numbered source lines with the finding's line marked. */
function renderExcerpt(e: SourceExcerpt): string {
  const lines = e.lines.map((text, i) => {
    const n = e.startLine + i;
    return `<span${n === e.line ? ' class="hit"' : ""}>${String(n).padStart(5, " ")}  ${esc(text)}</span>`;
  });
  return `<pre class="excerpt" aria-label="${esc(`${e.file}:${e.line}`)}">${lines.join("")}</pre>`;
}

// ---------------------------------------------------------------- recipe

function renderRecipe(report: Json): string {
  const steps = (report.steps ?? []) as Json[];
  const rows = steps.slice(0, REPORT_PAGE_MAX_ROWS).map((s) => {
    const expectations = ((s.expectations ?? []) as Json[])
      .map((e) => `<div>${badge(e.passed ? "passed" : "failed")} ${esc(e.message ?? e.name)}${e.passed ? "" : ` <span class="muted">expected <code>${short(e.expected)}</code>, got <code>${short(e.actual)}</code></span>`}</div>`)
      .join("");
    return [esc(s.phase), esc(s.name), `<code>${esc(s.command)}</code>`, `<code>${short((s.args ?? []).join(" "), 300)}</code>`, badge(s.status), expectations, esc(formatDuration(s.result?.durationMs))];
  });
  return `<p>${badge(report.outcome)} ${esc(report.summary)}</p>${table(["Phase", "Name", "Command", "Arguments", "Status", "Expectations", "Duration"], rows)}`;
}

// ---------------------------------------------------------------- episode

function renderEpisode(page: PageReader, trace: Json): string {
  const parts: string[] = [];
  const observation = (o: Json | undefined) => (o ? renderObservation(o) : "");
  parts.push(`<p>Trace <code>${esc(trace.id)}</code> · digest <code>${esc(trace.digest)}</code></p>`);
  const reset = (trace.reset?.observations ?? []) as Json[];
  if (reset.length) parts.push(`<h3>Reset</h3>${reset.map((o) => `<details><summary>${esc(o.type)} <code>${esc(shortDigest(o.digest))}</code></summary>${observation(o)}</details>`).join("")}`);
  const steps = (trace.steps ?? []) as Json[];
  if (steps.length) {
    parts.push(`<h3>Steps</h3>`);
    for (const s of steps.slice(0, REPORT_PAGE_MAX_ROWS)) {
      const a = s.action ?? {};
      const x = s.execution;
      const head = `${esc(Number(s.index) + 1)}. ${esc(a.kind)} <code>${esc(a.command ?? a.type ?? "")}</code> ${x ? `${badge(x.status)} exit ${esc(x.exitCode)} · ${esc(formatDuration(x.durationMs))}` : ""}`;
      const args = (a.args ?? []).length ? `<pre>${esc(capText((a.args as string[]).join("\n"), REPORT_PAGE_OUTPUT_CHARS).text)}</pre>` : "";
      const out = x?.stdout ? `<h4>stdout</h4><pre>${esc(capText(String(x.stdout), REPORT_PAGE_OUTPUT_CHARS).text)}</pre>` : "";
      const err = x?.stderr ? `<h4>stderr</h4><pre>${esc(capText(String(x.stderr), REPORT_PAGE_OUTPUT_CHARS).text)}</pre>` : "";
      const error = x?.error ? `<p>${badge(x.error.code)} ${esc(x.error.message)}</p>` : "";
      parts.push(`<details${x && x.status !== "ok" ? " open" : ""}><summary>${head}</summary>${args}${error}${out}${err}${s.observation ? `<h4>Observation: ${esc(s.observation.type)}</h4>${observation(s.observation)}` : ""}</details>`);
    }
  }
  const snapshots = (trace.snapshots ?? []) as Json[];
  if (snapshots.length) {
    parts.push(
      `<h3>Snapshots</h3>${table(
        ["Id", "After step", "Semantics", "Digest", "Files"],
        snapshots.map((s) => {
          const dir = `files/runtime-snapshots/${String(s.id).replace(/^snapshot-\d+-/, "snapshot-")}/`;
          const files = page.files.filter((f) => f.path.startsWith(dir));
          return [`<code>${esc(s.id)}</code>`, esc(s.sequence), esc(s.semantics), `<code>${esc(shortDigest(s.digest))}</code>`, files.length ? `${files.length} file(s), ${page.link(`${dir}snapshot.json`, "snapshot.json")}` : ""];
        }),
      )}`,
    );
  }
  return parts.join("\n");
}

function shortDigest(digest: unknown): string {
  return typeof digest === "string" ? digest.slice(0, 16) : "";
}

/** An observation: a WordPress state export as one table per section, anything else as JSON. */
function renderObservation(o: Json): string {
  const digest = `<p class="muted">content hash <code>${esc(o.digest)}</code></p>`;
  const sections = o.data?.sections as Json | undefined;
  if (sections && typeof sections === "object") {
    return (
      digest +
      Object.entries(sections)
        .map(([name, value]) => `<h5>${esc(name)}</h5>${valueTable(value)}`)
        .join("")
    );
  }
  return `${digest}<pre>${esc(capText(JSON.stringify(o.data ?? null, null, 2), REPORT_PAGE_OUTPUT_CHARS).text)}</pre>`;
}

/** A value as a table: an array of objects → one row each; an object → key/value rows. */
function valueTable(value: unknown): string {
  if (Array.isArray(value) && value.length && value.every((v) => v && typeof v === "object" && !Array.isArray(v))) {
    const keys = [...new Set(value.flatMap((v) => Object.keys(v as Json)))].slice(0, 12);
    return table(keys, value.slice(0, REPORT_PAGE_MAX_ROWS).map((v) => keys.map((k) => short((v as Json)[k] ?? "", 300))));
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return table(["Field", "Value"], Object.entries(value as Json).slice(0, REPORT_PAGE_MAX_ROWS).map(([k, v]) => [esc(k), `<code>${short(v, 600)}</code>`]));
  }
  return `<code>${short(value, 600)}</code>`;
}

function renderReplay(report: Json): string {
  const rows: string[][] = [];
  const push = (where: string, c: Json | undefined) => {
    if (c && !c.match) for (const d of (c.differences ?? ["(whole value)"]) as string[]) rows.push([esc(where), `<code>${esc(d)}</code>`]);
  };
  (report.reset?.observations ?? []).forEach((c: Json, i: number) => push(`reset observation ${i + 1}`, c));
  for (const s of (report.steps ?? []) as Json[]) {
    push(`step ${Number(s.index) + 1} ${s.command} (execution)`, s.execution);
    push(`step ${Number(s.index) + 1} ${s.command} (observation)`, s.observation);
  }
  const sum = report.summary ?? {};
  return `<p>${badge(report.ok ? "ok" : "mismatch")} ${esc(sum.matched)}/${esc(sum.steps)} steps match (${esc(sum.deterministic)} deterministic)</p>${table(["Where", "Differs at (JSON pointer)"], rows) || `<p class="muted">No differences.</p>`}`;
}

// ---------------------------------------------------------------- phpunit

function renderPhpunit(results: Json): string {
  const t = results.tests ?? {};
  const failures = (results.failures ?? []) as Json[];
  return `<p>${badge(failures.length ? "failed" : "passed")} ${esc(t.total)} tests: ${esc(t.passed)} passed, ${esc(t.failed)} failed, ${esc(t.errors)} errors, ${esc(t.skipped)} skipped · PHPUnit ${esc(results.phpunit?.version ?? "")}</p>${table(
    ["Test", "Kind", "Type", "Message", "Where"],
    failures.slice(0, REPORT_PAGE_MAX_ROWS).map((f) => [`<code>${esc(f.name)}</code>`, esc(f.kind), esc(f.type), `<pre>${esc(capText(String(f.message ?? ""), 4000).text)}</pre>`, location(f.file, f.line)]),
  )}`;
}

// ---------------------------------------------------------------- files

function renderFiles(page: PageReader): string {
  const { rows, note } = limited(page.files, "files");
  return `<details><summary>${page.files.length} file(s) in this bundle</summary>${table(["Path", "Kind", "Type", "Bytes"], rows.map((f) => [page.link(f.path), esc(f.kind), esc(f.contentType), esc(f.bytes)]))}${note}</details>`;
}
