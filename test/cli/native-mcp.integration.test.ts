/**
 * `wp-codebox mcp --backend native` through the MCP SDK's Client over stdio, on real parts
 * (Debian's PHP, a private MariaDB, bubblewrap): every catalog tool is available (the shared
 * handlers run on native too) and the state export runs; run-php runs on MariaDB; snapshot and restore (a MariaDB dump) bring a
 * value back. Skipped, naming the packages, when the Debian packages are missing.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { CLI_ENTRY } from "../support/cli-entry.ts";
import { REPO_ROOT } from "./spawn-cli.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

describe("wp-codebox mcp --backend native", { skip, timeout: 300_000 }, () => {
  const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-native-mcp-"));
  let client: Client;
  let stderr = "";
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 })) as CallToolResult;
  const structured = (r: CallToolResult) => r.structuredContent as Record<string, any>;
  const text = (r: CallToolResult) => r.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text).join("\n");

  before(async () => {
    const env = { ...(process.env as Record<string, string>) };
    delete env.WP_CODEBOX_CACHE_DIR;
    const transport = new StdioClientTransport({ command: process.execPath, args: [...CLI_ENTRY, "mcp", "--backend", "native", "--artifacts", join(scratch, "bundles")], cwd: REPO_ROOT, env, stderr: "pipe" });
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: "wp-codebox-native-test", version: "1.0.0" });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lists run-php, http-request and state-export as available, and runs the state export", async () => {
    const { tools } = await client.listTools();
    for (const name of ["wordpress_run_php", "wordpress_http_request", "wordpress_state_export"]) {
      assert.doesNotMatch(tools.find((t) => t.name === name)?.description ?? "(missing)", /UNAVAILABLE|missing/, name);
    }
    const exported = await call("wordpress_state_export", {});
    assert.notEqual(exported.isError, true, `${text(exported)}\n${stderr.slice(-2000)}`);
    assert.equal(structured(exported).json.schema, "wp-codebox/wordpress-state-export/v1");
  });

  it("runs PHP on MariaDB, and restore brings back what a snapshot held", async () => {
    const version = await call("wordpress_run_php", { code: "<?php update_option('wp_codebox_mcp', 'before'); echo $GLOBALS['wpdb']->get_var('SELECT VERSION()');" });
    assert.notEqual(version.isError, true, `${text(version)}\n${stderr.slice(-2000)}`);
    assert.match(structured(version).stdout, /MariaDB/);
    const snap = await call("snapshot");
    assert.notEqual(snap.isError, true, text(snap));
    const id = structured(snap).snapshot.id as string;
    await call("wordpress_run_php", { code: "<?php update_option('wp_codebox_mcp', 'after');" });
    const restored = await call("restore", { snapshot: id });
    assert.notEqual(restored.isError, true, text(restored));
    const read = await call("wordpress_run_php", { code: "<?php echo get_option('wp_codebox_mcp');" });
    assert.equal(structured(read).stdout, "before");
  });
});
