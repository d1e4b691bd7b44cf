import assert from "node:assert/strict";
import { test } from "node:test";
import AjvModule from "ajv";
import addFormatsModule from "ajv-formats";
import {
  RUNTIME_EPISODE_TRACE_JSON_SCHEMA,
  RUNTIME_EPISODE_TRACE_SCHEMA,
  createEpisodeObservation,
  createRuntimeEpisode,
  finalizeEpisodeTrace,
  validateRuntimeEpisodeTrace,
  withEpisodeTraceArtifactRef,
  type RuntimeEpisodeTrace,
} from "../src/episode/index.js";
import { createFakeBackend } from "./episode-fake-backend.js";

async function sampleTrace(): Promise<RuntimeEpisodeTrace> {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await episode.reset();
  await episode.step({ command: "kv.set", args: ["key=a", "value=1"] }, { type: "kv" });
  await episode.step({ command: "fail", args: [] });
  await episode.observe({ type: "kv" });
  await episode.snapshot();
  const trace = episode.trace();
  await episode.close();
  return JSON.parse(JSON.stringify(trace)) as RuntimeEpisodeTrace;
}

/** Re-derives every digest and ref so only the intended change remains. */
function refinalize(trace: RuntimeEpisodeTrace): RuntimeEpisodeTrace {
  const { id: _id, digest: _digest, ...draft } = trace;
  return finalizeEpisodeTrace(draft);
}

function paths(trace: unknown): string[] {
  return validateRuntimeEpisodeTrace(trace).issues.map((i) => i.path);
}

test("a recorded trace is valid, also after a JSON round trip", async () => {
  const trace = await sampleTrace();
  assert.deepEqual(validateRuntimeEpisodeTrace(trace), { valid: true, issues: [] });
});

test("schema problems are reported with JSON pointer paths", async () => {
  const trace = await sampleTrace() as unknown as Record<string, unknown>;
  const bad = { ...trace, version: 2, steps: [{ ...(trace.steps as object[])[0], index: "zero" }] };
  delete (bad as Record<string, unknown>).runtime;
  const result = validateRuntimeEpisodeTrace(bad);
  assert.equal(result.valid, false);
  assert.ok(result.issues.some((i) => i.path === "/version"), JSON.stringify(result.issues));
  assert.ok(result.issues.some((i) => i.path === "/runtime" && i.message === "is required"));
  assert.ok(result.issues.some((i) => i.path === "/steps/0/index"));
  assert.deepEqual(validateRuntimeEpisodeTrace(null).valid, false);
  assert.deepEqual(validateRuntimeEpisodeTrace({ schema: "wp-codebox/other/v1" }).valid, false);
});

test("a tampered action digest is caught", async () => {
  const trace = await sampleTrace();
  trace.steps[0]!.action.args = ["key=a", "value=2"];
  assert.deepEqual(paths(trace), ["/steps/0/action/digest"]);
});

test("a tampered observation is caught, in reset, step and standalone observations", async () => {
  for (const tamper of [
    (t: RuntimeEpisodeTrace) => void ((t.reset.observations[0]!.data as Record<string, unknown>).phpVersion = "7.4"),
    (t: RuntimeEpisodeTrace) => void (t.steps[0]!.observation!.data = { a: "9" }),
    (t: RuntimeEpisodeTrace) => void (t.observations![0]!.observation.type = "other"),
  ]) {
    const trace = await sampleTrace();
    tamper(trace);
    const issues = validateRuntimeEpisodeTrace(trace).issues;
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.match(issues[0]!.path, /observation(s\/0\/observation)?\/digest$|observations\/0\/digest$/);
    assert.match(issues[0]!.message, /digest does not match/);
  }
});

test("a timestamp change is presentation only and stays valid", async () => {
  const trace = await sampleTrace();
  trace.steps[0]!.observation!.timestamp = "2000-01-01T00:00:00.000Z";
  trace.steps[0]!.execution.durationMs = 123456;
  trace.createdAt = "2000-01-01T00:00:00.000Z";
  assert.deepEqual(paths(trace), []);
});

test("a tampered execution and a forged trace digest are caught", async () => {
  const trace = await sampleTrace();
  trace.steps[1]!.execution.status = "ok";
  assert.deepEqual(paths(trace), ["/steps/1/execution/digest"]);
  const forged = await sampleTrace();
  forged.digest = "0".repeat(64);
  assert.deepEqual(paths(forged), ["/digest"]);
});

