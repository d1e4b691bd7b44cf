/**
 * Chromium integration tests for the browser interaction script executor, against small local
 * pages served by node:http (no WordPress needed). Chromium must be installed (CI installs it).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { WpCodeboxError, type BrowserInteractionStep } from "@wp-codebox/runtime-core";
import { findChromium } from "../src/browser/find-chromium.js";
import { CHROMIUM_LAUNCH_ARGS, launchBrowser } from "../src/browser/launch-browser.js";
import { isRequestAllowed } from "../src/browser/network-guard.js";
import { runBrowserInteractionScript, type RunBrowserScriptOptions } from "../src/browser/run-browser-script.js";
import { ScreenshotNamer, sanitizeScreenshotName } from "../src/browser/screenshot-namer.js";

const PAGES: Record<string, string> = {
  "/form": `<!doctype html><title>Form</title>
<form id="f" onsubmit="event.preventDefault(); document.querySelector('#submitted').textContent = 'submitted ' + document.querySelector('#name').value;">
  <label>Name <input id="name" onkeydown="if (event.key === 'Enter') document.querySelector('#submitted').textContent = 'submitted ' + this.value;"></label>
  <input id="typed" onkeyup="document.querySelector('#keys').textContent = String(Number(document.querySelector('#keys').textContent) + 1)">
  <span id="keys">0</span>
  <select id="color"><option value="red">Red</option><option value="green">Green</option><option value="blue">Blue</option></select>
  <select id="colors" multiple><option>red</option><option>green</option><option>blue</option></select>
  <label><input type="checkbox" id="agree"> agree</label>
  <input id="ro" readonly value="fixed">
  <button type="button" id="locked" disabled>Locked</button>
  <button type="button" id="save" onclick="setTimeout(() => { const n = document.querySelector('#notice'); n.textContent = 'Saved ' + document.querySelector('#name').value; n.hidden = false; }, 150)">Save</button>
  <div id="notice" class="notice" hidden></div>
  <div id="submitted"></div>
  <ul><li class="item">a</li><li class="item">b</li><li class="item">c</li></ul>
</form>
<script>console.log("form ready"); console.warn("careful");</script>`,
  "/drag": `<!doctype html><title>Drag</title>
<style>#list li{height:30px;border:1px solid #999;margin:4px;width:200px} #pad{width:300px;height:200px;background:#eee;position:absolute;left:0;top:200px}</style>
<ul id="list">
  <li id="one" draggable="true">one</li><li id="two" draggable="true">two</li><li id="three" draggable="true">three</li>
</ul>
<div id="order"></div>
<div id="pad"><div id="knob" style="width:20px;height:20px;background:red;position:absolute;left:10px;top:10px"></div></div>
<div id="pos"></div>
<script>
  let dragged = null;
  for (const li of document.querySelectorAll('#list li')) {
    li.addEventListener('dragstart', () => { dragged = li; });
    li.addEventListener('dragover', (e) => e.preventDefault());
    li.addEventListener('drop', (e) => { e.preventDefault(); li.after(dragged); document.querySelector('#order').textContent = [...document.querySelectorAll('#list li')].map((x) => x.id).join(','); });
  }
  let down = false;
  const knob = document.querySelector('#knob');
  knob.addEventListener('mousedown', () => { down = true; });
  document.addEventListener('mousemove', (e) => { if (down) { knob.style.left = (e.clientX - 10) + 'px'; knob.style.top = (e.clientY - 210) + 'px'; } });
  document.addEventListener('mouseup', (e) => { if (down) { down = false; document.querySelector('#pos').textContent = e.clientX + ',' + e.clientY; } });
</script>`,
  "/hover": `<!doctype html><title>Hover</title>
<style>.menu .submenu{display:none} .menu:hover .submenu{display:block}</style>
<div class="menu"><button>Menu</button><div class="submenu"><a href="/form">Reveal</a></div></div>`,
  "/external": `<!doctype html><title>External</title>
<img src="http://blocked.example.invalid/pixel.png"><img src="/redirect-out"><p id="done">done</p>`,
  "/errors": `<!doctype html><title>Errors</title><script>setTimeout(() => { throw new Error("boom from page"); }, 0);</script>`,
  "/set-cookie": `<!doctype html><title>Cookie</title><p>cookie set</p>`,
};

let browser: Browser;
let server: http.Server;
let other: http.Server;
let baseUrl: string;
let otherOrigin: string;
let otherHits: string[] = [];

function listen(s: http.Server): Promise<string> {
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));
}

function run(steps: BrowserInteractionStep[], options: Partial<RunBrowserScriptOptions> = {}) {
  return runBrowserInteractionScript(browser, { baseUrl, steps, allowEvaluate: true, executionId: "exec-1", ...options });
}

const statuses = (outcome: { steps: { status: string }[] }) => outcome.steps.map((s) => s.status);
const isPng = (bytes: Uint8Array) => bytes.length > 100 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;

before(async () => {
  // A second origin: "another host" for the network policy (localhost:<port> is not the sandbox origin).
  other = http.createServer((req, res) => {
    otherHits.push(req.url ?? "");
    res.setHeader("content-type", "text/plain");
    res.setHeader("access-control-allow-origin", "*");
    res.end("other");
  });
  otherOrigin = (await listen(other)).replace("127.0.0.1", "localhost");
  server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === "/redirect-out") {
      res.writeHead(302, { location: `${otherOrigin}/via-redirect` });
      res.end();
      return;
    }
    if (path === "/fetch-other") {
      res.setHeader("content-type", "text/html");
      res.end(`<!doctype html><title>Fetch</title><script>fetch(${JSON.stringify(otherOrigin + "/direct")}).then(r => r.text()).then(t => document.title = "got " + t, () => document.title = "fetch failed")</script>`);
      return;
    }
    const body = PAGES[path];
    if (!body) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" };
    if (path === "/set-cookie") headers["set-cookie"] = "session=run-a; Path=/";
    res.writeHead(200, headers);
    res.end(body);
  });
  baseUrl = await listen(server);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.closeAllConnections();
  other?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await new Promise((r) => other?.close(r));
});

describe("browser discovery and launch", () => {
  test("findChromium honours the discovery order and fails with install instructions", () => {
    assert.deepEqual(findChromium({ env: { WP_CODEBOX_CHROMIUM: "/usr/bin/chromium" } }), { executablePath: "/usr/bin/chromium", source: "env" });
    assert.deepEqual(findChromium({ env: {}, playwrightExecutablePath: () => "/nonexistent/chrome" }), { executablePath: "/usr/bin/chromium", source: "system" });
    assert.deepEqual(findChromium({ env: {}, playwrightExecutablePath: () => process.execPath }), { executablePath: process.execPath, source: "playwright" });
    assert.throws(
      () => findChromium({ env: {}, playwrightExecutablePath: () => "/nonexistent/chrome", systemPaths: ["/nonexistent/chromium"] }),
      (error: unknown) => {
        assert.ok(error instanceof WpCodeboxError);
        assert.equal(error.code, "browser-unavailable");
        assert.match(error.message, /apt-get install -y chromium, or set WP_CODEBOX_CHROMIUM=\/path\/to\/chrome/);
        assert.deepEqual(error.data.tried, ["/nonexistent/chrome", "/nonexistent/chromium"]);
        return true;
      },
    );
    assert.throws(() => findChromium({ env: { WP_CODEBOX_CHROMIUM: "/nonexistent/x" } }), /WP_CODEBOX_CHROMIUM is set to \/nonexistent\/x/);
  });

  test("launch flags disable background traffic", () => {
    for (const flag of ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]) {
      assert.ok(CHROMIUM_LAUNCH_ARGS.includes(flag), flag);
    }
    assert.equal(browser.isConnected(), true);
  });

  test("screenshot names are sanitised and never overwrite", () => {
    assert.equal(sanitizeScreenshotName("After Crop!"), "after-crop");
    assert.equal(sanitizeScreenshotName("../../etc/passwd"), "etc-passwd");
    assert.equal(sanitizeScreenshotName("***"), "screenshot");
    const namer = new ScreenshotNamer(["shot"]);
    assert.deepEqual([namer.next("Shot"), namer.next("shot"), namer.next("x.png")], ["shot-2", "shot-3", "x"]);
  });

  test("host policy matching", () => {
    assert.equal(isRequestAllowed("http://127.0.0.1:9/x", "http://127.0.0.1:9", []), true);
    assert.equal(isRequestAllowed("http://127.0.0.1:10/x", "http://127.0.0.1:9", []), false);
    assert.equal(isRequestAllowed("https://cdn.example.com/a", "http://127.0.0.1:9", ["*.example.com"]), true);
    assert.equal(isRequestAllowed("https://example.org/a", "http://127.0.0.1:9", ["example.com"]), false);
    assert.equal(isRequestAllowed("https://example.org/a", "http://127.0.0.1:9", "all"), true);
    assert.equal(isRequestAllowed("data:text/plain,hi", "http://127.0.0.1:9", []), true);
  });
});

describe("runBrowserInteractionScript", () => {
  test("every step kind runs against real pages", async () => {
    const outcome = await run([
      { kind: "navigate", url: "/form", description: "open the form" },
      { kind: "fill", selector: "#name", value: "Ada" },
      { kind: "type", selector: "#typed", value: "abc" },
      { kind: "expect", selector: "#keys", state: "visible", text: "3" },
      { kind: "select", selector: "#color", value: "blue" },
      { kind: "select", selector: "#colors", values: ["red", "blue"] },
      { kind: "evaluate", expression: "[...document.querySelector('#colors').selectedOptions].map(o => o.value)", assert: ["red", "blue"] },
      { kind: "evaluate", expression: "document.querySelector('#color').value", assert: "blue" },
      { kind: "click", selector: "#agree" },
      { kind: "expect", selector: "#agree", state: "checked" },
      { kind: "expect", selector: "#locked", state: "disabled" },
      { kind: "expect", selector: "#save", state: "enabled" },
      { kind: "expect", selector: "#name", state: "editable" },
      { kind: "expect", selector: ".item", state: "attached", count: 3 },
      { kind: "expect", selector: "#missing", state: "detached" },
      { kind: "expect", selector: "#notice", state: "hidden" },
      { kind: "click", selector: "role=button[name='Save']" },
      { kind: "waitFor", selector: ".notice", state: "visible" },
      { kind: "expect", selector: "#notice", state: "visible", text: "Saved Ada" },
      { kind: "press", key: "Enter", selector: "#name" },
      { kind: "expect", selector: "text=submitted Ada", state: "visible" },
      { kind: "press", key: "Tab" },
      { kind: "screenshot", name: "After Save!" },
      { kind: "screenshot", name: "after save", selector: "#notice" },
      { kind: "capture", what: "html" },
      { kind: "navigate", url: `${baseUrl}/hover`, waitUntil: "domcontentloaded" },
      { kind: "waitFor", loadState: "load" },
      { kind: "expect", selector: "text=Reveal", state: "hidden" },
      { kind: "hover", selector: "text=Menu" },
      { kind: "expect", selector: "text=Reveal", state: "visible" },
      { kind: "click", selector: "text=Reveal" },
      { kind: "waitFor", url: "/form" },
      { kind: "navigate", url: "/drag" },
      { kind: "drag", from: "#one", to: "#three" },
      { kind: "expect", selector: "#order", state: "visible", text: "two,three,one" },
      { kind: "drag", from: "#knob", to: { x: 150, y: 300 } },
      { kind: "expect", selector: "#pos", state: "visible", text: "150,300" },
      { kind: "capture", what: "console" },
      { kind: "screenshot", fullPage: true },
    ]);
    assert.deepEqual(outcome.error, undefined);
    assert.equal(outcome.status, "ok");
    assert.ok(statuses(outcome).every((s) => s === "ok"));
    assert.deepEqual(outcome.steps[0], { execution: "exec-1", index: 0, kind: "navigate", status: "ok", durationMs: outcome.steps[0]!.durationMs });
    assert.equal(outcome.steps[33]!.selector, "#one");
    assert.equal(outcome.assertions.failed, 0);
    assert.equal(outcome.assertions.total, outcome.assertions.passed);
    assert.equal(outcome.assertions.total, outcome.steps.filter((s) => s.kind === "expect" || s.kind === "evaluate").length);
    assert.deepEqual(outcome.assertions.results.find((r) => r.index === 13), {
      index: 13,
      kind: "expect",
      selector: ".item",
      expected: { state: "attached", count: 3 },
      actual: { count: 3, state: "attached" },
      passed: true,
    });
    assert.deepEqual(outcome.screenshots.map((s) => s.name), ["after-save", "after-save-2", "step-38"]);
    assert.equal(outcome.steps[22]!.screenshot, "after-save");
    assert.ok(outcome.screenshots.every((s) => isPng(s.bytes)));
    assert.match(outcome.html ?? "", /Saved Ada/);
    assert.deepEqual(outcome.console.slice(0, 2).map((c) => [c.type, c.text, c.stepIndex]), [["log", "form ready", 0], ["warning", "careful", 0]]);
    assert.equal(outcome.finalUrl, `${baseUrl}/drag`);
    assert.equal(outcome.title, "Drag");
    assert.ok(outcome.network.some((n) => n.url === `${baseUrl}/form` && n.status === 200 && n.method === "GET" && n.resourceType === "document"));
  });

  test("a failing 2nd step stops the run: later steps skipped, failure screenshot taken", async () => {
    const outcome = await run(
      [
        { kind: "navigate", url: "/form" },
        { kind: "click", selector: "#does-not-exist", timeout: 300 },
        { kind: "fill", selector: "#name", value: "never" },
        { kind: "expect", selector: "#name", state: "visible" },
      ],
      { executionId: "exec-2" },
    );
    assert.equal(outcome.status, "error");
    assert.deepEqual(statuses(outcome), ["ok", "failed", "skipped", "skipped"]);
    assert.equal(outcome.error?.index, 1);
    assert.equal(outcome.error?.kind, "click");
    assert.equal(outcome.error?.selector, "#does-not-exist");
    assert.equal(outcome.error?.code, "timeout");
    assert.equal(outcome.error?.message, "click step 1: Timeout 300ms exceeded. Check the selector or raise the step's timeout (or step-timeout).");
    assert.deepEqual(outcome.steps[1]!.error, { code: outcome.error?.code, message: outcome.error?.message });
    assert.equal(outcome.steps[1]!.screenshot, "failure-step-1");
    assert.equal(outcome.screenshots.length, 1);
    assert.equal(outcome.screenshots[0]!.reason, "failure");
    assert.ok(isPng(outcome.screenshots[0]!.bytes));
    assert.deepEqual(outcome.steps[2], { execution: "exec-2", index: 2, kind: "fill", selector: "#name", status: "skipped", durationMs: 0 });
    assert.equal(outcome.assertions.total, 0);
    assert.equal(outcome.finalUrl, `${baseUrl}/form`);
  });

  test("a Playwright error that is not a timeout is browser-step-failed", async () => {
    const outcome = await run([
      { kind: "navigate", url: "/form" },
      { kind: "select", selector: "#color", value: "purple", timeout: 500 },
    ]);
    // selectOption waits for the option to appear, so a missing option ends as a timeout.
    assert.equal(outcome.error?.code, "timeout");
    const notCheckable = await run([{ kind: "navigate", url: "/form" }, { kind: "expect", selector: "#name", state: "checked" }]);
    assert.equal(notCheckable.error?.code, "browser-step-failed");
    assert.match(notCheckable.error?.message ?? "", /^expect step 1 \(#name\): .*checkbox/i);
    assert.equal(notCheckable.assertions.failed, 1);
    const bad = await run([{ kind: "navigate", url: "http://127.0.0.1:1/" }]);
    assert.equal(bad.error?.code, "browser-step-failed");
    assert.match(bad.error?.message ?? "", /^navigate step 0: /);
  });

  test("per-step timeout: step.timeout overrides stepTimeoutMs", async () => {
    const outcome = await run(
      [
        { kind: "navigate", url: "/form" },
        { kind: "waitFor", selector: "#never", timeout: 400 },
      ],
      { stepTimeoutMs: 10_000 },
    );
    assert.equal(outcome.error?.code, "timeout");
    assert.match(outcome.error?.message ?? "", /waitFor step 1: Timeout 400ms exceeded/);
    assert.ok(outcome.steps[1]!.durationMs >= 350, `the step waited for its own timeout (${outcome.steps[1]!.durationMs} ms)`);
    const viaDefault = await run([{ kind: "navigate", url: "/form" }, { kind: "expect", selector: "#never", state: "visible" }], { stepTimeoutMs: 600 });
    assert.equal(viaDefault.error?.code, "assertion-failed");
    assert.match(viaDefault.error?.message ?? "", /expect step 1: #never to be visible; got hidden, count 0 after 600ms/);
    assert.deepEqual(viaDefault.assertions.results[0]?.actual, { count: 0, state: "hidden" });
  });

  test("a hung evaluate ends at its timeout (timer backstop)", async () => {
    const outcome = await run([
      { kind: "navigate", url: "/form" },
      { kind: "evaluate", expression: "new Promise(() => {})", timeout: 300 },
      { kind: "click", selector: "#save" },
    ]);
    assert.equal(outcome.error?.code, "timeout");
    assert.deepEqual(statuses(outcome), ["ok", "failed", "skipped"]);
  });

  test("total timeout: no step runs past the remaining budget", async () => {
    // The waiting step comes first, so the budget runs out inside it however slow the machine is.
    const outcome = await run(
      [
        { kind: "waitFor", selector: "#never" },
        { kind: "click", selector: "#save" },
      ],
      { timeoutMs: 1000, stepTimeoutMs: 15_000 },
    );
    assert.equal(outcome.error?.code, "timeout");
    assert.equal(outcome.error?.index, 0);
    assert.match(outcome.error?.message ?? "", /waitFor step 0: Timeout 1000ms exceeded \(total budget for the script\)/);
    assert.deepEqual(statuses(outcome), ["failed", "skipped"]);
  });

  test("evaluate assert pass and fail are recorded as assertions", async () => {
    const outcome = await run([
      { kind: "navigate", url: "/form" },
      { kind: "evaluate", expression: "({ a: [1, 2], b: document.title })", assert: { a: [1, 2], b: "Form" } },
      { kind: "evaluate", expression: "document.title" },
      { kind: "evaluate", expression: "1 + 1", assert: 3 },
      { kind: "click", selector: "#save" },
    ]);
    assert.equal(outcome.status, "error");
    assert.deepEqual(statuses(outcome), ["ok", "ok", "ok", "failed", "skipped"]);
    assert.equal(outcome.error?.code, "assertion-failed");
    assert.equal(outcome.error?.message, "evaluate step 3: expected 3, got 2. Fix the expression or the assert value.");
    assert.deepEqual(outcome.assertions, {
      total: 2,
      passed: 1,
      failed: 1,
      results: [
        { index: 1, kind: "evaluate", expected: { a: [1, 2], b: "Form" }, actual: { a: [1, 2], b: "Form" }, passed: true },
        { index: 3, kind: "evaluate", expected: 3, actual: 2, passed: false },
      ],
    });
    assert.equal(outcome.steps[3]!.screenshot, "failure-step-3");
  });

  test("evaluate without allowEvaluate is policy-denied before anything runs", async () => {
    const outcome = await run(
      [
        { kind: "navigate", url: "/set-cookie" },
        { kind: "evaluate", expression: "1" },
      ],
      { allowEvaluate: false },
    );
    assert.equal(outcome.error?.code, "policy-denied");
    assert.match(outcome.error?.message ?? "", /wordpress\.browser-actions\.evaluate/);
    assert.deepEqual(statuses(outcome), ["skipped", "failed"]);
    assert.equal(outcome.network.length, 0);
  });

  test("other hosts are blocked and recorded, redirects included; allowedHosts opens them", async () => {
    otherHits = [];
    const blocked = await run([
      { kind: "navigate", url: "/external" },
      { kind: "expect", selector: "#done", state: "visible" },
      { kind: "waitFor", loadState: "load" },
    ]);
    assert.equal(blocked.status, "ok");
    const entry = (url: string) => blocked.network.find((n) => n.url === url);
    assert.equal(entry("http://blocked.example.invalid/pixel.png")?.status, "blocked");
    assert.equal(entry(`${baseUrl}/redirect-out`)?.status, 302);
    assert.equal(entry(`${otherOrigin}/via-redirect`)?.status, "blocked");
    assert.deepEqual(otherHits, [], "the redirect hop must not reach the other host");

    const fetchBlocked = await run([{ kind: "navigate", url: "/fetch-other" }, { kind: "expect", selector: "title", state: "attached" }, { kind: "evaluate", expression: "new Promise(r => setTimeout(() => r(document.title), 300))", assert: "fetch failed" }]);
    assert.equal(fetchBlocked.status, "ok", JSON.stringify(fetchBlocked.error));
    assert.equal(fetchBlocked.network.find((n) => n.url === `${otherOrigin}/direct`)?.status, "blocked");
    assert.deepEqual(otherHits, []);

    const allowed = await run(
      [{ kind: "navigate", url: "/fetch-other" }, { kind: "evaluate", expression: "new Promise(r => setTimeout(() => r(document.title), 300))", assert: "got other" }],
      { allowedHosts: ["localhost"] },
    );
    assert.equal(allowed.status, "ok", JSON.stringify(allowed.error));
    assert.equal(allowed.network.find((n) => n.url === `${otherOrigin}/direct`)?.status, 200);
    assert.deepEqual(otherHits, ["/direct"]);
  });

  test("console messages and page errors are captured", async () => {
    const outcome = await run([
      { kind: "navigate", url: "/errors" },
      { kind: "evaluate", expression: "new Promise(r => setTimeout(() => { console.error('late'); r(true); }, 50))", assert: true },
    ]);
    assert.equal(outcome.status, "ok");
    assert.deepEqual(outcome.pageErrors.map((e) => e.message), ["boom from page"]);
    assert.ok(outcome.console.some((c) => c.type === "error" && c.text === "late" && c.stepIndex === 1));
  });

  test("each run gets its own context: cookies never leak between runs", async () => {
    const first = await run([
      { kind: "navigate", url: "/set-cookie" },
      { kind: "evaluate", expression: "document.cookie", assert: "session=run-a" },
    ]);
    assert.equal(first.status, "ok", JSON.stringify(first.error));
    const second = await run([
      { kind: "navigate", url: "/form" },
      { kind: "evaluate", expression: "document.cookie", assert: "" },
    ]);
    assert.equal(second.status, "ok", JSON.stringify(second.error));
    const withCookies = await run(
      [
        { kind: "navigate", url: "/form" },
        { kind: "evaluate", expression: "document.cookie", assert: "wordpress_logged_in=admin" },
      ],
      { cookies: [{ name: "wordpress_logged_in", value: "admin", url: baseUrl }] },
    );
    assert.equal(withCookies.status, "ok", JSON.stringify(withCookies.error));
    const [a, b] = await Promise.all([
      run([{ kind: "navigate", url: "/set-cookie" }, { kind: "evaluate", expression: "document.cookie", assert: "session=run-a" }]),
      run([{ kind: "navigate", url: "/form" }, { kind: "evaluate", expression: "new Promise(r => setTimeout(() => r(document.cookie), 200))", assert: "" }]),
    ]);
    assert.equal(a.status, "ok");
    assert.equal(b.status, "ok");
  });

  test("invalid steps are rejected with invalid-steps-json; reserved names are not reused", async () => {
    await assert.rejects(
      run([{ kind: "click" } as unknown as BrowserInteractionStep]),
      (error: unknown) => error instanceof WpCodeboxError && error.code === "invalid-steps-json",
    );
    const outcome = await run([{ kind: "navigate", url: "/form" }, { kind: "screenshot", name: "home" }], { reservedScreenshotNames: ["home"] });
    assert.deepEqual(outcome.screenshots.map((s) => s.name), ["home-2"]);
  });
});
