/**
 * `wordpress.http-request` on the native backend, on real parts: each request goes through the
 * sandbox's web server (Debian's php-cgi over FastCGI, confined), against the sandbox's MariaDB,
 * with the actor's real auth cookies. Skipped, naming the packages,
 * without the Debian packages.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionResult, Runtime } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { createBackend } from "../../packages/cli/src/commands/backends.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

/** An admin page whose callback calls a function that does not exist, on line 4. */
const FATAL_PAGE = `<?php
add_action('admin_menu', function () {
	add_menu_page('Boom', 'Boom', 'manage_options', 'wp-codebox-boom', function () {
		wp_codebox_http_missing();
	});
});
add_action('init', function () {
	if (isset($_GET['wp-codebox-sleep'])) {
		sleep(60);
	}
	if (isset($_GET['wp-codebox-echo'])) {
		header('Content-Type: application/json');
		echo json_encode(['method' => $_SERVER['REQUEST_METHOD'], 'get' => $_GET, 'post' => $_POST, 'raw' => file_get_contents('php://input'), 'user' => get_current_user_id(), 'header' => $_SERVER['HTTP_X_PROBE'] ?? null]);
		exit;
	}
});
`;

type HttpJson = { status: number; headers: Record<string, string>; body: unknown; bodyBytes: number };

