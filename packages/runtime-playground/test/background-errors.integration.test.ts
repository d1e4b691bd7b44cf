/**
 * Integration: a PHP fatal in a background request a command set off is part of that command's
 * result. The fixture plugin cron-fatal schedules (on `?schedule-cron-fatal=1`) a WP-Cron event
 * whose callback calls an undefined function; the page load that scheduled it spawns WP-Cron in
 * the background, and the fatal there makes the `http-request` result an error (`php-fatal`,
 * `data.background`), lists it in `backgroundErrors` and counts it in review.json, unless the
 * command says `background-errors=record`.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeArtifactBundle } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/plugins/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-background-errors-"));

let runtime: PlaygroundRuntime;
before(async () => {
  runtime = await createPlaygroundBackend().create({ plugins: [join(fixtures, "cron-fatal")] });
});
after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

// [name, command, args, expected status, expected background errors, error code]
const cases: [string, string, string[], "ok" | "error", number, string | undefined][] = [
  ["a page load with no cron due", "wordpress.http-request", ["path=/"], "ok", 0, undefined],
  ["a page load that spawns a fatal cron run", "wordpress.http-request", ["path=/?schedule-cron-fatal=1"], "error", 1, "php-fatal"],
  ["the same with background-errors=record", "wordpress.http-request", ["path=/?schedule-cron-fatal=1", "background-errors=record"], "ok", 1, undefined],
  ["run-php that spawns the fatal cron run itself", "wordpress.run-php", ["code=<?php delete_transient('doing_cron'); wp_schedule_single_event(time() - 60, 'cron_fatal_event'); spawn_cron(); echo 'spawned';"], "error", 1, "php-fatal"],
  ["run-php afterwards, nothing due", "wordpress.run-php", ["code=<?php echo 'quiet';"], "ok", 0, undefined],
];

for (const [name, command, args, status, count, code] of cases) {
  test(`${name}: ${status}${count ? `, ${count} background error(s)` : ""}`, { timeout: 120_000 }, async () => {
    const result = await runtime.execute({ command, args });
    assert.equal(result.status, status, JSON.stringify({ error: result.error, backgroundErrors: result.backgroundErrors }));
    assert.equal(result.backgroundErrors?.length ?? 0, count);
    assert.equal(result.error?.code, code);
    if (count) {
      const [fatal] = result.backgroundErrors!;
      assert.equal(fatal!.kind, "php-fatal");
      assert.match(fatal!.message, /cron_fatal_undefined_function/);
      assert.match(fatal!.file, /cron-fatal\.php$/);
      assert.equal(fatal!.line, 17);
      assert.match(fatal!.url, /\/wp-cron\.php/);
    }
    if (code) {
      assert.equal(result.error!.data?.background, true);
      assert.match(result.error!.message, /background request .*wp-cron\.php.*cron_fatal_undefined_function.*cron-fatal\.php:17.*background-errors=record/s);
    }
  });
}

test("review.json counts background errors per command and in total", async () => {
  const dir = join(scratch, "bundle");
  await writeArtifactBundle(dir, await runtime.collectArtifacts());
  const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8")) as { backgroundErrors: number; commands: { command: string; backgroundErrors?: number }[] };
  assert.equal(review.backgroundErrors, 3);
  assert.deepEqual(review.commands.map((c) => c.backgroundErrors ?? 0), [0, 1, 1, 1, 0]);
});
