/**
 * Integration: the network rule reaches raw PHP sockets (php-wasm's outbound proxy is guarded), and
 * `wordpress.wp-cli` runs a caller-supplied phar. The "phar" here is a tiny PHP stub the test
 * writes: it proves the plumbing (resolution, argv, --path, WordPress loaded by the stub, exit
 * codes) on every machine; the real WP-CLI is tested in wp-cli-real.integration.test.ts.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandResult } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, resolveWpCliPhar, splitCommandLine, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-policy-"));
const stubPhar = join(scratch, "wp-cli.phar");
let denied: PlaygroundRuntime;
let allowed: PlaygroundRuntime;
let server: Server;
let port = 0;
let hits = 0;

before(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.end("HOST-LOOPBACK-SERVICE");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as { port: number }).port;
  writeFileSync(
    stubPhar,
    `<?php
// Test stand-in for wp-cli.phar: echoes its argv, loads WordPress from --path, honours "fail".
$args = array_slice($argv, 1);
$path = null;
foreach ($args as $a) { if (strpos($a, '--path=') === 0) { $path = substr($a, 7); } }
if (in_array('fail', $args, true)) { fwrite(STDERR, "Error: asked to fail\\n"); exit(3); }
require $path . '/wp-load.php';
echo json_encode(['argv' => $args, 'blog' => get_bloginfo('name'), 'sapi' => PHP_SAPI]);
`,
  );
  denied = await createPlaygroundBackend().create({ wpCliPhar: stubPhar });
  allowed = await createPlaygroundBackend().create({ policy: { commands: ["wordpress.run-php"], network: { allowHosts: ["127.0.0.1"] } } });
});

after(async () => {
  await denied?.dispose();
  await allowed?.dispose();
  server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const fetchFromPhp = (runtime: PlaygroundRuntime, host: string) =>
  runtime.execute({
    command: "wordpress.run-php",
    args: [
      `code=<?php
$url = 'http://${host}:${port}/';
$fgc = @file_get_contents($url);
$c = curl_init($url); curl_setopt($c, CURLOPT_RETURNTRANSFER, true); curl_setopt($c, CURLOPT_CONNECTTIMEOUT, 5);
$curl = curl_exec($c);
$fs = @fsockopen('${host}', ${port}, $errno, $errstr, 5);
$sock = '';
if ($fs) { @fwrite($fs, "GET / HTTP/1.0\r\nHost: x\r\n\r\n"); stream_set_timeout($fs, 5); $sock = (string) @stream_get_contents($fs); }
$wp = wp_remote_get($url, ['timeout' => 5]);
echo json_encode(['fgc' => $fgc, 'curl' => $curl, 'fsock' => str_contains($sock, 'HOST-LOOPBACK-SERVICE'), 'wp' => is_wp_error($wp) ? 'error' : wp_remote_retrieve_body($wp)]);`,
    ],
    timeoutMs: 30_000,
  });

test("network deny (the default): raw PHP file_get_contents, curl, fsockopen and the HTTP API reach nothing", async () => {
  const before = hits;
  const result = await fetchFromPhp(denied, "127.0.0.1");
  assert.equal(result.status, "ok", result.stderr);
  assert.deepEqual(result.json, { fgc: false, curl: false, fsock: false, wp: "error" });
  assert.equal(hits, before, "the host service must not see a single request");
  const events = (await denied.collectArtifacts()).events.filter((e) => e.type === "policy-denied");
  assert.ok(events.length >= 3, `expected policy-denied events, got ${JSON.stringify(events)}`);
  assert.equal(events[0]!.data?.code, "policy-denied");
  assert.equal(events[0]!.data?.capability, "network:127.0.0.1");
});

test("network allowHosts: the listed host is reachable from raw PHP, other hosts are not", async () => {
  const ok = await fetchFromPhp(allowed, "127.0.0.1");
  assert.equal(ok.status, "ok", ok.stderr);
  const json = ok.json as Record<string, unknown>;
  assert.equal(json.fgc, "HOST-LOOPBACK-SERVICE");
  assert.equal(json.curl, "HOST-LOOPBACK-SERVICE");
  assert.equal(json.fsock, true);
  // The guard sees the host name PHP asked for (before DNS), so names are matched as written.
  const other = await fetchFromPhp(allowed, "not-allowed.invalid");
  assert.equal((other.json as Record<string, unknown>).fgc, false);
  const events = (await allowed.collectArtifacts()).events.filter((e) => e.type === "policy-denied");
  assert.ok(events.some((e) => e.data?.capability === "network:not-allowed.invalid"), JSON.stringify(events));
});

test("wp-cli: the phar gets argv with --path and --url, runs in the sandbox and loads WordPress", async () => {
  const result = await denied.execute({ command: "wordpress.wp-cli", args: ["command=wp option get blogname --format='json'"] });
  assert.equal(result.status, "ok", result.stderr);
  const json = result.json as { argv: string[]; blog: string; sapi: string };
  assert.deepEqual(json.argv.slice(0, 4), ["option", "get", "blogname", "--format=json"]);
  assert.ok(json.argv.includes("--path=/wordpress"));
  assert.ok(json.argv.some((a) => a.startsWith("--url=http://127.0.0.1:")));
  assert.equal(json.sapi, "cli");
  assert.equal(typeof json.blog, "string");
});

test("wp-cli: a non-zero exit is status error with wp-cli-failed and the exit code", async () => {
  const result = await denied.execute({ command: "wordpress.wp-cli", args: ["command=fail"] });
  assert.equal(result.status, "error");
  assert.equal(result.exitCode, 3);
  assert.equal(result.error?.code, "wp-cli-failed");
  assert.match(result.error!.message, /asked to fail/);
});

test("a #! first line never reaches the output, and strict_types after it works: run-php code, code-file, a wp-cli script", async () => {
  const script = "#!/usr/bin/env php\n<?php declare(strict_types=1);\necho json_encode(['line' => __LINE__]);\n";
  const codeFile = join(scratch, "shebang.php");
  writeFileSync(codeFile, script);
  const original = readFileSync(stubPhar, "utf8");
  const cases: [string, () => Promise<CommandResult>, (json: unknown) => void][] = [
    ["run-php code", () => denied.execute({ command: "wordpress.run-php", args: [`code=${script}`] }), (json) => assert.deepEqual(json, { line: 3 }, "line numbers are the file's")],
    ["run-php code-file", () => denied.execute({ command: "wordpress.run-php", args: [`code-file=${codeFile}`] }), (json) => assert.deepEqual(json, { line: 3 })],
    [
      "wp-cli script",
      async () => {
        writeFileSync(stubPhar, `#!/usr/bin/env php\n<?php declare(strict_types=1);\n${original.replace(/^<\?php\n/, "")}`);
        try {
          return await denied.execute({ command: "wordpress.wp-cli", args: ["command=option get blogname"] });
        } finally {
          writeFileSync(stubPhar, original);
        }
      },
      (json) => assert.deepEqual((json as { argv: string[] }).argv.slice(0, 3), ["option", "get", "blogname"]),
    ],
  ];
  for (const [name, run, check] of cases) {
    const result = await run();
    assert.equal(result.status, "ok", `${name}: ${result.error?.message ?? ""} ${result.stdout}`);
    assert.ok(result.stdout.startsWith("{"), `${name}: ${result.stdout.slice(0, 80)}`);
    check(result.json);
  }
});

test("wp-cli without a phar: wp-cli-unavailable saying how to provide one", async () => {
  const empty = mkdtempSync(join(scratch, "cache-"));
  assert.throws(() => resolveWpCliPhar({ env: undefined, cacheDir: empty }, scratch), (e: Error & { code?: string }) => e.code === "wp-cli-unavailable" && /--wp-cli-phar/.test(e.message) && /WP_CODEBOX_WP_CLI_PHAR/.test(e.message));
  assert.throws(() => resolveWpCliPhar({ flag: "missing.phar", cacheDir: empty }, scratch), (e: Error & { code?: string }) => e.code === "wp-cli-unavailable" && /missing\.phar/.test(e.message));
  assert.equal(resolveWpCliPhar({ env: stubPhar, cacheDir: empty }, scratch).source, "env");
  await assert.rejects(
    allowed.execute({ command: "wordpress.wp-cli", args: ["command=plugin list"] }),
    (e: Error & { code?: string }) => e.code === "policy-denied",
    "the policy is checked before the phar",
  );
});

test("splitCommandLine handles quotes and escapes", () => {
  assert.deepEqual(splitCommandLine(`post create --post_title="Hello \\"world\\"" 'a b' c\\ d`), ["post", "create", '--post_title=Hello "world"', "a b", "c d"]);
});
