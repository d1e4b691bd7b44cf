/**
 * The Abilities API through wordpress.ability and the MCP server, with the SDK's own Client:
 * on WordPress 7.0.4 (the loopback release mirror) one MCP session over one sandbox lists core's
 * and a mounted plugin's abilities as tools and calls them, runs wordpress.ability (a WP_Error, an
 * unknown name), and checks every tool's outputSchema, annotations and the session's resources;
 * on the bundled 6.5 (no Abilities API) a second session has no ability tools and the command
 * says which WordPress it needs. Without WP_CODEBOX_TEST_SHARED the 7.0.4 part skips.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { createPlaygroundBackend, defaultPolicy } from "@wp-codebox/runtime-playground";
import { verifyArtifactBundle, type RuntimeCreateSpec } from "@wp-codebox/runtime-core";
import { createMcpSandbox, createWpCodeboxMcpServer, type McpSandbox } from "../src/index.js";
import { WORDPRESS_MIRROR_SKIP, serveWordPressMirror, sharedWordPressReleasesDir, type WordPressMirror } from "../../../test/support/wordpress-mirror.js";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PROBE_PLUGIN = join(REPO_ROOT, "test/fixtures/plugins/ability-probe");
const skip = sharedWordPressReleasesDir() ? false : WORDPRESS_MIRROR_SKIP;
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-mcp-abilities-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** One MCP session (server and SDK client, in process) over a sandbox booted from `createSpec`. */
async function session(backend: ReturnType<typeof createPlaygroundBackend>, createSpec: RuntimeCreateSpec, name: string) {
  const sandbox: McpSandbox = createMcpSandbox({ backend, createSpec, artifactsDir: join(scratch, name) });
  // As `wp-codebox mcp` does: the policy is known before boot, so listing tools does not boot.
  const server = createWpCodeboxMcpServer({ sandbox, policy: defaultPolicy() });
  const client = new Client({ name: "wp-codebox-abilities-test", version: "1.0.0" });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (listChanged += 1));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  const call = async (tool: string, args: Record<string, unknown> = {}) => (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 180_000 })) as CallToolResult;
  return {
    sandbox,
    client,
    call,
    listChanged: () => listChanged,
    close: async () => {
      await client.close().catch(() => undefined);
      await sandbox.close();
    },
  };
}
const sc = (r: CallToolResult) => r.structuredContent as Record<string, any>;

