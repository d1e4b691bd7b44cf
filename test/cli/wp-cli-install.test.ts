/**
 * `wp-codebox wp-cli install [VERSION|latest]` against a loopback release mirror laid out like
 * WP-CLI's GitHub releases (`download/vX/wp-cli-X.phar` + `.sha512`, `latest` → `tag/vX`). It
 * serves the real WP-CLI 2.10.0 phar from `$WP_CODEBOX_TEST_SHARED/wp-cli/` when that is set, else
 * stand-in bytes (installing never runs the phar). Cases: install, cache reuse without a request,
 * `latest`, a checksum mismatch, a missing release, an unreachable mirror, offline, a damaged
 * cache; then `wordpress.wp-cli` picks the cached phar by default and `doctor` lists it. Also:
 * `run` refuses `wp db query` before boot.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, type CliIo } from "@wp-codebox/cli";
import { resolveWpCliPhar } from "@wp-codebox/runtime-playground";
import { runDoctor } from "../../packages/cli/src/commands/doctor.js";

const shared = process.env.WP_CODEBOX_TEST_SHARED;
const realPhar = shared ? join(shared, "wp-cli", "wp-cli-2.10.0.phar") : undefined;
const phar = realPhar && existsSync(realPhar) ? readFileSync(realPhar) : Buffer.from("#!/usr/bin/env php\n<?php echo 'stand-in';\n__HALT_COMPILER();");
const sha512 = createHash("sha512").update(phar).digest("hex");
if (realPhar && existsSync(realPhar)) assert.equal(sha512, readFileSync(`${realPhar}.sha512`, "utf8").trim(), "the shared phar matches its own .sha512");

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-wp-cli-install-"));
let server: Server;
let mirror = "";
const requests: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? "/";
    requests.push(url);
    if (url === "/releases/latest") {
      res.writeHead(302, { location: "/releases/tag/v2.10.0" }).end();
      return;
    }
    if (url === "/releases/tag/v2.10.0") return void res.end("release page");
    // 2.10.0: the phar and its checksum; 9.9.9: the same bytes with another release's checksum.
    if (url === "/releases/download/v2.10.0/wp-cli-2.10.0.phar" || url === "/releases/download/v9.9.9/wp-cli-9.9.9.phar") return void res.end(phar);
    if (url === "/releases/download/v2.10.0/wp-cli-2.10.0.phar.sha512") return void res.end(`${sha512}\n`);
    if (url === "/releases/download/v9.9.9/wp-cli-9.9.9.phar.sha512") return void res.end(`${"0".repeat(128)}  wp-cli-9.9.9.phar\n`);
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}/releases/`;
});

after(() => {
  server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function cli(argv: string[], env: NodeJS.ProcessEnv) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env, cwd: scratch };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 2000)}\n--- stderr ---\n${stderr.slice(-2000)}` };
}

const cacheDir = join(scratch, "cache");
const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, WP_CODEBOX_CACHE_DIR: cacheDir, WP_CODEBOX_WP_CLI_MIRROR: mirror, ...extra });

test("install VERSION fetches the phar, checks its SHA-512, caches it; a second install asks nothing", async () => {
  const first = await cli(["wp-cli", "install", "2.10.0", "--json"], env());
  assert.equal(first.code, 0, first.show());
  const report = JSON.parse(first.stdout) as { version: string; pharPath: string; sha512: string; fetched: boolean; url: string };
  assert.equal(report.version, "2.10.0");
  assert.equal(report.fetched, true);
  assert.equal(report.sha512, sha512);
  assert.equal(report.url, `${mirror}download/v2.10.0/wp-cli-2.10.0.phar`);
  assert.equal(report.pharPath, join(cacheDir, "wp-cli", "wp-cli-2.10.0.phar"));
  assert.ok(readFileSync(report.pharPath).equals(phar));
  const before = requests.length;
  const again = await cli(["wp-cli", "install", "2.10.0"], env());
  assert.equal(again.code, 0, again.show());
  assert.match(again.stdout, /WP-CLI 2\.10\.0 already cached: .*wp-cli-2\.10\.0\.phar/);
  assert.equal(requests.length, before, "a cached fixed version is not asked for again");
});

test("install latest reads the newest version from where the mirror's latest redirects", async () => {
  const latest = await cli(["wp-cli", "install", "--json"], env());
  assert.equal(latest.code, 0, latest.show());
  assert.equal((JSON.parse(latest.stdout) as { version: string }).version, "2.10.0");
  assert.ok(requests.includes("/releases/latest"));
});

test("a phar that does not match its published SHA-512 is refused and not kept (exit 3)", async () => {
  const run = await cli(["wp-cli", "install", "9.9.9", "--json"], env());
  assert.equal(run.code, 3, run.show());
  const error = JSON.parse(run.stdout).error as { code: string; message: string; data: { expected: string; actual: string } };
  assert.equal(error.code, "wp-cli-checksum-mismatch");
  assert.equal(error.data.expected, "0".repeat(128));
  assert.equal(error.data.actual, sha512);
  assert.ok(!readdirSync(join(cacheDir, "wp-cli")).some((f) => f.includes("9.9.9")), "nothing of 9.9.9 is cached");
});

test("a release the mirror does not have, an unreachable mirror and offline each fail fast with what to do", async () => {
  const missing = await cli(["wp-cli", "install", "1.0.0"], env());
  assert.equal(missing.code, 3, missing.show());
  assert.match(missing.stderr, /error\[wp-cli-download-failed\].*no WP-CLI 1\.0\.0 there \(HTTP 404/);
  // A port that was just closed: the connection is refused at once.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const unreachable = await cli(["wp-cli", "install", "2.11.0"], env({ WP_CODEBOX_WP_CLI_MIRROR: `http://127.0.0.1:${port}/` }));
  assert.equal(unreachable.code, 3, unreachable.show());
  assert.match(unreachable.stderr, /error\[wp-cli-download-failed\]: Cannot reach the WP-CLI release location .*ECONNREFUSED.*WP_CODEBOX_WP_CLI_MIRROR.*--wp-cli-phar/);
  const offline = await cli(["wp-cli", "install", "2.11.0"], env({ WP_CODEBOX_OFFLINE: "1" }));
  assert.equal(offline.code, 3, offline.show());
  assert.match(offline.stderr, /error\[wp-cli-download-failed\].*WP_CODEBOX_OFFLINE=1 forbids fetching/);
  // Offline, a cached version is still there.
  const cached = await cli(["wp-cli", "install", "2.10.0"], env({ WP_CODEBOX_OFFLINE: "1" }));
  assert.equal(cached.code, 0, cached.show());
  const bad = await cli(["wp-cli", "install", "two"], env());
  assert.equal(bad.code, 2, bad.show());
  assert.match(bad.stderr, /error\[invalid-argument\]/);
});

test("wordpress.wp-cli uses the cached phar when none is named, and doctor lists it", async () => {
  const found = resolveWpCliPhar({ env: undefined, cacheDir }, scratch);
  assert.deepEqual(found, { path: join(cacheDir, "wp-cli", "wp-cli-2.10.0.phar"), source: "cache" });
  const explicit = join(scratch, "own.phar");
  writeFileSync(explicit, "<?php");
  assert.equal(resolveWpCliPhar({ flag: explicit, cacheDir }, scratch).source, "flag", "a named phar still wins");
  const report = await runDoctor({ cacheDir, env: {} });
  const check = report.checks.find((c) => c.id === "wp-cli")!;
  assert.equal(check.status, "ok");
  assert.equal(check.path, join(cacheDir, "wp-cli", "wp-cli-2.10.0.phar"));
  assert.match(check.detail, /WP-CLI 2\.10\.0/);
  assert.deepEqual((check.data?.cached as { version: string }[]).map((c) => c.version), ["2.10.0"]);
});

test("a damaged cached phar is dropped, not used", async () => {
  writeFileSync(join(cacheDir, "wp-cli", "wp-cli-2.10.0.phar"), "tampered");
  assert.throws(() => resolveWpCliPhar({ env: undefined, cacheDir }, scratch), (e: Error & { code?: string }) => e.code === "wp-cli-unavailable" && /wp-codebox wp-cli install/.test(e.message));
  const report = await runDoctor({ cacheDir, env: {} });
  const check = report.checks.find((c) => c.id === "wp-cli")!;
  assert.equal(check.status, "missing");
  assert.match(check.detail, /wp-codebox wp-cli install/);
});

test("run refuses `wp db query` with wp-cli-unsupported (exit 2) before anything boots", async () => {
  const out = join(scratch, "db-query-out");
  const run = await cli(["run", "--command", "wordpress.wp-cli", "--arg", "command=db query 'SELECT 1'", "--artifacts", out], env());
  assert.equal(run.code, 2, run.show());
  assert.match(run.stderr, /error\[wp-cli-unsupported\]: wordpress\.wp-cli: `wp db query` cannot run in the sandbox because it runs the MySQL client binary/);
  assert.doesNotMatch(run.stderr, /boot/i, "refused before boot");
});
