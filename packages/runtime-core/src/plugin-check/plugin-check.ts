/**
 * Pure logic of the plugin check: diffing inventories, turning recorded PHP/WordPress/database
 * problems into deduplicated findings, verdicts, the JUnit file and the human summary. The
 * backend gathers the raw records; everything that decides lives here so it is tested without
 * WordPress.
 */
import {
  CHECK_SEVERITIES,
  PLUGIN_CHECK_REPORT_SCHEMA_ID,
  type CheckFinding,
  type CheckFindingKind,
  type CheckSeverity,
  type CheckSurface,
  type PluginCheckReport,
  type PluginInventory,
} from "./plugin-check-report.js";

/**
 * One problem as the in-sandbox recorder writes it (a line of `files/check/php-errors.jsonl`).
 * `level` is decided in PHP from the error number or the WordPress hook that reported it.
 */
export interface RecordedProblem {
  level: "fatal" | "warning" | "notice" | "deprecated" | "doing-it-wrong" | "db-error" | "admin-notice-error" | "admin-notice-warning";
  message: string;
  file?: string;
  line?: number;
  /** The request URI or `cli` for run-php work. */
  uri?: string;
  /** For `db-error`: the query that failed. */
  query?: string;
}

/** A finding before deduplication: where it was seen and what proves it. */
export interface RawFinding {
  severity: CheckSeverity;
  kind: CheckFindingKind;
  surface: string;
  message: string;
  file?: string;
  line?: number;
  evidence: string;
}

const LEVEL_TO_FINDING: Record<RecordedProblem["level"], { kind: CheckFindingKind; severity: CheckSeverity }> = {
  fatal: { kind: "php-fatal", severity: "error" },
  warning: { kind: "php-warning", severity: "warning" },
  notice: { kind: "php-notice", severity: "notice" },
  deprecated: { kind: "deprecated", severity: "notice" },
  "doing-it-wrong": { kind: "doing-it-wrong", severity: "notice" },
  // A query the SQLite translation rejects may be valid on MySQL: worth a look, not a failure.
  "db-error": { kind: "db-error", severity: "warning" },
  // An admin notice tells the site owner something is wrong; it is not a PHP failure of its own.
  "admin-notice-error": { kind: "admin-notice", severity: "warning" },
  "admin-notice-warning": { kind: "admin-notice", severity: "notice" },
};

/** Maps recorded problems of one surface to findings that point at `evidence`. */
export function findingsFromProblems(problems: readonly RecordedProblem[], surface: string, evidence: string): RawFinding[] {
  return problems.map((p) => {
    const { kind, severity } = LEVEL_TO_FINDING[p.level];
    const message =
      p.level === "db-error" && p.query
        ? `${p.message} [query: ${p.query.slice(0, 300)}]`
        : p.level === "admin-notice-error" || p.level === "admin-notice-warning"
          ? `${p.level.slice("admin-".length)}: ${p.message}`
          : p.message;
    return {
      severity,
      kind,
      surface,
      message,
      ...(p.file ? { file: p.file } : {}),
      ...(p.line ? { line: p.line } : {}),
      evidence,
    };
  });
}

/** Identity of a finding for deduplication: the same problem at the same place. */
export function findingKey(f: Pick<RawFinding, "kind" | "message" | "file" | "line">): string {
  return JSON.stringify([f.kind, f.message, f.file ?? "", f.line ?? 0]);
}

/**
 * Deduplicates findings (same kind, message, file and line), keeping the first surface and
 * evidence, and sorts them the way a reader fixes them: by severity, then source file, then line.
 * Findings whose key is in `ignore` (seen before the plugin was active) are dropped.
 */
export function dedupeFindings(raw: readonly RawFinding[], ignore: ReadonlySet<string> = new Set()): CheckFinding[] {
  const byKey = new Map<string, CheckFinding>();
  for (const f of raw) {
    const key = findingKey(f);
    if (ignore.has(key)) continue;
    const seen = byKey.get(key);
    if (seen) {
      seen.occurrences += 1;
      if (!seen.surfaces.includes(f.surface)) seen.surfaces.push(f.surface);
      continue;
    }
    byKey.set(key, { ...f, surfaces: [f.surface], occurrences: 1 });
  }
  const rank = (s: CheckSeverity) => CHECK_SEVERITIES.indexOf(s);
  return [...byKey.values()].sort(
    (a, b) => rank(a.severity) - rank(b.severity) || (a.file ?? "~").localeCompare(b.file ?? "~") || (a.line ?? 0) - (b.line ?? 0) || a.message.localeCompare(b.message),
  );
}

/** True when `severity` is at or above the `failOn` threshold (`error` > `warning` > `notice`). */
export function severityFails(severity: CheckSeverity, failOn: CheckSeverity): boolean {
  return CHECK_SEVERITIES.indexOf(severity) <= CHECK_SEVERITIES.indexOf(failOn);
}

