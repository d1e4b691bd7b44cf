/**
 * The live server and attach client over a fake in-memory backend (no WordPress): token checks,
 * serialised calls, TTL expiry (asserted on events), pool hand-out and recycling, bytes on the wire,
 * session leases (expiry of an abandoned session, renewals, long calls).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { WpCodeboxError, type ExecutionResult, type ExecutionSpec, type RuntimeArtifacts, type RuntimeBackend, type RuntimeInfo } from "@wp-codebox/runtime-core";
import { DEFAULT_SESSION_LEASE_MS, attachRuntime, describeControl, startLiveServer, type LiveEvent, type LiveRuntime, type LiveServer, type ReattachEvent } from "../src/index.js";

interface FakeStats {
  created: number;
  disposed: number;
  recycled: number;
  running: number;
  maxRunning: number;
  aborted: number;
}

function fakeBackend(stats: FakeStats, options: { recycle?: boolean; secrets?: string[] } = {}): RuntimeBackend {
  return {
    kind: "fake",
    async create(): Promise<LiveRuntime> {
      stats.created += 1;
      const id = `runtime-${randomUUID()}`;
      let results: ExecutionResult[] = [];
      let disposed = false;
      const info: RuntimeInfo = { id, backend: "fake", wordpressVersion: "0", phpVersion: "0", siteUrl: `http://127.0.0.1:1/${id}`, bootMode: "cached", bootDurationMs: 1, mounts: [], policy: { commands: ["echo"], network: "deny", filesystem: "readonly-mounts", secrets: "none" }, plugins: [], themes: [] };
      const runtime: LiveRuntime = {
        info: () => info,
        async execute(spec: ExecutionSpec) {
          if (disposed) throw new WpCodeboxError("runtime-disposed", "gone");
          if (spec.command === "denied") throw new WpCodeboxError("policy-denied", "not allowed", { capability: "denied" });
          stats.running += 1;
          stats.maxRunning = Math.max(stats.maxRunning, stats.running);
          const waitMs = Number(spec.args.find((a) => a.startsWith("wait="))?.slice(5) ?? 5);
          let aborted = false;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs);
            spec.signal?.addEventListener("abort", () => {
              aborted = true;
              clearTimeout(timer);
              resolve();
            });
          });
          stats.running -= 1;
          if (aborted) stats.aborted += 1;
          const at = new Date().toISOString();
          const result: ExecutionResult = { id: `exec-${results.length + 1}`, command: spec.command, args: spec.args, status: aborted ? "timed-out" : "ok", exitCode: 0, stdout: spec.args.join(" "), stderr: "", startedAt: at, finishedAt: at, durationMs: waitMs };
          results.push(result);
          return result;
        },
        async collectArtifacts(): Promise<RuntimeArtifacts> {
          return { info, results: [...results], events: [], files: [{ path: "files/blob.bin", kind: "blob", contentType: "application/octet-stream", content: new Uint8Array([0, 1, 2, 255]) }], secrets: options.secrets ?? [] };
        },
        async reset() {
          results = [];
        },
        ...(options.recycle === false
          ? {}
          : {
              async recycle() {
                stats.recycled += 1;
                results = [];
              },
            }),
        async dispose() {
          if (!disposed) stats.disposed += 1;
          disposed = true;
        },
      };
      return runtime;
    },
  };
}

const newStats = (): FakeStats => ({ created: 0, disposed: 0, recycled: 0, running: 0, maxRunning: 0, aborted: 0 });

/** Waits (polling) until `condition` holds; the test's own timeout bounds it. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
}

/** One control call with plain fetch: a client that never renews and never detaches. */
async function raw(live: LiveServer, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, any> }> {
  const response = await fetch(`${live.control}/v1${path}`, { method, headers: { authorization: `Bearer ${live.token}`, "content-type": "application/json" }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

describe("live server (fake backend)", () => {
  it("refuses a wrong or missing token with attach-unauthorized, on every path", async () => {
    const stats = newStats();
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {} });
    try {
      await assert.rejects(attachRuntime({ control: live.control, token: "wrong" }), (e: WpCodeboxError) => e.code === "attach-unauthorized");
      await assert.rejects(describeControl({ control: live.control, token: "" }), (e: WpCodeboxError) => e.code === "attach-unauthorized");
      const raw = await fetch(`${live.control}/v1/sessions/x/execute`, { method: "POST", body: "{}" });
      assert.equal(raw.status, 401);
      assert.equal(((await raw.json()) as { error: { code: string } }).error.code, "attach-unauthorized");
      const description = await describeControl({ control: live.control, token: live.token });
      assert.equal(description.mode, "shared");
      assert.equal(description.url, live.url);
    } finally {
      await live.close();
    }
    assert.equal(stats.disposed, stats.created);
  });

  it("results leave serve redacted like the sandbox's bundle: a secret in any encoded form never reaches the client", async () => {
    const stats = newStats();
    const secret = "supersecretvalue123";
    const live = await startLiveServer({ backend: fakeBackend(stats, { secrets: [secret] }), spec: {} });
    try {
      const client = await attachRuntime({ control: live.control, token: live.token });
      const printed = [secret, Buffer.from(secret).toString("base64"), secret.toUpperCase(), Buffer.from(secret).toString("hex")];
      const result = await client.execute({ command: "echo", args: printed });
      for (const form of printed) {
        assert.ok(!result.stdout.includes(form), `${form} reached the client: ${result.stdout}`);
        assert.ok(!JSON.stringify(result.args).includes(form), `${form} reached the client in args`);
      }
      assert.match(result.stdout, /\[REDACTED\]/);
      await client.dispose();
    } finally {
      await live.close();
    }
  });

  it("serialises concurrent calls on one sandbox and carries sandbox errors and bytes unchanged", async () => {
    const stats = newStats();
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {} });
    try {
      const a = await attachRuntime({ control: live.control, token: live.token });
      const b = await attachRuntime({ control: live.control, token: live.token });
      assert.equal(a.sandboxId, b.sandboxId, "a single-sandbox server shares its sandbox");
      const results = await Promise.all([...Array(6)].map((_, i) => (i % 2 ? a : b).execute({ command: "echo", args: [`n=${i}`, "wait=20"] })));
      assert.deepEqual(results.map((r) => r.status), Array(6).fill("ok"));
      assert.equal(stats.maxRunning, 1, "calls never overlap inside the sandbox");
      await assert.rejects(a.execute({ command: "denied", args: [] }), (e: WpCodeboxError) => e.code === "policy-denied" && e.data.capability === "denied");
      const artifacts = await b.collectArtifacts();
      assert.equal(artifacts.results.length, 6);
      assert.ok(artifacts.files[0]!.content instanceof Uint8Array);
      assert.deepEqual([...(artifacts.files[0]!.content as Uint8Array)], [0, 1, 2, 255]);
      await a.dispose();
      await assert.rejects(a.execute({ command: "echo", args: [] }), (e: WpCodeboxError) => e.code === "runtime-disposed");
      assert.equal((await b.execute({ command: "echo", args: ["still"] })).stdout, "still", "detaching one session leaves the shared sandbox up");
      await b.dispose();
    } finally {
      await live.close();
    }
  });

  it("an aborted client call stops its command in the sandbox", async () => {
    const stats = newStats();
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {} });
    try {
      const a = await attachRuntime({ control: live.control, token: live.token });
      const controller = new AbortController();
      const pending = a.execute({ command: "echo", args: ["wait=60000"], signal: controller.signal });
      while (stats.running === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
      await assert.rejects(pending);
      while (stats.running > 0) await new Promise((r) => setTimeout(r, 5));
      assert.equal(stats.aborted, 1);
      await a.dispose();
    } finally {
      await live.close();
    }
  });

  it("an abort while the first sandbox boots disposes it once booted and throws interrupted; live-disposed comes after", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const real = fakeBackend(stats);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const backend: RuntimeBackend = { kind: "fake", create: async (spec) => (await gate, real.create(spec)) };
    const controller = new AbortController();
    const starting = startLiveServer({ backend, spec: {}, pool: 2, signal: controller.signal, onEvent: (e) => events.push(e) });
    controller.abort("SIGTERM");
    release();
    await assert.rejects(starting, (e: WpCodeboxError) => e.code === "interrupted" && e.data?.signal === "SIGTERM" && /^Interrupted by SIGTERM while the sandbox booted/.test(e.message));
    assert.equal(stats.created, 1, "the rest of the pool never boots");
    assert.equal(stats.disposed, 1);
    assert.deepEqual(events.map((e) => e.type), ["live-closing", "live-disposed"]);
    assert.equal(events[0]!.data?.reason, "SIGTERM");
  });

  it("disposes everything when the TTL passes without activity", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, ttlMs: 150, onEvent: (e) => events.push(e) });
    const a = await attachRuntime({ control: live.control, token: live.token });
    await a.execute({ command: "echo", args: ["wait=1"] });
    assert.equal(await live.closed, "ttl-expired");
    const types = events.map((e) => e.type);
    assert.ok(types.indexOf("ttl-expired") > types.indexOf("session-opened"), types.join(","));
    assert.ok(types.indexOf("live-disposed") > types.indexOf("ttl-expired"), types.join(","));
    assert.equal(stats.disposed, stats.created);
    // Nobody listens any more; a kept-alive connection this client still held is closed instead.
    await assert.rejects(a.execute({ command: "echo", args: [] }), (e: WpCodeboxError) => e.code === "attach-unreachable" || e.code === "attach-connection-lost");
    await a.dispose();
  });

  it("a pool hands out distinct sandboxes, refuses when all are taken, recycles returned ones", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool: 2, leaseWaitMs: 200, onEvent: (e) => events.push(e) });
    try {
      const first = await attachRuntime({ control: live.control, token: live.token });
      const second = await attachRuntime({ control: live.control, token: live.token });
      assert.notEqual(first.sandboxId, second.sandboxId);
      await assert.rejects(attachRuntime({ control: live.control, token: live.token }), (e: WpCodeboxError) => e.code === "pool-exhausted");
      await first.execute({ command: "echo", args: ["mine"] });
      await first.dispose();
      const third = await attachRuntime({ control: live.control, token: live.token });
      assert.equal(third.sandboxId, first.sandboxId, "the returned sandbox is handed out again after its reset");
      assert.equal((await third.collectArtifacts()).results.length, 0, "nothing of the previous session is left");
      assert.equal(stats.recycled, 1);
      assert.equal(stats.created, 2, "recycled, not re-booted");
      assert.ok(events.some((e) => e.type === "sandbox-recycled" && e.data?.how === "reset"));
      await Promise.all([second.dispose(), third.dispose()]);
    } finally {
      await live.close();
    }
    assert.equal(stats.disposed, stats.created);
  });

  it("a session waits for a taken pooled sandbox: waiters get it in arrival order as sessions detach; pool-exhausted once the wait is over", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool: 1, leaseWaitMs: 60_000, onEvent: (e) => events.push(e) });
    const waits = () => events.filter((e) => e.type === "sandbox-wait").length;
    try {
      const a = await attachRuntime({ control: live.control, token: live.token });
      await a.execute({ command: "echo", args: ["a"] });
      // A waiting client that gives up leaves the queue: it never takes the sandbox.
      const quitter = new AbortController();
      const quit = fetch(`${live.control}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${live.token}` }, signal: quitter.signal }).catch((e: Error) => e);
      await until(() => waits() === 1);
      quitter.abort();
      await quit;
      const b = attachRuntime({ control: live.control, token: live.token });
      await until(() => waits() === 2);
      const c = attachRuntime({ control: live.control, token: live.token });
      await until(() => waits() === 3);
      let cSettled = false;
      void c.finally(() => (cSettled = true)).catch(() => undefined);
      await a.dispose();
      const second = await b;
      assert.equal(second.sandboxId, a.sandboxId, "the first waiter gets the returned sandbox");
      assert.equal((await second.collectArtifacts()).results.length, 0, "recycled before it was handed out");
      assert.equal(cSettled, false, "the second waiter still waits");
      await second.dispose();
      const third = await c;
      assert.equal(third.sandboxId, a.sandboxId);
      await third.dispose();
    } finally {
      await live.close();
    }
    // Without a wait (leaseWaitMs 0), a taken pool answers pool-exhausted at once, saying what to do.
    const busy = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool: 1, leaseWaitMs: 0, sessionLeaseMs: 300 });
    try {
      const held = await attachRuntime({ control: busy.control, token: busy.token });
      await assert.rejects(
        attachRuntime({ control: busy.control, token: busy.token }),
        (e: WpCodeboxError) =>
          e.code === "pool-exhausted" && /All 1 pooled sandboxes are taken and none came back within 0 ms\. Detach another session, or start serve with a larger --pool\. A session whose client went away without detaching is released 300 ms after its last call\./.test(e.message),
      );
      await held.dispose();
    } finally {
      await busy.close();
    }
    assert.equal(stats.disposed, stats.created);
  });

  it("with reattach, a client whose session serve no longer knows takes a new one and runs the call; state kept when shared, reset when pooled", async () => {
    for (const pool of [0, 1]) {
      const stats = newStats();
      const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool, sessionLeaseMs: 60_000 });
      try {
        const events: ReattachEvent[] = [];
        const client = await attachRuntime({ control: live.control, token: live.token, reattach: true, onReattach: (e) => events.push(e) });
        const fork = client.fork();
        assert.equal((await client.execute({ command: "echo", args: ["before"] })).stdout, "before");
        const first = client.session;
        // serve forgets the session, as when its lease ran out while this process was suspended.
        assert.equal((await raw(live, "DELETE", `/sessions/${first}`)).status, 200);
        // Two handles call at once: one re-attach for both.
        const [after, viaFork] = await Promise.all([client.execute({ command: "echo", args: ["after"] }), fork.execute({ command: "echo", args: ["fork"] })]);
        assert.equal(after.stdout, "after");
        assert.equal(viaFork.stdout, "fork");
        assert.equal(events.length, 1, JSON.stringify(events));
        assert.equal(events[0]!.previousSession, first);
        assert.equal(events[0]!.session, client.session);
        assert.equal(fork.session, client.session);
        assert.notEqual(client.session, first);
        assert.match(events[0]!.reason, /not open on this server/);
        const results = (await client.collectArtifacts()).results.map((r) => r.stdout);
        if (pool === 0) {
          assert.deepEqual([events[0]!.mode, events[0]!.stateKept], ["shared", true]);
          assert.deepEqual(results, ["before", "after", "fork"], "the shared sandbox kept its state");
        } else {
          assert.deepEqual([events[0]!.mode, events[0]!.stateKept], ["pool", false]);
          assert.deepEqual(results, ["after", "fork"], "the pooled sandbox was reset when the old session was released");
        }
        await fork.dispose();
        await client.dispose();
      } finally {
        await live.close();
      }
    }
  });

  it("without reattach, a call on a session serve no longer knows fails with attach-session-not-found", async () => {
    const stats = newStats();
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {} });
    try {
      const client = await attachRuntime({ control: live.control, token: live.token });
      await raw(live, "DELETE", `/sessions/${client.session}`);
      await assert.rejects(client.execute({ command: "echo", args: ["x"] }), (e: WpCodeboxError) => e.code === "attach-session-not-found");
      await client.dispose();
    } finally {
      await live.close();
    }
  });

  it("re-boots a returned sandbox when the runtime cannot recycle", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats, { recycle: false }), spec: {}, pool: 1, onEvent: (e) => events.push(e) });
    try {
      const first = await attachRuntime({ control: live.control, token: live.token });
      await first.dispose();
      const next = await attachRuntime({ control: live.control, token: live.token });
      assert.notEqual(next.sandboxId, first.sandboxId);
      assert.ok(events.some((e) => e.type === "sandbox-recycled" && e.data?.how === "reboot"));
      await next.dispose();
    } finally {
      await live.close();
    }
    assert.equal(stats.disposed, stats.created);
  });

  it("releases a session whose client stopped renewing: session-expired, and a pool of 1 hands the sandbox out again", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool: 1, sessionLeaseMs: 300, leaseWaitMs: 60_000, onEvent: (e) => events.push(e) });
    try {
      assert.equal((await describeControl({ control: live.control, token: live.token })).leaseMs, 300);
      // A client that takes a session and dies: one POST, then nothing.
      const grant = await raw(live, "POST", "/sessions");
      assert.equal(grant.status, 200);
      assert.equal(grant.json.leaseMs, 300);
      const abandoned = grant.json.session as string;
      assert.equal((await raw(live, "POST", `/sessions/${abandoned}/execute`, { spec: { command: "echo", args: ["before"] } })).status, 200);
      // Still held: the next session waits, and gets the sandbox once the abandoned one expired.
      const waiting = attachRuntime({ control: live.control, token: live.token });
      await until(() => events.some((e) => e.type === "sandbox-wait"));
      await until(() => events.some((e) => e.type === "session-expired"));
      const expiredEvent = events.find((e) => e.type === "session-expired")!;
      assert.equal(expiredEvent.data?.session, abandoned);
      assert.equal(expiredEvent.data?.leaseMs, 300);
      assert.ok((expiredEvent.data?.idleMs as number) >= 300, JSON.stringify(expiredEvent));
      assert.ok(!events.some((e) => e.type === "session-closed"), "expired, not detached");

      const next = await waiting;
      assert.equal(next.sandboxId, grant.json.sandbox.id, "the pool of 1 hands the same sandbox out again");
      assert.equal((await next.collectArtifacts()).results.length, 0, "recycled like a detached one");
      assert.equal(stats.recycled, 1);
      const late = await raw(live, "POST", `/sessions/${abandoned}/execute`, { spec: { command: "echo", args: ["after"] } });
      assert.equal(late.status, 404);
      assert.equal(late.json.error.code, "attach-session-not-found");
      assert.match(late.json.error.message, /expired after 300 ms without calls/);
      await next.dispose();
    } finally {
      await live.close();
    }
    assert.equal(stats.disposed, stats.created);
  });

  it("a client that renews keeps its session across several lease periods", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool: 1, sessionLeaseMs: 300, onEvent: (e) => events.push(e) });
    try {
      const a = await attachRuntime({ control: live.control, token: live.token });
      assert.equal(a.leaseMs, 300);
      const fork = a.fork();
      // Nine renewals at one per 100 ms: three lease periods without a single call.
      await until(() => a.renewals >= 9);
      assert.equal(fork.renewals, a.renewals, "one renewal timer per session, shared by its handles");
      assert.deepEqual(events.filter((e) => e.type === "session-expired"), []);
      assert.equal((await a.execute({ command: "echo", args: ["alive"] })).stdout, "alive");
      await fork.dispose();
      await a.dispose();
      const renewalsAtDetach = a.renewals;
      assert.ok(events.some((e) => e.type === "session-closed"));
      // After detaching nothing renews: the next attach takes the recycled sandbox.
      const b = await attachRuntime({ control: live.control, token: live.token });
      assert.equal(b.sandboxId, a.sandboxId);
      await until(() => b.renewals >= 2);
      assert.equal(a.renewals, renewalsAtDetach, "a detached client stopped renewing");
      await b.dispose();
    } finally {
      await live.close();
    }
    assert.deepEqual(events.filter((e) => e.type === "session-expired"), []);
  });

  it("a call longer than the lease never expires its session; the lease counts from the end of the call", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, pool: 1, sessionLeaseMs: 300, onEvent: (e) => events.push(e) });
    try {
      // No renewals at all: only the call in flight holds the session.
      const grant = await raw(live, "POST", "/sessions");
      const session = grant.json.session as string;
      const long = await raw(live, "POST", `/sessions/${session}/execute`, { spec: { command: "echo", args: ["wait=1200"] } });
      assert.equal(long.status, 200, JSON.stringify(long.json));
      assert.equal(long.json.value.status, "ok");
      events.push({ at: new Date().toISOString(), type: "test-call-returned" });
      assert.equal((await raw(live, "POST", `/sessions/${session}/info`)).status, 200, "still open right after a call four leases long");
      await until(() => events.some((e) => e.type === "session-expired"));
      const types = events.map((e) => e.type);
      assert.ok(types.indexOf("session-expired") > types.indexOf("test-call-returned"), types.join(","));
    } finally {
      await live.close();
    }
  });

  it("lease renewals count as activity for the TTL: serve stays up while a client is attached, stops after it detaches", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, ttlMs: 400, sessionLeaseMs: 300, onEvent: (e) => events.push(e) });
    const a = await attachRuntime({ control: live.control, token: live.token });
    // Twelve renewals at one per 100 ms: three TTLs without a call.
    await until(() => a.renewals >= 12);
    assert.deepEqual(events.filter((e) => e.type === "ttl-expired"), [], "an attached, renewing client keeps serve up");
    assert.equal((await a.execute({ command: "echo", args: ["still here"] })).stdout, "still here");
    await a.dispose();
    assert.equal(await live.closed, "ttl-expired");
    assert.equal(stats.disposed, stats.created);
  });

  it("a lease of 0 never expires; the default lease is 60 s", async () => {
    assert.equal(DEFAULT_SESSION_LEASE_MS, 60_000);
    const stats = newStats();
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, sessionLeaseMs: 0 });
    try {
      const a = await attachRuntime({ control: live.control, token: live.token });
      assert.equal(a.leaseMs, 0);
      const again = await attachRuntime({ control: live.control, token: live.token, session: a.session });
      assert.equal(again.leaseMs, 0, "a re-attached session learns its lease from a renewal");
      await again.dispose();
      await a.dispose();
      assert.equal((await describeControl({ control: live.control, token: live.token })).leaseMs, 0);
    } finally {
      await live.close();
    }
    const live2 = await startLiveServer({ backend: fakeBackend(stats), spec: {} });
    try {
      const b = await attachRuntime({ control: live2.control, token: live2.token });
      assert.equal(b.leaseMs, DEFAULT_SESSION_LEASE_MS);
      await b.dispose();
    } finally {
      await live2.close();
    }
  });

  it("read-artifact sends one artifact file of the session, refuses other paths, and says what it sent in events", async () => {
    const stats = newStats();
    const events: LiveEvent[] = [];
    const live = await startLiveServer({ backend: fakeBackend(stats), spec: {}, onEvent: (e) => events.push(e) });
    try {
      const a = await attachRuntime({ control: live.control, token: live.token });
      const blob = await a.readArtifact({ path: "files/blob.bin" });
      assert.ok(blob.content instanceof Uint8Array);
      assert.deepEqual([...blob.content], [0, 1, 2, 255]);
      assert.deepEqual({ path: blob.path, kind: blob.kind, contentType: blob.contentType, bytes: blob.bytes }, { path: "files/blob.bin", kind: "blob", contentType: "application/octet-stream", bytes: 4 });
      for (const path of ["manifest.json", "files/other.bin", "../files/blob.bin", "/files/blob.bin"]) {
        await assert.rejects(a.readArtifact({ path }), (e: WpCodeboxError) => e.code === "artifact-not-found", path);
      }
      const refused = await raw(live, "POST", `/sessions/${a.session}/read-artifact`, { spec: { path: "files/nope" } });
      assert.equal(refused.status, 404);
      assert.equal(refused.json.error.code, "artifact-not-found");
      await assert.rejects(a.readArtifact({ path: "files/blob.bin", maxBytes: 3 }), (e: WpCodeboxError) => e.code === "artifact-too-large" && e.data.bytes === 4 && e.data.maxBytes === 3);
      await assert.rejects(a.readArtifact({} as never), (e: WpCodeboxError) => e.code === "missing-argument");
      await a.collectArtifacts();
      const sent = events.filter((e) => e.type.startsWith("session-artifact"));
      assert.deepEqual(
        sent.map((e) => ({ type: e.type, ...e.data })),
        [
          { type: "session-artifact-read", session: a.session, sandbox: a.sandboxId, path: "files/blob.bin", bytes: 4 },
          { type: "session-artifacts-collected", session: a.session, sandbox: a.sandboxId, files: 1, bytes: 4 },
        ],
        "a refused read sends nothing",
      );
      await a.dispose();
    } finally {
      await live.close();
    }
  });
});
