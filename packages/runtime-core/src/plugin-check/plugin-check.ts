/**
 * Pure logic of the plugin check: diffing inventories, turning recorded PHP/WordPress/database
 * problems into deduplicated findings, verdicts, the JUnit file and the human summary. The
 * backend gathers the raw records; everything that decides lives here so it is tested without
 * WordPress.
 */
import {
  CHECK_SEVERITIES,
  PLUGIN_CHECK_REPORT_SCHEMA_ID,
  type CheckCoverage,
  type CheckFinding,
  type CheckFindingKind,
  type CheckSeverity,
  type CheckSurface,
  type PluginCheckReport,
  type PluginInventory,
  type RestArg,
} from "./plugin-check-report.js";

/**
 * One problem as the in-sandbox recorder writes it (a line of `files/check/php-errors.jsonl`).
 * `level` is decided in PHP from the error number or the WordPress hook that reported it.
 */
export interface RecordedProblem {
  level: "fatal" | "warning" | "notice" | "deprecated" | "doing-it-wrong" | "db-error" | "admin-notice-error" | "admin-notice-warning" | "blocked-request";
  message: string;
  file?: string;
  line?: number;
  /** The request URI or `cli` for run-php work. */
  uri?: string;
  /**
   * The check request that caused it: the tag the check sent (header `X-WP-Codebox-Check-Request`,
   * a surface id), also on the requests that request made to its own site (WP-Cron's spawn).
   */
  request?: string;
  /** For `db-error`: the query that failed. */
  query?: string;
  /** Where core raised it, when `file:line` is the plugin's calling frame. */
  raisedAt?: { file: string; line: number };
  /** `sandbox` when the recorder tied it to the sandbox (raised by core after the network policy blocked a request). */
  cause?: "sandbox";
  /** The URL the network policy blocked, for `blocked-request` and problems that followed one. */
  blocked?: string;
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
  cause?: "sandbox";
  raisedAt?: { file: string; line: number };
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
  "blocked-request": { kind: "blocked-request", severity: "notice" },
};

/** Named entities WordPress and PHP messages use; numeric ones are decoded by code point. */
const NAMED_ENTITIES: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", ndash: "–", mdash: "—",
  lsquo: "‘", rsquo: "’", sbquo: "‚", ldquo: "“", rdquo: "”", bdquo: "„", laquo: "«", raquo: "»",
  copy: "©", reg: "®", trade: "™", bull: "•", middot: "·", times: "×", divide: "÷", euro: "€", pound: "£", deg: "°",
};

/**
 * A message as plain text: `<script>`/`<style>` blocks dropped, tags stripped (a block tag or
 * `<br>` reads as a space), HTML entities decoded, runs of whitespace made one space. Messages
 * without `<` or `&` are only trimmed. Unknown named entities are kept as written.
 */
export function plainText(message: string): string {
  if (!/[<&]/.test(message)) return message.trim();
  const stripped = message
    .replace(/<(script|style|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<\/?(?:p|div|br|li|ul|ol|h[1-6]|tr|td|th|blockquote|pre)\b[^>]*>/gi, " ")
    .replace(/<\/?[A-Za-z][^>]*>/g, "")
    .replace(/<!--[\s\S]*?-->/g, "");
  const decoded = stripped.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z][a-z0-9]*);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
  });
  return decoded.replace(/\s+/g, " ").trim();
}

/**
 * PHP extensions by the functions (name prefix or exact) and classes they define, for telling a
 * fatal caused by the sandbox's PHP build from one caused by the plugin.
 */
