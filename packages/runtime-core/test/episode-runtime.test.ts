import assert from "node:assert/strict";
import { test } from "node:test";
import { sha256Hex } from "../src/digest.js";
import { WpCodeboxError } from "../src/errors.js";
import {
  RUNTIME_EPISODE_EVENT,
  RUNTIME_EPISODE_EVENTS_KIND,
  RUNTIME_EPISODE_EVENTS_PATH,
  RUNTIME_EPISODE_TRACE_KIND,
  RUNTIME_EPISODE_TRACE_PATH,
  createRuntimeEpisode,
  episodeEventsJsonl,
  validateRuntimeEpisodeTrace,
  type RuntimeEpisodeActionInput,
  type RuntimeEpisodeTrace,
} from "../src/episode/index.js";
import { validateAgainstSchema } from "../src/schema-validation.js";
import { createFakeBackend } from "./episode-fake-backend.js";

const UNICODE = "KEKC博客 🧪";
const ACTIONS: RuntimeEpisodeActionInput[] = [
  { command: "kv.set", args: ["key=blogname", `value=${UNICODE}`] },
  { command: "kv.get", args: ["key=blogname"] },
  { kind: "http", command: "kv.get", args: ["key=missing"], method: "GET", url: "/missing" },
];

async function runEpisode(actions = ACTIONS): Promise<RuntimeEpisodeTrace> {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await episode.reset();
  for (const action of actions) await episode.step(action, { type: "kv" });
  const trace = episode.trace();
  await episode.close();
  return trace;
}

function assertValid(trace: unknown): void {
  const result = validateRuntimeEpisodeTrace(trace);
  assert.deepEqual(result.issues, []);
  assert.equal(result.valid, true);
}

test("same actions give the same ids and digests in two episodes", async () => {
  const a = await runEpisode();
  const b = await runEpisode();
  assert.equal(a.digest, b.digest);
  assert.equal(a.id, b.id);
  assert.deepEqual(
    a.steps.map((s) => [s.id, s.actionRef, s.executionRef, s.observationRef]),
    b.steps.map((s) => [s.id, s.actionRef, s.executionRef, s.observationRef]),
  );
  assert.deepEqual(a.reset.observationRefs, b.reset.observationRefs);
  assert.deepEqual(a.steps.map((s) => s.id), ["step-0001", "step-0002", "step-0003"]);
  const different = await runEpisode([ACTIONS[0]!, { command: "kv.get", args: ["key=other"] }]);
  assert.notEqual(different.digest, a.digest);
  assert.equal(different.steps[0]!.executionRef.digest, a.steps[0]!.executionRef.digest);
  assert.notEqual(different.steps[1]!.executionRef.digest, a.steps[1]!.executionRef.digest);
  assertValid(a);
});

test("reset records the default runtime-info and mounts observations", async () => {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await assert.rejects(episode.step({ command: "kv.get", args: [] }), (e: unknown) => e instanceof WpCodeboxError && e.code === "episode-not-started");
  const reset = await episode.reset();
  assert.equal(reset.id, "reset-0001");
  assert.deepEqual(reset.observations.map((o) => o.type), ["runtime-info", "mounts"]);
  assert.deepEqual(reset.observationRefs, reset.observations.map((o) => ({ id: o.id, digest: o.digest })));
  const trace = episode.trace();
  assert.equal(trace.runtime.backend, "fake");
  assert.equal(trace.runtime.wordpressVersion, "6.8");
  assertValid(trace);
  await episode.close();
});

test("without runtime.observe, reset observations are built from runtime.info()", async () => {
  const episode = createRuntimeEpisode({ resetObservations: [{ type: "runtime-info" }, { type: "mounts" }] }, createFakeBackend({ withObserve: false }));
  const reset = await episode.reset();
  assert.equal((reset.observations[0]!.data as { phpVersion: string }).phpVersion, "8.3");
  assert.deepEqual((reset.observations[1]!.data as { mounts: unknown[] }).mounts, [{ target: "/wordpress/wp-content/plugins/demo", mode: "readonly", kind: "directory" }]);
  await assert.rejects(episode.observe({ type: "kv" }), (e: unknown) => e instanceof WpCodeboxError && e.code === "observation-unsupported");
  assertValid(episode.trace());
});

