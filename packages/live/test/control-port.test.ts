/**
 * `serve --port`: the control port is bound before the sandbox boots. A busy port is refused
 * (invalid-argument, exit 2) without any boot; a free one is held during the boot (calls get 503
 * "booting"), served on afterwards, and released when the boot fails.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { WpCodeboxError, type RuntimeArtifacts, type RuntimeBackend, type RuntimeInfo } from "@wp-codebox/runtime-core";
import { describeControl, startLiveServer, type LiveRuntime } from "../src/index.js";

/** A backend whose boot waits for `release()` (or fails with `fail`), counting boots. */
function gatedBackend(options: { fail?: boolean } = {}) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let booted!: () => void;
  const booting = new Promise<void>((r) => (booted = r));
  const state = { creates: 0 };
  const info: RuntimeInfo = { id: "rt", backend: "fake", wordpressVersion: "0", phpVersion: "0", siteUrl: "http://127.0.0.1:1/", bootMode: "cached", bootDurationMs: 1, mounts: [], policy: { commands: [], network: "deny", filesystem: "readonly-mounts", secrets: "none" }, plugins: [], themes: [] };
  const backend: RuntimeBackend = {
    kind: "fake",
    async create(): Promise<LiveRuntime> {
      state.creates += 1;
      booted();
      await gate;
      if (options.fail) throw new WpCodeboxError("boot-failed", "the fake boot failed");
      return {
        info: () => info,
        execute: async () => {
          throw new Error("unused");
        },
        collectArtifacts: async (): Promise<RuntimeArtifacts> => ({ info, results: [], events: [], files: [], secrets: [] }),
        dispose: async () => {},
      } as unknown as LiveRuntime;
    },
  } as RuntimeBackend;
  return { backend, state, release, booting };
}

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

const portOf = (server: Server) => (server.address() as { port: number }).port;
const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("serve --port", () => {
  it("a busy port is invalid-argument, and nothing boots", async () => {
    const busy = await listen();
    const { backend, state, release } = gatedBackend();
    release();
    try {
      await assert.rejects(startLiveServer({ backend, spec: {}, port: portOf(busy) }), (e: any) => e.code === "invalid-argument" && /--port \d+: the port is in use on 127\.0\.0\.1/.test(e.message));
      assert.equal(state.creates, 0);
    } finally {
      await closeServer(busy);
    }
  });

  it("a free port is held while the sandbox boots, answers 503 meanwhile, and serves the control API after", async () => {
    const probe = await listen();
    const port = portOf(probe);
    await closeServer(probe);
    const { backend, release, booting } = gatedBackend();
    const started = startLiveServer({ backend, spec: {}, port, token: "t0ken" });
    await booting;
    await assert.rejects(listen(port), { code: "EADDRINUSE" });
    const early = await fetch(`http://127.0.0.1:${port}/v1`);
    assert.equal(early.status, 503);
    assert.equal(((await early.json()) as { error: { code: string } }).error.code, "booting");
    release();
    const live = await started;
    try {
      assert.equal(live.control, `http://127.0.0.1:${port}`);
      const description = await describeControl({ control: live.control, token: "t0ken" });
      assert.equal(description.url, "http://127.0.0.1:1/");
    } finally {
      await live.close();
    }
    // Closed: the port is free again.
    await closeServer(await listen(port));
  });

  it("a failed boot releases the port", async () => {
    const probe = await listen();
    const port = portOf(probe);
    await closeServer(probe);
    const { backend, release } = gatedBackend({ fail: true });
    release();
    await assert.rejects(startLiveServer({ backend, spec: {}, port }), { code: "boot-failed" });
    await closeServer(await listen(port));
  });
});
