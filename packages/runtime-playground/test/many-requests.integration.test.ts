/**
 * Integration: one sandbox serving thousands of PHP requests, as a long-lived `serve` sandbox or a
 * harness's episode loop does. php-wasm opens two file descriptors per request that it never
 * closes; with its runtime rotation off (see php-worker.ts), a worker used to reach Emscripten's
 * limit of 4096 open descriptors after about 1,900 requests, and then runs came back wrong: an
 * exit 255 without a message, "ok" with empty output, then a heap corruption.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;

before(async () => {
  runtime = await createPlaygroundBackend().create({});
});

after(async () => {
  await runtime?.dispose();
});

test("2,100 PHP requests on one worker all answer correctly, and WordPress still serves after them", { timeout: 300_000 }, async () => {
  const wrong: string[] = [];
  // Every tenth is an HTTP request through WordPress (the other kind of PHP request), the rest bare PHP runs.
  for (let i = 0; i < 2_100; i++) {
    if (i % 10 === 9) {
      const result = await runtime.execute({ command: "wordpress.http-request", args: [`path=/robots.txt?n=${i}`] });
      const status = (result.json as { status?: number } | undefined)?.status;
      if (result.status !== "ok" || status !== 200 || !result.stdout.includes("User-agent")) wrong.push(`#${i} http: ${result.status} ${status} ${result.error?.message ?? ""}`);
    } else {
      const result = await runtime.execute({ command: "wordpress.run-php", args: ["bootstrap=none", `code=<?php echo ${i} * 2;`] });
      if (result.status !== "ok" || result.stdout !== String(i * 2)) wrong.push(`#${i}: ${result.status} ${JSON.stringify(result.stdout)} ${result.error?.message ?? ""}`);
    }
    if (wrong.length >= 5) break;
  }
  assert.deepEqual(wrong, []);
  const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/robots.txt"] });
  assert.equal(page.status, "ok", page.error?.message);
  assert.equal((page.json as { status: number }).status, 200);
  const replaced = (await runtime.collectArtifacts()).events.filter((e) => e.type === "php-worker-replaced");
  assert.deepEqual(replaced, [], "no worker was replaced along the way");
});
