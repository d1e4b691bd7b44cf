/**
 * Integration: PHP work that runs away is bounded.
 * - A script that prints far more than the output cap is truncated with the true total, and the
 *   worker never holds more than the cap of it (the output sink drops the rest before php-wasm
 *   queues it): this process's peak memory, which includes the worker thread, stays far below
 *   what PHP printed.
 * - A site request that never ends (a REST route looping forever) gets a 504 at the site request
 *   limit and its worker is replaced: the site answers again, and a command sent while the
 *   request hung runs on the replacement instead of timing out.
 * One real WordPress booted for the whole file, with a 3 s site request limit.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_OUTPUT_CAP_BYTES, type ExecutionResult } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, findChromium, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;
/** Host folder mounted at /workspace/signal: the hanging route says there that it started. */
const signal = mkdtempSync(join(tmpdir(), "wp-codebox-runaway-"));
const SITE_LIMIT_MS = 3000;

before(async () => {
  runtime = await createPlaygroundBackend().create({
    policy: { commands: ["wordpress.run-php", "wordpress.http-request", "wordpress.rest-request", "wordpress.browser-actions"] },
    mounts: [{ source: signal, target: "/workspace/signal", mode: "readwrite" }],
    siteRequestTimeoutMs: SITE_LIMIT_MS,
  });
  const written = await php(`@mkdir(WPMU_PLUGIN_DIR); file_put_contents(WPMU_PLUGIN_DIR . '/hang.php', <<<'PLUGIN'
<?php
add_action('rest_api_init', function () {
  register_rest_route('hang/v1', '/loop', ['methods' => 'GET', 'permission_callback' => '__return_true', 'callback' => function () {
    file_put_contents('/workspace/signal/started', '1');
    while (true) {}
  }]);
});
PLUGIN);`);
  assert.equal(written.status, "ok", JSON.stringify(written.error));
});

after(async () => {
  await runtime?.dispose();
  rmSync(signal, { recursive: true, force: true });
});

/** Requests the hanging route; resolves once it runs in PHP (it writes the signal file first). */
async function startHang(): Promise<{ response: Promise<Response> }> {
  rmSync(join(signal, "started"), { force: true });
  const response = fetch(`${runtime.loopbackUrl}/wp-json/hang/v1/loop`);
  while (!existsSync(join(signal, "started"))) await sleep(20);
  return { response };
}

const MiB = 1024 * 1024;
const php = (code: string, ...args: string[]): Promise<ExecutionResult> => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, ...args] });

/** Peak resident memory of this process (the PHP worker is one of its threads), in bytes. */
const peakRss = (): number => process.resourceUsage().maxRSS * 1024;

test("run-php printing 540 MiB is truncated at the cap with the true total, and memory stays far below what PHP printed", async () => {
  // Warm up first: the peak then measures the print, not WordPress's first load.
  await php("echo 1;");
  const before = peakRss();
  const result = await php("$chunk = str_repeat('x', 1 << 20); for ($i = 0; $i < 500; $i++) { echo $chunk; } for ($i = 0; $i < 40; $i++) { fwrite(STDERR, $chunk); }");
  const grown = peakRss() - before;
  assert.equal(result.status, "ok", JSON.stringify(result.error));
  assert.equal(result.stdoutBytes, 500 * MiB);
  assert.equal(result.stderrBytes, 40 * MiB);
  assert.deepEqual(result.truncated, { stdout: true, stderr: true });
  assert.equal(result.stdout.length, DEFAULT_OUTPUT_CAP_BYTES);
  assert.equal(result.stderr.length, DEFAULT_OUTPUT_CAP_BYTES);
  // Without the sink the worker queued every printed byte: the peak grew by ~1.2 bytes per byte
  // printed (631 MiB here). With it, by ~120 MiB whatever PHP prints: the 2 × 10 MiB kept and
  // its copies on the way to the result.
  assert.ok(grown < 180 * MiB, `peak memory grew by ${Math.round(grown / MiB)} MiB while PHP printed 540 MiB`);
});

test("a run killed at its deadline after printing past the cap reports everything it printed, cap kept", async () => {
  const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=$chunk = str_repeat('y', 1 << 20); for ($i = 0; $i < 30; $i++) { echo $chunk; } while (true) {}"], timeoutMs: 5000 });
  assert.equal(result.status, "timed-out");
  // Past the cap the worker sends no more output; the total comes from memory it shares with the runtime.
  assert.equal(result.stdoutBytes, 30 * MiB);
  assert.equal(result.stdout.length, DEFAULT_OUTPUT_CAP_BYTES);
  assert.equal((await php("echo 'alive';")).stdout, "alive");
});

