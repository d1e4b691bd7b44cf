/**
 * The native backend's web server (php-cgi behind FastCGI, the loopback front, static files): real
 * headers from a login POST and a signed-in /wp-admin/, static files of WordPress and wp-content,
 * paths that try to leave the site (a table), a fatal page, the site request limit. One sandbox
 * for the file (real php-cgi, MariaDB, bubblewrap); skipped, naming the packages, without them.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import type { ExecutionResult } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus, type NativeRuntime } from "@wp-codebox/runtime-native";
import { createBackend } from "../packages/cli/src/commands/backends.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

/** A GET with the path sent exactly as written (fetch would normalize `..` away). */
function rawGet(origin: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** What must never come back: the host's passwd, wp-config.php's source, the sandbox's config. */
const LEAKS = [/root:x:0:0/, /wp_codebox_config/, /DB_PASSWORD/, /<\?php/];

describe("the native web server", { skip, timeout: 300_000 }, () => {
  let runtime: NativeRuntime;
  const php = (code: string) => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  const http = (...args: string[]) => runtime.execute({ command: "wordpress.http-request", args });
  before(async () => {
    runtime = (await createBackend("native", { cwd: process.cwd() }).create({ siteRequestTimeoutMs: 8_000 })) as NativeRuntime;
    const made = await php(`<?php
      file_put_contents(WP_CONTENT_DIR . '/served.txt', 'static from wp-content');
      file_put_contents(WP_CONTENT_DIR . '/fatal-page.php', "<?php\\necho 'before';\\nwp_codebox_web_missing();\\n");
      file_put_contents(WP_CONTENT_DIR . '/plain-headers.php', "<?php\\nsetcookie('one', '1');\\nsetcookie('two', '2');\\nheader('X-Plain: yes');\\nheader('Content-Type: application/json');\\necho json_encode(['path_info' => \\$_SERVER['PATH_INFO'] ?? null, 'host' => \\$_SERVER['HTTP_HOST'], 'https' => \\$_SERVER['HTTPS'], 'remote' => \\$_SERVER['REMOTE_ADDR'], 'script' => \\$_SERVER['SCRIPT_NAME']]);");
      file_put_contents(WP_CONTENT_DIR . '/slow-page.php', "<?php\\nsleep(60);\\necho 'late';");
      file_put_contents(WP_CONTENT_DIR . '/.hidden.txt', 'hidden');
      file_put_contents(WP_CONTENT_DIR . '/code.phtml', '<?php echo 1;');
      file_put_contents(WP_CONTENT_DIR . '/code.inc', '<?php echo 1;');
      file_put_contents(WP_CONTENT_DIR . '/code.PHP', '<?php echo "ran";');
      mkdir(WP_CONTENT_DIR . '/assets.php');
      file_put_contents(WP_CONTENT_DIR . '/assets.php/app.css', 'body{}');
      file_put_contents(WP_CONTENT_DIR . '/write-option.php', "<?php\\nrequire '/wordpress/wp-load.php';\\nupdate_option('blogname', (string) \\$_GET['v']);\\necho 'w';");
      symlink('/etc', WP_CONTENT_DIR . '/etc-link');
      symlink('/etc/passwd', WP_CONTENT_DIR . '/passwd-link.txt');
      echo 'made';`);
    assert.equal(made.stdout, "made", JSON.stringify(made.error));
  });
  after(async () => runtime?.dispose());

  it("a login POST with real credentials answers set-cookie, and /wp-admin/ with those cookies is 200", async () => {
    const testCookie = "wordpress_test_cookie=WP%20Cookie%20check";
    const login = await http("method=POST", "path=/wp-login.php", "as=anonymous", "expect-status=302", `headers-json=${JSON.stringify({ cookie: testCookie })}`, "body=log=admin&pwd=password&wp-submit=Log+In&testcookie=1");
    assert.equal(login.status, "ok", JSON.stringify(login.error));
    const headers = (login.json as { headers: Record<string, string> }).headers;
    assert.match(headers["set-cookie"] ?? "", /wordpress_logged_in_[0-9a-f]+=admin%7C/);
    assert.match(headers.location ?? "", /\/wp-admin\/$/);
    // The same login through http() keeps each set-cookie apart: a browser's cookie jar.
    const raw = await runtime.http({ method: "POST", url: `${runtime.siteUrl}/wp-login.php`, headers: { cookie: testCookie, "content-type": "application/x-www-form-urlencoded" }, body: new TextEncoder().encode("log=admin&pwd=password&testcookie=1") });
    const jar = (raw.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]!).filter((c) => !c.endsWith("=deleted"));
    assert.ok(jar.some((c) => c.startsWith("wordpress_logged_in_")), JSON.stringify(raw.headers));
    const admin = await http("path=/wp-admin/", "as=anonymous", `headers-json=${JSON.stringify({ cookie: jar.join("; ") })}`);
    assert.equal(admin.status, "ok", JSON.stringify(admin.error));
    assert.equal((admin.json as { status: number }).status, 200);
    assert.match(admin.stdout, /<title>Dashboard/);
    assert.match((admin.json as { headers: Record<string, string> }).headers["content-type"] ?? "", /^text\/html/);
    const wrong = await http("method=POST", "path=/wp-login.php", "as=anonymous", "body=log=admin&pwd=wrong");
    assert.equal((wrong.json as { status: number }).status, 200);
    assert.doesNotMatch((wrong.json as { headers: Record<string, string> }).headers["set-cookie"] ?? "", /wordpress_logged_in_/);
  });

  it("headers a page sends with plain header() and setcookie() are in the result; CGI parameters are the site's", async () => {
    const r = await http("path=/wp-content/plain-headers.php/extra/path", "as=anonymous");
    assert.equal(r.status, "ok", JSON.stringify(r.error));
    const json = r.json as { headers: Record<string, string>; body: unknown };
    assert.equal(json.headers["set-cookie"], "one=1, two=2");
    assert.equal(json.headers["x-plain"], "yes");
    assert.deepEqual(json.body, { path_info: "/extra/path", host: "wp-codebox.test", https: "off", remote: "127.0.0.1", script: "/wp-content/plain-headers.php" });
  });

  it("static files of WordPress and of wp-content are served with their type", async () => {
    const css = await fetch(`${runtime.loopbackUrl}/wp-includes/css/dashicons.min.css`);
    assert.equal(css.status, 200);
    assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
    assert.match(await css.text(), /^\/\*! This file is auto-generated \*\//);
    const txt = await http("path=/wp-content/served.txt", "as=anonymous");
    assert.equal(txt.stdout, "static from wp-content");
    assert.equal((txt.json as { headers: Record<string, string> }).headers["content-type"], "text/plain; charset=utf-8");
  });

  const ESCAPES: { path: string; status: number[] }[] = [
    { path: "/../../etc/passwd", status: [404] },
    { path: "/%2e%2e/%2e%2e/etc/passwd", status: [404] },
    { path: "/wp-content/..%2f..%2f..%2f..%2fetc/passwd", status: [403] },
    { path: "/wp-content/%2e%2e%2fwp-config.php", status: [403] },
    { path: "/wp-config.php", status: [404] },
    { path: "/WP-CONFIG.PHP", status: [404] },
    { path: "/wp-content/../wp-config.php", status: [404] },
    { path: "/wp-content/etc-link/passwd", status: [404] },
    { path: "/wp-content/passwd-link.txt", status: [404] },
    { path: "/wp-content/.hidden.txt", status: [403] },
    { path: "/.git/config", status: [403] },
    { path: "/wp-content/served.txt%00.php", status: [400] },
    { path: "/wp-content/code.phtml", status: [403] },
    { path: "/wp-content/code.inc", status: [403] },
  ];
  for (const c of ESCAPES) {
    it(`${c.path} leaks nothing (HTTP ${c.status.join("/")})`, async () => {
      const r = await rawGet(runtime.loopbackUrl, c.path);
      for (const leak of LEAKS) assert.doesNotMatch(r.body, leak);
      assert.ok(c.status.includes(r.status), `${c.path}: HTTP ${r.status}`);
    });
  }

  it("a .PHP file runs as PHP; a folder named x.php serves its static files", async () => {
    const upper = await rawGet(runtime.loopbackUrl, "/wp-content/code.PHP");
    assert.equal(upper.body, "ran");
    const css = await rawGet(runtime.loopbackUrl, "/wp-content/assets.php/app.css");
    assert.equal(css.status, 200);
    assert.equal(css.body, "body{}");
  });

  it("a folder without its slash is redirected to it; a pretty permalink is WordPress's page", async () => {
    const r = await rawGet(runtime.loopbackUrl, "/wp-admin?x=1");
    assert.equal(r.status, 301);
    const post = await http("path=/hello-world/", "as=anonymous");
    assert.equal(post.status, "ok", JSON.stringify(post.error));
    assert.match(post.stdout, /Hello world!/);
  });

  it("a fatal page is php-fatal with its file and line", async () => {
    const r: ExecutionResult = await http("path=/wp-content/fatal-page.php", "as=anonymous");
    assert.equal(r.status, "error");
    assert.equal(r.error?.code, "php-fatal", JSON.stringify(r.error));
    assert.equal(r.error?.data?.file, "/wordpress/wp-content/fatal-page.php");
    assert.equal(r.error?.data?.line, 3);
    assert.equal(r.error?.data?.status, 500);
    assert.match(r.error!.message, /Call to undefined function wp_codebox_web_missing\(\)/);
    assert.equal(r.stdout, "before");
  });

  it("a page past the site request limit is answered 504 and the site keeps serving", async () => {
    const r = await rawGet(runtime.loopbackUrl, "/wp-content/slow-page.php");
    assert.equal(r.status, 504);
    assert.match(r.body, /site request limit/);
    const next = await http("path=/", "as=anonymous");
    assert.equal(next.status, "ok", JSON.stringify(next.error));
  });

  it("a run-php after a page sees what the page wrote (the WordPress loaded before the page is dropped)", async () => {
    // Files written in the last seconds make the preloaded WordPress stale anyway: let them age.
    await new Promise((r) => setTimeout(r, 2500));
    await php("<?php echo get_option('blogname');");
    // Room for the warm server to load WordPress (and the autoloaded options) for the next run.
    await new Promise((r) => setTimeout(r, 1500));
    const write = await http("path=/wp-content/write-option.php?v=written-by-a-page", "as=anonymous");
    assert.equal(write.stdout, "w", JSON.stringify(write.error));
    const read = await php("<?php echo get_option('blogname');");
    assert.equal(read.stdout, "written-by-a-page");
    await php("<?php update_option('blogname', 'wp-codebox');");
  });
});
