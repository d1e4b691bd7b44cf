/**
 * Integration: a warm pool of two real WordPress sandboxes. Sessions get distinct sandboxes; a
 * returned one is recycled by reset (no re-boot) and the next session sees none of the previous
 * one's site changes, files (`/workspace`, `/tmp`, PHP's in-memory files) or records. Sessions hold a short lease (1.5 s): the attach clients renew it
 * while the test works, and a session whose client went silent is released and recycled.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { attachRuntime, startLiveServer, type LiveEvent, type LiveServer } from "../src/index.js";

const LEASE_MS = 1_500;
let live: LiveServer;
const events: LiveEvent[] = [];

before(async () => {
    // Seeded entropy (host clock, loopback origin): a recycled sandbox must give the same random values again.
  live = await startLiveServer({ backend: createPlaygroundBackend(), spec: { seed: 7, origin: "loopback" }, pool: 2, leaseWaitMs: 120_000, sessionLeaseMs: LEASE_MS, onEvent: (e) => events.push(e) });
});
after(async () => {
  await live?.close();
});

const php = (code: string) => ({ command: "wordpress.run-php", args: [`code=${code}`] });

describe("serve --pool with real WordPress", { timeout: 300_000 }, () => {
  it("hands out distinct sandboxes and recycles a returned one by reset", async () => {
    const a = await attachRuntime({ control: live.control, token: live.token });
    const b = await attachRuntime({ control: live.control, token: live.token });
    assert.notEqual(a.sandboxId, b.sandboxId);
    assert.notEqual(a.info().siteUrl, b.info().siteUrl);

    const wrote = await a.execute(php("<?php update_option('pool_marker', 'session-a'); echo home_url();"));
    assert.equal(wrote.status, "ok", wrote.stderr);
    assert.equal(wrote.stdout, a.info().siteUrl);
    const other = await b.execute(php("<?php var_export(get_option('pool_marker'));"));
    assert.equal(other.stdout, "false", "sandboxes do not share state");
    const sandboxA = a.sandboxId;
    await a.dispose();

    // Only sandbox A can become free (B is held): the next session waits for its recycle.
    const c = await attachRuntime({ control: live.control, token: live.token });
    assert.equal(c.sandboxId, sandboxA);
    const after = await c.execute(php("<?php var_export(get_option('pool_marker'));"));
    assert.equal(after.stdout, "false", "the recycled sandbox is back to its clean state");
    const artifacts = await c.collectArtifacts();
    assert.equal(artifacts.results.length, 1, "records of the previous session are gone");
    const recycled = events.find((e) => e.type === "sandbox-recycled");
    assert.equal(recycled?.data?.how, "reset");
    assert.equal(events.filter((e) => e.type === "sandbox-booted").length, 2, "no re-boot");
    await Promise.all([b.dispose(), c.dispose()]);
  });

  it("a returned sandbox comes back with /workspace, /tmp and PHP's in-memory files as at boot, its seeded entropy where boot left it, and a new login link", async () => {
    const a = await attachRuntime({ control: live.control, token: live.token });
    const b = await attachRuntime({ control: live.control, token: live.token });
    const random = "<?php echo wp_rand(), '|', bin2hex(random_bytes(8));";
    const first = await a.execute(php(random));
    assert.equal(first.status, "ok", first.stderr);
    const leave = await a.execute(
      php(`<?php
        file_put_contents('/workspace/left-behind.txt', 'session a');
        mkdir('/workspace/left-dir');
        file_put_contents('/tmp/left-behind.txt', 'session a');
        file_put_contents('/internal/shared/mu-plugins/left-behind.php', "<?php define('LEFT_BEHIND', 1);");
        file_put_contents('/home/left-behind.txt', 'session a');
        echo 'left';`),
    );
    assert.equal(leave.stdout, "left", leave.stderr);
    const seen = await a.execute(php("<?php var_export([defined('LEFT_BEHIND'), file_exists('/tmp/left-behind.txt')]);"));
    assert.equal(seen.stdout.replace(/\s+/g, ""), "array(0=>true,1=>true,)", "the session itself sees what it left");
    const login = (url: string | undefined) => fetch(url!, { redirect: "manual" }).then(async (r) => ({ status: r.status, cookie: r.headers.has("set-cookie"), body: await r.text() }));
    assert.equal((await login(a.loginUrl)).status, 302, "session a's login link works while it holds the sandbox");
    const sandboxA = a.sandboxId;
    await a.dispose();

    const c = await attachRuntime({ control: live.control, token: live.token });
    assert.equal(c.sandboxId, sandboxA);
    const again = await c.execute(php(random));
    assert.equal(again.stdout, first.stdout, "seeded entropy starts where boot left it, as in the previous session");
    // After the entropy check: a page load is PHP work and moves the seeded streams on.
    assert.notEqual(c.loginUrl, a.loginUrl, "the next session gets a login link of its own");
    const stale = await login(a.loginUrl);
    assert.notEqual(stale.status, 302, "the earlier session's login link no longer logs in");
    assert.equal(stale.cookie, false);
    assert.equal((await login(c.loginUrl)).status, 302);
    // GET /v1 hands out no pooled sandbox's link (the first one's stopped working at its recycle).
    const described = (await (await fetch(`${live.control}/v1`, { headers: { authorization: `Bearer ${live.token}` } })).json()) as { value?: Record<string, unknown> } & Record<string, unknown>;
    const description = described.value ?? described;
    assert.equal(description.mode, "pool");
    assert.equal("loginUrl" in description, false);
    const check = await c.execute(
      php(`<?php var_export([
        'workspace' => scandir('/workspace'),
        'tmp' => file_exists('/tmp/left-behind.txt'),
        'mu-plugin' => defined('LEFT_BEHIND') || file_exists('/internal/shared/mu-plugins/left-behind.php'),
        'home' => file_exists('/home/left-behind.txt'),
      ]);`),
    );
    assert.equal(check.status, "ok", check.stderr);
    assert.equal(check.stdout.replace(/\s+/g, ""), "array('workspace'=>array(0=>'.',1=>'..',),'tmp'=>false,'mu-plugin'=>false,'home'=>false,)");
    assert.ok(events.some((e) => e.type === "sandbox-recycled" && e.data?.sandbox === sandboxA && e.data?.how === "reset"));
    await Promise.all([b.dispose(), c.dispose()]);
  });

  it("a PHP call longer than the lease keeps its session; once its client is silent the sandbox is released and reset", async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${live.control}/v1${path}`, { method, headers: { authorization: `Bearer ${live.token}` }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      return { status: response.status, json: (await response.json()) as Record<string, any> };
    };
    // A client that never renews: only its call in flight holds the session.
    const grant = await call("POST", "/sessions");
    assert.equal(grant.status, 200, JSON.stringify(grant.json));
    assert.equal(grant.json.leaseMs, LEASE_MS);
    const session = grant.json.session as string;
    const sandbox = grant.json.sandbox.id as string;
    const slept = await call("POST", `/sessions/${session}/execute`, { spec: php(`<?php update_option('lease_marker', 'held'); usleep(${LEASE_MS * 2} * 1000); echo 'slept';`) });
    assert.equal(slept.status, 200, JSON.stringify(slept.json));
    assert.equal(slept.json.value.stdout, "slept");
    assert.ok(!events.some((e) => e.type === "session-expired" && e.data?.session === session), "not expired during its call");
    const recycledBefore = events.filter((e) => e.type === "sandbox-recycled" && e.data?.sandbox === sandbox).length;
    // Then the client goes silent: the session expires and the sandbox is recycled like a detached one.
    while (!events.some((e) => e.type === "session-expired" && e.data?.session === session)) await new Promise((r) => setTimeout(r, 20));
    while (events.filter((e) => e.type === "sandbox-recycled" && e.data?.sandbox === sandbox).length === recycledBefore) await new Promise((r) => setTimeout(r, 20));
    const late = await call("POST", `/sessions/${session}/info`);
    assert.equal(late.json.error?.code, "attach-session-not-found");
    // Both sandboxes are free again; the recycled one has forgotten the silent client's change.
    const x = await attachRuntime({ control: live.control, token: live.token });
    const y = await attachRuntime({ control: live.control, token: live.token });
    const mine = x.sandboxId === sandbox ? x : y;
    assert.equal(mine.sandboxId, sandbox);
    assert.equal((await mine.execute(php("<?php var_export(get_option('lease_marker'));"))).stdout, "false");
    await Promise.all([x.dispose(), y.dispose()]);
  });
});
