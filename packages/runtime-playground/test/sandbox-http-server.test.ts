/**
 * The loopback site server: many requests over one keep-alive connection (what a browser does)
 * leave no listener behind on the socket, so Node never prints MaxListenersExceededWarning, which
 * would also break `serve --json`'s every-stderr-line-is-JSON rule.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { startSandboxHttpServer } from "../src/sandbox/sandbox-http-server.js";

test("40 requests on one keep-alive socket: all answered, no listener leak warning", async () => {
  const server = await startSandboxHttpServer();
  server.setHandler(async () => ({ status: 200, headers: { "content-type": ["text/plain"] }, body: { data: new TextEncoder().encode("ok"), bytes: 2, truncated: false } }));
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<unknown>();
  try {
    for (let i = 0; i < 40; i++) {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(`${server.origin}/page-${i}`, { agent }, (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve(`${res.statusCode} ${text}`));
        });
        req.on("socket", (s) => sockets.add(s));
        req.on("error", reject);
        req.end();
      });
      assert.equal(body, "200 ok");
    }
    // Warnings are emitted on the next tick.
    await new Promise((r) => setImmediate(r));
    assert.equal(sockets.size, 1, "all requests went over one connection");
    assert.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), []);
  } finally {
    process.off("warning", onWarning);
    agent.destroy();
    await server.close();
  }
});