test("failed and timed-out steps are recorded, not thrown", async () => {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await episode.reset();
  const failed = await episode.step({ command: "fail", args: [] });
  const timedOut = await episode.step({ command: "sleep", args: ["ms=10"], timeoutMs: 10 });
  assert.equal(failed.execution.status, "error");
  assert.equal(failed.execution.exitCode, 255);
  assert.equal(failed.execution.error?.code, "php-fatal");
  assert.equal(timedOut.execution.status, "timed-out");
  assert.equal(timedOut.execution.error?.code, "timeout");
  assert.equal(timedOut.action.timeoutMs, 10);
  const trace = episode.trace();
  assert.deepEqual(trace.steps.map((s) => s.execution.status), ["error", "timed-out"]);
  assert.deepEqual(failed.refs.execution, trace.steps[0]!.executionRef);
  assertValid(trace);
});

test("execute throwing (policy denial, unknown command) is recorded as an error execution with the code", async () => {
  const backend = createFakeBackend();
  const episode = createRuntimeEpisode({}, backend);
  await episode.reset();
  const denied = await episode.step({ command: "deny", args: ["a=1"] }, { type: "kv" });
  const unknown = await episode.step({ command: "no.such-command", args: [] });
  assert.equal(denied.execution.status, "error");
  assert.equal(denied.execution.exitCode, -1);
  assert.equal(denied.execution.error?.code, "policy-denied");
  assert.deepEqual(denied.execution.error?.data, { capability: "deny" });
  assert.deepEqual(denied.execution.args, ["a=1"]);
  assert.ok(denied.observation, "the requested observation is still taken");
  assert.equal(unknown.execution.error?.code, "unknown-command");
  assert.equal(episode.trace().steps.length, 2);
  assertValid(episode.trace());
});

test("reset re-runs: fast runtime.reset() when present, else dispose and recreate; the trace starts over", async () => {
  const recreate = createFakeBackend();
  const episode = createRuntimeEpisode({ php: "8.3" }, recreate);
  await episode.reset();
  await episode.step(ACTIONS[0]!);
  const again = await episode.reset();
  assert.equal(again.id, "reset-0002");
  assert.equal(recreate.created, 2);
  assert.equal(recreate.disposed, 1);
  assert.equal(episode.trace().steps.length, 0);
  const read = await episode.step({ command: "kv.get", args: ["key=blogname"] });
  assert.equal(read.execution.stdout, "", "the new runtime starts clean");
  assert.equal(recreate.specs[1]!.php, "8.3");
  assert.equal("resetObservations" in recreate.specs[1]!, false);

  const fast = createFakeBackend({ withReset: true });
  const quick = createRuntimeEpisode({}, fast);
  await quick.reset();
  await quick.step(ACTIONS[0]!);
  await quick.reset();
  assert.equal(fast.created, 1);
  assert.equal(fast.resets, 1);
  assert.equal(fast.disposed, 0);
  assert.equal((await quick.step({ command: "kv.get", args: ["key=blogname"] })).execution.stdout, "");
  assertValid(quick.trace());
  await quick.close();
  assert.equal(fast.disposed, 1);
  await assert.rejects(quick.reset(), (e: unknown) => e instanceof WpCodeboxError && e.code === "episode-closed");
});

test("snapshot and restore are recorded with refs and bring the state back", async () => {
  const backend = createFakeBackend();
  const episode = createRuntimeEpisode({}, backend);
  await episode.reset();
  await episode.step({ command: "kv.set", args: ["key=a", "value=1"] });
  const snap = await episode.snapshot();
  assert.equal(snap.semantics, "runtime-state-artifact");
  assert.match(snap.digest, /^[0-9a-f]{64}$/);
  await episode.step({ command: "kv.set", args: ["key=a", "value=2"] });
  await episode.restore(snap.id);
  assert.equal(backend.restored, 1);
  const read = await episode.step({ command: "kv.get", args: ["key=a"] });
  assert.equal(read.execution.stdout, "1");
  const trace = episode.trace();
  assert.deepEqual(trace.restores, [{ sequence: 4, snapshotRef: { id: snap.id, digest: snap.digest } }]);
  assertValid(trace);
  await assert.rejects(episode.restore("snapshot-nope"), (e: unknown) => e instanceof WpCodeboxError && e.code === "snapshot-not-found");
  const events = episodeEventsJsonl(trace).trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string });
  assert.deepEqual(events.map((e) => e.type), ["reset", "observation", "observation", "step", "snapshot", "step", "restore", "step"]);
});

