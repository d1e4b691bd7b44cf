/**
 * `wp-codebox batch` with one task on each backend, on real parts: the task whose line says
 * `runtime.backend: "native"` runs its run-php recipe on MariaDB, the other on Playground's SQLite.
 * Skipped, naming the packages, when the native backend's Debian packages are missing.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionResult } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { runCli, type CliIo } from "../../packages/cli/src/cli.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

describe("batch tasks on both backends", { skip, timeout: 300_000 }, () => {
  const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-native-batch-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("runtime.backend on a task line picks the backend that task runs on", async () => {
    writeFileSync(join(scratch, "recipe.json"), JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      steps: [{ name: "engine", command: "wordpress.run-php", args: { code: "<?php echo $GLOBALS['wpdb']->db_server_info() ?: get_class($GLOBALS['wpdb']);" } }],
    }));
    writeFileSync(join(scratch, "tasks.jsonl"), [
      JSON.stringify({ id: "on-native", recipe: "recipe.json", runtime: { backend: "native" } }),
      JSON.stringify({ id: "on-playground", recipe: "recipe.json" }),
    ].join("\n"));
    let stderr = "";
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void (stderr += t), env: process.env, cwd: scratch };
    const code = await runCli(["batch", "tasks.jsonl", "--artifacts", "out", "--isolation", "in-process", "--concurrency", "1"], { io, installSignalHandlers: () => () => undefined });
    assert.equal(code, 0, stderr.slice(-3000));
    const engine = (id: string) => (JSON.parse(readFileSync(join(scratch, "out", id, "files", "commands.jsonl"), "utf8").split("\n")[0]!) as ExecutionResult).stdout;
    const backend = (id: string) => (JSON.parse(readFileSync(join(scratch, "out", id, "metadata.json"), "utf8")) as { runtime: { backend: string } }).runtime.backend;
    assert.match(engine("on-native"), /MariaDB/);
    assert.equal(backend("on-native"), "native");
    assert.doesNotMatch(engine("on-playground"), /MariaDB/);
    assert.equal(backend("on-playground"), "playground");
  });
});
