/**
 * Integration: OPcache never runs stale bytecode. Each run-php call writes its code to the same
 * file and includes it; OPcache validates by whole-second mtimes, so two calls within one second
 * would share an mtime. Under a virtual clock ahead of the host, OPcache's "file too new"
 * protection no longer holds such a file back, so only the blacklist keeps it uncached. One
 * sandbox for the file.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Runtime } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";

let runtime: Runtime;
before(async () => {
  runtime = await createPlaygroundBackend().create({ clock: "2040-01-01T00:00:00Z" });
});
after(async () => {
  await runtime?.dispose();
});

test("the first WordPress load of a fresh sandbox comes from the seeded OPcache, not the compiler", async () => {
  // This file's first command: nothing was compiled in this worker yet. Core scripts come from the
  // installer's packed seed (file-cache hits); only sandbox-specific files are compiled.
  const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php $s = opcache_get_status(false)['opcache_statistics']; echo json_encode(['hits' => $s['hits'], 'misses' => $s['misses'], 'files' => count(get_included_files())]);"] });
  assert.equal(result.status, "ok", result.stderr);
  const stats = result.json as { hits: number; misses: number; files: number };
  assert.ok(stats.files > 300, `WordPress loaded (${stats.files} files)`);
  assert.ok(stats.hits > stats.files * 0.8, `most scripts were seeded: ${JSON.stringify(stats)}`);
  assert.ok(stats.misses < 50, `few scripts compiled: ${JSON.stringify(stats)}`);
});

test("back-to-back run-php calls with different code each run their own code", async () => {
  const outputs: string[] = [];
  for (const word of ["alpha", "beta", "gamma", "delta"]) {
    for (const bootstrap of ["none", "wordpress"]) {
      const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php echo '${word}-${bootstrap}';`, `bootstrap=${bootstrap}`] });
      assert.equal(result.status, "ok", result.stderr);
      outputs.push(result.stdout);
    }
  }
  assert.deepEqual(outputs, ["alpha-none", "alpha-wordpress", "beta-none", "beta-wordpress", "gamma-none", "gamma-wordpress", "delta-none", "delta-wordpress"]);
});
