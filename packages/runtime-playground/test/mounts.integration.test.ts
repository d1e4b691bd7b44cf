/**
 * Corpus 5: mount escapes are refused before boot, each with its own code; nothing boots. And a
 * read-write mount of the whole /workspace boots, with PHP reading and writing the host folder.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { scratchDir } from "../../../test/support/scratch-dir.js";

const dir = scratchDir("wp-codebox-mounts-");
const plugin = join(dir, "plugin");
mkdirSync(plugin);
writeFileSync(join(plugin, "plugin.php"), "<?php\n");
const leaky = join(dir, "leaky");
mkdirSync(leaky);
symlinkSync("/etc", join(leaky, "outside"));

const cases: [string, { source: string; target: string }, string][] = [
  ["target with ..", { source: plugin, target: "/wordpress/wp-content/plugins/../../wp-config.php" }, "mount-escape"],
  ["target outside the sandbox roots", { source: plugin, target: "/etc/plugin" }, "mount-target-outside-sandbox"],
  ["missing source", { source: join(dir, "nope"), target: "/wordpress/wp-content/plugins/nope" }, "mount-source-missing"],
  ["symlink leaving the mount", { source: leaky, target: "/workspace/leaky" }, "mount-symlink-escape"],
];

for (const [name, mount, code] of cases) {
  test(`${name} → ${code}, refused before boot`, async () => {
    const progress: string[] = [];
    await assert.rejects(
      createPlaygroundBackend().create({ mounts: [{ ...mount, mode: "readonly" }], onProgress: (message) => progress.push(message) }),
      (error: unknown) => error instanceof WpCodeboxError && error.code === code,
    );
    assert.deepEqual(progress, [], "no WordPress boot started");
  });
}

test("an unavailable WordPress version lists the available ones", async () => {
  // Offline: 4.0 is not bundled and must not be fetched from the release mirror.
  await assert.rejects(createPlaygroundBackend({ offline: true }).create({ wordpress: { version: "4.0" } }), (error: unknown) => {
    assert.ok(error instanceof WpCodeboxError);
    assert.equal(error.code, "wordpress-version-unavailable");
    assert.match(error.message, /6\.5/);
    return true;
  });
});

for (const target of ["/workspace", "/workspace/"]) {
  test(`a read-write mount at ${target} replaces the sandbox's workspace: PHP reads and writes the host folder`, { timeout: 120_000 }, async () => {
    const host = scratchDir("wp-codebox-workspace-rw-");
    writeFileSync(join(host, "in.txt"), "from the host");
    const runtime = await createPlaygroundBackend().create({ mounts: [{ source: host, target, mode: "readwrite" }] });
    try {
      const result = await runtime.execute({
        command: "wordpress.run-php",
        args: ['code=<?php echo file_get_contents("/workspace/in.txt"); file_put_contents("/workspace/out.txt", "from PHP");'],
      });
      assert.equal(result.status, "ok", JSON.stringify(result.error));
      assert.equal(result.stdout, "from the host");
      assert.equal(readFileSync(join(host, "out.txt"), "utf8"), "from PHP");
    } finally {
      await runtime.dispose();
    }
  });
}
