/**
 * `wp-codebox mcp --attach`: the MCP SDK's own client drives a `wp-codebox serve` sandbox started
 * in another process, under serve's policy; the sandbox outlives the MCP session (closed or
 * SIGTERMed); screenshots come back as image content, fetched one file at a time (serve's events
 * say what it sent); a wrong token is refused before the server starts.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { CLI_ENTRY } from "../../../test/support/cli-entry.ts";
import { startServe, type ServeAddress, type ServeProcess } from "../../../test/support/serve-process.ts";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-mcp-attach-"));
const sandboxTmp = join(scratch, "tmp");
const POLICY = { commands: ["wordpress.run-php", "wordpress.state-export", "wordpress.browser-actions"] };

let served: ServeProcess;
let address: ServeAddress;

before(async () => {
  mkdirSync(sandboxTmp);
  served = await startServe(["--ttl", "5m", "--policy", JSON.stringify(POLICY)], { env: { ...process.env, TMPDIR: sandboxTmp } });
  address = served.address;
});

after(async () => {
  await served?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

async function session(): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  let stderr = "";
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ENTRY, "mcp", "--attach", address.control, "--artifacts", join(scratch, "bundles")],
    cwd: REPO_ROOT,
    env: { ...(process.env as Record<string, string>), WP_CODEBOX_TOKEN: address.token },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "wp-codebox-attach-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
const sc = (r: CallToolResult) => r.structuredContent as Record<string, any>;

/** The JSON event lines serve (--json) wrote on stderr from character `from` on. */
function serveEvents(from = 0): { event: string; data?: Record<string, any> }[] {
  return served.stderr()
    .slice(from)
    .split("\n")
    .slice(0, -1) // a line still being written
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { event: string; data?: Record<string, any> });
}