type InventoryKey = { [K in keyof PluginInventory]: (item: PluginInventory[K][number]) => string };
const INVENTORY_KEYS: InventoryKey = {
  adminPages: (p) => `${p.parent ?? ""}>${p.slug}`,
  restRoutes: (r) => r.route,
  shortcodes: (s) => s.tag,
  blocks: (b) => b.name,
  cronHooks: (c) => `${c.hook}:${JSON.stringify(c.args)}`,
  ajaxActions: (a) => `${a.nopriv ? "nopriv:" : ""}${a.action}`,
  postTypes: (p) => p.name,
  taxonomies: (t) => t.name,
  options: (o) => o,
  tables: (t) => t,
  importers: (i) => i.id,
};

/**
 * Options WordPress itself creates or rewrites while a site is used (transients, cron, rewrite
 * rules, the plugin bookkeeping of activation and uninstall): never attributed to a plugin.
 */
export function isCoreChurnOption(name: string): boolean {
  return (
    /^_(site_)?transient_/.test(name) ||
    ["cron", "rewrite_rules", "recently_activated", "active_plugins", "uninstall_plugins", "recovery_keys", "can_compress_scripts", "theme_mods_twentytwentyfour", "wp_force_deactivated_plugins", "user_count", "db_upgraded", "auto_core_update_notified", "finished_updating_comment_type"].includes(name)
  );
}

/** Cron hooks WordPress schedules itself, some only when first needed (core's own use the `wp_` prefix). */
export function isCoreCronHook(hook: string): boolean {
  return hook.startsWith("wp_") || ["delete_expired_transients", "recovery_mode_clean_expired_keys"].includes(hook);
}

/** What `after` has that `before` had not, per category (without WordPress's own options and cron hooks). */
export function diffInventory(before: PluginInventory, after: PluginInventory): PluginInventory {
  const out = {} as Record<keyof PluginInventory, unknown[]>;
  for (const category of Object.keys(INVENTORY_KEYS) as (keyof PluginInventory)[]) {
    const key = INVENTORY_KEYS[category] as (item: unknown) => string;
    const had = new Set((before[category] as unknown[]).map(key));
    out[category] = (after[category] as unknown[]).filter((item) => !had.has(key(item)));
  }
  out.options = (out.options as string[]).filter((o) => !isCoreChurnOption(o));
  out.cronHooks = (out.cronHooks as PluginInventory["cronHooks"]).filter((c) => !isCoreCronHook(c.hook));
  return out as PluginInventory;
}

/** Counts findings by severity. */
export function countBySeverity(findings: readonly Pick<CheckFinding, "severity">[]): Record<CheckSeverity, number> {
  const counts: Record<CheckSeverity, number> = { error: 0, warning: 0, notice: 0 };
  for (const f of findings) counts[f.severity] += 1;
  return counts;
}

/** Input of `buildPluginCheckReport`: everything the backend gathered. */
export interface PluginCheckParts {
  plugin: PluginCheckReport["plugin"];
  failOn: CheckSeverity;
  inventory: PluginInventory;
  leftovers: PluginCheckReport["leftovers"];
  uninstall: PluginCheckReport["uninstall"];
  /** Surfaces; their `findings` and `status` are filled in here from the findings. */
  surfaces: Omit<CheckSurface, "findings" | "status">[];
  findings: readonly RawFinding[];
  /** Keys (`findingKey`) of problems seen before activation: WordPress's own, not the plugin's. */
  baseline?: ReadonlySet<string>;
}

/** Assembles the report: deduplicated findings, per-surface status and counts, the verdict. */
export function buildPluginCheckReport(parts: PluginCheckParts): PluginCheckReport {
  const findings = dedupeFindings(parts.findings, parts.baseline);
  const surfaces: CheckSurface[] = parts.surfaces.map((s) => {
    const own = findings.filter((f) => f.surfaces.includes(s.id));
    const failing = own.some((f) => severityFails(f.severity, parts.failOn));
    const status = s.skippedReason !== undefined ? "skipped" : failing ? "failed" : "passed";
    return { ...s, status, findings: own.length };
  });
  const countsBySurface: PluginCheckReport["countsBySurface"] = {};
  for (const f of findings) {
    const kind = parts.surfaces.find((s) => s.id === f.surface)?.kind ?? "other";
    countsBySurface[kind] ??= { error: 0, warning: 0, notice: 0 };
    countsBySurface[kind][f.severity] += 1;
  }
  const failed = findings.some((f) => severityFails(f.severity, parts.failOn));
  return {
    schema: PLUGIN_CHECK_REPORT_SCHEMA_ID,
    plugin: parts.plugin,
    failOn: parts.failOn,
    status: failed ? "failed" : "passed",
    counts: countBySeverity(findings),
    countsBySurface,
    inventory: parts.inventory,
    leftovers: parts.leftovers,
    uninstall: parts.uninstall,
    surfaces,
    findings,
  };
}

const xml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");

