/**
 * How a tool result gets its images, over a fake sandbox (no WordPress): only the screenshots the
 * result names are read, with the per-image cap; one that cannot be read is named in the text.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ARTIFACT_READ_CAP_BYTES, type RuntimeEpisodeStepResult } from "@wp-codebox/runtime-core";
import { createWpCodeboxMcpServer, type ArtifactRead, type McpSandbox } from "../src/index.js";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7]);

test("a browser result's screenshots are read by path with the image cap; a refused one is named in the text", async () => {
  const reads: { paths: readonly string[]; maxBytes: number | undefined }[] = [];
  const sandbox = {
    booted: true,
    bootMessage: undefined,
    start: async () => undefined,
    policy: async () => ({ commands: ["wordpress.browser-actions"], network: "deny", filesystem: "readonly-mounts", secrets: "none" }),
    step: async (command: string, args: string[]) =>
      ({
        refs: { step: "step-0001" },
        execution: {
          id: "execution-1",
          digest: "d",
          command,
          args,
          status: "ok",
          exitCode: 0,
          stdout: "{}",
          stderr: "",
          durationMs: 5,
          artifactRefs: [
            { path: "files/browser/screenshot-a.png", kind: "browser-screenshot" },
            { path: "files/browser/page.html", kind: "browser-html" },
            { path: "files/browser/screenshot-huge.png", kind: "browser-screenshot" },
          ],
        },
      }) as unknown as RuntimeEpisodeStepResult,
    files: async (paths: readonly string[], options?: { maxBytes?: number }): Promise<ArtifactRead[]> => {
      reads.push({ paths, maxBytes: options?.maxBytes });
      return [
        { path: paths[0]!, file: { path: paths[0]!, kind: "browser-screenshot", contentType: "image/png", content: PNG, bytes: PNG.byteLength } },
        { path: paths[1]!, error: { code: "artifact-too-large", message: `Artifact ${paths[1]} is 9999999 bytes, over the limit.` } },
      ];
    },
    close: async () => undefined,
  } as unknown as McpSandbox;
  const server = createWpCodeboxMcpServer({ sandbox, imageCapBytes: ARTIFACT_READ_CAP_BYTES * 4 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "images-test", version: "1.0.0" });
  await client.connect(clientSide);
  try {
    const result = (await client.callTool({ name: "wordpress_browser_actions", arguments: { "steps-json": "[]" } })) as CallToolResult;
    assert.deepEqual(reads, [{ paths: ["files/browser/screenshot-a.png", "files/browser/screenshot-huge.png"], maxBytes: ARTIFACT_READ_CAP_BYTES }], "only the screenshots, capped at the ceiling");
    const images = result.content.filter((c) => c.type === "image") as { data: string; mimeType: string }[];
    assert.deepEqual(images.map((i) => [i.mimeType, [...Buffer.from(i.data, "base64")]]), [["image/png", [...PNG]]]);
    const text = (result.content[0] as { text: string }).text;
    assert.match(text, /image files\/browser\/screenshot-huge\.png not attached: error\[artifact-too-large\]/);
    assert.equal(result.isError, false);
  } finally {
    await client.close();
    await server.close();
  }
});
