/**
 * The loopback site server: many requests over one keep-alive connection (what a browser does)
 * leave no listener behind on the socket, so Node never prints MaxListenersExceededWarning, which
 * would also break `serve --json`'s every-stderr-line-is-JSON rule.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { startSandboxHttpServer } from "../src/sandbox-http-server.js";

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

test("a request body over the bound is 413 and never reaches the handler; one at the bound does", async () => {
  const server = await startSandboxHttpServer(0, { maxBodyBytes: 1000 });
  const seen: number[] = [];
  server.setHandler(async (req) => {
    seen.push(req.body?.byteLength ?? 0);
    return { status: 200, headers: {}, body: { data: new TextEncoder().encode("ok") } };
  });
  try {
    const post = async (bytes: number, chunked: boolean) => {
      const response = await fetch(`${server.origin}/`, {
        method: "POST",
        // A stream body is sent chunked, with no content-length to refuse it early.
        body: chunked ? new ReadableStream({ start(c) { c.enqueue(new Uint8Array(bytes)); c.close(); } }) : new Uint8Array(bytes),
        ...(chunked ? { duplex: "half" } : {}),
      } as RequestInit);
      await response.arrayBuffer();
      return response.status;
    };
    assert.equal(await post(1000, false), 200);
    assert.equal(await post(1001, false), 413);
    assert.equal(await post(5000, true), 413);
    assert.deepEqual(seen, [1000]);
  } finally {
    await server.close();
  }
});
