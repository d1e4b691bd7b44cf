/**
 * The default WordPress (no `--wp`): the newest release from the mirror (here a loopback mirror
 * serving 7.0.4 as the newest), asked at most once a day; offline the newest release already
 * cached, else the newest bundled build, said in one stderr line; an unreachable mirror fails over
 * quickly. Each case runs with its own release cache and without the suite's WP_CODEBOX_WP pin.
 * The installed bundled sites are shared with the default cache so only 7.0.4 is installed here.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { listWordPressBuilds, resolveDefaultWordPress } from "@wp-codebox/runtime-playground";
import { unzipSync } from "fflate";
import { show, spawnCli, type CliRun } from "./spawn-cli.js";
import { WORDPRESS_MIRROR_SKIP, serveWordPressMirror, sharedWordPressReleasesDir, type WordPressMirror } from "../support/wordpress-mirror.js";

const skip = sharedWordPressReleasesDir() ? false : WORDPRESS_MIRROR_SKIP;
const newestBundled = listWordPressBuilds()[0]!.release;
let tmp: string;
let mirror: WordPressMirror | undefined;
/** A port nothing listens on (bound, then closed). */
let closedPort: number;

/** A cache with no releases; its installed bundled sites are the default cache's (keyed, locked entries). */
function releaseFreeCache(name: string): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const shared = process.env.WP_CODEBOX_CACHE_DIR || join(homedir(), ".cache", "wp-codebox");
  for (const sub of ["wordpress", "sites"]) {
    mkdirSync(join(shared, sub), { recursive: true });
    symlinkSync(join(shared, sub), join(dir, sub));
  }
  return dir;
}

