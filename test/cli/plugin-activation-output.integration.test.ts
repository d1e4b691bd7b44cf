/**
 * A `--plugin` input that prints while it is activated: WordPress activates it (activate_plugin()
 * saves it, then answers `unexpected_output`, which its Plugins screen shows as a warning), so a
 * sandbox boots with it active on every backend, says so, and records what it printed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLUGIN_ACTIVATION_OUTPUT_EVENT } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { createBackend } from "../../packages/cli/src/commands/backends.js";

const native = nativeToolsStatus();
const nativeSkip = native.ok ? false : `the native backend's Debian packages are missing (${native.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

const PRINTED = "Hello from the activation hook\n";

for (const backend of ["playground", "native"] as const) {
  test(`${backend}: a plugin that prints while it is activated boots active, and the bundle records what it printed`, { timeout: 600_000, skip: backend === "native" ? nativeSkip : false }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "wp-codebox-activation-output-"));
    try {
      const plugin = join(dir, "printer-plugin");
      mkdirSync(plugin);
      writeFileSync(join(plugin, "printer-plugin.php"), `<?php\n/**\n * Plugin Name: Printer\n */\nregister_activation_hook(__FILE__, function () { echo ${JSON.stringify(PRINTED)}; });\n`);
      const progress: string[] = [];
      const runtime = await createBackend(backend, { cwd: process.cwd() }).create({ plugins: [plugin], onProgress: (message) => progress.push(message) });
      try {
        const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php require_once ABSPATH . 'wp-admin/includes/plugin.php'; echo is_plugin_active('printer-plugin/printer-plugin.php') ? 'active' : 'inactive';"] });
        assert.equal(result.stdout, "active", result.stderr);
        const events = (await runtime.collectArtifacts()).events.filter((e) => e.type === PLUGIN_ACTIVATION_OUTPUT_EVENT);
        assert.deepEqual(
          events.map((e) => e.data),
          [{ plugin: "printer-plugin", output: PRINTED, outputBytes: Buffer.byteLength(PRINTED) }],
        );
        assert.ok(progress.some((line) => line.includes("printer-plugin") && line.includes(`${Buffer.byteLength(PRINTED)} characters of unexpected output`)), progress.join("\n"));
        // Progress goes to stderr unredacted: it never quotes what the plugin printed.
        assert.ok(!progress.some((line) => line.includes("Hello from the activation hook")), progress.join("\n"));
      } finally {
        await runtime.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
