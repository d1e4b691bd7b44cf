/**
 * Integration: the opt-in pool of PHP workers (`workers: 2`). Extra workers join on the first
 * loopback request, share the HTTP traffic and one SQLite database through a shared lock manager.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;
before(async () => {
  runtime = await createPlaygroundBackend({ workers: 2 }).create({});
});
after(async () => {
  await runtime?.dispose();
});

async function joined(): Promise<boolean> {
  const { events } = await runtime.collectArtifacts();
  return events.some((e) => e.type === "php-worker-joined");
}

test("extra workers start only with loopback traffic, then serve concurrent requests and writes", async () => {
  assert.equal(await joined(), false, "no extra worker before any loopback request");
  assert.equal((await fetch(`${runtime.siteUrl}/wp-login.php`)).status, 200);
  for (let i = 0; i < 100 && !(await joined()); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await joined(), true, "the second worker joined");
  // Concurrent page loads and database writes through both workers.
  const pages = Array.from({ length: 8 }, () => fetch(`${runtime.siteUrl}/?rest_route=/wp/v2/types`).then((r) => r.status));
  const writes = Array.from({ length: 5 }, (_, i) =>
    runtime.execute({ command: "wordpress.run-php", args: [`code=<?php echo wp_insert_post(['post_title' => 'pool ${i}', 'post_status' => 'publish']);`] }),
  );
  const statuses = await Promise.all(pages);
  const results = await Promise.all(writes);
  assert.ok(statuses.every((s) => s === 200), JSON.stringify(statuses));
  assert.ok(results.every((r) => r.status === "ok" && Number(r.stdout) > 0));
  const count = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo count(get_posts(['s' => 'pool', 'numberposts' => -1]));"] });
  assert.equal(count.stdout, "5");
});