const env = (cacheDir: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv =>
  ({ WP_CODEBOX_WP: undefined, WP_CODEBOX_OFFLINE: undefined, WP_CODEBOX_WORDPRESS_MIRROR: mirror?.url, WP_CODEBOX_CACHE_DIR: cacheDir, ...extra }) as unknown as NodeJS.ProcessEnv;

async function runVersion(name: string, runEnv: NodeJS.ProcessEnv): Promise<{ run: CliRun; metadata: { runtime: { wordpressVersion: string; wordpress: unknown } } }> {
  const dir = join(tmp, name);
  const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo get_bloginfo('version');", "--artifacts", dir, "--json"], { env: runEnv });
  assert.equal(run.code, 0, show(run));
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"));
  // The site that ran the code is the one recorded.
  assert.equal((JSON.parse(run.stdout) as { result: { stdout: string } }).result.stdout, metadata.runtime.wordpressVersion, show(run));
  return { run, metadata };
}

const offlineLines = (stderr: string) => stderr.split("\n").filter((l) => /offline: using WordPress/.test(l));

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-default-wp-"));
  if (!skip) mirror = await serveWordPressMirror();
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  closedPort = (server.address() as { port: number }).port;
  await new Promise<void>((ok) => server.close(() => ok()));
});
after(async () => {
  await mirror?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("no --wp: the newest release from the mirror, and offline the newest one here", { skip, timeout: 1_200_000 }, () => {
  let cache: string;

  it("online: run boots the mirror's newest release (7.0.4) and records how it was chosen", async () => {
    cache = join(tmp, "cache-latest");
    const { run, metadata } = await runVersion("latest", env(cache));
    assert.equal(mirror!.latest, "7.0.4");
    assert.equal(metadata.runtime.wordpressVersion, "7.0.4", show(run));
    assert.deepEqual(metadata.runtime.wordpress, { version: "7.0.4", source: "release", chosenBy: "latest" });
    assert.deepEqual(offlineLines(run.stderr), [], "the newest release needs no explanation");
    assert.ok(mirror!.requests.includes("/latest.zip"), mirror!.requests.join(", "));
  });

  it("the installed site shares wp-includes with the unpacked release by hard links, and the install changed none of it", () => {
    const treeRoot = join(cache, "wordpress");
    const tree = readdirSync(treeRoot).map((d) => join(treeRoot, d)).find((d) => existsSync(join(d, "wp-includes", "version.php")))!;
    assert.ok(statSync(join(tree, "wp-includes", "plugin.php")).nlink >= 2, "linked into the installed site, not copied");
    const zip = unzipSync(readFileSync(join(sharedWordPressReleasesDir()!, "wordpress-7.0.4.zip")), { filter: (f) => f.name.startsWith("wordpress/wp-includes/") && !f.name.endsWith("/") });
    const names = Object.keys(zip);
    assert.ok(names.length > 1000, String(names.length));
    const changed = names.filter((name) => !Buffer.from(zip[name]!).equals(readFileSync(join(tree, name.slice("wordpress/".length)))));
    assert.deepEqual(changed, []);
  });

  it("the mirror is asked at most once a day: the next default asks nothing", async () => {
    const before = mirror!.requests.length;
    const resolved = await resolveDefaultWordPress({ cacheDir: cache, mirror: mirror!.url, offline: false });
    assert.deepEqual([resolved.choice.version, resolved.choice.chosenBy, resolved.release?.fetched], ["7.0.4", "latest", false]);
    assert.equal(mirror!.requests.length, before, mirror!.requests.slice(before).join(", "));
  });

  it("offline with 7.0.4 cached: boots 7.0.4 and says why in one stderr line", async () => {
    const { run, metadata } = await runVersion("offline-cached", env(cache, { WP_CODEBOX_OFFLINE: "1", WP_CODEBOX_WORDPRESS_MIRROR: `http://127.0.0.1:${closedPort}/` }));
    assert.deepEqual(metadata.runtime.wordpress, { version: "7.0.4", source: "release", chosenBy: "offline-cached" });
    assert.deepEqual(offlineLines(run.stderr), ["wp-codebox: offline: using WordPress 7.0.4, the newest release in the cache; WP_CODEBOX_OFFLINE=1 forbids checking for the newest release"], show(run));
  });

  it("mirror unreachable (closed port), no release cached: the newest bundled build, naming the mirror", async () => {
    const unreachable = `http://127.0.0.1:${closedPort}/`;
    const { run, metadata } = await runVersion("unreachable", env(releaseFreeCache("cache-unreachable"), { WP_CODEBOX_WORDPRESS_MIRROR: unreachable }));
    assert.deepEqual(metadata.runtime.wordpress, { version: newestBundled, source: "bundled", chosenBy: "offline-bundled" });
    const lines = offlineLines(run.stderr);
    assert.equal(lines.length, 1, show(run));
    assert.match(lines[0]!, new RegExp(`offline: using WordPress ${newestBundled.replace(/\./g, "\\.")}, the newest bundled build; the newest release could not be checked \\(${unreachable.replace(/[./]/g, "\\$&")}: ECONNREFUSED\\)`));
  });

  it("offline with a fresh cache: the newest bundled build, said on stderr; nothing is asked", async () => {
    const before = mirror!.requests.length;
    const { run, metadata } = await runVersion("offline-bundled", env(releaseFreeCache("cache-offline"), { WP_CODEBOX_OFFLINE: "1" }));
    assert.deepEqual(metadata.runtime.wordpress, { version: newestBundled, source: "bundled", chosenBy: "offline-bundled" });
    assert.deepEqual(offlineLines(run.stderr), [`wp-codebox: offline: using WordPress ${newestBundled}, the newest bundled build; WP_CODEBOX_OFFLINE=1 forbids checking for the newest release`], show(run));
    assert.equal(mirror!.requests.length, before);
  });

  it("a blackholed mirror address fails over within the check timeout instead of hanging", async () => {
    // TEST-NET-1 (RFC 5737) is never routed: the connection either fails at once or never answers.
    const resolved = await resolveDefaultWordPress({ cacheDir: releaseFreeCache("cache-blackhole"), mirror: "http://192.0.2.1/", offline: false, checkTimeoutMs: 1500 });
    assert.deepEqual([resolved.choice.version, resolved.choice.chosenBy], [newestBundled, "offline-bundled"]);
    assert.match(resolved.choice.notice!, /could not be checked \(http:\/\/192\.0\.2\.1\/: /);
  });
});
