/**
 * The native web server's router on a folder tree made here (a WordPress tree, a wp-content copy,
 * a mounted plugin, links pointing out): which paths run PHP (script and PATH_INFO), which are
 * static files, which are refused, and that nothing outside the served folders is ever reached.
 * Also the CGI parameters and the fatal-error parsing of PHP's log.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResolvedMount } from "@wp-codebox/runtime-core";
import { SiteFiles, cgiParams, fatalFromLog, routeRequest, staticResponse, type Route } from "../src/native-web.js";

describe("routeRequest", () => {
  let root: string;
  let files: SiteFiles;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "wp-codebox-route-test-"));
    const tree = join(root, "tree");
    const content = join(root, "content");
    const plugin = join(root, "my-plugin");
    for (const dir of [tree, join(tree, "wp-admin"), join(tree, "wp-includes"), content, join(content, "uploads"), plugin, join(root, "outside")]) mkdirSync(dir, { recursive: true });
    for (const [path, text] of Object.entries({
      "tree/index.php": "<?php",
      "tree/wp-login.php": "<?php",
      "tree/wp-config.php": "<?php secret",
      "tree/wp-admin/index.php": "<?php",
      "tree/wp-includes/style.css": "css",
      "content/uploads/pic.png": "png",
      "my-plugin/plugin.php": "<?php",
      "my-plugin/app.js": "js",
      "outside/secret.txt": "secret",
    })) writeFileSync(join(root, path), text);
    symlinkSync(join(root, "outside"), join(content, "out-dir"));
    symlinkSync(join(root, "outside", "secret.txt"), join(content, "out-file.txt"));
    symlinkSync(join(content, "uploads", "pic.png"), join(content, "inside-link.png"));
    const mounts = [{ source: plugin, target: "/wordpress/wp-content/plugins/my-plugin", mode: "readonly", kind: "directory" }] as unknown as ResolvedMount[];
    files = new SiteFiles(tree, content, mounts);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const php = (scriptName: string, pathInfo = ""): Route => ({ kind: "php", scriptName, pathInfo });
  const refuse = (status: 400 | 403 | 404): Route => ({ kind: "refuse", status });
  const TABLE: [string, Route | "static"][] = [
    ["/", php("/index.php")],
    ["/wp-login.php", php("/wp-login.php")],
    ["/wp-admin/", php("/wp-admin/index.php")],
    ["/index.php/2024/hello/", php("/index.php", "/2024/hello/")],
    ["/hello-world/", php("/index.php")],
    ["/missing.php", php("/index.php")],
    ["/wp-includes/style.css", "static"],
    ["/wp-content/uploads/pic.png", "static"],
    ["/wp-content/inside-link.png", "static"],
    ["/wp-content/plugins/my-plugin/app.js", "static"],
    ["/wp-content/plugins/my-plugin/plugin.php", php("/wp-content/plugins/my-plugin/plugin.php")],
    ["/wp-admin", { kind: "redirect", location: "/wp-admin/" }],
    ["/wp-content/uploads/", refuse(403)],
    ["/wp-config.php", refuse(404)],
    ["/Wp-Config.php", refuse(404)],
    ["/wp-content/..%2f..%2foutside/secret.txt", refuse(403)],
    ["/%2e%2e/outside/secret.txt", refuse(403)],
    ["/.env", refuse(403)],
    ["/wp-content/%00.png", refuse(400)],
    ["/wp-content/a%5c..%5csecret", refuse(400)],
    ["/%E0%A4%A", refuse(400)],
    ["/wp-content/x.phtml", refuse(403)],
    // Links out of the served folders are as if missing: WordPress's 404 page.
    ["/wp-content/out-dir/secret.txt", php("/index.php")],
    ["/wp-content/out-file.txt", php("/index.php")],
  ];
  for (const [path, want] of TABLE) {
    it(`${path} → ${typeof want === "string" ? want : want.kind}`, () => {
      const got = routeRequest(files, path, "");
      if (want === "static") assert.equal(got.kind, "static");
      else assert.deepEqual(got, want);
      if (got.kind === "static") assert.ok(got.hostPath.startsWith(root) && !got.hostPath.includes("outside"), got.hostPath);
    });
  }
});

describe("staticResponse after PHP swapped the routed file", () => {
  // What PHP can put at the file's name (or its folder's) between the router's check and the read.
  const SWAPS: [string, (dir: string, host: string) => void][] = [
    ["a link to a host file", (dir, host) => (rmSync(join(dir, "a.css")), symlinkSync(join(host, "secret.txt"), join(dir, "a.css")))],
    ["a FIFO", (dir) => (rmSync(join(dir, "a.css")), execFileSync("mkfifo", [join(dir, "a.css")]))],
    ["a link to /dev/zero", (dir) => (rmSync(join(dir, "a.css")), symlinkSync("/dev/zero", join(dir, "a.css")))],
    ["a folder", (dir) => (rmSync(join(dir, "a.css")), mkdirSync(join(dir, "a.css")))],
    ["its folder swapped for a link to a host folder", (dir, host) => (renameSync(dir, `${dir}-away`), symlinkSync(host, dir))],
  ];
  for (const [name, swap] of SWAPS) {
    for (const method of ["GET", "HEAD"]) {
      it(`${name} (${method}): a 404, the host file unread`, () => {
        const root = mkdtempSync(join(tmpdir(), "wp-codebox-static-swap-"));
        try {
          const tree = join(root, "tree");
          const content = join(root, "content");
          const host = join(root, "host");
          for (const d of [tree, join(content, "d"), host]) mkdirSync(d, { recursive: true });
          writeFileSync(join(content, "d", "a.css"), "css");
          // Same name in the host folder: a read through the swapped folder would find it.
          writeFileSync(join(host, "a.css"), "HOST-SECRET");
          writeFileSync(join(host, "secret.txt"), "HOST-SECRET");
          const route = routeRequest(new SiteFiles(tree, content, []), "/wp-content/d/a.css", "");
          assert.equal(route.kind, "static");
          if (route.kind !== "static") return;
          const before = staticResponse(route, "GET", 1000);
          assert.equal(new TextDecoder().decode(before.body.data), "css");
          swap(join(content, "d"), host);
          const got = staticResponse(route, method, 1000);
          assert.equal(got.status, 404);
          assert.doesNotMatch(JSON.stringify({ ...got, body: new TextDecoder().decode(got.body.data) }), /HOST-SECRET|"3"|css/);
          assert.equal(readFileSync(join(host, "secret.txt"), "utf8"), "HOST-SECRET");
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      });
    }
  }
});

describe("cgiParams", () => {
  it("uses the site's host, keeps the URI as sent, and lets no header pose as a parameter", () => {
    const params = cgiParams(
      { method: "POST", rawPath: "/wp-login.php", query: "a=1", headers: { host: "evil.example", cookie: "k=v", "content-type": "text/plain", proxy: "http://x", "x_under": "no", "x-ok": "yes" }, bodyBytes: 3 },
      { scriptName: "/wp-login.php", pathInfo: "" },
      "http://127.0.0.1:8123",
    );
    assert.equal(params.HTTP_HOST, "127.0.0.1:8123");
    assert.equal(params.SERVER_PORT, "8123");
    assert.equal(params.REQUEST_URI, "/wp-login.php?a=1");
    assert.equal(params.SCRIPT_FILENAME, "/wordpress/wp-login.php");
    assert.equal(params.HTTPS, "off");
    assert.equal(params.REMOTE_ADDR, "127.0.0.1");
    assert.equal(params.CONTENT_TYPE, "text/plain");
    assert.equal(params.CONTENT_LENGTH, "3");
    assert.equal(params.HTTP_COOKIE, "k=v");
    assert.equal(params.HTTP_X_OK, "yes");
    assert.equal(params.HTTP_PROXY, undefined);
    assert.equal(params.HTTP_X_UNDER, undefined);
    assert.equal(params.PATH_INFO, undefined);
  });
});

describe("fatalFromLog", () => {
  const TABLE: [string, ReturnType<typeof fatalFromLog>][] = [
    ["PHP Fatal error:  Uncaught Error: Call to undefined function f() in /wordpress/x.php:3\nStack trace:\n#0 {main}\n  thrown in /wordpress/x.php on line 3", { type: 1, message: "Uncaught Error: Call to undefined function f()", file: "/wordpress/x.php", line: 3 }],
    ["PHP Fatal error:  Allowed memory size of 1 bytes exhausted in /wordpress/y.php on line 9", { type: 1, message: "Allowed memory size of 1 bytes exhausted", file: "/wordpress/y.php", line: 9 }],
    ["PHP Parse error:  syntax error, unexpected end of file in /wordpress/z.php on line 2", { type: 4, message: "syntax error: unexpected end of file", file: "/wordpress/z.php", line: 2 }],
    ["PHP Warning:  Undefined variable $a in /wordpress/w.php on line 1", undefined],
    ["", undefined],
  ];
  for (const [log, want] of TABLE) it(JSON.stringify(log.slice(0, 40)), () => assert.deepEqual(fatalFromLog(log), want));
});
