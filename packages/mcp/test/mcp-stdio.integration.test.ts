/**
 * A scripted agent session through the MCP SDK's own Client over stdio, against the real CLI
 * (`wp-codebox mcp`): list tools, seed content, drive the sortable-board plugin in Chromium,
 * snapshot/restore, reset, a refused tool, collect a bundle that verifies, clean shutdown.
 * One server for the whole file (SIGTERM is tested in mcp-attach, where it costs no boot).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { COMMAND_DEFINITIONS, verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { commandInputSchema } from "../src/index.js";
import { CLI_ENTRY } from "../../../test/support/cli-entry.ts";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PLUGIN = join(REPO_ROOT, "test/fixtures/plugins/sortable-board");
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-mcp-test-"));
// The server's own temporary directory, so the test can see that it leaves nothing behind.
const serverTmp = join(scratch, "tmp");
const POLICY = { commands: ["wordpress.run-php", "wordpress.browser-actions", "wordpress.state-export", "inspect-mounted-inputs"] };

let client: Client;
let transport: StdioClientTransport;
let stderr = "";
let exited: Promise<void>;

async function call(name: string, args: Record<string, unknown> = {}, onprogress?: (p: Progress) => void): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 180_000,
    ...(onprogress ? { onprogress, resetTimeoutOnProgress: true } : {}),
  })) as CallToolResult;
}
const structured = (r: CallToolResult) => r.structuredContent as Record<string, any>;
const text = (r: CallToolResult) => r.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text).join("\n");
const php = async (code: string) => call("wordpress_run_php", { code: `<?php ${code}` });

before(async () => {
  mkdirSync(serverTmp);
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ENTRY, "mcp", "--plugin", PLUGIN, "--policy", JSON.stringify(POLICY), "--artifacts", join(scratch, "bundles")],
    cwd: REPO_ROOT,
    env: { ...(process.env as Record<string, string>), TMPDIR: serverTmp },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: "wp-codebox-test-agent", version: "1.0.0" });
  await client.connect(transport);
  exited = gone(transport.pid!);
});

/** Resolves once process `pid` no longer exists. */
function gone(pid: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(timer);
        resolve();
      }
    }, 100);
  });
}

