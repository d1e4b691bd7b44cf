/**
 * Lane logic without a sandbox: the runtime key, slot affinity, and when a lane recycles, boots
 * or drops its sandbox (a fake backend counts creates, recycles and disposes).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SandboxLane, laneSlots, runtimeKey } from "@wp-codebox/batch";
import type { Runtime, RuntimeBackend, RuntimeCreateSpec } from "@wp-codebox/runtime-core";

test("the runtime key covers every field a sandbox is created from, ignores per-call fields and key order", () => {
  const base: RuntimeCreateSpec = { wordpress: { version: "6.5" }, php: "8.3", mounts: [], plugins: [], themes: [], policy: { network: "deny" }, env: {}, secretEnv: { A: "1" } };
  const key = runtimeKey(base);
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(runtimeKey({ ...base, onProgress: () => undefined, signal: new AbortController().signal }), key);
  assert.equal(runtimeKey({ secretEnv: { A: "1" }, env: {}, policy: { network: "deny" }, themes: [], plugins: [], mounts: [], php: "8.3", wordpress: { version: "6.5" } }), key);
  const changes: [string, Partial<RuntimeCreateSpec>][] = [
    ["WordPress", { wordpress: { version: "6.4" } }],
    ["PHP", { php: "8.2" }],
    ["extensions", { extensions: [] }],
    ["mounts", { mounts: [{ source: "/x", target: "/wordpress/wp-content/plugins/x", mode: "ro" } as never] }],
    ["plugins", { plugins: ["/p"] }],
    ["themes", { themes: ["/t"] }],
    ["policy", { policy: { network: "allow" } }],
    ["env", { env: { B: "2" } }],
    ["secret value", { secretEnv: { A: "2" } }],
    ["site options", { siteOptions: { blogname: "x" } }],
    ["defines", { defines: { WP_DEBUG: true } }],
    ["clock", { clock: "2030-01-01T00:00:00Z" }],
    ["seed", { seed: 7 }],
    ["origin", { origin: "loopback" }],
  ];
  for (const [what, change] of changes) assert.notEqual(runtimeKey({ ...base, ...change }), key, what);
  // Secret values are hashed, never in clear.
  assert.ok(!runtimeKey({ ...base, secretEnv: { A: "hunter2" } }).includes("hunter2"));
});

test("slots: a task goes to the free slot that last ran its key; a freed slot takes a waiting task of its own key first", async () => {
  const slots = laneSlots(2);
  assert.equal(await slots.acquire("a"), 0);
  assert.equal(await slots.acquire("b"), 1);
  const order: string[] = [];
  const waiting = [slots.acquire("b").then((s) => order.push(`b@${s}`)), slots.acquire("a").then((s) => order.push(`a@${s}`))];
  slots.release(0); // slot 0 last ran "a": the waiting "a" goes first although "b" waited longer
  slots.release(1);
  await Promise.all(waiting);
  assert.deepEqual(order, ["a@0", "b@1"]);
  slots.release(0);
  slots.release(1);
  assert.equal(await slots.acquire("b"), 1);
  assert.equal(await slots.acquire(undefined), 0);
});

function fakeBackend() {
  const log: string[] = [];
  let n = 0;
  let failNextRecycle = false;
  const backend: RuntimeBackend = {
    kind: "fake",
    async create(spec) {
      if (spec.php === "boot-fails") throw new Error("no boot");
      const id = `r${++n}`;
      log.push(`create ${id}`);
      return {
        info: () => ({ id }) as ReturnType<Runtime["info"]>,
        execute: async () => ({}) as never,
        collectArtifacts: async () => ({}) as never,
        dispose: async () => void log.push(`dispose ${id}`),
        recycle: async () => {
          log.push(`recycle ${id}`);
          if (failNextRecycle) {
            failNextRecycle = false;
            throw new Error("recycle failed");
          }
        },
      };
    },
  };
  return { backend, log, failRecycle: () => (failNextRecycle = true) };
}

test("a lane recycles its sandbox for the same key, boots for another key, after a failed recycle and after a discard", async () => {
  const { backend, log, failRecycle } = fakeBackend();
  const lane = new SandboxLane();
  const a: RuntimeCreateSpec = { php: "8.3" };
  const b: RuntimeCreateSpec = { php: "8.2" };
  const cases: [string, () => Promise<unknown>, string[]][] = [
    ["first task boots", () => lane.acquire(backend, a), ["create r1"]],
    ["same key recycles", () => lane.acquire(backend, { ...a, onProgress: () => undefined }), ["recycle r1"]],
    ["another key re-creates", () => lane.acquire(backend, b), ["dispose r1", "create r2"]],
    ["a failed recycle boots anew", async () => (failRecycle(), lane.acquire(backend, b)), ["recycle r2", "dispose r2", "create r3"]],
    ["a discarded sandbox is not reused", async () => (await lane.discard(), lane.acquire(backend, b)), ["dispose r3", "create r4"]],
  ];
  for (const [what, step, expected] of cases) {
    log.length = 0;
    await step();
    assert.deepEqual(log, expected, what);
  }
  assert.deepEqual(lane.stats, { boots: 4, reuses: 1 });
  const failed = await lane.acquire(backend, { php: "boot-fails" });
  assert.ok("bootError" in failed && (failed.bootError as Error).message === "no boot");
  assert.equal(lane.key, undefined);
});