const EXTENSION_SYMBOLS: readonly { extension: string; functions?: RegExp; classes?: readonly string[] }[] = [
  { extension: "intl", functions: /^(grapheme_|idn_to_|intl_|intlcal_|intltz_|numfmt_|collator_|locale_|normalizer_|transliterator_|msgfmt_|datefmt_|resourcebundle_)/, classes: ["Collator", "NumberFormatter", "Normalizer", "Locale", "IntlDateFormatter", "Transliterator", "MessageFormatter", "IntlChar", "ResourceBundle", "Spoofchecker", "IntlBreakIterator", "IntlTimeZone", "IntlCalendar"] },
  { extension: "mbstring", functions: /^mb_/ },
  { extension: "gd", functions: /^(image(?!_type_to_)[a-z]|gd_info$)/ },
  { extension: "imagick", classes: ["Imagick", "ImagickDraw", "ImagickPixel", "ImagickPixelIterator"] },
  { extension: "curl", functions: /^curl_/, classes: ["CurlHandle", "CURLFile"] },
  { extension: "gmp", functions: /^gmp_/, classes: ["GMP"] },
  { extension: "bcmath", functions: /^bc(add|sub|mul|div|mod|pow|powmod|sqrt|scale|comp)$/ },
  { extension: "sodium", functions: /^sodium_/ },
  { extension: "zip", functions: /^zip_/, classes: ["ZipArchive"] },
  { extension: "exif", functions: /^(exif_|read_exif_data$)/ },
  { extension: "iconv", functions: /^iconv/ },
  { extension: "simplexml", functions: /^simplexml_/, classes: ["SimpleXMLElement", "SimpleXMLIterator"] },
  { extension: "dom", classes: ["DOMDocument", "DOMXPath", "DOMElement", "DOMNode"] },
  { extension: "xml", functions: /^xml_/ },
  { extension: "xmlreader", classes: ["XMLReader"] },
  { extension: "xmlwriter", functions: /^xmlwriter_/, classes: ["XMLWriter"] },
  { extension: "openssl", functions: /^openssl_/ },
  { extension: "fileinfo", functions: /^(finfo_|mime_content_type$)/, classes: ["finfo"] },
  { extension: "zlib", functions: /^(gz[a-z]|zlib_)/ },
  { extension: "bz2", functions: /^bz[a-z]/ },
  { extension: "sockets", functions: /^socket_/ },
  { extension: "ftp", functions: /^ftp_/ },
  { extension: "soap", classes: ["SoapClient", "SoapServer"] },
  { extension: "mysqli", functions: /^mysqli_/, classes: ["mysqli"] },
  { extension: "apcu", functions: /^apcu_/ },
  { extension: "redis", classes: ["Redis", "RedisCluster"] },
  { extension: "memcached", classes: ["Memcached"] },
];

/**
 * The PHP extension a fatal's message shows missing ("Call to undefined function mb_strlen()",
 * `Class "Collator" not found`), or undefined when the missing symbol is not a known extension's.
 */
