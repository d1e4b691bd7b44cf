/** The plugin check's honest labelling: plain-text messages, sandbox-caused findings, and the smallest REST arguments. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  PLUGIN_CHECK_REPORT_SCHEMA,
  buildPluginCheckReport,
  callbackCoverage,
  coverageFails,
  findingsFromProblems,
  minimalRestArgs,
  missingExtensionOf,
  plainText,
  pluginCheckJunit,
  summarizePluginCheck,
  validateAgainstSchema,
  type PluginInventory,
  type RecordedProblem,
  type RestArg,
} from "@wp-codebox/runtime-core";

test("plainText: tags stripped, scripts dropped, entities decoded, whitespace folded", () => {
  const cases: [string, string][] = [
    ["plain message", "plain message"],
    ["  padded  ", "padded"],
    ["<strong>Check</strong> needs an API key &amp; a &#8220;secret&#8221;.", "Check needs an API key & a “secret”."],
    ['An error. Try the <a href="https://wordpress.org/support/forums/">support forums</a>.', "An error. Try the support forums."],
    ["<p>One</p><p>Two</p>", "One Two"],
    ["line<br>break<br/>here", "line break here"],
    ['<div>Cold.<script>var x = "<b>not text</b>";</script></div>', "Cold."],
    ["&lt;tag&gt; &quot;q&quot; &#039;s&#x27; &hellip; &nbsp;x", "<tag> \"q\" 's' … x"],
    ["&unknown; &#xD800; stays", "&unknown; &#xD800; stays"],
    ["a < b & c", "a < b & c"],
    ["<!-- note -->text", "text"],
  ];
  for (const [input, expected] of cases) assert.equal(plainText(input), expected, input);
});

test("missingExtensionOf names the PHP extension a fatal shows missing, and only a known one", () => {
  const cases: [string, string | undefined][] = [
    ["Uncaught Error: Call to undefined function mb_str_split() in /wordpress/wp-content/plugins/p/p.php:3", "mbstring"],
    ['Uncaught Error: Class "Collator" not found in /p.php:2', "intl"],
    ['Uncaught Error: Class "\\NumberFormatter" not found', "intl"],
    ["Uncaught Error: Call to undefined function imagecreatetruecolor()", "gd"],
    ["Uncaught Error: Call to undefined function image_type_to_mime_type()", undefined],
    ['Uncaught Error: Class "Imagick" not found', "imagick"],
    ["Uncaught Error: Call to undefined function curl_init()", "curl"],
    ["Uncaught Error: Call to undefined function bcadd()", "bcmath"],
    ['Uncaught Error: Class "ZipArchive" not found', "zip"],
    ["Uncaught Error: Call to undefined function check_hidden_missing()", undefined],
    ['Uncaught Error: Class "My_Plugin_Thing" not found', undefined],
    ["Allowed memory size exhausted", undefined],
  ];
  for (const [message, extension] of cases) assert.equal(missingExtensionOf(message), extension, message);
});

test("findingsFromProblems: plain text, the plugin's frame with core's kept, sandbox causes labelled", () => {
  const problems: RecordedProblem[] = [
    { level: "warning", message: "Check: the cache is <strong>stale</strong> &amp; rebuilt.", file: "/wordpress/wp-content/plugins/p/p.php", line: 12, raisedAt: { file: "/wordpress/wp-includes/functions.php", line: 6114 } },
    { level: "warning", message: 'An unexpected error occurred. <a href="https://wordpress.org/support/forums/">support forums</a>.', file: "/p.php", line: 20, cause: "sandbox", blocked: "https://api.wordpress.org/plugins/info/1.2/" },
    { level: "blocked-request", message: "An outbound request to https://api.wordpress.org/x was blocked.", file: "/p.php", line: 20, cause: "sandbox", blocked: "https://api.wordpress.org/x" },
    { level: "fatal", message: 'Uncaught Error: Class "Collator" not found', file: "/p.php", line: 30 },
    { level: "fatal", message: "Uncaught Error: Call to undefined function p_missing()", file: "/p.php", line: 40 },
    { level: "db-error", message: "near <x>: syntax error", query: "SELECT <x>", file: "/p.php", line: 50 },
  ];
  const findings = findingsFromProblems(problems, "s", "files/check/e.jsonl");
  assert.deepEqual(
    findings.map((f) => [f.kind, f.severity, f.cause ?? "-", f.line]),
    [
      ["php-warning", "warning", "-", 12],
      ["php-warning", "warning", "sandbox", 20],
      ["blocked-request", "notice", "sandbox", 20],
      ["php-fatal", "error", "sandbox", 30],
      ["php-fatal", "error", "-", 40],
      ["db-error", "warning", "-", 50],
    ],
  );
  assert.equal(findings[0]!.message, "Check: the cache is stale & rebuilt.");
  assert.deepEqual(findings[0]!.raisedAt, { file: "/wordpress/wp-includes/functions.php", line: 6114 });
  assert.equal(findings[1]!.message, "An unexpected error occurred. support forums. (caused by the sandbox: its network policy blocked https://api.wordpress.org/plugins/info/1.2/)");
  assert.match(findings[3]!.message, /no intl extension loaded; --php-extension intl/);
  assert.equal(findings[5]!.message, "near <x>: syntax error [query: SELECT <x>]", "database messages are kept as the driver wrote them");
});

test("sandbox-caused findings are listed but never fail the check, and the summary says so", () => {
  const empty: PluginInventory = { adminPages: [], restRoutes: [], shortcodes: [], blocks: [], cronHooks: [], ajaxActions: [], postTypes: [], taxonomies: [], options: [], tables: [], importers: [], files: [], callbacks: [] };
  const report = buildPluginCheckReport({
    plugin: { file: "p/p.php", name: "P", version: "1", active: true },
    failOn: "notice",
    inventory: empty,
    leftovers: { options: [], tables: [], cronHooks: [], files: [] },
    uninstall: "none",
    surfaces: [{ id: "a", kind: "admin-screen", target: "/wp-admin/edit.php", actor: "admin", durationMs: 1 }],
    findings: [
      { severity: "error", kind: "php-fatal", surface: "a", message: "Collator missing (caused by the sandbox)", file: "/p.php", line: 3, evidence: "e", cause: "sandbox" },
      { severity: "notice", kind: "blocked-request", surface: "a", message: "blocked", file: "/p.php", line: 4, evidence: "e", cause: "sandbox" },
    ],
  });
  assert.equal(report.status, "passed");
  assert.equal(report.surfaces[0]!.status, "passed");
  assert.deepEqual(report.counts, { error: 1, warning: 0, notice: 1 });
  assert.deepEqual(validateAgainstSchema(PLUGIN_CHECK_REPORT_SCHEMA, report), []);
  const junit = pluginCheckJunit(report);
  assert.doesNotMatch(junit, /<failure /);
  assert.match(junit, /<system-out>error php-fatal \(caused by the sandbox\): Collator missing/);
  const summary = summarizePluginCheck(report);
  assert.match(summary, /PASSED/);
  assert.match(summary, /caused by the sandbox: 2 finding\(s\) .*not failing the check/);
  assert.match(summary, /3: error php-fatal \(sandbox\) on a/);
});

test("minimalRestArgs: required arguments from default, enum or type; optional ones left out; a reason when none can be made up", () => {
  const cases: [Record<string, RestArg>, ReturnType<typeof minimalRestArgs>][] = [
    [{}, { params: {} }],
    [{ q: { type: "string" } }, { params: {} }],
    [{ mode: { type: "string", enum: ["full", "quick"], required: true } }, { params: { mode: "full" } }],
    [{ limit: { type: "integer", minimum: 5, required: true } }, { params: { limit: 5 } }],
    [{ n: { type: "number", required: true } }, { params: { n: 1 } }],
    [{ n: { type: "integer", maximum: 0, required: true } }, { params: { n: 0 } }],
    [{ page: { type: "integer", default: 3, required: true } }, { params: { page: 3 } }],
    [{ on: { type: "boolean", required: true } }, { params: { on: false } }],
    [{ name: { type: "string", minLength: 3, required: true } }, { params: { name: "aaa" } }],
    [{ email: { type: "string", format: "email", required: true } }, { params: { email: "wp-codebox@example.org" } }],
    [{ ids: { type: "array", required: true } }, { params: { ids: [] } }],
    [{ meta: { type: "object", required: true } }, { params: { meta: {} } }],
    [{ v: { type: ["null", "string"], required: true } }, { params: { v: "a" } }],
    [{ token: { type: "string", pattern: "^[a-f0-9]{32}$", required: true } }, { reason: "its required argument token must match the pattern ^[a-f0-9]{32}$" }],
    [{ ids: { type: "array", minItems: 2, required: true } }, { reason: "its required argument ids is an array of at least 2 item(s)" }],
    [{ what: { required: true } }, { reason: "its required argument what declares no type, enum or default" }],
    [{ d: { type: "string", format: "binary", required: true } }, { reason: "its required argument d has the format binary" }],
  ];
  for (const [args, expected] of cases) assert.deepEqual(minimalRestArgs(args), expected, JSON.stringify(args));
});

test("callbackCoverage: each registered callback once, by kind, with whether it ran; the minimum fails the report", () => {
  const at = (line: number) => ({ file: "/p/p.php", line });
  const added: PluginInventory = {
    adminPages: [{ slug: "p", parent: "tools.php", title: "P", url: "/wp-admin/tools.php?page=p", callback: at(5) }],
    restRoutes: [
      { route: "/p/v1/sync", methods: ["POST"], pathParams: false, callback: at(20), endpoints: [{ methods: ["POST"], args: {}, callback: at(20) }] },
      { route: "/p/v1/verify", methods: ["POST"], pathParams: false, endpoints: [{ methods: ["POST"], args: {}, callback: at(30) }] },
    ],
    shortcodes: [{ tag: "p_hello", callback: at(40) }],
    blocks: [{ name: "p/greeting", dynamic: true, callback: at(50) }],
    cronHooks: [{ hook: "p_hourly", schedule: "hourly", args: [] }],
    ajaxActions: [],
    postTypes: [],
    taxonomies: [],
    options: [],
    tables: [],
    importers: [],
    files: [],
    callbacks: [
      { hook: "tools_page_p", ...at(5) },
      { hook: "p_hourly", ...at(60) },
      { hook: "init", ...at(70) },
      { hook: "init", ...at(70) },
      { hook: "wp_footer", ...at(80) },
    ],
  };
  const ran = new Set(["hook:tools_page_p@/p/p.php:5", "hook:init@/p/p.php:70", "rest:/p/p.php:20", "shortcode:p_hello", "hook:other@/p/p.php:99"]);
  const coverage = callbackCoverage(added, ran);
  assert.deepEqual(
    coverage.callbacks.map((c) => [c.kind, c.name, c.line, c.ran]),
    [
      ["admin-page", "tools_page_p", 5, true],
      ["cron-hook", "p_hourly", 60, false],
      ["hook", "init", 70, true],
      ["hook", "wp_footer", 80, false],
      ["shortcode", "p_hello", 40, true],
      ["rest", "POST /p/v1/sync", 20, true],
      ["rest", "POST /p/v1/verify", 30, false],
      ["block", "p/greeting", 50, false],
    ],
  );
  assert.deepEqual([coverage.registered, coverage.ran, coverage.percent, coverage.minPercent], [8, 4, 50, undefined]);
  assert.equal(coverageFails(coverage), false);
  assert.deepEqual(callbackCoverage({ ...added, callbacks: [], adminPages: [], restRoutes: [], shortcodes: [], blocks: [] }, ran).percent, 100, "nothing registered is nothing missed");

  const parts = {
    plugin: { file: "p/p.php", name: "P", version: "1", active: true },
    failOn: "error" as const,
    inventory: added,
    leftovers: { options: [], tables: [], cronHooks: [], files: [] },
    uninstall: "none" as const,
    surfaces: [],
    findings: [],
  };
  const passing = buildPluginCheckReport({ ...parts, coverage: callbackCoverage(added, ran, 50) });
  assert.equal(passing.status, "passed");
  assert.deepEqual(validateAgainstSchema(PLUGIN_CHECK_REPORT_SCHEMA, passing), []);
  const below = buildPluginCheckReport({ ...parts, coverage: { ...callbackCoverage(added, ran, 51), lines: { available: false, reason: "no Xdebug" } } });
  assert.equal(below.status, "failed");
  const summary = summarizePluginCheck(below);
  assert.match(summary, /^callbacks run: 4\/8 \(50%, minimum 51%: BELOW\)$/m);
  assert.match(summary, /^ {2}never ran: cron-hook p_hourly \(\/p\/p\.php:60\)$/m);
  assert.match(summary, /^ {2}never ran: rest POST \/p\/v1\/verify \(\/p\/p\.php:30\)$/m);
  assert.match(summary, /^line coverage: unavailable: no Xdebug$/m);
});