test("an HTTP request whose page prints 300 MiB is truncated at the cap with the true body size", async () => {
  const written = await php(`@mkdir(WPMU_PLUGIN_DIR); file_put_contents(WPMU_PLUGIN_DIR . '/flood.php', <<<'PLUGIN'
<?php
add_action('rest_api_init', function () {
  register_rest_route('flood/v1', '/out', ['methods' => 'GET', 'permission_callback' => '__return_true', 'callback' => function () {
    $chunk = str_repeat('z', 1 << 20);
    for ($i = 0; $i < 300; $i++) { echo $chunk; }
    exit;
  }]);
});
PLUGIN);`);
  assert.equal(written.status, "ok", JSON.stringify(written.error));
  const before = peakRss();
  const result = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-json/flood/v1/out"] });
  const grown = peakRss() - before;
  assert.equal(result.stdoutBytes, 300 * MiB);
  assert.equal(result.truncated?.stdout, true);
  assert.equal(result.stdout.length, DEFAULT_OUTPUT_CAP_BYTES);
  assert.ok(grown < 180 * MiB, `peak memory grew by ${Math.round(grown / MiB)} MiB while PHP printed 300 MiB`);
});

test("a site request that never ends gets a 504 naming the limit, its worker is replaced, and the site answers again", async () => {
  const response = await fetch(`${runtime.loopbackUrl}/wp-json/hang/v1/loop`);
  assert.equal(response.status, 504);
  const text = await response.text();
  assert.match(text, /did not finish within 3s \(the site request limit\)/);
  assert.match(text, /--site-request-timeout/);
  const events = (await runtime.collectArtifacts()).events;
  assert.ok(events.some((e) => e.type === "site-request-timeout" && e.data?.limitMs === SITE_LIMIT_MS && String(e.data?.url).endsWith("/wp-json/hang/v1/loop")));
  assert.ok(events.some((e) => e.type === "php-worker-replaced" && e.data?.reason === "site-request-timeout"));
  const home = await fetch(`${runtime.loopbackUrl}/`);
  assert.equal(home.status, 200);
  await home.arrayBuffer();
  assert.equal((await php("echo 'alive';")).stdout, "alive");
});

test("a command sent while a site request hangs runs on the replacement worker, not blamed for the hang", async () => {
  const hanging = (await startHang()).response;
  // The worker is inside the endless loop now: this command waits behind it in the worker's queue.
  const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=echo 'after the hang';"] });
  assert.equal(result.status, "ok", JSON.stringify(result.error));
  assert.equal(result.stdout, "after the hang");
  assert.equal((await hanging).status, 504);
});

test("a command and a hanging site request sent together, in either order: the command's result is its own", async () => {
  for (let round = 0; round < 2; round++) {
    // run-php writes its code file, then runs it: the request may take the worker in between, and
    // the replacement must still have the file.
    const [result, response] = await Promise.all([
      runtime.execute({ command: "wordpress.run-php", args: [`code=echo 'round ${round}';`] }),
      fetch(`${runtime.loopbackUrl}/wp-json/hang/v1/loop`),
    ]);
    assert.equal(result.status, "ok", JSON.stringify(result.error));
    assert.equal(result.stdout, `round ${round}`);
    assert.equal(response.status, 504);
  }
});

test("http-request to a route that never ends fails at the site request limit, not the command's deadline, and the next command works", async () => {
  const result = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-json/hang/v1/loop"] });
  assert.equal(result.status, "error");
  // PHP's own max_execution_time ends a request with a fatal error; the limit does the same.
  assert.equal(result.error?.code, "php-fatal");
  assert.match(result.error!.message, /^PHP fatal error: Maximum execution time of 3s exceeded: the request did not finish within the site request limit, and its PHP worker was replaced$/);
  assert.equal((result.json as { status: number }).status, 504);
  assert.equal((await php("echo 'alive';")).stdout, "alive");
});

test("a browser step that loads a page that never ends fails with the site request limit, and the next page loads", { skip: findChromium() ? false : "no Chromium on this machine" }, async () => {
  const steps = [
    { kind: "navigate", url: "/" },
    { kind: "navigate", url: "/wp-json/hang/v1/loop" },
    { kind: "navigate", url: "/" },
  ];
  const result = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify(steps)}`] });
  assert.equal(result.status, "error");
  // PHP's own max_execution_time ends a request with a fatal error; the limit does the same.
  assert.equal(result.error?.code, "php-fatal");
  assert.match(result.error!.message, /step 1 \(navigate\).*\/wp-json\/hang\/v1\/loop \(HTTP 504\): Maximum execution time of 3s exceeded/);
  const summary = result.json as { steps: { status: string }[] };
  assert.deepEqual(summary.steps.map((s) => s.status), ["ok", "failed", "skipped"]);
  const next = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify([{ kind: "navigate", url: "/" }])}`] });
  assert.equal(next.status, "ok", JSON.stringify(next.error));
});

test("a site request limit that is not a whole number of ms from 0 is refused before boot (it would end every request at once)", async () => {
  for (const siteRequestTimeoutMs of [Number.NaN, -1, 1.5]) {
    await assert.rejects(createPlaygroundBackend().create({ siteRequestTimeoutMs }), (error: { code?: string }) => error.code === "invalid-argument");
  }
});