const where = (f: Pick<CheckFinding, "file" | "line">) => (f.file ? ` (${f.file}${f.line ? `:${f.line}` : ""})` : "");

/**
 * JUnit XML for CI systems: one test case per surface (classname = surface kind, name = target);
 * a surface with a finding at or above `failOn` fails, a skipped surface is skipped, and findings
 * below the threshold are listed in `system-out`.
 */
export function pluginCheckJunit(report: PluginCheckReport): string {
  const failures = report.surfaces.filter((s) => s.status === "failed").length;
  const skipped = report.surfaces.filter((s) => s.status === "skipped").length;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const total = report.surfaces.reduce((sum, s) => sum + s.durationMs, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="wp-codebox check" tests="${report.surfaces.length}" failures="${failures}" skipped="${skipped}" time="${seconds(total)}">`,
    `  <testsuite name="${xml(`check ${report.plugin.file}`)}" tests="${report.surfaces.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(total)}">`,
  ];
  for (const s of report.surfaces) {
    const own = report.findings.filter((f) => f.surfaces.includes(s.id));
    lines.push(`    <testcase classname="${xml(s.kind)}" name="${xml(s.target)}" time="${seconds(s.durationMs)}">`);
    if (s.status === "skipped") lines.push(`      <skipped message="${xml(s.skippedReason ?? "skipped")}"/>`);
    const failing = own.filter((f) => severityFails(f.severity, report.failOn));
    if (failing.length > 0) {
      const body = failing.map((f) => `${f.severity} ${f.kind}: ${f.message}${where(f)} [evidence: ${f.evidence}]`).join("\n");
      lines.push(`      <failure message="${xml(`${failing.length} finding(s) at or above ${report.failOn}`)}" type="${xml(failing[0]!.kind)}">${xml(body)}</failure>`);
    }
    const rest = own.filter((f) => !severityFails(f.severity, report.failOn));
    if (rest.length > 0) lines.push(`      <system-out>${xml(rest.map((f) => `${f.severity} ${f.kind}: ${f.message}${where(f)}`).join("\n"))}</system-out>`);
    lines.push("    </testcase>");
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}

/**
 * The human summary printed on stderr: verdict, counts by severity and by surface kind, what the
 * plugin added, and the top findings grouped by source file.
 * @param top - how many findings to list (default 10).
 */
/** Control characters a plugin printed (NUL, escape sequences) are shown as `\xNN`, never sent raw to a terminal. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** "2 REST route(s)", and "(+1 namespace index)" for WordPress's own index routes among them. */
function restRoutesText(routes: PluginInventory["restRoutes"]): string {
  const indexes = routes.filter((r) => r.namespaceIndex === true).length;
  return `${routes.length - indexes} REST route(s)${indexes > 0 ? ` (+${indexes} namespace index${indexes > 1 ? "es" : ""})` : ""}`;
}

/**
 * The human summary `check` prints on stderr: the verdict and counts, what the plugin added, the
 * surfaces, and the first `top` findings grouped by file. Control characters are escaped.
 */
export function summarizePluginCheck(report: PluginCheckReport, top = 10): string {
  const c = report.counts;
  const inv = report.inventory;
  const out = [
    `check ${report.plugin.file}: ${report.status.toUpperCase()} (fail on ${report.failOn}) — ${c.error} error(s), ${c.warning} warning(s), ${c.notice} notice(s)`,
    `added: ${inv.adminPages.length} admin page(s), ${restRoutesText(inv.restRoutes)}, ${inv.shortcodes.length} shortcode(s), ${inv.blocks.length} block(s), ${inv.cronHooks.length} cron hook(s), ${inv.ajaxActions.length} AJAX action(s), ${inv.postTypes.length} post type(s), ${inv.taxonomies.length} taxonomy(ies), ${inv.options.length} option(s), ${inv.tables.length} table(s)`,
    `surfaces: ${report.surfaces.length} (${report.surfaces.filter((s) => s.status === "failed").length} failed, ${report.surfaces.filter((s) => s.status === "skipped").length} skipped)`,
  ];
  for (const [kind, n] of Object.entries(report.countsBySurface)) out.push(`  ${kind}: ${n.error} error(s), ${n.warning} warning(s), ${n.notice} notice(s)`);
  const shown = report.findings.slice(0, top);
  const files = [...new Set(shown.map((f) => f.file ?? "(no file)"))];
  for (const file of files) {
    out.push(`${file}`);
    for (const f of shown.filter((x) => (x.file ?? "(no file)") === file)) {
      out.push(`  ${f.line ? `${f.line}: ` : ""}${f.severity} ${f.kind} on ${f.surface}${f.occurrences > 1 ? ` (×${f.occurrences})` : ""}: ${f.message.split("\n")[0]}  [${f.evidence}]`);
    }
  }
  if (report.findings.length > top) out.push(`… and ${report.findings.length - top} more in files/check/report.json`);
  return `${out.map(printable).join("\n")}\n`;
}