describe("wordpress.http-request on the native backend", { skip, timeout: 300_000 }, () => {
  let runtime: Runtime;
  let tmp: string;
  const http = (...args: string[]): Promise<ExecutionResult> => runtime.execute({ command: "wordpress.http-request", args });

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "wp-codebox-native-http-"));
    writeFileSync(join(tmp, "boom.php"), FATAL_PAGE);
    runtime = await createBackend("native", { cwd: process.cwd() }).create({ mounts: [{ source: join(tmp, "boom.php"), target: "/wordpress/wp-content/mu-plugins/boom.php", mode: "readonly" }] });
  });
  after(async () => {
    await runtime?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("the front page is 200 with the site title in the body and WordPress's headers", async () => {
    const r = await http("path=/");
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
    const json = r.json as HttpJson;
    assert.equal(json.status, 200);
    assert.match(r.stdout, /<title>[^<]*wp-codebox[^<]*<\/title>/);
    assert.match(json.headers["content-type"] ?? "", /^text\/html; charset=UTF-8$/);
    assert.equal(json.bodyBytes, Buffer.byteLength(r.stdout));
  });

  it("/wp-admin/ as admin is the dashboard", async () => {
    const r = await http("path=/wp-admin/", "as=admin");
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
    assert.equal((r.json as HttpJson).status, 200);
    assert.match(r.stdout, /<title>Dashboard/);
    assert.match(r.stdout, /id="wpadminbar"/);
  });

  it("/wp-admin/ as anonymous is a 302 to wp-login.php, not followed", async () => {
    const r = await http("path=/wp-admin/", "as=anonymous");
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
    const json = r.json as HttpJson;
    assert.equal(json.status, 302);
    assert.match(json.headers.location ?? "", /^http:\/\/wp-codebox\.test\/wp-login\.php\?redirect_to=/);
    assert.doesNotMatch(r.stdout, /Dashboard/);
  });

  it("a path that names nothing is http-error 404 with WordPress's page", async () => {
    const r = await http("path=/no-such-page-wp-codebox/");
    assert.equal(r.status, "error");
    assert.equal(r.error?.code, "http-error", JSON.stringify(r.error));
    assert.equal(r.error?.data?.status, 404);
    assert.equal((r.json as HttpJson).status, 404);
    assert.match(r.stdout, /<body[^>]*error404/);
    const expected = await http("path=/no-such-page-wp-codebox/", "expect-status=404");
    assert.equal(expected.status, "ok", JSON.stringify(expected.error));
  });

  it("a plugin page that fatals is php-fatal with the plugin's file and line", async () => {
    const r = await http("path=/wp-admin/admin.php?page=wp-codebox-boom");
    assert.equal(r.status, "error");
    assert.equal(r.error?.code, "php-fatal", JSON.stringify(r.error));
    assert.equal(r.error?.data?.file, "/wordpress/wp-content/mu-plugins/boom.php");
    assert.equal(r.error?.data?.line, 4);
    assert.match(r.error!.message, /Call to undefined function wp_codebox_http_missing\(\)/);
  });

  it("the query, a form body, a JSON body, headers and the actor reach the page", async () => {
    const form = await http("method=POST", "path=/?wp-codebox-echo=1&a=b", "body=x=1&y=two", 'headers-json={"X-Probe":"yes"}', "as=anonymous");
    assert.equal(form.status, "ok", JSON.stringify(form.error ?? form.stderr));
    assert.deepEqual((form.json as HttpJson).body, { method: "POST", get: { "wp-codebox-echo": "1", a: "b" }, post: { x: "1", y: "two" }, raw: "x=1&y=two", user: 0, header: "yes" });
    const asAdmin = await http("method=PUT", "path=/?wp-codebox-echo=1", 'body-json={"k":[1,2]}');
    assert.equal(asAdmin.status, "ok", JSON.stringify(asAdmin.error ?? asAdmin.stderr));
    const body = (asAdmin.json as HttpJson).body as { method: string; post: unknown; raw: string; user: number };
    assert.equal(body.method, "PUT");
    assert.deepEqual(body.post, []);
    assert.equal(body.raw, '{"k":[1,2]}');
    assert.ok(body.user > 0, JSON.stringify(body));
  });

  it("a REST request over HTTP as admin is authenticated by the nonce sent with the cookies", async () => {
    const r = await http("path=/wp-json/wp/v2/users/me?context=edit");
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stdout.slice(0, 400)));
    assert.deepEqual(((r.json as HttpJson).body as { roles: string[] }).roles, ["administrator"]);
    const anonymous = await http("path=/wp-json/wp/v2/users/me", "as=anonymous");
    assert.equal(anonymous.error?.code, "http-error");
    assert.equal(anonymous.error?.data?.status, 401);
  });

  it("a user without the capability gets WordPress's 403 page from wp_die", async () => {
    const made = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo wp_insert_user(['user_login' => 'wp-codebox-sub', 'user_pass' => 'x', 'role' => 'subscriber']);"] });
    assert.match(made.stdout, /^\d+$/, JSON.stringify(made.error));
    const r = await http("path=/wp-admin/options-general.php", `as=user:${made.stdout}`);
    assert.equal(r.error?.code, "http-error", JSON.stringify(r.error));
    assert.equal(r.error?.data?.status, 403);
    assert.match(r.stdout, /<div class="wp-die-message">Sorry, you are not allowed to access this page\.<\/div>/);
    const profile = await http("path=/wp-admin/profile.php", `as=user:${made.stdout}`);
    assert.equal(profile.status, "ok", JSON.stringify(profile.error));
    assert.match(profile.stdout, /value="wp-codebox-sub"/);
  });

  it("a page past its deadline is timed-out, and the next request is served", async () => {
    const r = await runtime.execute({ command: "wordpress.http-request", args: ["path=/?wp-codebox-sleep=1", "as=anonymous"], timeoutMs: 1500 });
    assert.equal(r.status, "timed-out", JSON.stringify(r.error));
    assert.equal(r.error?.code, "timeout");
    const next = await http("path=/");
    assert.equal((next.json as HttpJson | undefined)?.status, 200, JSON.stringify(next.error));
  });

  it("another origin is refused by the policy; run-php still works after all of these", async () => {
    await assert.rejects(http("url=http://example.com/"), (e: { code?: string }) => e.code === "policy-denied");
    const r = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] });
    assert.equal(r.stdout, "wp-codebox");
  });
});
