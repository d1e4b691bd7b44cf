/** The plugin check's pure logic: inventory diff, findings, dedupe, verdict, JUnit, summary. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  PLUGIN_CHECK_REPORT_SCHEMA,
  buildPluginCheckReport,
  dedupeFindings,
  diffInventory,
  findingKey,
  findingsFromProblems,
  pluginCheckJunit,
  severityFails,
  summarizePluginCheck,
  validateAgainstSchema,
  type PluginInventory,
  type RawFinding,
} from "@wp-codebox/runtime-core";

const empty: PluginInventory = { adminPages: [], restRoutes: [], shortcodes: [], blocks: [], cronHooks: [], ajaxActions: [], postTypes: [], taxonomies: [], options: [], tables: [], importers: [], files: [], callbacks: [] };

test("diffInventory keeps only what is new, per category, without WordPress's own churn", () => {
  const before: PluginInventory = { ...empty, options: ["siteurl"], cronHooks: [{ hook: "wp_version_check", schedule: "twicedaily", args: [] }], shortcodes: [{ tag: "gallery" }] };
  const after: PluginInventory = {
    ...before,
    options: ["siteurl", "my_plugin_settings", "_transient_timeout_x", "rewrite_rules"],
    cronHooks: [...before.cronHooks, { hook: "my_hook", schedule: null, args: [1] }, { hook: "my_hook", schedule: null, args: [2] }, { hook: "wp_scheduled_auto_draft_delete", schedule: "daily", args: [] }],
    shortcodes: [{ tag: "gallery" }, { tag: "mine" }],
    adminPages: [{ slug: "mine", parent: "tools.php", title: "Mine", url: "/wp-admin/tools.php?page=mine" }],
    ajaxActions: [{ action: "save", nopriv: false }, { action: "save", nopriv: true }],
  };
  const added = diffInventory(before, after);
  assert.deepEqual(added.options, ["my_plugin_settings"]);
  assert.deepEqual(added.cronHooks.map((c) => c.args), [[1], [2]], "same hook, other args: two events");
  assert.deepEqual(added.shortcodes, [{ tag: "mine" }]);
  assert.equal(added.adminPages.length, 1);
  assert.equal(added.ajaxActions.length, 2, "nopriv and logged-in actions are distinct");
  assert.deepEqual(added.tables, []);
});

test("findingsFromProblems maps each PHP level to a kind and severity", () => {
  const table: [Parameters<typeof findingsFromProblems>[0][number]["level"], string, string][] = [
    ["fatal", "php-fatal", "error"],
    ["warning", "php-warning", "warning"],
    ["notice", "php-notice", "notice"],
    ["deprecated", "deprecated", "notice"],
    ["doing-it-wrong", "doing-it-wrong", "notice"],
    ["db-error", "db-error", "warning"],
  ];
  for (const [level, kind, severity] of table) {
    const [f] = findingsFromProblems([{ level, message: "m", file: "/p.php", line: 3, query: "SELECT 1" }], "s", "files/check/e.html");
    assert.equal(f!.kind, kind, level);
    assert.equal(f!.severity, severity, level);
    assert.equal(f!.evidence, "files/check/e.html");
  }
  const [db] = findingsFromProblems([{ level: "db-error", message: "near SEPARATOR", query: "SELECT GROUP_CONCAT(x SEPARATOR '|')" }], "s", "e");
  assert.match(db!.message, /near SEPARATOR \[query: SELECT GROUP_CONCAT/);
});

test("dedupeFindings merges the same problem at the same place, drops the baseline, sorts by severity then file then line", () => {
  const f = (over: Partial<RawFinding>): RawFinding => ({ severity: "warning", kind: "php-warning", surface: "a", message: "m", file: "/b.php", line: 2, evidence: "e1", ...over });
  const core = f({ severity: "notice", kind: "deprecated", file: "/wp-includes/x.php", message: "core" });
  const out = dedupeFindings(
    [f({}), f({ surface: "b", evidence: "e2" }), f({ surface: "a" }), f({ line: 1 }), f({ severity: "error", kind: "php-fatal", file: "/z.php" }), core],
    new Set([findingKey(core)]),
  );
  assert.deepEqual(
    out.map((x) => [x.kind, x.file, x.line, x.occurrences, x.surfaces, x.evidence]),
    [
      ["php-fatal", "/z.php", 2, 1, ["a"], "e1"],
      ["php-warning", "/b.php", 1, 1, ["a"], "e1"],
      ["php-warning", "/b.php", 2, 3, ["a", "b"], "e1"],
    ],
  );
});

test("severityFails: error < warning < notice as thresholds", () => {
  const rows: [string, string, boolean][] = [
    ["error", "error", true], ["warning", "error", false], ["notice", "error", false],
    ["error", "warning", true], ["warning", "warning", true], ["notice", "warning", false],
    ["error", "notice", true], ["warning", "notice", true], ["notice", "notice", true],
  ];
  for (const [severity, failOn, fails] of rows) assert.equal(severityFails(severity as never, failOn as never), fails, `${severity} on fail-on ${failOn}`);
});

test("buildPluginCheckReport: verdict, per-surface status, counts, a schema-valid report; JUnit and summary agree", () => {
  const parts = {
    plugin: { file: "p/p.php", name: "P", version: "1", active: true },
    inventory: empty,
    leftovers: { options: [], tables: [], cronHooks: [], files: [] },
    uninstall: "none" as const,
    surfaces: [
      { id: "admin-page:/x", kind: "admin-page" as const, target: "/x", actor: "admin", durationMs: 5 },
      { id: "shortcode:[s]", kind: "shortcode" as const, target: "/s/", actor: "anonymous", durationMs: 7 },
      { id: "rest-route:/r/(?P<id>\\d+)", kind: "rest-route" as const, target: "/r/(?P<id>\\d+)", actor: "admin", durationMs: 0, skippedReason: "path parameters" },
    ],
    findings: [
      { severity: "warning" as const, kind: "php-warning" as const, surface: "shortcode:[s]", message: "Undefined <key> & \u0001", file: "/p.php", line: 9, evidence: "files/check/r.html" },
    ],
  };
  const onError = buildPluginCheckReport({ ...parts, failOn: "error" });
  assert.equal(onError.status, "passed");
  assert.deepEqual(onError.surfaces.map((s) => s.status), ["passed", "passed", "skipped"]);
  assert.deepEqual(onError.counts, { error: 0, warning: 1, notice: 0 });
  assert.deepEqual(onError.countsBySurface, { shortcode: { error: 0, warning: 1, notice: 0 } });
  const onWarning = buildPluginCheckReport({ ...parts, failOn: "warning" });
  assert.equal(onWarning.status, "failed");
  assert.deepEqual(onWarning.surfaces.map((s) => s.status), ["passed", "failed", "skipped"]);
  assert.deepEqual(validateAgainstSchema(PLUGIN_CHECK_REPORT_SCHEMA, onWarning), []);

  const junit = pluginCheckJunit(onWarning);
  assert.equal((junit.match(/<testcase /g) ?? []).length, 3);
  assert.equal((junit.match(/<failure /g) ?? []).length, 1);
  assert.equal((junit.match(/<skipped /g) ?? []).length, 1);
  assert.match(junit, /Undefined &lt;key&gt; &amp; /, "text is escaped");
  assert.doesNotMatch(junit, /\u0001/, "control characters XML cannot hold are dropped");
  assert.match(pluginCheckJunit(onError), /<system-out>warning php-warning: Undefined/);

  const summary = summarizePluginCheck(onWarning);
  assert.match(summary, /^check p\/p\.php: FAILED \(fail on warning\) — 0 error\(s\), 1 warning\(s\), 0 notice\(s\)/);
  assert.match(summary, /\/p\.php\n {2}9: warning php-warning on shortcode:\[s\]: Undefined <key>/);
});

test("summarizePluginCheck counts WordPress's namespace index routes apart from the plugin's own", () => {
  const route = (path: string, namespaceIndex?: boolean) => ({ route: path, methods: ["GET"], pathParams: false, ...(namespaceIndex ? { namespaceIndex } : {}) });
  const rows: [ReturnType<typeof route>[], string][] = [
    [[], "0 REST route(s),"],
    [[route("/p/v1", true), route("/p/v1/a")], "1 REST route(s) (+1 namespace index),"],
    [[route("/p/v1", true), route("/q/v2", true), route("/p/v1/a"), route("/q/v2/b")], "2 REST route(s) (+2 namespace indexes),"],
  ];
  for (const [restRoutes, text] of rows) {
    const report = buildPluginCheckReport({
      plugin: { file: "p/p.php", name: "P", version: "1", active: true },
      inventory: { ...empty, restRoutes },
      leftovers: { options: [], tables: [], cronHooks: [], files: [] },
      uninstall: "none",
      surfaces: [],
      findings: [],
      failOn: "error",
    });
    assert.deepEqual(validateAgainstSchema(PLUGIN_CHECK_REPORT_SCHEMA, report), []);
    assert.ok(summarizePluginCheck(report).includes(`admin page(s), ${text} 0 shortcode(s)`), summarizePluginCheck(report));
  }
});
