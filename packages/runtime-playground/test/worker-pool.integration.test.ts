/**
 * Integration: the opt-in pool of PHP workers (`workers: 2`). Extra workers join on the first
 * loopback request, share the HTTP traffic and one SQLite database through a shared lock manager.
 * The plugin check's recorder, appending from pages served by both workers at once, keeps every
 * row although php-wasm's file locks never wait (a blocking flock() fails while another holds it).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
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

test("the plugin check's recorder loses no row when two workers append at the same time (php-wasm's flock() never waits)", async () => {
  // The recorder (commands/assets/plugin-check/collector.php) and a page that records 400 rows with it (200 through PHP's error handler), in the sandbox's wp-content.
  const collector = readFileSync(fileURLToPath(new URL("../../commands/assets/plugin-check/collector.php", import.meta.url)), "utf8");
  const page = `<?php
require '/wordpress/wp-load.php';
$wp_codebox_check_config = ['log' => WP_CONTENT_DIR . '/check-rows/rows.jsonl', 'origins' => WP_CONTENT_DIR . '/check-rows/origins.jsonl', 'token' => 't', 'pluginDir' => WP_CONTENT_DIR . '/plugins/none'];
require WP_CONTENT_DIR . '/check-collector.php';
// Half the rows straight, half as PHP warnings through the recorder's error handler (where a
// sleep between tries for the lock stopped the worker).
for ($i = 0; $i < 200; $i++) {
  wp_codebox_check_append('log', ['writer' => $_GET['writer'], 'i' => $i, 'pad' => str_repeat('x', 200)]);
  trigger_error('writer ' . $_GET['writer'] . ' row ' . $i, E_USER_WARNING);
}
echo 'done';`;
  const setup = await runtime.execute({
    command: "wordpress.run-php",
    args: [`code=<?php file_put_contents(WP_CONTENT_DIR . '/check-collector.php', base64_decode('${Buffer.from(collector).toString("base64")}')); file_put_contents(WP_CONTENT_DIR . '/check-rows.php', base64_decode('${Buffer.from(page).toString("base64")}')); echo 'ok';`],
  });
  assert.equal(setup.stdout, "ok", setup.stderr);
  for (let i = 0; i < 100 && !(await joined()); i++) {
    await fetch(`${runtime.siteUrl}/wp-login.php`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(await joined(), true, "two workers serve the pages");
  const writers = ["a", "b", "c", "d"];
  const bodies = await Promise.all(writers.map((w) => fetch(`${runtime.siteUrl}/wp-content/check-rows.php?writer=${w}`).then((r) => r.text())));
  assert.deepEqual(bodies, writers.map(() => "done"));
  const counted = await runtime.execute({
    command: "wordpress.run-php",
    args: ["code=<?php $n = []; foreach (file(WP_CONTENT_DIR . '/check-rows/rows.jsonl') as $l) { $r = json_decode($l, true); $w = $r['writer'] ?? (preg_match('/^writer (\\w) row /', $r['message'] ?? '', $m) ? $m[1] : 'torn'); $n[$w] = ($n[$w] ?? 0) + 1; } ksort($n); echo json_encode($n);"],
  });
  assert.deepEqual(JSON.parse(counted.stdout), { a: 400, b: 400, c: 400, d: 400 }, counted.stdout + counted.stderr);
});
