/**
 * Integration: PHP work that runs away is bounded. A script that prints far more than the output
 * cap is truncated with the true total, and the worker never holds more than the cap of it (the
 * output sink drops the rest before php-wasm queues it): this process's peak memory, which
 * includes the worker thread, stays far below what PHP printed.
 * One real WordPress booted for the whole file.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_OUTPUT_CAP_BYTES, type ExecutionResult } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;

before(async () => {
  runtime = await createPlaygroundBackend().create({
    policy: { commands: ["wordpress.run-php", "wordpress.http-request", "wordpress.rest-request", "wordpress.wp-cli"] },
  });
});

after(async () => {
  await runtime?.dispose();
});

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