test("collectArtifacts emits the trace and events files, moved payloads, and they validate", async () => {
  const episode = createRuntimeEpisode({ secretEnv: { API_TOKEN: "s3cr3t-token" } }, createFakeBackend());
  await episode.reset();
  await episode.step({ command: "kv.set", args: ["key=blogname", `value=${UNICODE}`] });
  await episode.step({ command: "kv.set", args: ["key=token", "value=s3cr3t-token"] }, { type: "big" });
  await episode.observe({ type: "kv" });
  await episode.snapshot();
  const artifacts = await episode.collectArtifacts();
  const byPath = new Map(artifacts.files.map((f) => [f.path, f]));
  assert.ok(byPath.has("files/commands.jsonl"), "the runtime's own files are kept");
  const traceFile = byPath.get(RUNTIME_EPISODE_TRACE_PATH);
  const eventsFile = byPath.get(RUNTIME_EPISODE_EVENTS_PATH);
  assert.equal(traceFile?.kind, RUNTIME_EPISODE_TRACE_KIND);
  assert.equal(eventsFile?.kind, RUNTIME_EPISODE_EVENTS_KIND);

  const text = String(traceFile.content);
  assert.ok(text.includes(UNICODE), "unicode is written as is");
  assert.equal(text.includes("s3cr3t-token"), false, "secret values are redacted");
  const trace = JSON.parse(text) as RuntimeEpisodeTrace;
  assertValid(trace);
  assert.deepEqual(trace, episode.trace(), "the file is the trace");
  assert.equal(JSON.stringify(trace, null, 2) + "\n", text, "round trip is byte-identical");

  const big = trace.steps[1]!.observation!;
  const ref = big.artifactRefs!.find((r) => r.path === `files/observations/${big.id}.json`);
  assert.ok(ref, "the large payload is referenced from artifactRefs");
  const payload = byPath.get(ref.path);
  assert.ok(payload);
  assert.equal(sha256Hex(String(payload.content)), ref.sha256);
  assert.equal((JSON.parse(String(payload.content)) as { text: string }).text.length, 70 * 1024);
  assert.deepEqual(episode.observationData(big.id), JSON.parse(String(payload.content)));

  const lines = String(eventsFile.content).trimEnd().split("\n");
  const events = lines.map((l) => JSON.parse(l) as unknown);
  for (const event of events) assert.deepEqual(validateAgainstSchema(RUNTIME_EPISODE_EVENT, event), []);
  assert.deepEqual(
    events.map((e) => (e as { type: string }).type),
    ["reset", "observation", "observation", "step", "step", "observation", "observation", "snapshot"],
  );
  assert.equal((events[0] as { traceDigest: string }).traceDigest, trace.digest);
  await episode.close();
});

test("domain fields produced by an observation stay inside data and the trace is valid", async () => {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await episode.reset();
  const observation = await episode.observe({ type: "scored" });
  assert.deepEqual(observation.data, { reward: 1, success: true, nested: { grader: "g" } });
  assertValid(episode.trace());
});

test("calls made at once run one at a time in call order: each step its own position, the trace valid", async () => {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await episode.reset();
  const [first, snap, second, observed, third] = await Promise.all([
    episode.step({ command: "kv.set", args: ["key=a", "value=1"] }),
    episode.snapshot(),
    episode.step({ command: "kv.get", args: ["key=a"] }),
    episode.observe({ type: "kv" }),
    episode.step({ command: "kv.set", args: ["key=a", "value=3"] }),
  ]);
  assert.deepEqual([first.refs.step, second.refs.step, third.refs.step], ["step-0001", "step-0002", "step-0003"]);
  const trace = episode.trace();
  assert.equal(validateRuntimeEpisodeTrace(trace).valid, true, JSON.stringify(validateRuntimeEpisodeTrace(trace).issues));
  // Recorded in call order: step 1, snapshot, step 2, observation, step 3.
  const sequences = [trace.steps[0]!.sequence, trace.snapshots[0]!.sequence, trace.steps[1]!.sequence, trace.observations![0]!.sequence, trace.steps[2]!.sequence];
  assert.deepEqual(sequences, [1, 2, 3, 4, 5]);
  assert.equal(snap.id, trace.snapshots[0]!.id);
  assert.equal(observed.id, trace.observations![0]!.observation.id);
  await episode.close();
});
