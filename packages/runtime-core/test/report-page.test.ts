/**
 * report.html: written by the bundle writer into every bundle (listed in the manifest, verified
 * like any file), drawn from the redacted files, every value escaped, and one section per kind of
 * bundle content. Real bundles through the real writer; no sandbox.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { computeBundleId, verifyArtifactBundle, writeArtifactBundle, type ArtifactManifest } from "../src/artifact-bundle/index.js";
import {
  REPORT_PAGE_OUTPUT_CHARS,
  bundleHref,
  renderBatchReportPage,
  renderMatrixReportPage,
  sourceExcerpt,
  escapeHtml,
} from "../src/artifact-bundle/report-page/index.js";
import type { ArtifactFile, ExecutionResult, RuntimeArtifacts } from "../src/runtime.js";
import type { BatchReport } from "../src/batch/batch-schemas.js";
import type { RecipeMatrixSummary } from "../src/test-results.js";
import { scratchDir } from "../../../test/support/scratch-dir.js";

const SECRET = "tok_5c9e2a7b1d";

/** Strings that break out of text, a <pre>/<textarea>, an attribute, a comment or a URL when not escaped. */
const HOSTILE = [
  "<script>window.pwned=1</script>",
  "</textarea><img src=x onerror=alert(1)>",
  `" onmouseover="alert(2)" x="`,
  `' autofocus onfocus='alert(3)`,
  "--><svg onload=alert(4)>",
  "javascript:alert(5)",
  "</pre></section><iframe src=//evil.example>",
  "`${alert(6)}`",
];
const HOSTILE_TEXT = HOSTILE.join(" | ");

