/**
 * Where `collect_artifacts` writes, over the fake in-memory backend (no WordPress): each MCP server
 * session has a fresh folder of its own under the `--artifacts` base, so a fixed base works across
 * restarts without overwriting a bundle; a `directory` input never leaves that folder.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { verifyArtifactBundle, type ExecutionResult, type RuntimeBackend, type RuntimeInfo, type WpCodeboxError } from "@wp-codebox/runtime-core";
import { bundleDirectoryFor, createMcpSandbox } from "../src/index.js";
import { CLI_ENTRY } from "../../../test/support/cli-entry.ts";

/** A sandbox that echoes its args: enough for episodes and bundles, no WordPress. */
function echoBackend(): RuntimeBackend {
  return {
    kind: "fake",
    async create() {
      const info: RuntimeInfo = { id: "runtime-fake", backend: "fake", wordpressVersion: "0", phpVersion: "0", siteUrl: "http://127.0.0.1:1", bootMode: "cached", bootDurationMs: 1, mounts: [], policy: { commands: ["echo"], network: "deny", filesystem: "readonly-mounts", secrets: "none" }, plugins: [], themes: [] };
      let results: ExecutionResult[] = [];
      return {
        info: () => info,
        async execute(spec) {
          const at = new Date().toISOString();
          const result: ExecutionResult = { id: `exec-${results.length + 1}`, command: spec.command, args: spec.args, status: "ok", exitCode: 0, stdout: spec.args.join(" "), stderr: "", startedAt: at, finishedAt: at, durationMs: 1 };
          results.push(result);
          return result;
        },
        async collectArtifacts() {
          return { info, results: [...results], events: [], files: [], secrets: [] };
        },
        async reset() {
          results = [];
        },
        async dispose() {},
      };
    },
  };
}

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-mcp-bundles-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("hostile directory inputs are refused with artifacts-dir-outside-base; plain names stay inside the session folder", () => {
  const base = join(scratch, "hostile");
  const session = join(base, "mcp-20261201-080000-abcdef");
  mkdirSync(session, { recursive: true });
  const outside = mkdtempSync(join(scratch, "outside-"));
  symlinkSync(outside, join(session, "link-out"));
  symlinkSync(base, join(session, "link-up"));
  mkdirSync(join(session, "real"));
  symlinkSync(join(session, "real"), join(session, "link-in"));
  const refused: [string, RegExp][] = [
    ["../x", /leaves the session's bundle folder/],
    ["..", /leaves the session's bundle folder/],
    ["a/../../x", /leaves the session's bundle folder/],
    ["./../../../etc", /leaves the session's bundle folder/],
    [".", /leaves the session's bundle folder/],
    ["a/..", /leaves the session's bundle folder/],
    ["/tmp/x", /is an absolute path/],
    ["/", /is an absolute path/],
    ["\\\\server\\share", /is an absolute path/],
    ["C:\\x", /is an absolute path/],
    ["", /is not a folder name/],
    ["  ", /is not a folder name/],
    ["a\0b", /is not a folder name/],
    ["link-out", /through a symbolic link/],
    ["link-out/deeper/x", /through a symbolic link/],
    ["link-up/other-session", /through a symbolic link/],
  ];
  for (const [input, why] of refused) {
    assert.throws(
      () => bundleDirectoryFor(session, input),
      (e: WpCodeboxError) => e.code === "artifacts-dir-outside-base" && why.test(e.message) && e.message.includes(JSON.stringify(input)) && e.data.base === session,
      `directory ${JSON.stringify(input)}`,
    );
  }
  const allowed: [string, string][] = [
    ["final", join(session, "final")],
    ["runs/2026/a", join(session, "runs/2026/a")],
    ["a/../b", join(session, "b")],
    ["./c", join(session, "c")],
    ["..hidden", join(session, "..hidden")],
    ["link-in/x", join(session, "link-in/x")],
  ];
  for (const [input, expected] of allowed) assert.equal(bundleDirectoryFor(session, input), expected, `directory ${JSON.stringify(input)}`);
});

test("a fixed --artifacts base works across server restarts: each session writes into its own newest-last folder and never overwrites", async () => {
  const base = join(scratch, "bundles");
  const collectTwice = async () => {
    const sandbox = createMcpSandbox({ backend: echoBackend(), artifactsDir: base });
    try {
      await sandbox.step("echo", ["hello"]);
      const first = await sandbox.collect();
      const named = await sandbox.collect({ directory: "final" });
      // The same name again is refused: a bundle is never overwritten.
      await assert.rejects(sandbox.collect({ directory: "final" }), (e: WpCodeboxError) => e.code === "artifacts-dir-not-empty");
      const second = await sandbox.collect();
      // A hostile directory is refused before anything is written.
      await assert.rejects(sandbox.collect({ directory: "../../escaped" }), (e: WpCodeboxError) => e.code === "artifacts-dir-outside-base");
      return { sandbox, first, named, second };
    } finally {
      await sandbox.close();
    }
  };
  const one = await collectTwice();
  const two = await collectTwice();
  assert.notEqual(one.sandbox.sessionDir, two.sandbox.sessionDir);
  assert.deepEqual(readdirSync(base).sort(), [one.sandbox.sessionDir, two.sandbox.sessionDir].map((d) => d.slice(base.length + 1)).sort());
  for (const run of [one, two]) {
    assert.match(run.sandbox.sessionDir.slice(base.length + 1), /^mcp-\d{8}-\d{6}-[0-9a-f]{6}$/);
    assert.equal(run.first.directory, join(run.sandbox.sessionDir, "bundle-0001"));
    assert.equal(run.named.directory, join(run.sandbox.sessionDir, "final"));
    assert.equal(run.second.directory, join(run.sandbox.sessionDir, "bundle-0002"));
    assert.deepEqual(readdirSync(run.sandbox.sessionDir).sort(), ["bundle-0001", "bundle-0002", "final"]);
    for (const bundle of [run.first, run.named, run.second]) assert.deepEqual((await verifyArtifactBundle(bundle.directory)).violations, []);
  }
  assert.ok(!readdirSync(scratch).includes("escaped"));
  // A base that holds other things (an earlier layout's bundle, a note) is no obstacle either.
  writeFileSync(join(base, "notes.txt"), "mine");
  const three = await collectTwice();
  assert.equal(three.first.valid, true);
});

test("wp-codebox mcp starts with an --artifacts base that already holds an earlier session's bundles", async () => {
  const base = join(scratch, "cli-base");
  mkdirSync(join(base, "mcp-20261130-120000-0a0b0c", "bundle-0001"), { recursive: true });
  writeFileSync(join(base, "mcp-20261130-120000-0a0b0c", "bundle-0001", "manifest.json"), "{}");
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  let stderr = "";
  const transport = new StdioClientTransport({
    command: process.execPath,
    // --lazy-boot: nothing boots, this is about the start only.
    args: [...CLI_ENTRY, "mcp", "--lazy-boot", "--artifacts", base],
    cwd: repo,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "wp-codebox-bundles-test", version: "1.0.0" });
  try {
    await client.connect(transport);
    assert.ok((await client.listTools()).tools.some((t) => t.name === "collect_artifacts"), stderr);
  } finally {
    await client.close();
  }
  assert.doesNotMatch(stderr, /artifacts-dir-not-empty/);
});
