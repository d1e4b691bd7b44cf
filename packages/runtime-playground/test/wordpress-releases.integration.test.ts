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
import { appendFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, ensureWordPressRelease, findWordPressBuild, resolveWordPressTree } from "@wp-codebox/runtime-playground";

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

/** Ways a cached zip changes after it was verified: each is hashed again and dropped. */
const ZIP_CHANGES: { name: string; change: (zipPath: string) => void }[] = [
  {
    // The size stays: the modification time tells.
    name: "a byte overwritten in place",
    change: (zipPath) => {
      const bytes = readFileSync(zipPath);
      bytes[bytes.length >> 1] ^= 0xff;
      writeFileSync(zipPath, bytes);
    },
  },
  {
    // Its modification time the stamp's (a file system whose clock does not move): the size tells.
    name: "a byte appended, at the modification time its stamp records",
    change: (zipPath) => {
      appendFileSync(zipPath, "x");
      const stamp = JSON.parse(readFileSync(`${zipPath}.verified`, "utf8")) as { mtimeMs: number };
      writeFileSync(`${zipPath}.verified`, JSON.stringify({ ...stamp, mtimeMs: statSync(zipPath).mtimeMs }));
    },
  },
];

for (const c of ZIP_CHANGES) {
  test(`a cached zip is hashed once and trusted while unchanged; ${c.name} is hashed again, dropped and fetched again`, async () => {
    const own = mkdtempSync(join(tmpdir(), "wp-codebox-releases-verified-"));
    try {
      requests.length = 0;
      const first = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
      const stamp = JSON.parse(readFileSync(`${first.zipPath}.verified`, "utf8")) as { size: number; value: string };
      assert.deepEqual([stamp.size, stamp.value], [zip.byteLength, md5]);
      // Unchanged: served offline from the cache (the stamp stands for the hash).
      assert.equal((await ensureWordPressRelease(build.release, { cacheDir: own, offline: true })).zipPath, first.zipPath);
      c.change(first.zipPath);
      await assert.rejects(ensureWordPressRelease(build.release, { cacheDir: own, offline: true }), isCode("wordpress-version-unavailable"));
      assert.equal(existsSync(`${first.zipPath}.verified`), false);
      const again = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
      assert.equal(again.fetched, true);
      assert.deepEqual(readFileSync(again.zipPath), zip);
      assert.equal(requests.filter((r) => r.endsWith(".zip")).length, 2, requests.join(", "));
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
}

/** What may be found at a cached zip's stamp path: none of it is trusted, blocks the read or breaks the next write. */
const BAD_STAMPS: { name: string; plant: (stampPath: string) => void }[] = [
  { name: "text that is not JSON", plant: (path) => writeFileSync(path, "not json") },
  { name: "a stamp larger than any stamp", plant: (path) => writeFileSync(path, Buffer.alloc(1 << 20, 0x20)) },
  { name: "a folder", plant: (path) => mkdirSync(path) },
  { name: "a FIFO (a read would block)", plant: (path) => assert.equal(spawnSync("mkfifo", [path]).status, 0) },
  { name: "a link to /dev/zero (a read would never end)", plant: (path) => symlinkSync("/dev/zero", path) },
];

for (const c of BAD_STAMPS) {
  test(`a cached zip whose stamp is ${c.name} is hashed again and stamped anew`, async () => {
    const own = mkdtempSync(join(tmpdir(), "wp-codebox-releases-stamp-"));
    try {
      const first = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
      const stampPath = `${first.zipPath}.verified`;
      rmSync(stampPath);
      c.plant(stampPath);
      // In a process of its own: a read that blocks would stop this one's test timeouts too.
      const again = spawnSync(
        process.execPath,
        ["--conditions=source", "--import", "tsx", "--input-type=module", "-e", `const { ensureWordPressRelease } = await import("@wp-codebox/runtime-playground"); process.stdout.write((await ensureWordPressRelease(${JSON.stringify(build.release)}, { cacheDir: ${JSON.stringify(own)}, offline: true })).zipPath);`],
        { encoding: "utf8", timeout: 60_000 },
      );
      assert.equal(again.signal, null, "it ends without being killed");
      assert.equal(again.stdout, first.zipPath, again.stderr);
      assert.ok(lstatSync(stampPath).isFile(), "a regular stamp again");
      assert.equal((JSON.parse(readFileSync(stampPath, "utf8")) as { value: string }).value, md5);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
}

test("a folder where a cached zip was is not a release: offline it is unavailable, and it is fetched again", async () => {
  const own = mkdtempSync(join(tmpdir(), "wp-codebox-releases-zip-folder-"));
  try {
    const first = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
    rmSync(first.zipPath);
    mkdirSync(first.zipPath);
    await assert.rejects(ensureWordPressRelease(build.release, { cacheDir: own, offline: true }), isCode("wordpress-version-unavailable"));
    const again = await ensureWordPressRelease(build.release, { cacheDir: own, mirror });
    assert.equal(again.fetched, true);
    assert.deepEqual(readFileSync(again.zipPath), zip);
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

// A boot starts installing a release it has not installed yet while the release is unpacked; it
// knows which site that is from where the tree will go, so the located tree must be the resolved one.
const LOCATED_CASES = [
  { name: "a release from the mirror", wordpress: { version: build.release }, source: "release" },
  { name: "a bundled build", wordpress: { version: "6.4" }, source: "bundled" },
] as const;
for (const c of LOCATED_CASES) {
  test(`the tree of ${c.name} is located, before it is unpacked, where it is then unpacked`, async () => {
    const fresh = mkdtempSync(join(tmpdir(), "wp-codebox-located-"));
    try {
      if (c.source === "release") await ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: false });
      const located: { dir: string; release: string; unpacked: boolean }[] = [];
      const resolved = await resolveWordPressTree(
        { wordpress: c.wordpress },
        { cwd: fresh, cacheDir: fresh, offline: true, onTreeLocated: (tree) => located.push({ ...tree, unpacked: existsSync(join(tree.dir, "wp-load.php")) }) },
      );
      assert.deepEqual(located, [{ dir: resolved.dir, release: resolved.release, unpacked: false }]);
      assert.ok(existsSync(join(resolved.dir, "wp-load.php")));
      // Resolved again, the tree is located at the same place (now unpacked).
      located.length = 0;
      await resolveWordPressTree({ wordpress: c.wordpress }, { cwd: fresh, cacheDir: fresh, offline: true, onTreeLocated: (tree) => located.push({ ...tree, unpacked: existsSync(join(tree.dir, "wp-load.php")) }) });
      assert.deepEqual(located, [{ dir: resolved.dir, release: resolved.release, unpacked: true }]);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
}

test("a process that waits for another one's download of the release says so, then uses what it cached", async () => {
  const fresh = mkdtempSync(join(tmpdir(), "wp-codebox-download-wait-"));
  try {
    const { withCacheLock } = await import("../src/site/cache-entry.js");
    mkdirSync(join(fresh, "releases"), { recursive: true });
    const progress: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // This process holds the release's lock, as another process downloading it would.
    const holder = withCacheLock(join(fresh, "releases", `${build.release}.json`), () => held);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const waiting = ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: false, onProgress: (m) => progress.push(m) });
    // Until it says it waits (bounded, so that a process that never says so fails the test below instead of hanging it).
    for (let i = 0; i < 200 && !progress.some((m) => m.startsWith("Waiting")); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await holder;
    const cached = await waiting;
    assert.equal(cached.release, build.release);
    assert.deepEqual(progress.filter((m) => m.startsWith("Waiting")), [`Waiting for another wp-codebox process (pid ${process.pid}) to download WordPress ${build.release}`]);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
});

test("a cached release whose zip was damaged is dropped and said so: offline the error names it, online it is fetched again with a notice", async () => {
  const fresh = mkdtempSync(join(tmpdir(), "wp-codebox-damaged-"));
  try {
    // What a download killed two minutes ago left: swept by the next resolution of any release.
    const killed = join(fresh, "releases", `wordpress-${build.release}-0123456789ab.zip.partial-4242-a1b2c3d4`);
    mkdirSync(join(fresh, "releases"), { recursive: true });
    writeFileSync(killed, "half a zip");
    utimesSync(killed, Date.now() / 1000 - 120, Date.now() / 1000 - 120);
    const first = await ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: false });
    assert.ok(!existsSync(killed), "the killed download's partial file is gone");
    const damage = () => writeFileSync(first.zipPath, readFileSync(first.zipPath).subarray(0, 10_000));
    damage();
    await assert.rejects(ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: true }), (error: unknown) => {
      assert.ok(error instanceof WpCodeboxError, String(error));
      assert.equal(error.code, "wordpress-version-unavailable");
      assert.match(error.message, /its cached zip no longer matches its checksum \(damaged or changed\) and was dropped/);
      assert.equal(error.data.dropped, true);
      return true;
    });
    // The record went with it: the next offline resolution finds no release at all.
    await assert.rejects(ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: true }), /not in the cache/);
    const again = await ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: false });
    assert.equal(again.fetched, true);
    damage();
    const progress: string[] = [];
    const refetched = await ensureWordPressRelease(build.release, { cacheDir: fresh, mirror, offline: false, onProgress: (m) => progress.push(m) });
    assert.equal(refetched.fetched, true);
    assert.ok(progress.includes(`The cached WordPress ${build.release} zip no longer matches its checksum (damaged or changed): dropped, fetching it again`), progress.join(" | "));
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
});
