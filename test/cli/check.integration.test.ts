/**
 * Integration: `wp-codebox check` end to end against real WordPress and Chromium, with two fixture
 * plugins written for it: check-faulty plants one fault of each kind (every one must be reported
 * exactly once, at its file and line, with evidence that is in the bundle), check-clean has one of
 * every surface and no fault, check-hidden hides its faults on WordPress's own screens (front page,
 * a subscriber's single post, profile.php, its importer) and prints admin notices. The clean
 * fixture's check runs as a recipe step (the example recipe), which serves both its assertions. check-hidden also hides a `wp_trigger_error()` warning, a call WordPress.org
 * cannot answer in the sandbox, files left in wp-content/ and uploads/, a fatal in a POST-only REST
 * route and a route no made-up argument can call, and uses WP_Filesystem() when deactivated.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@wp-codebox/cli";
import { spawnCli } from "./spawn-cli.js";
import { imagesLoaded, launchOfflineBrowser } from "../support/offline-page.js";
import { verifyArtifactBundle, type PluginCheckReport } from "@wp-codebox/runtime-core";
import { scratchDir } from "../support/scratch-dir.js";
import { nativeToolsStatus } from "@wp-codebox/runtime-native";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = scratchDir("wp-codebox-check-");
const FAULTY = join(ROOT, "test/fixtures/plugins/check-faulty/check-faulty.php");
const HIDDEN = join(ROOT, "test/fixtures/plugins/check-hidden/check-hidden.php");

/** Runs the CLI in-process; `onStderr` sees each stderr write and may send a signal through `signal`. */
async function cli(argv: string[], onStderr?: (text: string, signal: (name: NodeJS.Signals) => void) => void) {
  let stdout = "";
  let stderr = "";
  let onSignal: ((signal: NodeJS.Signals) => void) | undefined;
  const send = (name: NodeJS.Signals) => onSignal?.(name);
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => { stderr += t; onStderr?.(t, send); }, env: process.env, cwd: ROOT };
  const code = await runCli(argv, {
    io,
    installSignalHandlers: (handler) => {
      onSignal = handler;
      return () => void (onSignal = undefined);
    },
  });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 3000)}\n--- stderr ---\n${stderr.slice(-4000)}` };
}

/** 1-based line of the first line of `file` containing `needle`. */
function lineOf(file: string, needle: string): number {
  const index = readFileSync(file, "utf8").split("\n").findIndex((l) => l.includes(needle));
  assert.ok(index >= 0, `${needle} not in ${file}`);
  return index + 1;
}

test("check on the faulty fixture: exit 1, exactly the planted findings, each at its file:line with evidence in the bundle", async () => {
  const out = join(scratch, "faulty");
  const run = await cli(["check", "test/fixtures/plugins/check-faulty", "--browser", "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  const report = JSON.parse(run.stdout) as PluginCheckReport;
  assert.equal(report.status, "failed");

  const seen = report.findings.map((f) => `${f.kind} ${f.file ? basename(f.file.split("?")[0]!) : "-"}:${f.line ?? "-"}`).sort();
  const expected = [
    `php-fatal check-faulty.php:${lineOf(FAULTY, "check_faulty_missing_function();")}`,
    `php-warning check-faulty.php:${lineOf(FAULTY, "$totals['sum']")}`,
    `http-error check-faulty.php:${lineOf(FAULTY, "function check_faulty_status()")}`,
    `deprecated check-faulty.php:${lineOf(FAULTY, "get_page_by_title(")}`,
    `leftover check-faulty.php:${lineOf(FAULTY, "add_option('check_faulty_settings'")}`,
    `db-error check-faulty.php:${lineOf(FAULTY, "GROUP_CONCAT(option_name SEPARATOR")}`,
  ];
  const js = report.findings.filter((f) => f.kind === "js-error");
  assert.equal(js.length, 1, JSON.stringify(report.findings, null, 2));
  assert.equal(js[0]!.file, "/wp-admin/tools.php?page=check-faulty-script");
  assert.match(js[0]!.message, /checkFaultyBoard|reading 'start'/);
  assert.deepEqual(seen.filter((s) => !s.startsWith("js-error")), expected.sort(), JSON.stringify(report.findings, null, 2));

  const bySeverity = Object.fromEntries(report.findings.map((f) => [f.kind, f.severity]));
  assert.deepEqual(bySeverity, { "php-fatal": "error", "http-error": "error", "js-error": "error", "php-warning": "warning", leftover: "warning", "db-error": "warning", deprecated: "notice" });
  assert.match(report.findings.find((f) => f.kind === "db-error")!.message, /\[query: SELECT GROUP_CONCAT\(option_name SEPARATOR '\|'\)/);
  // The deprecated call runs on every admin request: one finding, many occurrences.
  assert.ok(report.findings.find((f) => f.kind === "deprecated")!.occurrences > 1);
  assert.match(report.findings.find((f) => f.kind === "leftover")!.message, /check_faulty_settings/);
  assert.equal(report.uninstall, "uninstall.php");
  assert.deepEqual(report.leftovers.options, ["check_faulty_settings"]);

  for (const f of report.findings) assert.ok(existsSync(join(out, f.evidence)), `evidence ${f.evidence} of ${f.kind} is in the bundle`);
  const fatal = report.findings.find((f) => f.kind === "php-fatal")!;
  assert.match(fatal.evidence, /^files\/check\/php-errors\//);
  assert.match(readFileSync(join(out, fatal.evidence), "utf8"), /check_faulty_missing_function/, "the fatal's evidence is the recorder's log excerpt");
  // HTTP requests hide PHP errors as a production site does: the page a visitor got says nothing.
  const page = report.surfaces.find((s) => s.id === "admin-page:/wp-admin/tools.php?page=check-faulty-fatal")!;
  assert.doesNotMatch(readFileSync(join(out, page.evidence!), "utf8"), /check_faulty_missing_function/);
  assert.deepEqual(JSON.parse(readFileSync(join(out, "files/check/report.json"), "utf8")), report);
  const junit = readFileSync(join(out, "files/check/junit.xml"), "utf8");
  assert.equal((junit.match(/<testcase /g) ?? []).length, report.surfaces.length);
  assert.equal((junit.match(/<failure /g) ?? []).length, report.surfaces.filter((s) => s.status === "failed").length);
  assert.match(run.stderr, /FAILED \(fail on error\)/);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
});

test("check --backend native on the faulty fixture: the same planted findings but the SQLite-only db-error, browser surfaces included, a valid bundle", { skip: nativeToolsStatus().ok ? false : "the native backend's Debian packages are missing" }, async () => {
  const out = join(scratch, "faulty-native");
  const run = await cli(["check", "test/fixtures/plugins/check-faulty", "--backend", "native", "--browser", "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  const report = JSON.parse(run.stdout) as PluginCheckReport;
  const seen = report.findings.map((f) => `${f.kind} ${f.file ? basename(f.file.split("?")[0]!) : "-"}:${f.line ?? "-"}`).sort();
  // MariaDB runs GROUP_CONCAT … SEPARATOR: the cron hook's query is no database error here.
  const expected = [
    `php-fatal check-faulty.php:${lineOf(FAULTY, "check_faulty_missing_function();")}`,
    `php-warning check-faulty.php:${lineOf(FAULTY, "$totals['sum']")}`,
    `http-error check-faulty.php:${lineOf(FAULTY, "function check_faulty_status()")}`,
    `deprecated check-faulty.php:${lineOf(FAULTY, "get_page_by_title(")}`,
    `leftover check-faulty.php:${lineOf(FAULTY, "add_option('check_faulty_settings'")}`,
  ];
  assert.deepEqual(seen.filter((x) => !x.startsWith("js-error")), expected.sort(), JSON.stringify(report.findings, null, 2));
  assert.equal(report.findings.filter((f) => f.kind === "js-error").length, 1, JSON.stringify(report.findings, null, 2));
  for (const f of report.findings) assert.ok(existsSync(join(out, f.evidence)), `evidence ${f.evidence} of ${f.kind} is in the bundle`);
  assert.equal((JSON.parse(readFileSync(join(out, "metadata.json"), "utf8")) as { runtime: { backend: string } }).runtime.backend, "native");
  assert.equal((await verifyArtifactBundle(out)).valid, true);
});

test("the faulty check's report.html, offline in Chromium: findings at file:line with the plugin's source, surfaces, screenshots, no console errors", async () => {
  const out = join(scratch, "faulty");
  const report = JSON.parse(readFileSync(join(out, "files/check/report.json"), "utf8")) as PluginCheckReport;
  const fatal = report.findings.find((f) => f.kind === "php-fatal")!;
  const browser = await launchOfflineBrowser();
  try {
    const { page, errors } = await browser.open(join(out, "report.html"));
    const finding = page.locator(".finding").filter({ hasText: `${fatal.file}:${fatal.line}` }).first();
    await finding.waitFor();
    const hit = (await finding.locator(".excerpt .hit").textContent()) ?? "";
    assert.ok(hit.includes(String(fatal.line)) && hit.includes("check_faulty_missing_function();"), `the marked source line: ${hit}`);
    assert.ok((await finding.locator(".excerpt span").count()) > 1, "the lines around it too");
    assert.equal(await page.locator("#check table").first().locator("tbody tr").count(), report.surfaces.length);
    assert.ok(await imagesLoaded(page, "#check figure img"), "the browser surfaces' screenshots load");
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

// One check of the clean fixture serves both: it runs as the example recipe's step (the recipe
// gates on fail-on=warning), and its report is the clean fixture's.
test("check on the clean fixture, as a recipe step that gates on fail-on: exit 0, zero findings, every kind of surface exercised", async () => {
  const out = join(scratch, "clean");
  const recipe = await cli(["recipe", "run", "examples/recipes/plugin-check/recipe.json", "--allow-path", "test/fixtures", "--artifacts", out, "--json"]);
  assert.equal(recipe.code, 0, recipe.show());
  assert.ok(existsSync(join(out, "files/check/report.json")));
  const steps = readFileSync(join(out, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { command: string; exitCode: number; stdout: string; stderr: string });
  assert.deepEqual(steps.map((s) => [s.command, s.exitCode]), [["wordpress.check", 0]]);
  const run = steps[0]!;
  const report = JSON.parse(run.stdout) as PluginCheckReport;
  assert.deepEqual(JSON.parse(readFileSync(join(out, "files/check/report.json"), "utf8")), report);
  assert.deepEqual(report.findings, []);
  assert.equal(report.status, "passed");
  const kinds = new Set(report.surfaces.map((s) => s.kind));
  for (const kind of ["activation", "admin-page", "rest-route", "shortcode", "block", "cron-hook", "post-type-archive", "post-type-single", "front-end", "login-screen", "admin-screen", "deactivation", "uninstall"]) {
    assert.ok(kinds.has(kind as never), `surface kind ${kind} exercised`);
  }
  assert.deepEqual(
    report.surfaces.filter((s) => s.status === "skipped").map((s) => s.target),
    ["/check-clean/v1/items/(?P<id>\\d+)", "/wp-login.php?action=register"],
    "only the route with a path parameter, and the registration form of a site closed to registration, are skipped",
  );
  // WordPress's own screens, each as the visitor who sees it, answered as they do without the plugin.
  const core = report.surfaces.filter((s) => ["front-end", "login-screen", "admin-screen"].includes(s.kind) && s.status !== "skipped");
  assert.deepEqual(
    core.map((s) => [s.id, s.actor, s.httpStatus]),
    [
      ...(["anonymous", "subscriber"] as const).flatMap((actor) =>
        ["front-page", "single-post", "page", "category-archive", "search-results", "not-found", "rss-feed"].map((name) => [`front-end:${name}:${actor}`, actor, name === "not-found" ? 404 : 200]),
      ),
      ["login-screen:login", "anonymous", 200],
      ["login-screen:lost-password", "anonymous", 200],
      ...["index", "profile", "users", "edit", "post-new", "options-general", "plugins"].map((p) => [`admin-screen:/wp-admin/${p}.php`, "admin", 200]),
    ],
  );
  assert.equal(report.surfaces.find((s) => s.id === "admin-screen:/wp-admin/post-new.php")!.editor, "block");
  // Every admin page was reached, including the one whose slug needs URL encoding.
  const adminPages = report.surfaces.filter((s) => s.kind === "admin-page");
  assert.ok(adminPages.some((s) => s.target.includes("page=check-clean%26tab%3D1%20%22x%22")), adminPages.map((s) => s.target).join(", "));
  for (const page of adminPages) assert.equal(page.httpStatus, 200, `${page.target} answered ${page.httpStatus}`);
  const archive = report.surfaces.find((s) => s.kind === "post-type-archive")!;
  assert.equal(archive.httpStatus, 200);
  // WordPress's index of the plugin's namespace is marked as such (exercised, not counted as the plugin's).
  assert.deepEqual(
    report.inventory.restRoutes.map((r) => [r.route, r.namespaceIndex === true]),
    [["/check-clean/v1", true], ["/check-clean/v1/status", false], ["/check-clean/v1/items/(?P<id>\\d+)", false]],
  );
  assert.match(run.stderr, /added: .* 2 REST route\(s\) \(\+1 namespace index\),/);
  assert.deepEqual(report.inventory.shortcodes.map((s) => s.tag), ["check_clean_hello"]);
  assert.deepEqual(report.inventory.blocks.map((b) => b.name), ["check-clean/greeting"]);
  assert.deepEqual(report.inventory.cronHooks.map((c) => c.hook), ["check_clean_hourly"]);
  assert.deepEqual(report.inventory.options, ["check_clean_settings"]);
  assert.deepEqual(report.leftovers, { options: [], tables: [], cronHooks: [], files: [] });
  // Its shortcode, block, cron hook and admin pages ran; the route with a path parameter did not.
  const coverage = report.coverage!;
  for (const kind of ["shortcode", "block", "cron-hook", "admin-page"]) assert.ok(coverage.callbacks.some((c) => c.kind === kind && c.ran), `a ${kind} callback ran: ${JSON.stringify(coverage.callbacks)}`);
  assert.equal(coverage.callbacks.find((c) => c.name === "GET /check-clean/v1/items/(?P<id>\\d+)")?.ran, false);
  assert.match(run.stderr, /callbacks run: \d+\/\d+ \(/);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
});

test("check on a plugin whose faults are only on WordPress's own screens: each one found at its file:line, admin notices too", async () => {
  const out = join(scratch, "hidden");
  const run = await cli(["check", "test/fixtures/plugins/check-hidden", "--fail-on", "notice", "--min-callback-coverage", "100", "--coverage", "lines", "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  const report = JSON.parse(run.stdout) as PluginCheckReport;
  assert.equal(report.status, "failed");
  const seen = report.findings.map((f) => [f.severity, f.kind, `${f.file ? basename(f.file) : "-"}:${f.line ?? "-"}`, f.surfaces.join(" ")]);
  const settings = "admin-page:/wp-admin/options-general.php?page=check-hidden";
  const admin = [settings, ...["index", "profile", "users", "edit", "post-new", "options-general", "plugins"].map((p) => `admin-screen:/wp-admin/${p}.php`), "importer:check-hidden"].join(" ");
  const apiCall = `check-hidden.php:${lineOf(HIDDEN, "plugins_api('plugin_information'")}`;
  assert.deepEqual(
    seen,
    [
      ["error", "php-fatal", `check-hidden.php:${lineOf(HIDDEN, "check_hidden_front_page_missing();")}`, "front-end:front-page:anonymous front-end:front-page:subscriber"],
      ["error", "php-fatal", `check-hidden.php:${lineOf(HIDDEN, "check_hidden_sync_missing(")}`, "rest-route:/check-hidden/v1/sync"],
      ["warning", "php-warning", `check-hidden.php:${lineOf(HIDDEN, "$preferences['theme']")}`, "admin-screen:/wp-admin/profile.php"],
      ["warning", "php-warning", `check-hidden.php:${lineOf(HIDDEN, "$counts['views']")}`, "front-end:single-post:subscriber"],
      ["warning", "admin-notice", `check-hidden.php:${lineOf(HIDDEN, "add_action('admin_notices'")}`, admin],
      ["warning", "php-warning", `check-hidden.php:${lineOf(HIDDEN, "$steps['current']")}`, "importer:check-hidden"],
      // Printed by the settings page itself, not on a notice hook: at the page's callback.
      ["warning", "admin-notice", `check-hidden.php:${lineOf(HIDDEN, "function check_hidden_settings_page()")}`, settings],
      // Raised by core (wp_trigger_error) on the plugin's behalf: at the plugin's calling line.
      ["warning", "php-warning", `check-hidden.php:${lineOf(HIDDEN, "wp_trigger_error('',")}`, "admin-screen:/wp-admin/users.php"],
      ["warning", "php-warning", apiCall, "admin-screen:/wp-admin/edit.php"],
      ["warning", "leftover", `check-hidden.php:${lineOf(HIDDEN, "/check-hidden-cache.php'")}`, "uninstall"],
      ["warning", "leftover", `check-hidden.php:${lineOf(HIDDEN, "'/check-hidden-exports'")}`, "uninstall"],
      ["notice", "admin-notice", `check-hidden.php:${lineOf(HIDDEN, "add_action('admin_notices'") + 3}`, admin],
      ["notice", "blocked-request", apiCall, "admin-screen:/wp-admin/edit.php"],
      ["notice", "blocked-request", apiCall, "admin-screen:/wp-admin/edit.php"],
    ],
    JSON.stringify(report.findings, null, 2),
  );
  // Core's frame stays with the finding; the message is plain text, in the report and in JUnit.
  const triggered = report.findings.find((f) => f.line === lineOf(HIDDEN, "wp_trigger_error('',"))!;
  assert.equal(triggered.message, "Check Hidden: the users cache is stale & was rebuilt.");
  assert.match(triggered.raisedAt?.file ?? "", /\/wp-includes\/functions\.php$/);
  const junit = readFileSync(join(out, "files/check/junit.xml"), "utf8");
  assert.match(junit, /Check Hidden: the users cache is stale &amp; was rebuilt\./);
  assert.doesNotMatch(junit, /&lt;strong&gt;|&lt;a href/);
  // What the sandbox's blocked network caused is labelled, listed, and fails nothing, even at fail-on notice.
  const bySandbox = report.findings.filter((f) => f.cause === "sandbox");
  assert.deepEqual(bySandbox.map((f) => f.kind), ["php-warning", "blocked-request", "blocked-request"]);
  assert.match(bySandbox[0]!.message, /^An unexpected error occurred\..* support forums\..*\(caused by the sandbox: its network policy blocked https:\/\/api\.wordpress\.org\/plugins\/info\//);
  assert.match(bySandbox[0]!.raisedAt?.file ?? "", /\/wp-admin\/includes\/plugin-install\.php$/);
  assert.doesNotMatch(junit, /<failure[^>]*>[^<]*(blocked-request|caused by the sandbox)/);
  assert.match(junit, /<system-out>[^<]*notice blocked-request \(caused by the sandbox\): An outbound request to https:\/\/api\.wordpress\.org/);
  assert.match(run.stderr, /caused by the sandbox: 3 finding\(s\) .*not failing the check/);
  // REST routes: the POST-only route ran with the smallest arguments its schema allows; the one
  // whose argument must match a pattern was skipped, never passed.
  const sync = report.surfaces.find((s) => s.id === "rest-route:/check-hidden/v1/sync")!;
  assert.deepEqual([sync.status, sync.httpStatus], ["failed", 500]);
  assert.match(sync.how ?? "", /^POST with \{"mode":"full","limit":5\} → HTTP 500; OPTIONS → HTTP 200$/);
  const verify = report.surfaces.find((s) => s.id === "rest-route:/check-hidden/v1/verify")!;
  assert.equal(verify.status, "skipped");
  assert.match(verify.skippedReason ?? "", /callback never ran: POST: its required argument token must match the pattern/);
  // Deactivation went through the Plugins screen's own link: WP_Filesystem() in the hook is no fatal.
  const deactivation = report.surfaces.find((s) => s.id === "deactivation")!;
  assert.equal(deactivation.status, "passed");
  assert.match(deactivation.how ?? "", /^GET \/wp-admin\/plugins\.php\?action=deactivate&plugin=check-hidden%2Fcheck-hidden\.php&.* as admin, the Deactivate link of the Plugins screen \(HTTP 302\)$/);
  assert.match(report.surfaces.find((s) => s.id === "uninstall")!.how ?? "", /^uninstall_plugin\(\) as the Plugins screen's Delete runs it/);
  assert.deepEqual(report.leftovers.files, ["check-hidden-cache.php", "uploads/check-hidden-exports/"]);
  for (const f of report.findings.filter((x) => x.kind === "leftover")) assert.match(f.message, /uninstall run as uninstall_plugin\(\)/);
  // Coverage: the POST route's callback ran, the route no argument could reach never did, the deactivation hook ran.
  const coverage = report.coverage!;
  const ran = (name: string) => coverage.callbacks.find((c) => c.name === name)?.ran;
  assert.equal(ran("POST /check-hidden/v1/sync"), true, JSON.stringify(coverage.callbacks, null, 2));
  assert.equal(ran("POST /check-hidden/v1/verify"), false);
  assert.equal(ran("deactivate_check-hidden/check-hidden.php"), true);
  assert.equal(ran("show_user_profile"), true);
  assert.equal(coverage.callbacks.find((c) => c.kind === "admin-page")?.ran, true);
  assert.equal(coverage.registered, coverage.callbacks.length);
  assert.equal(coverage.ran, coverage.callbacks.filter((c) => c.ran).length);
  assert.ok(coverage.ran < coverage.registered && coverage.minPercent === 100);
  assert.match(run.stderr, new RegExp(`callbacks run: ${coverage.ran}/${coverage.registered} \\(${coverage.percent}%, minimum 100%: BELOW\\)`));
  assert.match(run.stderr, /never ran: rest POST \/check-hidden\/v1\/verify \(.*check-hidden\.php:\d+\)/);
  assert.equal(coverage.lines?.available, false);
  assert.match(coverage.lines?.reason ?? "", /Xdebug/);
  assert.match(run.stderr, /line coverage: unavailable: .*Xdebug/);
  // Notices in plain text: entities decoded, tags and scripts gone; the success notice is not a finding.
  assert.deepEqual(report.findings.filter((f) => f.kind === "admin-notice").map((f) => f.message), ["notice-error: Check Hidden needs an API key & a “secret”.", "notice-error: Check Hidden could not reach its service.", "notice-warning: Check Hidden: the cache is cold."]);
  // Every hidden fault fails the surface it is on, so each alone fails the check.
  const failed = new Set(report.surfaces.filter((s) => s.status === "failed").map((s) => s.id));
  for (const f of report.findings.filter((x) => x.cause !== "sandbox" && x.surface !== "uninstall")) assert.ok(f.surfaces.every((id) => failed.has(id)), `${f.kind} at ${f.line} fails its surfaces`);
  // The anonymous visitor never sees the subscriber's warning; the importer screen the plugin registered was visited.
  assert.equal(report.surfaces.find((s) => s.id === "front-end:single-post:anonymous")!.status, "passed");
  assert.deepEqual(report.inventory.importers.map((i) => [i.id, i.url, i.callback?.line]), [["check-hidden", "/wp-admin/admin.php?import=check-hidden", lineOf(HIDDEN, "function check_hidden_importer()")]]);
  // The plugin swaps the block editor for the classic one: post-new.php is checked as it shows.
  assert.equal(report.surfaces.find((s) => s.id === "admin-screen:/wp-admin/post-new.php")!.editor, "classic");
  // A front-page fatal is a 500 explained by the fatal: no separate http-error.
  assert.equal(report.surfaces.find((s) => s.id === "front-end:front-page:anonymous")!.httpStatus, 500);
  for (const f of report.findings) assert.ok(existsSync(join(out, f.evidence)), `evidence ${f.evidence} of ${f.kind} is in the bundle`);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
});

test("the hidden check's report.html, offline in Chromium: each fault at its file:line with the plugin's source, the never-run callback, no console errors", async () => {
  const out = join(scratch, "hidden");
  const report = JSON.parse(readFileSync(join(out, "files/check/report.json"), "utf8")) as PluginCheckReport;
  const browser = await launchOfflineBrowser();
  try {
    const { page, errors } = await browser.open(join(out, "report.html"));
    await page.locator(".finding").first().waitFor();
    // Each fault the check found in the plugin's own file is shown at its line, with that line marked.
    const planted = [
      ["php-fatal", "check_hidden_front_page_missing();"],
      ["php-fatal", "check_hidden_sync_missing("],
      ["php-warning", "$preferences['theme']"],
      ["php-warning", "wp_trigger_error('',"],
      ["admin-notice", "add_action('admin_notices'"],
      ["leftover", "/check-hidden-cache.php'"],
    ] as const;
    for (const [kind, needle] of planted) {
      const line = lineOf(HIDDEN, needle);
      const f = report.findings.find((x) => x.kind === kind && x.line === line);
      assert.ok(f, `${kind} at line ${line} in the report`);
      const at = new RegExp(`${f.file!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${line}(?!\\d)`);
      const finding = page.locator(".finding").filter({ hasText: at }).filter({ hasText: kind }).first();
      const hit = (await finding.locator(".excerpt .hit").first().textContent()) ?? "";
      assert.ok(hit.includes(String(line)) && hit.includes(needle), `${kind}: the marked source line is ${line}: ${hit}`);
    }
    // The coverage table lists the callback no request could reach as never run.
    const neverRan = page.locator("#check tr").filter({ hasText: "POST /check-hidden/v1/verify" });
    assert.equal(await neverRan.count(), 1);
    assert.match((await neverRan.textContent()) ?? "", /never ran/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test("check refuses bad input before booting", async () => {
  const missing = await cli(["check", "test/fixtures/plugins/no-such-plugin"]);
  assert.equal(missing.code, 2, missing.show());
  assert.match(missing.stderr, /error\[invalid-argument\]: Plugin test\/fixtures\/plugins\/no-such-plugin does not exist/);
  const badLevel = await cli(["check", "test/fixtures/plugins/check-clean", "--fail-on", "fatal"]);
  assert.equal(badLevel.code, 2, badLevel.show());
  assert.match(badLevel.stderr, /--fail-on must be one of error, warning, notice/);
  for (const [flag, value, message] of [["--min-callback-coverage", "101", /--min-callback-coverage must be a whole percentage from 0 to 100, got "101"/], ["--min-callback-coverage", "half", /got "half"/], ["--coverage", "branches", /--coverage must be callbacks or lines, got "branches"/]] as const) {
    const bad = await cli(["check", "test/fixtures/plugins/check-clean", flag, value]);
    assert.equal(bad.code, 2, bad.show());
    assert.match(bad.stderr, message);
  }
});

test("check on a plugin that ends PHP while it loads: a failed activation, not a pass", async () => {
  const out = join(scratch, "exit");
  const run = await cli(["check", "test/fixtures/plugins/check-exit", "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  const report = JSON.parse(run.stdout) as PluginCheckReport;
  assert.equal(report.status, "failed");
  assert.equal(report.plugin.active, false);
  assert.deepEqual(report.findings.map((f) => [f.severity, f.kind, f.surface]), [["error", "php-fatal", "activation"]]);
  assert.match(report.findings[0]!.message, /exit or die/);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
});

test("check on a plugin whose admin page never finishes: a timeout finding for that page, and the later surfaces still run", async () => {
  const out = join(scratch, "hang");
  const run = await cli(["check", "test/fixtures/plugins/check-hang", "--surface-timeout", "5s", "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  const report = JSON.parse(run.stdout) as PluginCheckReport;
  assert.equal(report.status, "failed");
  assert.deepEqual(report.findings.map((f) => [f.severity, f.kind, f.surface]), [["error", "timeout", "admin-page:/wp-admin/tools.php?page=check-hang"]], JSON.stringify(report.findings, null, 2));
  assert.match(report.findings[0]!.message, /did not finish within 5s .*stopped and replaced.*starting at its callback \(.*check-hang\.php:13\)/);
  // The callback the inventory found for the page: where to look for the loop.
  assert.match(report.findings[0]!.file ?? "", /check-hang\/check-hang\.php$/);
  assert.equal(report.findings[0]!.line, 13);
  const byId = Object.fromEntries(report.surfaces.map((s) => [s.id, s.status]));
  assert.equal(byId["admin-page:/wp-admin/tools.php?page=check-hang"], "failed");
  // The check went on with a new worker: the REST route after the hung page was exercised and passed.
  assert.equal(byId["rest-route:/check-hang/v1/ok"], "passed", JSON.stringify(report.surfaces, null, 2));
  assert.equal(report.surfaces.find((s) => s.id === "rest-route:/check-hang/v1/ok")?.httpStatus, 200);
  assert.equal(byId.uninstall, "passed");
  const evidence = report.findings[0]!.evidence;
  assert.ok(existsSync(join(out, evidence)), `evidence ${evidence} is in the bundle`);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
});


test("Ctrl-C during a check: exit 130, interrupted, and a partial bundle that verifies", async () => {
  const out = join(scratch, "interrupted");
  let sent = false;
  const run = await cli(["check", "test/fixtures/plugins/check-hang", "--artifacts", out], (text, signal) => {
    if (!sent && text.includes("Running wordpress.check")) {
      sent = true;
      signal("SIGINT");
    }
  });
  assert.equal(run.code, 130, run.show());
  assert.match(run.stderr, /SIGINT received: writing the bundle and disposing the sandbox/);
  assert.match(run.stderr, /error\[interrupted\]: Interrupted by SIGINT/);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
  const commands = readFileSync(join(out, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { command: string; status: string; error?: { code: string } });
  // The check is stopped in the sandbox and its own result kept, marked as every command stopped
  // before it finished is (timed-out); when the sandbox does not hand it back within the grace
  // period the session records it as an error. Either way the code says why.
  assert.deepEqual(commands.map((c) => [c.command, c.error?.code]), [["wordpress.check", "interrupted"]]);
  assert.ok(["timed-out", "error"].includes(commands[0]!.status), commands[0]!.status);
});

test("a second Ctrl-C quits at once and says so: exit 130, error[interrupted] naming the second signal", async () => {
  const out = join(scratch, "twice");
  const sent: string[] = [];
  const run = await spawnCli(["check", "test/fixtures/plugins/check-hang", "--artifacts", out], {
    onStderr: (stderr, child) => {
      if (sent.length === 0 && stderr.includes("Running wordpress.check")) sent.push(String(child.kill("SIGINT")));
      else if (sent.length === 1 && stderr.includes("SIGINT received")) sent.push(String(child.kill("SIGINT")));
    },
  });
  assert.deepEqual(sent, ["true", "true"]);
  assert.equal(run.code, 130, run.stderr);
  assert.match(run.stderr, /^error\[interrupted\]: Second SIGINT: quitting at once; the bundle may be incomplete \(wp-codebox artifacts verify tells\)\.$/m);
});
