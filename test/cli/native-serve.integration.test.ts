/**
 * `wp-codebox serve --backend native`: the site on the loopback origin through the native web
 * server (php-cgi, confined), the one-click login, a real login form a browser would post, `run
 * --attach` in the same sandbox, and SIGTERM leaving nothing in the sandbox's temporary folder.
 * Skipped, naming the packages, without the Debian packages.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { show, spawnCli } from "./spawn-cli.js";
import { startServe, type ServeAddress, type ServeProcess } from "../support/serve-process.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

describe("wp-codebox serve --backend native", { skip, timeout: 240_000 }, () => {
  let tmp: string;
  let sandboxTmp: string;
  let served: ServeProcess;
  let address: ServeAddress & { loginUrl: string };
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "wp-codebox-native-serve-test-"));
    sandboxTmp = join(tmp, "sandbox-tmp");
    mkdirSync(sandboxTmp);
    served = await startServe(["--backend", "native", "--ttl", "5m"], { env: { ...process.env, TMPDIR: sandboxTmp } });
    address = served.address as typeof address;
  });
  after(async () => {
    if (served?.child.exitCode === null) served.child.kill("SIGKILL");
    rmSync(tmp, { recursive: true, force: true });
  });

  it("answers on the loopback origin; WordPress knows the site by it", async () => {
    assert.match(address.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const home = await fetch(`${address.url}/`);
    assert.equal(home.status, 200);
    const html = await home.text();
    assert.match(html, /<title>[^<]*wp-codebox/);
    assert.ok(html.includes(`${address.url}/wp-json/`), "links use the loopback origin");
    const css = await fetch(`${address.url}/wp-includes/css/dashicons.min.css`);
    assert.equal(css.status, 200);
    assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
  });

  it("the login URL lands in wp-admin; a forged key is 403", async () => {
    const login = await fetch(address.loginUrl, { redirect: "manual" });
    assert.equal(login.status, 302);
    assert.equal(login.headers.get("location"), `${address.url}/wp-admin/`);
    const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const admin = await fetch(`${address.url}/wp-admin/`, { headers: { cookie }, redirect: "manual" });
    assert.equal(admin.status, 200);
    assert.match(await admin.text(), /<title>Dashboard/);
    const forged = await fetch(address.loginUrl.replace(/key=.*/, "key=forged"), { redirect: "manual" });
    assert.equal(forged.status, 403);
  });

  it("a browser's login form post gets the auth cookies and then the dashboard", async () => {
    const form = await fetch(`${address.url}/wp-login.php`);
    assert.equal(form.status, 200);
    const jar = new Map(form.headers.getSetCookie().map((c) => c.split(";")[0]!.split("=") as [string, string]));
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const post = await fetch(`${address.url}/wp-login.php`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: cookie(), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ log: "admin", pwd: "password", "wp-submit": "Log In", redirect_to: `${address.url}/wp-admin/`, testcookie: "1" }).toString(),
    });
    assert.equal(post.status, 302, await post.text());
    assert.equal(post.headers.get("location"), `${address.url}/wp-admin/`);
    for (const c of post.headers.getSetCookie()) {
      const [name, value] = c.split(";")[0]!.split("=") as [string, string];
      if (value !== "deleted") jar.set(name, value);
    }
    const admin = await fetch(`${address.url}/wp-admin/`, { headers: { cookie: cookie() }, redirect: "manual" });
    assert.equal(admin.status, 200);
    assert.match(await admin.text(), /<title>Dashboard/);
  });

  it("run --attach runs in the served sandbox", async () => {
    const r = await spawnCli(["run", "--attach", address.control, "--command", "wordpress.run-php", "--arg", "code=<?php echo home_url();"], { env: { ...process.env, WP_CODEBOX_TOKEN: address.token } });
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, new RegExp(address.url.replace(/[.:/]/g, "\\$&")));
  });

  it("SIGTERM stops serve (exit 0) and leaves nothing in the sandbox's temporary folder", async () => {
    await served.stop();
    assert.equal(await served.exited, 0, served.stderr());
    // tsx keeps its compile cache there when the CLI runs from source.
    assert.deepEqual(readdirSync(sandboxTmp).filter((n) => !n.startsWith("tsx-")), []);
  });
});

describe("wp-codebox serve --backend native --pool 1", { skip, timeout: 240_000 }, () => {
  it("a session's writes are gone for the next session (the returned sandbox is recycled), and its site still serves", async () => {
    const pooled = await startServe(["--backend", "native", "--pool", "1", "--ttl", "5m"]);
    try {
      const env = { ...process.env, WP_CODEBOX_TOKEN: pooled.address.token };
      const write = await spawnCli(["run", "--attach", pooled.address.control, "--command", "wordpress.run-php", "--arg", "code=<?php update_option('wp_codebox_pool_probe', 'written'); file_put_contents(WP_CONTENT_DIR . '/pool-probe.txt', 'x'); echo 'w';"], { env });
      assert.equal(write.code, 0, show(write));
      await pooled.waitForEvent("sandbox-recycled");
      const read = await spawnCli(["run", "--attach", pooled.address.control, "--command", "wordpress.run-php", "--arg", "code=<?php echo json_encode([get_option('wp_codebox_pool_probe', 'clean'), file_exists(WP_CONTENT_DIR . '/pool-probe.txt')]);"], { env });
      assert.equal(read.code, 0, show(read));
      assert.equal(read.stdout, '["clean",false]');
      const home = await fetch(`${pooled.address.url}/`);
      assert.equal(home.status, 200, await home.text());
    } finally {
      await pooled.stop();
    }
  });
});
