/**
 * Integration: `--wp` beyond the bundled builds. A WordPress release mirror is served on loopback
 * from a bundled build's zip (never the internet): the release is fetched once, checked against the
 * checksum the mirror publishes, cached, refused when the checksum or the version is wrong, never
 * fetched offline, and then boots.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, ensureWordPressRelease, findWordPressBuild } from "@wp-codebox/runtime-playground";

const build = findWordPressBuild("6.4");
const zip = readFileSync(build.zipPath);
const sha1 = createHash("sha1").update(zip).digest("hex");
const md5 = createHash("md5").update(zip).digest("hex");
const cacheDir = mkdtempSync(join(tmpdir(), "wp-codebox-releases-"));
let server: Server;
let mirror = "";
const requests: string[] = [];

// What the loopback mirror serves: path → body (anything else is 404).
const files: Record<string, Buffer | string> = {
  "/latest.zip": zip,
  "/latest.zip.sha1": `${sha1}\n`,
  // The bundled 6.4 build under its own release name, with only an .md5 published.
  [`/wordpress-${build.release}.zip`]: zip,
  [`/wordpress-${build.release}.zip.md5`]: md5,
  // A zip whose published checksum does not match it.
  "/wordpress-6.0.9.zip": zip,
  "/wordpress-6.0.9.zip.sha1": "0".repeat(40),
  // The right checksum, but the zip holds another version than its name says.
  "/wordpress-6.1.1.zip": zip,
  "/wordpress-6.1.1.zip.sha1": sha1,
  // No checksum published at all.
  "/wordpress-5.9.zip": zip,
  // A mirror whose latest.zip is the same file as its release zip (both with a .sha1).
  "/same/latest.zip": zip,
  "/same/latest.zip.sha1": sha1,
  [`/same/wordpress-${build.release}.zip`]: zip,
  [`/same/wordpress-${build.release}.zip.sha1`]: sha1,
};

before(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const body = files[req.url ?? ""];
    if (body === undefined) {
      res.statusCode = 404;
      res.end("not found");
      return;
    }
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});

after(() => {
  server?.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

const isCode = (code: string) => (error: unknown) => error instanceof WpCodeboxError && error.code === code && error.category === "environment";

test("offline mode never fetches: a release that is not cached is unavailable", async () => {
  requests.length = 0;
  await assert.rejects(ensureWordPressRelease("latest", { cacheDir, mirror, offline: true }), (error: unknown) => isCode("wordpress-version-unavailable")(error) && /WP_CODEBOX_OFFLINE=1/.test((error as Error).message));
  assert.deepEqual(requests, []);
});

test("an unreachable mirror is wordpress-download-failed, naming the URL", async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  await assert.rejects(
    ensureWordPressRelease("6.7.1", { cacheDir, mirror: `http://127.0.0.1:${port}/` }),
    (error: unknown) => isCode("wordpress-download-failed")(error) && (error as Error).message.includes(`127.0.0.1:${port}`) && /ECONNREFUSED/.test((error as Error).message),
  );
});

test("a wrong checksum, a wrong version, no checksum and a missing release are all refused, and nothing is cached", async () => {
  await assert.rejects(ensureWordPressRelease("6.0.9", { cacheDir, mirror }), (error: unknown) => isCode("wordpress-checksum-mismatch")(error) && (error as WpCodeboxError).data.actual === sha1);
  await assert.rejects(ensureWordPressRelease("6.1.1", { cacheDir, mirror }), (error: unknown) => isCode("wordpress-download-failed")(error) && (error as Error).message.includes(`holds WordPress ${build.release}, not 6.1.1`));
  await assert.rejects(ensureWordPressRelease("5.9", { cacheDir, mirror }), (error: unknown) => isCode("wordpress-download-failed")(error) && /publishes no checksum/.test((error as Error).message));
  await assert.rejects(ensureWordPressRelease("4.0", { cacheDir, mirror }), (error: unknown) => isCode("wordpress-version-unavailable")(error) && /HTTP 404/.test((error as Error).message));
  await assert.rejects(ensureWordPressRelease("6.0.9", { cacheDir, mirror, offline: true }), isCode("wordpress-version-unavailable"));
});

test("a release with only an .md5 published is verified with it, fetched once, then served from the cache", async () => {
  requests.length = 0;
  const first = await ensureWordPressRelease(build.release, { cacheDir, mirror });
  assert.equal(first.fetched, true);
  assert.deepEqual(first.checksum.algorithm, "md5");
  assert.equal(first.release, build.release);
  const again = await ensureWordPressRelease(build.release, { cacheDir, mirror });
  assert.equal(again.fetched, false);
  assert.equal(again.zipPath, first.zipPath);
  assert.equal(requests.filter((r) => r.endsWith(".zip")).length, 1, requests.join(", "));
});

test("a cached zip is hashed once and trusted while unchanged; one changed afterwards is hashed again, dropped and fetched again", async () => {
  const own = mkdtempSync(join(tmpdir(), "wp-codebox-releases-verified-"));
  try {
    requests.length = 0;
    const first = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
    const stamp = JSON.parse(readFileSync(`${first.zipPath}.verified`, "utf8")) as { size: number; value: string };
    assert.deepEqual([stamp.size, stamp.value], [zip.byteLength, md5]);
    // Unchanged: served offline from the cache (the stamp stands for the hash).
    assert.equal((await ensureWordPressRelease(build.release, { cacheDir: own, offline: true })).zipPath, first.zipPath);
    // Changed after it was verified, even with its old modification time put back: the size differs.
    appendFileSync(first.zipPath, "x");
    utimesSync(first.zipPath, new Date(), new Date(Date.now() - 60_000));
    await assert.rejects(ensureWordPressRelease(build.release, { cacheDir: own, offline: true }), isCode("wordpress-version-unavailable"));
    assert.equal(existsSync(`${first.zipPath}.verified`), false);
    const again = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
    assert.equal(again.fetched, true);
    assert.equal(readFileSync(again.zipPath).byteLength, zip.byteLength);
    assert.equal(requests.filter((r) => r.endsWith(".zip")).length, 2, requests.join(", "));
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
});

test("--wp latest from the loopback mirror boots that build after checking its checksum; offline it is then served from the cache", async () => {
  const previous = process.env.WP_CODEBOX_WORDPRESS_MIRROR;
  process.env.WP_CODEBOX_WORDPRESS_MIRROR = mirror;
  try {
    const runtime = await createPlaygroundBackend({ cacheDir }).create({ wordpress: { version: "latest" }, php: "8.3" });
    try {
      assert.equal(runtime.info().wordpressVersion, build.release);
      const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_bloginfo('version');"] });
      assert.equal(result.stdout, build.release);
      const artifacts = await runtime.collectArtifacts();
      const release = artifacts.events.find((e) => e.type === "wordpress-release");
      assert.deepEqual(release?.data, { requested: "latest", release: build.release, checksum: { algorithm: "sha1", value: sha1, url: `${mirror}latest.zip.sha1` }, fetched: true });
    } finally {
      await runtime.dispose();
    }
    requests.length = 0;
    const offline = await ensureWordPressRelease("latest", { cacheDir, mirror, offline: true });
    assert.equal(offline.fetched, false);
    assert.deepEqual(requests, []);
  } finally {
    if (previous === undefined) delete process.env.WP_CODEBOX_WORDPRESS_MIRROR;
    else process.env.WP_CODEBOX_WORDPRESS_MIRROR = previous;
  }
});

test("latest whose published checksum is a release already cached is neither fetched nor stored again", async () => {
  const own = mkdtempSync(join(tmpdir(), "wp-codebox-releases-same-"));
  try {
    const same = `${mirror}same/`;
    const release = await ensureWordPressRelease(build.release, { cacheDir: own, mirror: same });
    assert.equal(release.fetched, true);
    requests.length = 0;
    const latest = await ensureWordPressRelease("latest", { cacheDir: own, mirror: same });
    assert.deepEqual({ fetched: latest.fetched, release: latest.release, zipPath: latest.zipPath, requested: latest.requested }, { fetched: false, release: build.release, zipPath: release.zipPath, requested: "latest" });
    assert.deepEqual(requests, ["/same/latest.zip.sha1"]);
    // Offline, latest is now served from that record too.
    const offline = await ensureWordPressRelease("latest", { cacheDir: own, mirror: same, offline: true });
    assert.equal(offline.zipPath, release.zipPath);
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
});