describe("WordPress 7.0.4: abilities as a command and as MCP tools (one sandbox)", { skip, timeout: 300_000 }, () => {
  let mirror: WordPressMirror;
  let s: Awaited<ReturnType<typeof session>>;
  let tools: Tool[];

  before(async () => {
    mirror = await serveWordPressMirror();
    s = await session(createPlaygroundBackend({ wordpressMirror: mirror.url }), { wordpress: { version: "7.0.4" }, plugins: [PROBE_PLUGIN] }, "wp7");
    const before = (await s.client.listTools()).tools;
    assert.ok(!before.some((t) => t.name.includes("__")), "no ability tools before the sandbox is up");
    await s.sandbox.start();
    tools = (await s.client.listTools()).tools;
  });
  after(async () => {
    await s?.close();
    await mirror?.close();
  });

  it("wordpress.ability name=core/get-site-info returns the site's version as result.json", async () => {
    const result = await s.call("wordpress_ability", { name: "core/get-site-info" });
    assert.equal(result.isError, false, JSON.stringify(sc(result)));
    assert.equal(sc(result).command, "wordpress.ability");
    assert.equal(sc(result).json.version, "7.0.4");
    assert.deepEqual(JSON.parse(sc(result).stdout), sc(result).json);
    const some = await s.call("wordpress_ability", { name: "core/get-site-info", "input-json": '{"fields":["version","charset"]}' });
    assert.deepEqual(sc(some).json, { version: "7.0.4", charset: "UTF-8" });
  });

  it("a WP_Error is status error with its code and message; an unknown name lists the registered names; a malformed one is refused before it runs", async () => {
    const refused = await s.call("wordpress_ability", { name: "ability-probe/refuse" });
    assert.equal(refused.isError, true);
    assert.equal(sc(refused).status, "error");
    assert.equal(sc(refused).error.code, "ability-failed");
    assert.equal(sc(refused).error.data.code, "probe_refused");
    assert.match(sc(refused).error.message, /\[probe_refused\]: The probe refuses every request\./);
    // WordPress checks the input against the ability's schema: its refusal is a WP_Error too.
    const badInput = await s.call("wordpress_ability", { name: "core/get-site-info", "input-json": '{"fields":["no-such-field"]}' });
    assert.equal(sc(badInput).error.code, "ability-failed");
    assert.equal(sc(badInput).error.data.code, "ability_invalid_input");
    const unknown = await s.call("wordpress_ability", { name: "ability-probe/missing" });
    assert.equal(sc(unknown).error.code, "ability-not-found");
    assert.ok(sc(unknown).error.data.registered.includes("core/get-site-info"));
    assert.ok(sc(unknown).error.data.registered.includes("ability-probe/shout"));
    assert.match(sc(unknown).error.message, /core\/get-site-info/);
    // The site did register the 200-character name (so its absence from the tools is the cut, not WordPress).
    assert.ok(sc(unknown).error.data.registered.some((n: string) => n.startsWith("ability-probe/lll")));
    assert.equal(sc(unknown).error.data.registeredCount, sc(unknown).error.data.registered.length);
    const malformed = await s.call("wordpress_ability", { name: "Not An Ability" });
    assert.equal(sc(malformed).error.code, "invalid-argument");
    assert.equal(sc(malformed).step, undefined, "refused before it became a step");
  });

  it("the site's abilities (core's and the plugin's) are tools named after them, with their own input schema and hints, and callable", async () => {
    assert.ok(s.listChanged() >= 1, "notifications/tools/list_changed once the sandbox is up");
    const info = tools.find((t) => t.name === "core__get-site-info");
    assert.ok(info, `tools: ${tools.map((t) => t.name).join(", ")}`);
    assert.equal(info.title, "Get Site Information");
    assert.deepEqual(Object.keys(info.inputSchema.properties ?? {}), ["fields"]);
    assert.equal((info.inputSchema as Record<string, unknown>).additionalProperties, false);
    assert.deepEqual(info.annotations, { title: "Get Site Information", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const called = await s.call("core__get-site-info", { fields: ["version"] });
    assert.equal(called.isError, false, JSON.stringify(sc(called)));
    assert.deepEqual(sc(called).json, { version: "7.0.4" });
    assert.deepEqual(sc(called).args, ["name=core/get-site-info", 'input-json={"fields":["version"]}']);
    const all = await s.call("core__get-site-info");
    assert.equal(sc(all).json.version, "7.0.4");
    // A string input is wrapped as { input }.
    const shout = tools.find((t) => t.name === "ability-probe__shout")!;
    assert.deepEqual(shout.inputSchema, { type: "object", properties: { input: { type: "string", minLength: 1, description: "Text to shout." } }, required: ["input"], additionalProperties: false });
    assert.equal(sc(await s.call("ability-probe__shout", { input: "quiet" })).json, "QUIET");
    // What the site registers is cut to size: a 200-character name is no tool, a long description is cut.
    assert.ok(tools.every((t) => t.name.length <= 128), tools.map((t) => t.name.length).join(","));
    assert.ok(!tools.some((t) => t.name.startsWith("ability-probe__lll")));
    const verbose = tools.find((t) => t.name === "ability-probe__verbose")!;
    assert.ok(verbose.description!.length < 2300, String(verbose.description!.length));
    assert.match(verbose.description!, /^Very long description\. .*…/s);
    const refuse = tools.find((t) => t.name === "ability-probe__refuse")!;
    assert.equal(refuse.annotations?.destructiveHint, true);
    const refused = await s.call("ability-probe__refuse");
    assert.equal(refused.isError, true);
    assert.equal(sc(refused).error.data.code, "probe_refused");
    // A policy without wordpress.ability lists them as unavailable.
    const narrow = createWpCodeboxMcpServer({ sandbox: s.sandbox, policy: { commands: ["wordpress.run-php"] } as never });
    const narrowClient = new Client({ name: "narrow", version: "1.0.0" });
    const [c, v] = InMemoryTransport.createLinkedPair();
    await narrow.connect(v);
    await narrowClient.connect(c);
    const narrowInfo = (await narrowClient.listTools()).tools.find((t) => t.name === "core__get-site-info")!;
    assert.match(narrowInfo.description ?? "", /^UNAVAILABLE/);
    await narrowClient.close();
  });

  it("every tool declares an outputSchema its structuredContent matches (the SDK client checks it) and openWorldHint false; read-only and destructive hints where they belong", async () => {
    for (const tool of tools) {
      assert.equal(tool.outputSchema?.type, "object", `${tool.name} outputSchema`);
      assert.equal(tool.annotations?.openWorldHint, false, `${tool.name} openWorldHint`);
    }
    const hint = (name: string) => tools.find((t) => t.name === name)!.annotations!;
    for (const name of ["wordpress_state_export", "inspect_mounted_inputs", "observe"]) assert.equal(hint(name).readOnlyHint, true, name);
    for (const name of ["reset", "restore"]) assert.equal(hint(name).destructiveHint, true, name);
    assert.equal(hint("wordpress_run_php").readOnlyHint, false);
    // Each result below passed the client's outputSchema check (callTool throws otherwise), errors included.
    assert.equal(sc(await s.call("wordpress_run_php", { code: "<?php echo 1;" })).stdout, "1");
    assert.equal(sc(await s.call("observe", { type: "abilities" })).data.available, true);
    const snapshot = sc(await s.call("snapshot")).snapshot;
    assert.equal(sc(await s.call("restore", { snapshot: snapshot.id })).snapshot.id, snapshot.id);
    assert.equal(sc(await s.call("restore", {})).error.code, "missing-argument");
    assert.ok(sc(await s.call("reset")).reset.id);
  });

  it("the site URL, the login link and the session's bundle files are resources", async () => {
    const site = (await s.client.readResource({ uri: "wp-codebox://site/url" })).contents[0] as { text: string };
    assert.equal(site.text, (await s.sandbox.info()).siteUrl);
    const login = (await s.client.readResource({ uri: "wp-codebox://site/login" })).contents[0] as { text: string };
    assert.ok(login.text.startsWith(site.text), login.text);
    await s.call("core__get-site-info", { fields: ["name"] });
    const bundle = sc(await s.call("collect_artifacts", { directory: "final" })).bundle;
    assert.deepEqual((await verifyArtifactBundle(bundle.directory)).violations, []);
    const { resources } = await s.client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const uri of ["wp-codebox://site/url", "wp-codebox://site/login", "wp-codebox://bundles/final/manifest.json", "wp-codebox://bundles/final/files/commands.jsonl"]) assert.ok(uris.includes(uri), `${uri} in ${uris.join(", ")}`);
    const commands = (await s.client.readResource({ uri: "wp-codebox://bundles/final/files/commands.jsonl" })).contents[0] as { text: string; mimeType: string };
    assert.match(commands.text, /"command":"wordpress\.ability"/);
    await assert.rejects(s.client.readResource({ uri: "wp-codebox://bundles/final/../../etc/passwd" }), /artifact-not-found|No resource/);
  });
});

describe("WordPress without the Abilities API (the bundled 6.5): no ability tools, a clear code", { timeout: 300_000 }, () => {
  let s: Awaited<ReturnType<typeof session>>;
  before(async () => {
    s = await session(createPlaygroundBackend(), { wordpress: { version: "6.5" }, plugins: [PROBE_PLUGIN] }, "wp65");
    await s.sandbox.start();
  });
  after(async () => s?.close());

  it("lists no ability tools, and wordpress.ability says the API needs WordPress 6.9+", async () => {
    const { tools } = await s.client.listTools();
    assert.ok(tools.some((t) => t.name === "wordpress_ability"));
    assert.deepEqual(tools.filter((t) => t.name.includes("__")).map((t) => t.name), []);
    const result = await s.call("wordpress_ability", { name: "core/get-site-info" });
    assert.equal(result.isError, true);
    assert.equal(sc(result).error.code, "abilities-unavailable");
    assert.match(sc(result).error.message, /needs WordPress 6\.9 or newer; this sandbox runs WordPress 6\.5\.\d+.*--wp 6\.9/);
    assert.equal(sc(await s.call("observe", { type: "abilities" })).data.available, false);
    assert.equal(sc(await s.call("wordpress_run_php", { code: "<?php echo 'still fine';" })).stdout, "still fine");
  });
});
