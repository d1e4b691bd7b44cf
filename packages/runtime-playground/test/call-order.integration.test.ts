/**
 * Integration: a runtime takes commands and the calls that change the whole sandbox (reset,
 * snapshot, restore) one at a time in call order, and dispose() ends what is running or waiting
 * with runtime-disposed. Real WordPress, one boot for the file (the last test disposes it).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;
// A read-write mount: PHP leaves a file there that this process sees at once.
const signal = mkdtempSync(join(tmpdir(), "wp-codebox-call-order-"));
before(async () => {
  runtime = await createPlaygroundBackend().create({ mounts: [{ source: signal, target: "/workspace/signal", mode: "readwrite" }] });
});
after(async () => {
  await runtime?.dispose();
  rmSync(signal, { recursive: true, force: true });
});

const php = (code: string, timeoutMs?: number) => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`], ...(timeoutMs ? { timeoutMs } : {}) });

test("a reset() called after a command runs after it, and before the command called after it", async () => {
  const original = (await php("<?php echo get_option('blogname');")).stdout;
  // The first command is still waiting for its turn when reset() is called: it used to jump ahead.
  const [a, , b] = await Promise.all([php("<?php usleep(200000); update_option('blogname', 'Before reset'); echo 'A';"), runtime.reset(), php("<?php echo get_option('blogname');")]);
  assert.equal(a.stdout, "A");
  assert.equal(b.stdout, original, "the reset came between the two commands");
});

test("a snapshot() called after a command holds what that command did; a restore comes back to it in order", async () => {
  const [, snapshot] = await Promise.all([php("<?php usleep(200000); update_option('blogname', 'In the snapshot');"), runtime.snapshot()]);
  await php("<?php update_option('blogname', 'After the snapshot');");
  const [, after] = await Promise.all([runtime.restoreSnapshot(snapshot), php("<?php echo get_option('blogname');")]);
  assert.equal(after.stdout, "In the snapshot");
});

test("dispose() while a command runs: that command says runtime-disposed with what it printed, the waiting ones throw runtime-disposed", async () => {
  const running = php("<?php echo 'started'; file_put_contents('/workspace/signal/started', '1'); sleep(20); echo 'never';", 60_000);
  const waiting = php("<?php echo 'waiting';");
  const reset = runtime.reset();
  // Dispose once the running command is inside its sleep.
  while (!existsSync(join(signal, "started"))) await new Promise((r) => setTimeout(r, 20));
  await runtime.dispose();
  const result = await running;
  assert.equal(result.status, "error");
  assert.equal(result.error?.code, "runtime-disposed", result.error?.message);
  assert.equal(result.stdout, "started");
  await assert.rejects(waiting, (error: Error & { code?: string }) => error.code === "runtime-disposed");
  await assert.rejects(reset, (error: Error & { code?: string }) => error.code === "runtime-disposed");
});
