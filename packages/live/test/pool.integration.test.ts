/**
 * Integration: a warm pool of two real WordPress sandboxes. Sessions get distinct sandboxes; a
 * returned one is recycled by reset (no re-boot) and the next session sees none of the previous
 * one's site changes or records.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { attachRuntime, startLiveServer, type LiveEvent, type LiveServer } from "../src/index.js";

let live: LiveServer;
const events: LiveEvent[] = [];

before(async () => {
  live = await startLiveServer({ backend: createPlaygroundBackend(), spec: {}, pool: 2, leaseWaitMs: 120_000, onEvent: (e) => events.push(e) });
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
});