/** Waits (polling) until `condition` holds; the test's own timeout bounds it. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
}

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

test("an MCP session drives the serve sandbox under serve's policy and collects a verifying bundle", async () => {
  const { client, stderr } = await session();
  const { tools } = await client.listTools();
  assert.doesNotMatch(tools.find((t) => t.name === "wordpress_run_php")!.description ?? "", /UNAVAILABLE/);
  assert.match(tools.find((t) => t.name === "wordpress_rest_request")!.description ?? "", /^UNAVAILABLE/);
  const seeded = await call(client, "wordpress_run_php", { code: "<?php update_option('mcp_attach_marker', 'kept'); echo home_url();" });
  assert.equal(seeded.isError, false, JSON.stringify(seeded.content));
  assert.equal(sc(seeded).stdout, address.url, "the tools run in the serve sandbox");
  const refused = await call(client, "wordpress_rest_request", { route: "/" });
  assert.equal(sc(refused).error.code, "policy-denied");
  const snap = await call(client, "snapshot");
  await call(client, "wordpress_run_php", { code: "<?php update_option('mcp_attach_marker', 'changed');" });
  const restored = await call(client, "restore", { snapshot: sc(snap).snapshot.id });
  assert.equal(restored.isError, undefined, JSON.stringify(restored.content));
  const collected = await call(client, "collect_artifacts", { directory: "attached" });
  assert.equal(sc(collected).bundle.valid, true);
  assert.equal(sc(collected).bundle.directory.split("/").slice(-3, -1)[0], "bundles");
  assert.deepEqual((await verifyArtifactBundle(sc(collected).bundle.directory)).violations, []);
  await client.close();
  assert.match(stderr(), /Attached to http:\/\/127\.0\.0\.1:\d+/);
  assert.match(stderr(), /Sandbox ready: .* \(\d+ ms, attached\)/);
  assert.doesNotMatch(stderr(), /Booting the sandbox|Disposing the sandbox/, "an attached sandbox is neither booted nor disposed by mcp");
});

test("the sandbox outlives the MCP session and is not reset by a new one; reset is a tool", async () => {
  const { client, stderr } = await session();
  const marker = await call(client, "wordpress_run_php", { code: "<?php echo get_option('mcp_attach_marker');" });
  assert.equal(sc(marker).stdout, "kept");
  await call(client, "reset");
  const after = await call(client, "wordpress_run_php", { code: "<?php var_export(get_option('mcp_attach_marker'));" });
  assert.equal(sc(after).stdout, "false");
  await client.close();
  assert.match(stderr(), /Detaching from the serve sandbox/);
  assert.equal(served.child.exitCode, null, "serve keeps running");
});

test("a session serve no longer knows (lease expired while the MCP server was suspended) is replaced on the next call: shared sandbox, state kept", async () => {
  const from = served.stderr().length;
  const { client, stderr } = await session();
  await call(client, "wordpress_run_php", { code: "<?php update_option('mcp_reattach_marker', 'kept');" });
  const opened = serveEvents(from).find((e) => e.event === "session-opened")!;
  // serve forgets the session as an expired lease would.
  const released = await fetch(`${address.control}/v1/sessions/${opened.data!.session}`, { method: "DELETE", headers: { authorization: `Bearer ${address.token}` } });
  assert.equal(released.status, 200);
  const after = await call(client, "wordpress_run_php", { code: "<?php echo get_option('mcp_reattach_marker');" });
  assert.equal(after.isError, false, JSON.stringify(after.content));
  assert.equal(sc(after).stdout, "kept");
  assert.match(stderr(), new RegExp(`Session ${opened.data!.session} was gone \\(Session ${opened.data!.session} is not open on this server.*\\); attached again as session-[0-9a-f-]+ on sandbox runtime-[0-9a-f-]+: serve's shared sandbox, its state is as the earlier session left it`));
  await client.close();
});

test("screenshots come back as image content, and only the files the result names leave serve", { timeout: 300_000 }, async () => {
  const { client } = await session();
  try {
    // Files the session already holds: a client that collected everything would send these too.
    const first = await call(client, "wordpress_browser_actions", { "steps-json": JSON.stringify([{ kind: "navigate", url: "/" }, { kind: "screenshot", name: "attach-before" }]) });
    assert.equal(first.isError, false, JSON.stringify(first.content));
    const from = served.stderr().length;
    // steps-json as JSON text: the schema's one type for JSON arguments.
    const steps = [{ kind: "navigate", url: "/wp-admin/" }, { kind: "expect", selector: "#wpadminbar", state: "visible" }, { kind: "screenshot", name: "attach-admin" }];
    const result = await call(client, "wordpress_browser_actions", { "steps-json": JSON.stringify(steps) });
    assert.equal(result.isError, false, JSON.stringify(result.content));
    const refs = sc(result).artifactRefs as { path: string; kind: string }[];
    const pngs = refs.filter((r) => r.path.endsWith(".png")).map((r) => r.path);
    assert.ok(pngs.includes("files/browser/screenshot-attach-admin.png"), JSON.stringify(refs));
    const images = result.content.filter((c) => c.type === "image") as { data: string; mimeType: string }[];
    assert.equal(images.length, pngs.length, "one image per screenshot the result names");
    for (const image of images) {
      assert.equal(image.mimeType, "image/png");
      assert.deepEqual([...Buffer.from(image.data, "base64").subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "PNG signature");
    }
    // serve says which artifact files it sent for this call: one read-artifact per screenshot, no collect.
    // serve writes an event before it answers, but its stderr may reach us after the tool result does.
    await until(() => serveEvents(from).filter((e) => e.event.startsWith("session-artifact")).length >= pngs.length);
    const sent = serveEvents(from).filter((e) => e.event.startsWith("session-artifact"));
    assert.deepEqual(sent.map((e) => e.event), pngs.map(() => "session-artifact-read"), "no session-artifacts-collected: the bundle was not fetched");
    assert.deepEqual(sent.map((e) => e.data!.path), pngs);
    assert.deepEqual(sent.map((e) => e.data!.bytes), images.map((i) => Buffer.from(i.data, "base64").byteLength));
    assert.ok(!sent.some((e) => e.data!.path === "files/browser/screenshot-attach-before.png"), "the earlier screenshot stays on serve");
  } finally {
    // A failed assertion must not leave the MCP server running (it would keep this process up).
    await client.close();
  }
});

test("SIGTERM ends an attached MCP session: it detaches, exits, and serve keeps the sandbox", async () => {
  const { client, transport, stderr } = await session();
  const up = await call(client, "wordpress_run_php", { code: "<?php echo 'up';" });
  assert.equal(sc(up).stdout, "up");
  const pid = transport.pid!;
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  process.kill(pid, "SIGTERM");
  await closed;
  await gone(pid);
  assert.match(stderr(), /Shutting down \(SIGTERM\)/);
  assert.match(stderr(), /Detaching from the serve sandbox/);
  assert.equal(served.child.exitCode, null, "serve keeps running");
  // The lease went back: a new session gets the sandbox.
  const next = await session();
  assert.equal(sc(await call(next.client, "wordpress_run_php", { code: "<?php echo 'again';" })).stdout, "again");
  await next.client.close();
  await client.close().catch(() => undefined);
});

test("a wrong token is refused before the MCP server starts", async () => {
  const child = spawn(process.execPath, [...CLI_ENTRY, "mcp", "--attach", address.control, "--token", "wrong"], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  let stdout = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(code, 2, stderr);
  assert.match(stderr, /error\[attach-unauthorized\]/);
  assert.equal(stdout, "", "nothing on the protocol stream");
});

test("runtime flags beside --attach are refused", async () => {
  const child = spawn(process.execPath, [...CLI_ENTRY, "mcp", "--attach", address.control, "--token", address.token, "--php", "8.2"], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(code, 2);
  assert.match(stderr, /error\[invalid-argument\].*--php/);
});

test("serve disposes its sandbox on SIGTERM after the MCP sessions", async () => {
  await served.stop();
  assert.deepEqual(readdirSync(sandboxTmp).filter((n) => n.startsWith("wp-codebox-")), []);
});
