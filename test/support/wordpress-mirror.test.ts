/**
 * The loopback WordPress mirror of the test suite: serves the shared release zips in the layout
 * `WP_CODEBOX_WORDPRESS_MIRROR` expects, and the project's own release code fetches, verifies and
 * caches 7.0.4 through it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureWordPressRelease } from "@wp-codebox/runtime-playground";
import { WORDPRESS_MIRROR_SKIP, serveWordPressMirror, sharedWordPressReleasesDir } from "./wordpress-mirror.js";

const dir = sharedWordPressReleasesDir();
const skip = dir ? false : WORDPRESS_MIRROR_SKIP;

test("without WP_CODEBOX_TEST_SHARED there is no releases folder, and the mirror refuses to start with the skip message", async () => {
  assert.equal(sharedWordPressReleasesDir({}), undefined);
  assert.equal(sharedWordPressReleasesDir({ WP_CODEBOX_TEST_SHARED: mkdtempSync(join(tmpdir(), "no-releases-")) }), undefined);
  await assert.rejects(serveWordPressMirror({ env: {} }), { message: WORDPRESS_MIRROR_SKIP });
});

test("serves each release with its .sha1, latest.zip as the newest, and 404 for anything else", { skip }, async () => {
  const mirror = await serveWordPressMirror();
  try {
    assert.ok(mirror.releases.includes("7.0.4"), mirror.releases.join(", "));
    assert.equal(mirror.latest, "7.0.4");
    const published = (await (await fetch(`${mirror.url}latest.zip.sha1`)).text()).trim();
    assert.equal(published, readFileSync(join(dir!, "wordpress-7.0.4.zip.sha1"), "utf8").trim());
    const zip = new Uint8Array(await (await fetch(`${mirror.url}wordpress-7.0.4.zip`)).arrayBuffer());
    assert.equal(createHash("sha1").update(zip).digest("hex"), published);
    assert.equal((await fetch(`${mirror.url}wordpress-7.0.zip`)).status, 404);
    assert.equal((await fetch(`${mirror.url}../etc/passwd`)).status, 404);
  } finally {
    await mirror.close();
  }
});

test("the release code fetches 7.0.4 through it once, verifies it against the .sha1 and then uses the cache", { skip }, async () => {
  const mirror = await serveWordPressMirror();
  const cacheDir = mkdtempSync(join(tmpdir(), "wp-codebox-mirror-"));
  try {
    const first = await ensureWordPressRelease("7.0.4", { cacheDir, mirror: mirror.url });
    assert.deepEqual({ release: first.release, fetched: first.fetched, algorithm: first.checksum.algorithm }, { release: "7.0.4", fetched: true, algorithm: "sha1" });
    mirror.requests.length = 0;
    const again = await ensureWordPressRelease("7.0.4", { cacheDir, mirror: mirror.url });
    assert.equal(again.fetched, false);
    assert.deepEqual(mirror.requests, []);
    const latest = await ensureWordPressRelease("latest", { cacheDir, mirror: mirror.url });
    assert.deepEqual({ release: latest.release, fetched: latest.fetched }, { release: "7.0.4", fetched: false });
  } finally {
    await mirror.close();
    rmSync(cacheDir, { recursive: true, force: true });
  }
});
