/**
 * Four `wp-codebox run` processes started together on an empty cache folder: one assembles the
 * WordPress tree and installs the site, the others wait for it, and every run succeeds (before the
 * cache entries were locked and published by rename, some failed with `internal-error` ENOENT as
 * one process replaced a tree another was copying). Four is enough for one builder and several
 * waiters on a 2-core machine; more only add boots.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { show, spawnCli } from "./spawn-cli.js";

let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-cold-cache-"));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

describe("concurrent first runs on a cold cache", { timeout: 900_000 }, () => {
  it("all four succeed, and the cache holds one tree and one installed site", async () => {
    const cacheDir = join(tmp, "cache");
    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 'ok-' . get_option('blogname');", "--json", "--artifacts", join(tmp, `run-${i}`)], {
          env: { WP_CODEBOX_CACHE_DIR: cacheDir, WP_CODEBOX_WORKERS: "1" },
        }),
      ),
    );
    for (const run of runs) {
      assert.equal(run.code, 0, show(run));
      assert.equal(JSON.parse(run.stdout).result.stdout, "ok-wp-codebox", show(run));
    }
    assert.equal(runs.filter((r) => r.stderr.includes("Installing WordPress")).length, 1, "one process installed the site");
    // Nothing half-built or locked is left: one tree, one site with its packed OPcache seed.
    assert.deepEqual(readdirSync(join(cacheDir, "wordpress")).length, 1, readdirSync(join(cacheDir, "wordpress")).join(", "));
    const sites = readdirSync(join(cacheDir, "sites")).sort();
    assert.equal(sites.length, 2, sites.join(", "));
    assert.ok(sites[1]?.endsWith(".opcache.pack"), sites.join(", "));
    assert.ok(sites.every((name) => !/\.(lock|staging|discard|partial)/.test(name)), sites.join(", "));
  });
});