test("a ref whose digest differs from its target is caught", async () => {
  const trace = await sampleTrace();
  // Re-point the ref at a different but self-consistent observation, then re-derive the trace digest.
  const other = createEpisodeObservation({ type: "kv", data: { other: true } });
  trace.steps[0]!.observationRef = { id: trace.steps[0]!.observation!.id, digest: other.digest };
  const result = validateRuntimeEpisodeTrace(refinalize(trace));
  assert.deepEqual(result.issues.map((i) => i.path), ["/steps/0/observationRef/digest"]);

  const action = await sampleTrace();
  action.steps[1]!.actionRef = { ...action.steps[1]!.actionRef, digest: action.steps[0]!.action.digest };
  assert.deepEqual(paths(refinalize(action)), ["/steps/1/actionRef/digest"]);

  const reset = await sampleTrace();
  reset.reset.observationRefs = [reset.reset.observationRefs[1]!, reset.reset.observationRefs[0]!];
  assert.deepEqual(paths(refinalize(reset)), ["/reset/observationRefs/0/id", "/reset/observationRefs/0/digest", "/reset/observationRefs/1/id", "/reset/observationRefs/1/digest"]);

  const restore = await sampleTrace();
  restore.restores = [{ sequence: 99, snapshotRef: { id: "snapshot-missing", digest: "a".repeat(64) } }];
  assert.deepEqual(paths(refinalize(restore)), ["/restores/0/snapshotRef"]);
});

test("domain field reward at the top level is rejected; inside data it is allowed", async () => {
  const trace = await sampleTrace();
  const withReward = { ...trace, reward: 1 };
  const issues = validateRuntimeEpisodeTrace(withReward).issues;
  assert.ok(issues.some((i) => i.path === "/reward" && /domain field "reward"/.test(i.message)), JSON.stringify(issues));

  const nested = await sampleTrace();
  (nested.steps[0]!.action as Record<string, unknown>)["model-eval"] = {};
  (nested.runtime as Record<string, unknown>).scenario = "s1";
  const nestedPaths = validateRuntimeEpisodeTrace(nested).issues.filter((i) => /domain field/.test(i.message)).map((i) => i.path);
  assert.deepEqual(nestedPaths.sort(), ["/runtime/scenario", "/steps/0/action/model-eval"]);

  const inData = await sampleTrace();
  const step = inData.steps[0]!;
  step.observation = createEpisodeObservation({ type: "kv", data: { reward: 1, benchmark: "b", "task-set": ["t"], success: true } }, { position: 3 });
  step.observationRef = { id: step.observation.id, digest: step.observation.digest };
  assert.deepEqual(validateRuntimeEpisodeTrace(refinalize(inData)), { valid: true, issues: [] });
});

test("duplicate ids and a wrong step index are caught", async () => {
  const trace = await sampleTrace();
  trace.steps[1]!.index = 0;
  trace.steps[1]!.id = trace.steps[0]!.id;
  assert.deepEqual(paths(refinalize(trace)), ["/steps/1/index", "/steps/1"]);
});

test("the published JSON schema is plain JSON Schema and agrees with the validator", async () => {
  const published = JSON.parse(JSON.stringify(RUNTIME_EPISODE_TRACE_JSON_SCHEMA)) as Record<string, unknown>;
  assert.equal(published.$id, RUNTIME_EPISODE_TRACE_SCHEMA);
  const Ajv = (AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule;
  const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  const ajv = new (Ajv as unknown as new (o: object) => import("ajv").default)({ allErrors: true, strict: false });
  (addFormats as unknown as (a: unknown) => void)(ajv);
  const validate = ajv.compile(published);
  const trace = await sampleTrace();
  assert.equal(validate(trace), true, JSON.stringify(validate.errors));
  assert.equal(validate({ ...trace, steps: [{}] }), false);
  const linked = withEpisodeTraceArtifactRef(trace, { bundleId: "artifact-bundle-sha256-x", digest: "b".repeat(64) });
  assert.equal(validate(linked), true);
  assert.deepEqual(validateRuntimeEpisodeTrace(linked).issues, []);
  assert.notEqual(linked.digest, trace.digest);
});
