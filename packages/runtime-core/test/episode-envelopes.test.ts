import assert from "node:assert/strict";
import { test } from "node:test";
import { canonicalJson, domainDigest } from "../src/digest.js";
import { WpCodeboxError } from "../src/errors.js";
import {
  EPISODE_OBSERVATION_INLINE_LIMIT_BYTES,
  RUNTIME_EPISODE_ACTION_SCHEMA,
  RUNTIME_EPISODE_OBSERVATION_SCHEMA,
  createEpisodeAction,
  createEpisodeObservation,
  episodeActionDigest,
  episodeObservationDigest,
  externalizeObservationPayload,
  RuntimeEpisodeActionSchema,
  RuntimeEpisodeObservationSchema,
} from "../src/episode/index.js";
import { sha256Hex } from "../src/digest.js";
import { validateAgainstSchema } from "../src/schema-validation.js";

const UNICODE = "KEKC博客 🧪";

test("action digest is domainDigest(schema id, envelope minus id and digest)", () => {
  const action = createEpisodeAction({ command: "wordpress.run-php", args: ["code=<?php echo 1;"] });
  const expected = domainDigest(RUNTIME_EPISODE_ACTION_SCHEMA, {
    schema: RUNTIME_EPISODE_ACTION_SCHEMA,
    kind: "command",
    command: "wordpress.run-php",
    args: ["code=<?php echo 1;"],
  });
  assert.equal(action.digest, expected);
  assert.equal(action.id, `action-${expected.slice(0, 16)}`);
  assert.equal(action.kind, "command");
  assert.deepEqual(validateAgainstSchema(RuntimeEpisodeActionSchema, action), []);
});

test("action ids are stable and positional; intent fields change the digest", () => {
  const input = { kind: "http" as const, command: "wordpress.http", args: ["path=/"], method: "GET", url: "/" };
  const a = createEpisodeAction(input, { position: 3 });
  const b = createEpisodeAction({ ...input }, { position: 3 });
  assert.deepEqual(a, b);
  assert.match(a.id, /^action-0003-[0-9a-f]{16}$/);
  assert.equal(createEpisodeAction(input, { position: 4 }).digest, a.digest, "position changes the id only");
  assert.notEqual(createEpisodeAction(input, { position: 4 }).id, a.id);
  assert.notEqual(createEpisodeAction({ ...input, method: "POST" }).digest, a.digest);
  assert.equal(episodeActionDigest(a), a.digest);
});

test("createEpisodeAction rejects a malformed action with invalid-episode-action and the bad path", () => {
  assert.throws(
    () => createEpisodeAction({ command: "x", args: [1 as unknown as string] }),
    (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-episode-action" && /\/args\/0/.test(e.message),
  );
  assert.throws(() => createEpisodeAction({ command: "x", kind: "reward" as never }), /invalid|kind/i);
});

test("observation digest ignores id, digest and timestamp", () => {
  const one = createEpisodeObservation({ type: "kv", data: { a: 1 }, timestamp: "2026-01-01T00:00:00.000Z" });
  const two = createEpisodeObservation({ type: "kv", data: { a: 1 }, timestamp: "2026-06-01T12:00:00.000Z" });
  assert.equal(one.digest, two.digest);
  assert.equal(one.id, two.id);
  assert.equal(one.digest, domainDigest(RUNTIME_EPISODE_OBSERVATION_SCHEMA, { schema: RUNTIME_EPISODE_OBSERVATION_SCHEMA, type: "kv", data: { a: 1 } }));
  assert.notEqual(createEpisodeObservation({ type: "kv", data: { a: 2 } }).digest, one.digest);
  assert.equal(episodeObservationDigest(one), one.digest);
  assert.deepEqual(validateAgainstSchema(RuntimeEpisodeObservationSchema, one), []);
});

test("unicode survives canonical JSON and serialisation byte-identically", () => {
  const observation = createEpisodeObservation({ type: "wordpress-state", data: { blogname: UNICODE } });
  const action = createEpisodeAction({ command: "wordpress.wp-cli", args: [`blogname=${UNICODE}`] });
  assert.ok(canonicalJson(observation.data).includes(UNICODE));
  assert.equal(Buffer.from(canonicalJson({ s: UNICODE }), "utf8").toString("hex"), Buffer.from(`{"s":"${UNICODE}"}`, "utf8").toString("hex"));
  const back = JSON.parse(Buffer.from(JSON.stringify({ observation, action }), "utf8").toString("utf8"));
  assert.equal((back.observation.data as { blogname: string }).blogname, UNICODE);
  assert.equal(back.action.args[0], `blogname=${UNICODE}`);
  assert.equal(episodeObservationDigest(back.observation), observation.digest);
  assert.equal(episodeActionDigest(back.action), action.digest);
});

test("large payloads move to files/observations/<id>.json and are referenced by digest", () => {
  const small = createEpisodeObservation({ type: "kv", data: { a: 1 } });
  assert.equal(externalizeObservationPayload(small).file, undefined);
  const big = createEpisodeObservation({ type: "big", data: { text: "é".repeat(EPISODE_OBSERVATION_INLINE_LIMIT_BYTES) } });
  const { observation, file } = externalizeObservationPayload(big);
  assert.ok(file);
  assert.equal(file.path, `files/observations/${big.id}.json`);
  assert.equal(observation.id, big.id);
  const ref = observation.artifactRefs?.at(-1);
  assert.ok(ref);
  assert.equal(ref.sha256, sha256Hex(file.content as string));
  assert.equal(ref.bytes, Buffer.byteLength(file.content as string));
  assert.deepEqual(JSON.parse(file.content as string), big.data);
  assert.deepEqual(observation.data, { artifact: file.path, sha256: ref.sha256, bytes: ref.bytes });
  assert.equal(observation.digest, episodeObservationDigest(observation));
  assert.notEqual(observation.digest, big.digest);
});
