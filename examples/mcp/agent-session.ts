/**
 * A scripted agent session against `wp-codebox mcp`, using the MCP SDK's own client over stdio.
 * Prints every JSON-RPC message (long strings cut) so you can see what an agent sees.
 * Run from the repository root:
 *   node --conditions=source --import tsx examples/mcp/agent-session.ts
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "mcp", "--plugin", "test/fixtures/plugins/sortable-board", "--artifacts", "wp-codebox-artifacts"],
  cwd: root,
  stderr: "inherit",
});

const cut = (value: unknown): unknown =>
  typeof value === "string" ? (value.length > 100 ? `${value.slice(0, 100)}…(${value.length} chars)` : value)
  : Array.isArray(value) ? (value.length > 12 ? [...value.slice(0, 12).map(cut), `…${value.length - 12} more`] : value.map(cut))
  : value && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]))
  : value;
const show = (arrow: string, message: JSONRPCMessage): void => console.log(`${arrow} ${JSON.stringify(cut(message))}`);

const client = new Client({ name: "example-agent", version: "1.0.0" });
await client.connect(transport);
// Log the traffic from here on (after the initialize handshake).
const send = transport.send.bind(transport);
transport.send = async (message) => (show("→", message), send(message));
const receive = transport.onmessage!;
transport.onmessage = (message) => (show("←", message), receive(message));

const tools = await client.listTools();
console.log(`# ${tools.tools.length} tools: ${tools.tools.map((t) => t.name).join(", ")}`);
await client.callTool({ name: "wordpress_run_php", arguments: { code: "<?php wp_insert_post(['post_title' => 'Seeded by an agent', 'post_status' => 'publish']); echo count(get_posts());" } });
await client.callTool(
  {
    name: "wordpress_browser_actions",
    arguments: {
      "steps-json": [
        { kind: "navigate", url: "/wp-admin/tools.php?page=sortable-board" },
        { kind: "drag", from: "#board .board-item[data-id='gamma']", to: "#board .board-item[data-id='alpha']" },
        { kind: "click", selector: "role=button[name='Save board']" },
        { kind: "expect", selector: "#board-saved", state: "visible" },
        { kind: "screenshot", name: "saved" },
      ],
    },
  },
  undefined,
  { onprogress: () => undefined, resetTimeoutOnProgress: true },
);
await client.callTool({ name: "snapshot", arguments: {} });
await client.callTool({ name: "reset", arguments: {} });
await client.callTool({ name: "collect_artifacts", arguments: {} });
await client.close();