after(async () => {
  await client?.close().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

test("tools/list: one tool per runnable catalog command with the catalog's schema, the episode tools, unavailable ones marked", async () => {
  const { tools } = await client.listTools();
  for (const def of COMMAND_DEFINITIONS.filter((d) => d.runnable)) {
    const tool = tools.find((t) => t.name === def.id.replace(/[.-]/g, "_"));
    assert.ok(tool, `tool for ${def.id}`);
    assert.deepEqual(tool.inputSchema, JSON.parse(JSON.stringify(commandInputSchema(def))), def.id);
    assert.equal(/UNAVAILABLE/.test(tool.description ?? ""), !POLICY.commands.includes(def.capability), `${def.id} availability`);
  }
  for (const name of ["reset", "observe", "snapshot", "restore", "collect_artifacts"]) assert.ok(tools.some((t) => t.name === name), name);
  assert.equal(client.getServerVersion()?.name, "wp-codebox");
});

test("seed content with wordpress_run_php", async () => {
  const result = await php("foreach (['Alpha', 'Beta'] as $t) { wp_insert_post(['post_title' => $t, 'post_status' => 'publish']); } echo count(get_posts(['numberposts' => -1]));");
  assert.equal(result.isError, false, text(result));
  assert.equal(structured(result).status, "ok");
  assert.equal(structured(result).stdout, "3"); // Hello world! + the two seeded posts
  assert.match(structured(result).step, /^step-\d{4}$/);
  assert.match(text(result), /wordpress\.run-php: ok/);
});

test("drive the sortable board in the browser: screenshot as image content, progress notifications", async () => {
  const steps = [
    { kind: "navigate", url: "/wp-admin/tools.php?page=sortable-board" },
    { kind: "expect", selector: "#board .board-item", state: "visible", count: 3 },
    { kind: "drag", from: "#board .board-item[data-id='gamma']", to: "#board .board-item[data-id='alpha']" },
    { kind: "fill", selector: "#caption", value: "Sprint 42" },
    { kind: "select", selector: "#color", value: "blue" },
    { kind: "click", selector: "role=button[name='Save board']" },
    { kind: "expect", selector: "#board-saved", state: "visible" },
    { kind: "screenshot", name: "board-saved" },
  ];
  const progress: Progress[] = [];
  const result = await call("wordpress_browser_actions", { "steps-json": steps }, (p) => progress.push(p));
  assert.equal(result.isError, false, text(result));
  const json = structured(result).json as { steps: { status: string }[]; assertions: { failed: number } };
  assert.ok(json.steps.every((s) => s.status === "ok"));
  assert.equal(json.assertions.failed, 0);
  const image = result.content.find((c) => c.type === "image") as { data: string; mimeType: string } | undefined;
  assert.ok(image, "screenshot returned as image content");
  assert.equal(image.mimeType, "image/png");
  assert.equal(Buffer.from(image.data, "base64").subarray(1, 4).toString(), "PNG");
  assert.ok(structured(result).artifactRefs.some((r: { path: string }) => r.path === "files/browser/screenshot-board-saved.png"));
  assert.ok(progress.length >= 1, "progress notifications arrive");
  assert.match(progress[0]!.message ?? "", /wordpress_browser_actions: started/);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, "progress increases");
  const stored = await php("echo get_option('corpus_sortable_board')['order'];");
  assert.match(structured(stored).stdout, /^gamma,/);
});

let snapshotId = "";
test("snapshot, change, restore: the state returns to the snapshot", async () => {
  const snap = await call("snapshot");
  assert.equal(snap.isError, undefined);
  snapshotId = structured(snap).snapshot.id;
  assert.match(snapshotId, /^snapshot-\d{4}-[0-9a-f]{16}$/);
  await php("update_option('blogname', 'Changed after snapshot');");
  const restored = await call("restore", { snapshot: snapshotId });
  assert.equal(restored.isError, undefined, text(restored));
  const name = await php("echo get_bloginfo('name'); echo '|'; echo get_option('corpus_sortable_board')['caption'];");
  assert.notEqual(structured(name).stdout.split("|")[0], "Changed after snapshot");
  assert.equal(structured(name).stdout.split("|")[1], "Sprint 42");
});

test("observe returns the observation data", async () => {
  const observed = await call("observe", { type: "mounts" });
  assert.equal(observed.isError, undefined, text(observed));
  assert.ok(JSON.stringify(structured(observed).data).includes("sortable-board"));
});

test("a tool the policy does not grant is refused with policy-denied, and so is a capability inside a granted one", async () => {
  const refused = await call("wordpress_rest_request", { route: "/wp/v2/posts" });
  assert.equal(refused.isError, true);
  assert.equal(structured(refused).error.code, "policy-denied");
  assert.match(text(refused), /error\[policy-denied\]/);
  // Page JavaScript is a capability of its own, refused exactly as `run` refuses it.
  const evaluate = await call("wordpress_browser_actions", { "steps-json": [{ kind: "navigate", url: "/" }, { kind: "evaluate", expression: "1 + 1" }] });
  assert.equal(evaluate.isError, true);
  assert.equal(structured(evaluate).error.code, "policy-denied");
  assert.equal(structured(evaluate).error.data.capability, "wordpress.browser-actions.evaluate");
});

test("arguments the tool schema refuses: invalid-argument, the tool named once, nothing run", async () => {
  const wrongType = await call("wordpress_run_php", { code: 5 });
  assert.equal(wrongType.isError, true);
  assert.equal(structured(wrongType).error.code, "invalid-argument");
  assert.equal(text(wrongType), 'error[invalid-argument]: wordpress_run_php: argument "code" must be a string (got 5).');
  const unknown = await call("wordpress_run_php", { code: "<?php echo 1;", bogus: true });
  assert.equal(structured(unknown).error.code, "invalid-argument");
  assert.equal(structured(unknown).error.data.argument, "bogus");
  assert.equal(text(unknown), 'error[invalid-argument]: wordpress_run_php: unknown argument "bogus". Valid keys: code, code-file, bootstrap, as, background-errors.');
  // What the catalog refuses is refused the same way, before anything runs: no step is used up.
  const missing = await call("wordpress_run_php", {});
  assert.equal(structured(missing).error.code, "missing-argument");
  assert.match(text(missing), /^error\[missing-argument\]: wordpress_run_php: give exactly one of "code" or "code-file"/);
  assert.equal(structured(missing).step, undefined);
  const badEnum = await call("wordpress_run_php", { code: "<?php echo 1;", bootstrap: "foo" });
  assert.match(text(badEnum), /^error\[invalid-argument\]: wordpress_run_php: argument "bootstrap" has invalid value "foo"/);
  const badScript = await call("wordpress_browser_actions", { steps: [{ kind: "click" }] });
  assert.equal(structured(badScript).error.code, "invalid-steps-json");
  const nulls = await call("wordpress_run_php", { code: null });
  assert.equal(structured(nulls).error.code, "missing-argument");
});

test("a cancelled call stops its command in the sandbox; the next call does not wait for it", async () => {
  const controller = new AbortController();
  let running!: () => void;
  const isRunning = new Promise<void>((resolve) => (running = resolve));
  // Runs 20 s of wall time unless stopped; "finished" is only written if nothing stops it.
  const code = "<?php update_option('cancel_probe', 'started'); $end = microtime(true) + 20; while (microtime(true) < $end) { usleep(10000); } update_option('cancel_probe', 'finished');";
  const slow = client.callTool({ name: "wordpress_run_php", arguments: { code } }, undefined, {
    timeout: 180_000,
    signal: controller.signal,
    onprogress: (p) => {
      if (/running/.test(p.message ?? "")) running();
    },
  });
  await isRunning;
  controller.abort();
  await assert.rejects(slow);
  const probe = await php("var_export(get_option('cancel_probe'));");
  assert.equal(probe.isError, false, text(probe));
  assert.notEqual(structured(probe).stdout, "'finished'", "the cancelled command was stopped");
});

test("reset returns to the freshly booted site", async () => {
  const reset = await call("reset");
  assert.equal(reset.isError, undefined, text(reset));
  assert.match(structured(reset).reset.id, /^reset-\d{4}$/);
  const after = await php("echo count(get_posts(['numberposts' => -1])), '|', var_export(get_option('corpus_sortable_board'), true);");
  assert.equal(structured(after).stdout, "1|false");
});

test("collect_artifacts writes a bundle that verifies, with the trace and the screenshot", async () => {
  const collected = await call("collect_artifacts", { directory: "session-1" });
  assert.equal(collected.isError, false, text(collected));
  const bundle = structured(collected).bundle as { directory: string; valid: boolean };
  // Inside this server session's own folder under the --artifacts base.
  const [sessionFolder] = readdirSync(join(scratch, "bundles"));
  assert.match(sessionFolder!, /^mcp-\d{8}-\d{6}-[0-9a-f]{6}$/);
  assert.equal(bundle.directory, join(scratch, "bundles", sessionFolder!, "session-1"));
  assert.equal(bundle.valid, true);
  assert.deepEqual((await verifyArtifactBundle(bundle.directory)).violations, []);
  const files = readdirSync(join(bundle.directory, "files"), { recursive: true }).map(String);
  assert.ok(files.includes(join("browser", "screenshot-board-saved.png")), files.join(", "));
  const commands = readFileSync(join(bundle.directory, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.ok(commands.some((c) => c.command === "wordpress.browser-actions" && c.status === "ok"));
  assert.ok(files.some((f) => f.includes("trace")), "the episode trace is in the bundle");
  const again = await call("collect_artifacts", { directory: "session-1" });
  assert.equal(again.isError, true);
  assert.equal(structured(again).error.code, "artifacts-dir-not-empty");
});

test("closing stdin disposes the sandbox, and a SIGTERM during the disposal does not cut it short: the server exits and leaves no sandbox directory", async () => {
  const pid = transport.pid!;
  const closing = client.close();
  // A signal that arrives while the sandbox is being disposed must not kill the process before
  // its folder is removed (the SDK's client itself sends SIGTERM when the exit takes over 2 s).
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (!/Disposing the sandbox/.test(stderr)) return;
      clearInterval(timer);
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // Already gone: the disposal finished first.
      }
      resolve();
    }, 5);
  });
  await closing;
  await exited;
  assert.match(stderr, /Shutting down \(stdin-closed\)/);
  assert.match(stderr, /Disposing the sandbox/);
  assert.deepEqual(readdirSync(serverTmp).filter((n) => n.startsWith("wp-codebox-")), [], "no sandbox directory left");
});