function result(overrides: Partial<ExecutionResult> = {}): ExecutionResult {
  return {
    id: "exec-1",
    command: "wordpress.run-php",
    args: [`code=<?php echo ${HOSTILE_TEXT};`],
    status: "error",
    exitCode: 255,
    stdout: `out ${HOSTILE_TEXT} token=${SECRET}\n`,
    stderr: `err ${HOSTILE_TEXT}\n`,
    error: { code: "php-fatal", message: `PHP fatal error: ${HOSTILE_TEXT}`, data: { file: `/wordpress/wp-content/plugins/x/${HOSTILE[2]}.php`, line: 7 } },
    dbErrors: [{ query: `SELECT '${HOSTILE[0]}'`, message: `near ${HOSTILE[1]}` }],
    startedAt: "2024-01-01T00:00:00.000Z",
    finishedAt: "2024-01-01T00:00:02.500Z",
    durationMs: 2500,
    ...overrides,
  };
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const jsonl = (rows: unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

/** Files of every kind the page has a section for, each carrying hostile text. */
function kindFiles(): ArtifactFile[] {
  return [
    {
      path: "files/browser/steps.jsonl",
      kind: "browser-steps",
      contentType: "application/x-ndjson",
      content: jsonl([
        { execution: "exec-1", index: 0, kind: "navigate", status: "ok", durationMs: 1200 },
        { execution: "exec-1", index: 1, kind: "screenshot", status: "ok", durationMs: 80, screenshot: "home", comparison: { passed: false, baseline: "files/browser/compare/home-baseline.png", actual: "files/browser/screenshot-home.png", diff: "files/browser/compare/home-diff.png", diffPixels: 120, diffPixelRatio: 0.01, width: 800, height: 600 } },
        { execution: "exec-1", index: 2, kind: "click", selector: HOSTILE[1], status: "failed", durationMs: 5000, screenshot: "failure-step-2", error: { code: "timeout", message: `waiting for ${HOSTILE[0]}` } },
        { execution: "exec-1", index: 3, kind: "expect", selector: "#done", status: "skipped", durationMs: 0 },
      ]),
    },
    { path: "files/browser/screenshot-home.png", kind: "browser-screenshot", contentType: "image/png", content: PNG },
    { path: "files/browser/screenshot-failure-step-2.png", kind: "browser-screenshot", contentType: "image/png", content: PNG },
    { path: "files/browser/compare/home-baseline.png", kind: "browser-screenshot-baseline", contentType: "image/png", content: PNG },
    { path: "files/browser/compare/home-diff.png", kind: "browser-screenshot-diff", contentType: "image/png", content: PNG },
    { path: "files/browser/console.jsonl", kind: "browser-console", contentType: "application/x-ndjson", content: jsonl([{ execution: "exec-1", type: "error", text: `Uncaught ${HOSTILE[0]}`, url: "http://127.0.0.1/x.js", lineNumber: 3, stepIndex: 2 }, { execution: "exec-1", type: "log", text: "just a log line" }]) },
    { path: "files/browser/network.jsonl", kind: "browser-network", contentType: "application/x-ndjson", content: jsonl([{ execution: "exec-1", url: `http://127.0.0.1/missing?q=${HOSTILE[2]}`, method: "GET", status: 404, stepIndex: 0 }, { execution: "exec-1", url: "http://127.0.0.1/fine", method: "GET", status: 200, stepIndex: 0 }]) },
    {
      path: "files/check/report.json",
      kind: "check-report",
      contentType: "application/json",
      content: json({
        schema: "wp-codebox/plugin-check-report/v1",
        plugin: { file: "faulty/faulty.php", name: `Faulty ${HOSTILE[0]}`, version: "1.0", active: true },
        failOn: "error",
        status: "failed",
        counts: { error: 1, warning: 0, notice: 0 },
        surfaces: [{ id: "front-end:front-page:anonymous", kind: "front-end", target: "/", actor: "anonymous", status: "failed", httpStatus: 500, durationMs: 300, findings: 1 }],
        findings: [{ severity: "error", kind: "php-fatal", surface: "front-end:front-page:anonymous", message: `Call to undefined function ${HOSTILE[3]}`, file: "/wordpress/wp-content/plugins/faulty/faulty.php", line: 12, evidence: "files/check/report.json", surfaces: ["front-end:front-page:anonymous"], occurrences: 1 }],
        coverage: { registered: 2, ran: 1, callbacks: [{ kind: "action", hook: "init", callback: "faulty_init", file: "/wordpress/wp-content/plugins/faulty/faulty.php", line: 4, ran: true }, { kind: "action", hook: "admin_init", callback: "faulty_never", file: "/wordpress/wp-content/plugins/faulty/faulty.php", line: 20, ran: false }] },
        leftovers: { options: ["faulty_settings"], tables: [], cronHooks: [] },
        uninstall: "none",
      }),
    },
    {
      path: "files/check/sources.json",
      kind: "check-sources",
      contentType: "application/json",
      content: json({ excerpts: [{ file: "/wordpress/wp-content/plugins/faulty/faulty.php", line: 12, startLine: 10, lines: ["function faulty_front() {", "  // the next line fails", `  faulty_missing(); // ${HOSTILE[1]}`, "}"] }] }),
    },
    {
      path: "files/recipe-report.json",
      kind: "recipe-report",
      contentType: "application/json",
      content: json({
        recipe: { path: "/r/recipe.json", name: `smoke ${HOSTILE[4]}` },
        outcome: "failed",
        summary: "Recipe failed at /steps/0.",
        steps: [{ pointer: "/steps/0", phase: "step", index: 0, name: `step ${HOSTILE[6]}`, command: "wordpress.run-php", args: ["code=<?php echo 1;"], status: "failed", expectations: [{ name: "stdoutMatches", passed: false, expected: "^2$", actual: HOSTILE[0], message: "stdout does not match" }], result: { status: "ok", exitCode: 0, durationMs: 40 } }],
      }),
    },
    {
      path: "files/runtime-episode-trace.json",
      kind: "runtime-episode-trace",
      contentType: "application/json",
      content: json({
        id: "runtime-episode-trace-1",
        digest: "ab".repeat(32),
        reset: { observations: [{ id: "o1", type: "runtime-info", data: { backend: "test" }, digest: "cd".repeat(32) }] },
        steps: [
          {
            index: 0,
            action: { kind: "command", command: "wordpress.run-php", args: ["code=<?php echo 1;"] },
            execution: { status: "ok", exitCode: 0, stdout: HOSTILE[0], stderr: "", durationMs: 20 },
            observation: { type: "wordpress-state", digest: "ef".repeat(32), data: { sections: { options: { blogname: HOSTILE[2] }, posts: [{ ID: 4, post_title: HOSTILE[1] }] } } },
          },
        ],
        snapshots: [{ id: "snapshot-0002-0123456789abcdef", sequence: 2, semantics: "runtime-state-artifact", digest: "01".repeat(32) }],
      }),
    },
    {
      path: "files/phpunit/test-results.json",
      kind: "phpunit-results",
      contentType: "application/json",
      content: json({ phpunit: { version: "9.6" }, tests: { total: 3, passed: 2, failed: 1, errors: 0, skipped: 0 }, failures: [{ name: "SampleTest::test_sum", kind: "failure", type: "AssertionFailedError", message: `Failed asserting ${HOSTILE[5]}`, file: "tests/SampleTest.php", line: 18, location: "tests/SampleTest.php:18", sandboxFile: "/x" }] }),
    },
  ];
}

function artifacts(files: ArtifactFile[], results: ExecutionResult[] = [result()]): RuntimeArtifacts {
  return {
    info: {
      id: "rt-1",
      backend: "test",
      wordpressVersion: "6.5.5",
      phpVersion: "8.3",
      siteUrl: "http://127.0.0.1:9400",
      bootMode: "cached",
      bootDurationMs: 1200,
      mounts: [],
      policy: { commands: ["wordpress.run-php"], network: "deny", filesystem: "readwrite-mounts", secrets: "scoped" },
      plugins: [],
      themes: [],
    },
    results,
    events: [],
    files,
    secrets: [SECRET],
  };
}

async function writeBundle(files: ArtifactFile[], results?: ExecutionResult[]) {
  const dir = join(scratchDir("wpcb-report-page-"), "bundle");
  const written = await writeArtifactBundle(dir, artifacts(files, results));
  const page = await readFile(join(dir, "report.html"), "utf8");
  return { dir, written, page };
}

/** Tag names in a document, and attributes whose name starts with `on` (event handlers). */
function markup(page: string): { tags: Set<string>; handlers: string[] } {
  const tags = new Set([...page.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => m[1]!.toLowerCase()));
  const inTags = [...page.matchAll(/<[a-zA-Z][^>]*>/g)].map((m) => m[0]);
  const handlers = inTags.flatMap((t) => [...t.matchAll(/\s(on[a-z]+)\s*=/gi)].map((m) => m[1]!));
  return { tags, handlers };
}
const ALLOWED_TAGS = new Set("html head meta title style body header br h1 h2 h3 h4 h5 table thead tbody tr th td strong code pre span nav a section details summary p div ul li img figure figcaption".split(" "));

test("every bundle carries report.html: listed in the manifest, verified like any file, its id on the page", async () => {
  const { dir, written, page } = await writeBundle([]);
  const entry = written.manifest.files.find((f) => f.path === "report.html");
  assert.ok(entry, "report.html is in the manifest");
  assert.equal(entry.kind, "report-page");
  assert.match(entry.contentType, /^text\/html/);
  assert.ok(page.includes(written.id), "the page shows the bundle id");
  assert.equal(computeBundleId(written.manifest.files).id, written.id, "the id is over the other files");
  const reference = JSON.parse(await readFile(join(dir, "files/runtime-reference-manifest.json"), "utf8")) as { refs: { path: string }[] };
  assert.ok(reference.refs.some((r) => r.path === "report.html"));
  const metadata = JSON.parse(await readFile(join(dir, "metadata.json"), "utf8")) as { artifacts: Record<string, string> };
  assert.equal(metadata.artifacts.reportPage, "report.html");
  assert.deepEqual((await verifyArtifactBundle(dir)).violations, []);

  await writeFile(join(dir, "report.html"), page.replace("</h1>", " (edited)</h1>"));
  const tampered = await verifyArtifactBundle(dir);
  assert.equal(tampered.valid, false);
  assert.ok(tampered.violations.some((v) => v.path === "report.html"), JSON.stringify(tampered.violations));
});

test("escaping: nothing PHP printed becomes markup, a handler or a URL, and the page has no script", async () => {
  const { page } = await writeBundle(kindFiles());
  const { tags, handlers } = markup(page);
  assert.deepEqual([...tags].filter((t) => !ALLOWED_TAGS.has(t)), [], "only the page's own tags");
  assert.deepEqual(handlers, [], "no event handler attributes");
  assert.ok(!/href="javascript:|src="javascript:/i.test(page));
  assert.ok(!/src="\/\/|href="\/\//.test(page), "no protocol-relative URLs");
  assert.match(page, /Content-Security-Policy" content="default-src 'none'/);
  // Each hostile string shows as text, escaped, where it was printed.
  for (const s of HOSTILE) assert.ok(page.includes(escapeHtml(s)), `shown escaped: ${s}`);
  for (const s of HOSTILE.filter((x) => /[<>"']/.test(x))) assert.ok(!page.includes(s), `never raw: ${s}`);
});

test("the page is drawn from the redacted data: the secret never reaches it", async () => {
  const { page } = await writeBundle([]);
  assert.ok(!page.includes(SECRET));
  assert.ok(page.includes("token=[REDACTED]"));
});

test("each kind has its section: command, browser, comparison, check, recipe, episode, PHPUnit", async () => {
  const { page } = await writeBundle(kindFiles());
  const section = (id: string) => {
    const m = new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`).exec(page);
    assert.ok(m, `section ${id}`);
    return m[1]!;
  };
  // Top facts.
  assert.match(page, /<strong>WordPress<\/strong><\/td><td>6\.5\.5/);
  assert.match(page, /<strong>PHP<\/strong><\/td><td>8\.3/);
  assert.match(page, /<strong>Duration<\/strong><\/td><td>2\.5 s/);
  // Command: arguments, error with file:line, stdout/stderr, database errors.
  const commands = section("commands");
  assert.ok(commands.includes("php-fatal"));
  assert.ok(commands.includes(`${escapeHtml(`/wordpress/wp-content/plugins/x/${HOSTILE[2]}.php`)}:7`));
  assert.ok(commands.includes("<h4>stdout</h4>") && commands.includes("<h4>stderr</h4>") && commands.includes("Database errors"));
  // Browser: every step with kind, selector, duration, status; the failure's screenshot; console errors; failed requests.
  const browser = section("browser");
  const stepsTable = /<table class="steps">[\s\S]*?<\/table>/.exec(browser)?.[0] ?? "";
  const stepRows = [...stepsTable.matchAll(/<tr><td>(\d)<\/td><td>([a-z]+)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`);
  assert.deepEqual(stepRows, ["1 navigate", "2 screenshot", "3 click", "4 expect"]);
  assert.ok(browser.includes('src="files/browser/screenshot-failure-step-2.png"'));
  assert.ok(browser.includes("Console errors") && browser.includes(`Uncaught ${escapeHtml(HOSTILE[0])}`) && !browser.includes("just a log line"));
  assert.ok(browser.includes("Failed requests") && browser.includes(">404<") && !browser.includes("/fine"));
  // Comparison: baseline, actual, diff side by side.
  for (const p of ["files/browser/compare/home-baseline.png", "files/browser/screenshot-home.png", "files/browser/compare/home-diff.png"]) assert.ok(browser.includes(`src="${p}"`), p);
  assert.ok(browser.includes("120 pixel(s) differ"));
  // Check: findings grouped by file with the source around file:line, surfaces, coverage, leftovers.
  const check = section("check");
  assert.ok(check.includes("/wordpress/wp-content/plugins/faulty/faulty.php:12"));
  assert.match(check, /<span class="hit">\s+12 {2}\s*faulty_missing\(\);/);
  assert.ok(check.includes("front-end:front-page:anonymous") && check.includes(">500<"));
  assert.ok(check.includes("callbacks run 1/2") && check.includes("never ran") && check.includes("faulty_never"));
  assert.ok(check.includes("faulty_settings"));
  // Recipe: steps with their expectations.
  const recipe = section("recipe");
  assert.ok(recipe.includes("stdout does not match") && recipe.includes("expected <code>^2$</code>"), recipe);
  // Episode: reset, steps, state sections as tables with content hashes, snapshots.
  const episode = section("episode");
  assert.ok(episode.includes("Reset") && episode.includes("content hash <code>" + "ef".repeat(32)));
  assert.ok(episode.includes("<h5>options</h5>") && episode.includes("<th>post_title</th>"));
  assert.ok(episode.includes("snapshot-0002-0123456789abcdef"));
  // PHPUnit: failures at file:line.
  assert.ok(section("phpunit").includes("tests/SampleTest.php:18"));
});

test("big output is capped on the page, with a link to the full file", async () => {
  const big = "x".repeat(REPORT_PAGE_OUTPUT_CHARS + 5000);
  const { page } = await writeBundle([], [result({ stdout: big, stderr: "", error: undefined, status: "ok", exitCode: 0, dbErrors: [] })]);
  assert.ok(!page.includes(big));
  assert.ok(page.includes("x".repeat(REPORT_PAGE_OUTPUT_CHARS)));
  assert.match(page, new RegExp(`first ${REPORT_PAGE_OUTPUT_CHARS} characters of ${big.length}: the full stdout is in <a href="files/commands.jsonl">`));
});

test("bundleHref: only plain bundle paths become links", () => {
  const table: [string, string | undefined][] = [
    ["files/browser/screenshot-a.png", "files/browser/screenshot-a.png"],
    ["files/a b#c?.png", "files/a%20b%23c%3F.png"],
    ["javascript:alert(1)", undefined],
    ["../outside.html", undefined],
    ["/etc/passwd", undefined],
    ["files/../../x", undefined],
    ["data:text/html,x", undefined],
    ["C:/x", undefined],
  ];
  for (const [path, href] of table) assert.equal(bundleHref(path), href, path);
  assert.equal(bundleHref("files/a.png", "../bundle/"), "../bundle/files/a.png");
});

test("sourceExcerpt: the lines around a line, clipped at the file's ends", () => {
  const text = ["one", "two", "three", "four", "five", "six", "seven", "eight"].join("\n");
  const table: [number, number, string[] | undefined][] = [
    [1, 1, ["one", "two", "three", "four"]],
    [5, 2, ["two", "three", "four", "five", "six", "seven", "eight"]],
    [8, 5, ["five", "six", "seven", "eight"]],
    [0, 0, undefined],
    [9, 0, undefined],
  ];
  for (const [line, start, lines] of table) {
    const got = sourceExcerpt(text, line);
    assert.deepEqual(got && { startLine: got.startLine, lines: got.lines }, lines && { startLine: start, lines }, `line ${line}`);
  }
});

test("batch and matrix pages: one row per task or cell linking to its bundle's page, escaped", () => {
  const batch: BatchReport = {
    schema: "wp-codebox/batch-report/v1",
    tasksFile: `/t/${HOSTILE[0]}.jsonl`,
    artifactsDir: "/out",
    mode: "local",
    concurrency: 2,
    startedAt: "2024-01-01T00:00:00.000Z",
    finishedAt: "2024-01-01T00:01:00.000Z",
    durationMs: 60000,
    counts: { total: 3, passed: 1, failed: 2, resumed: 0 },
    tasks: [
      { id: "smoke", kind: "recipe", status: "passed", exitCode: 0, durationMs: 20000, bundle: { id: "artifact-bundle-sha256-aa", digest: "aa" } },
      { id: "broken", kind: "episode", status: "failed", exitCode: 1, durationMs: 30000, bundle: { id: "artifact-bundle-sha256-bb", digest: "bb" }, error: { code: "episode-step-failed", message: HOSTILE[1] } },
      { id: "crashed", kind: "recipe", status: "failed", exitCode: 3, durationMs: 100, bundle: null, error: { code: "sandbox-crashed", message: "gone" } },
    ],
  };
  const page = renderBatchReportPage(batch);
  assert.ok(page.includes('<a href="smoke/report.html">smoke</a>') && page.includes('<a href="broken/report.html">broken</a>'));
  assert.ok(!page.includes("crashed/report.html"), "no link without a bundle");
  assert.ok(!page.includes(HOSTILE[0]) && !page.includes(HOSTILE[1]));
  assert.deepEqual(markup(page).handlers, []);

  const matrix: RecipeMatrixSummary = {
    schema: "wp-codebox/recipe-matrix-summary/v1",
    recipe: { path: "/r.json", name: "matrix" },
    outcome: "failed",
    counts: { cells: 2, passed: 1, failed: 1 },
    cells: [
      { id: "wp-6.5-php-8.3", wp: "6.5", php: "8.3", outcome: "passed", exitCode: 0, summary: "ok", tests: null, bundle: { directory: "/o/wp-6.5-php-8.3", id: "artifact-bundle-sha256-cc", digest: "cc", valid: true } },
      { id: "wp-6.4-php-8.1", wp: "6.4", php: "8.1", outcome: "failed", exitCode: 1, summary: HOSTILE[2], tests: { total: 2, passed: 1, failed: 1, errors: 0, skipped: 0 }, bundle: { directory: "/o/wp-6.4-php-8.1", id: "artifact-bundle-sha256-dd", digest: "dd", valid: true } },
    ],
  };
  const cells = renderMatrixReportPage(matrix);
  assert.ok(cells.includes('<a href="wp-6.5-php-8.3/report.html">') && cells.includes('<a href="wp-6.4-php-8.1/report.html">'));
  assert.ok(!cells.includes(HOSTILE[2]));
});

test("a bundle read back with its manifest gives the page the writer wrote", async () => {
  const { dir, page } = await writeBundle(kindFiles());
  const { readReportPageData, renderReportPage } = await import("../src/artifact-bundle/report-page/index.js");
  const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
  const files = manifest.files.filter((f) => f.path !== "report.html" && f.path !== "files/runtime-reference-manifest.json");
  const again = renderReportPage(await readReportPageData(dir, files, { bundleId: manifest.bundle.id, verification: { state: "sealed-by-writer" } }));
  const a = again.split("\n"), b = page.split("\n");
  const firstDiff = a.findIndex((l, i) => l !== b[i]);
  assert.equal(firstDiff, -1, `first difference at line ${firstDiff}: ${a[firstDiff]?.slice(0, 300)} <> ${b[firstDiff]?.slice(0, 300)}`);
});