export function missingExtensionOf(message: string): string | undefined {
  const fn = /Call to undefined function \\?([A-Za-z0-9_]+)\(/.exec(message)?.[1];
  if (fn) return EXTENSION_SYMBOLS.find((e) => e.functions?.test(fn.toLowerCase()))?.extension;
  const cls = /Class "\\?([A-Za-z0-9_]+)" not found/.exec(message)?.[1];
  if (cls) return EXTENSION_SYMBOLS.find((e) => e.classes?.some((c) => c.toLowerCase() === cls.toLowerCase()))?.extension;
  return undefined;
}

/**
 * Maps recorded problems of one surface to findings that point at `evidence`. Messages become
 * plain text; a problem the sandbox caused (after a blocked request, or a fatal on a symbol of a
 * PHP extension the build lacks) gets `cause: "sandbox"` and says so in its message.
 */
export function findingsFromProblems(problems: readonly RecordedProblem[], surface: string, evidence: string): RawFinding[] {
  return problems.map((p) => {
    const { kind, severity } = LEVEL_TO_FINDING[p.level];
    const text = p.level === "db-error" ? p.message : plainText(p.message);
    const extension = p.level === "fatal" ? missingExtensionOf(text) : undefined;
    const sandbox = p.cause === "sandbox" || p.level === "blocked-request" || extension !== undefined;
    const message =
      p.level === "db-error" && p.query
        ? `${text} [query: ${p.query.slice(0, 300)}]`
        : p.level === "admin-notice-error" || p.level === "admin-notice-warning"
          ? `${p.level.slice("admin-".length)}: ${text}`
          : extension
            ? `${text} (caused by the sandbox: its PHP has no ${extension} extension loaded; --php-extension ${extension} loads it where the build ships it)`
            : p.cause === "sandbox" && p.level !== "blocked-request" && p.blocked
              ? `${text} (caused by the sandbox: its network policy blocked ${p.blocked})`
              : text;
    return {
      severity,
      kind,
      surface,
      message,
      ...(p.file ? { file: p.file } : {}),
      ...(p.line ? { line: p.line } : {}),
      evidence,
      ...(sandbox ? { cause: "sandbox" as const } : {}),
      ...(p.raisedAt ? { raisedAt: p.raisedAt } : {}),
    };
  });
}

/** The value `minimalRestArgs` gives one argument, or why it cannot. */
function smallestValue(name: string, arg: RestArg): { value: unknown } | { reason: string } {
  if (arg.default !== undefined) return { value: arg.default };
  if (Array.isArray(arg.enum) && arg.enum.length > 0) return { value: arg.enum[0] };
  const types = Array.isArray(arg.type) ? arg.type : arg.type ? [arg.type] : [];
  const type = types.find((t) => t !== "null") ?? (types.includes("null") ? "null" : undefined);
  if (arg.pattern !== undefined) return { reason: `its required argument ${name} must match the pattern ${arg.pattern}` };
  if (arg.format !== undefined && !["uri", "email", "date-time", "uuid", "ip", "hex-color", "text-field", "textarea-field"].includes(arg.format)) return { reason: `its required argument ${name} has the format ${arg.format}` };
  switch (type) {
    case "string": {
      const byFormat: Record<string, string> = { uri: "https://example.org/", email: "wp-codebox@example.org", "date-time": "2000-01-01T00:00:00", uuid: "00000000-0000-4000-8000-000000000000", ip: "127.0.0.1", "hex-color": "#000000" };
      const base = (arg.format && byFormat[arg.format]) ?? "a";
      return { value: base.padEnd(Math.max(arg.minLength ?? 0, base.length), "a") };
    }
    case "integer":
    case "number":
      return { value: arg.minimum ?? (arg.maximum !== undefined && arg.maximum < 1 ? arg.maximum : 1) };
    case "boolean":
      return { value: false };
    case "null":
      return { value: null };
    case "array":
      if ((arg.minItems ?? 0) === 0) return { value: [] };
      return { reason: `its required argument ${name} is an array of at least ${arg.minItems} item(s)` };
    case "object":
      return { value: {} };
    default:
      return { reason: `its required argument ${name} declares no type, enum or default` };
  }
}

/**
 * The smallest arguments a REST handler's `args` schema allows: every required argument, valued
 * from its default, else its first enum value, else the smallest value of its type (string "a"
 * padded to minLength or a sample of its format, number/integer its minimum or 1, boolean false,
 * array [] when minItems allows, object {}). Optional arguments are left out.
 * @returns `{ params }`, or `{ reason }` when a required argument has no value it can be given
 *   (a pattern, an unknown format, no type): the route is then skipped with that reason.
 */
export function minimalRestArgs(args: Readonly<Record<string, RestArg>>): { params: Record<string, unknown> } | { reason: string } {
  const params: Record<string, unknown> = {};
  for (const [name, arg] of Object.entries(args)) {
    if (arg.required !== true) continue;
    const chosen = smallestValue(name, arg);
    if ("reason" in chosen) return chosen;
    params[name] = chosen.value;
  }
  return { params };
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

/**
 * True when a finding fails the check: its severity is at or above `failOn` and the sandbox did
 * not cause it (`cause: "sandbox"` findings are listed, never failing).
 */
export function failsCheck(f: Pick<CheckFinding, "severity" | "cause">, failOn: CheckSeverity): boolean {
  return f.cause !== "sandbox" && severityFails(f.severity, failOn);
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
  files: (f) => f,
  callbacks: (c) => `${c.hook}\u0000${c.file}:${c.line}`,
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

/**
 * Callback coverage: every callback the plugin registered (from the inventory: hook callbacks,
 * shortcodes, REST handlers, block render callbacks) and whether it ran. `ran` holds the keys the
 * recorder logged: `hook:<hook>@<file>:<line>`, `shortcode:<tag>`, `rest:<file>:<line>`,
 * `block:<name>`. A hook callback is an `admin-page` one when an admin page of the plugin has it as
 * its callback, a `cron-hook` one when its hook is one of the plugin's cron events.
 */
export function callbackCoverage(added: PluginInventory, ran: ReadonlySet<string>, minPercent?: number): CheckCoverage {
  const callbacks: CheckCoverage["callbacks"] = [];
  const seen = new Set<string>();
  const add = (row: CheckCoverage["callbacks"][number]) => {
    const key = `${row.kind}\u0000${row.name}\u0000${row.file}:${row.line}`;
    if (seen.has(key)) return;
    seen.add(key);
    callbacks.push(row);
  };
  const pageAt = new Set(added.adminPages.flatMap((p) => (p.callback ? [`${p.callback.file}:${p.callback.line}`] : [])));
  const cron = new Set(added.cronHooks.map((c) => c.hook));
  for (const c of added.callbacks) {
    const kind = pageAt.has(`${c.file}:${c.line}`) ? "admin-page" : cron.has(c.hook) ? "cron-hook" : "hook";
    add({ kind, name: c.hook, file: c.file, line: c.line, ran: ran.has(`hook:${c.hook}@${c.file}:${c.line}`) });
  }
  for (const s of added.shortcodes) if (s.callback) add({ kind: "shortcode", name: s.tag, file: s.callback.file, line: s.callback.line, ran: ran.has(`shortcode:${s.tag}`) });
  for (const r of added.restRoutes) {
    for (const e of r.endpoints ?? []) {
      if (e.callback) add({ kind: "rest", name: `${e.methods.join(",")} ${r.route}`, file: e.callback.file, line: e.callback.line, ran: ran.has(`rest:${e.callback.file}:${e.callback.line}`) });
    }
  }
  for (const b of added.blocks) if (b.callback) add({ kind: "block", name: b.name, file: b.callback.file, line: b.callback.line, ran: ran.has(`block:${b.name}`) });
  const count = callbacks.filter((c) => c.ran).length;
  const percent = callbacks.length === 0 ? 100 : Math.floor((count / callbacks.length) * 1000) / 10;
  return { registered: callbacks.length, ran: count, percent, ...(minPercent !== undefined ? { minPercent } : {}), callbacks };
}

/** True when coverage is below its `minPercent`. */
export function coverageFails(coverage: CheckCoverage | undefined): boolean {
  return coverage?.minPercent !== undefined && coverage.percent < coverage.minPercent;
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
  /** Callback coverage (`callbackCoverage`); below its `minPercent` the check fails. */
  coverage?: CheckCoverage;
}

/** Assembles the report: deduplicated findings, per-surface status and counts, the verdict. */
export function buildPluginCheckReport(parts: PluginCheckParts): PluginCheckReport {
  const findings = dedupeFindings(parts.findings, parts.baseline);
  const surfaces: CheckSurface[] = parts.surfaces.map((s) => {
    const own = findings.filter((f) => f.surfaces.includes(s.id));
    const failing = own.some((f) => failsCheck(f, parts.failOn));
    const status = s.skippedReason !== undefined ? "skipped" : failing ? "failed" : "passed";
    return { ...s, status, findings: own.length };
  });
  const countsBySurface: PluginCheckReport["countsBySurface"] = {};
  for (const f of findings) {
    const kind = parts.surfaces.find((s) => s.id === f.surface)?.kind ?? "other";
    countsBySurface[kind] ??= { error: 0, warning: 0, notice: 0 };
    countsBySurface[kind][f.severity] += 1;
  }
  const failed = findings.some((f) => failsCheck(f, parts.failOn)) || coverageFails(parts.coverage);
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
    ...(parts.coverage ? { coverage: parts.coverage } : {}),
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
    const failing = own.filter((f) => failsCheck(f, report.failOn));
    if (failing.length > 0) {
      const body = failing.map((f) => `${f.severity} ${f.kind}: ${f.message}${where(f)} [evidence: ${f.evidence}]`).join("\n");
      lines.push(`      <failure message="${xml(`${failing.length} finding(s) at or above ${report.failOn}`)}" type="${xml(failing[0]!.kind)}">${xml(body)}</failure>`);
    }
    const rest = own.filter((f) => !failsCheck(f, report.failOn));
    if (rest.length > 0) lines.push(`      <system-out>${xml(rest.map((f) => `${f.severity} ${f.kind}${f.cause === "sandbox" ? " (caused by the sandbox)" : ""}: ${f.message}${where(f)}`).join("\n"))}</system-out>`);
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
  const bySandbox = report.findings.filter((f) => f.cause === "sandbox").length;
  if (bySandbox > 0) out.push(`caused by the sandbox: ${bySandbox} finding(s) (blocked network, missing PHP extension), listed below and not failing the check`);
  const shown = report.findings.slice(0, top);
  const files = [...new Set(shown.map((f) => f.file ?? "(no file)"))];
  for (const file of files) {
    out.push(`${file}`);
    for (const f of shown.filter((x) => (x.file ?? "(no file)") === file)) {
      out.push(`  ${f.line ? `${f.line}: ` : ""}${f.severity} ${f.kind}${f.cause === "sandbox" ? " (sandbox)" : ""} on ${f.surface}${f.occurrences > 1 ? ` (×${f.occurrences})` : ""}: ${f.message.split("\n")[0]}  [${f.evidence}]`);
    }
  }
  if (report.findings.length > top) out.push(`… and ${report.findings.length - top} more in files/check/report.json`);
  const cov = report.coverage;
  if (cov) {
    out.push(`callbacks run: ${cov.ran}/${cov.registered} (${cov.percent}%${cov.minPercent !== undefined ? `, minimum ${cov.minPercent}%${coverageFails(cov) ? ": BELOW" : ""}` : ""})`);
    const never = cov.callbacks.filter((c) => !c.ran);
    for (const c of never.slice(0, top)) out.push(`  never ran: ${c.kind} ${c.name} (${c.file}:${c.line})`);
    if (never.length > top) out.push(`  … and ${never.length - top} more never run in files/check/report.json`);
    if (cov.lines && !cov.lines.available) out.push(`line coverage: unavailable: ${cov.lines.reason}`);
  }
  return `${out.map(printable).join("\n")}\n`;
}

/**
 * Credits recorder rows to surfaces by their `request` tag, so problems of requests that ran at the
 * same time, or of a background request (WP-Cron) that finished after its page, go to the surface
 * whose request caused them. A row tagged with one of `surfaces` goes to that surface; any other
 * row (run-php work, an untagged request, a tag of other work) goes to `fallback(row)`.
 * @returns rows per surface id, each list in the rows' order; surfaces without rows are absent.
 */
export function creditProblems(rows: readonly RecordedProblem[], surfaces: Iterable<string>, fallback: (row: RecordedProblem) => string): Map<string, RecordedProblem[]> {
  const known = new Set(surfaces);
  const credited = new Map<string, RecordedProblem[]>();
  for (const row of rows) {
    const surface = row.request !== undefined && known.has(row.request) ? row.request : fallback(row);
    const list = credited.get(surface);
    if (list) list.push(row);
    else credited.set(surface, [row]);
  }
  return credited;
}
