import assert from "node:assert/strict";
import { test } from "node:test";
import { getBundleFileValidator, type BundleFileValidationContext } from "../src/artifact-bundle/bundle-file-validators.js";
import type { ArtifactFile } from "../src/runtime.js";
import { RUNTIME_EPISODE_EVENTS_KIND, RUNTIME_EPISODE_TRACE_KIND, RUNTIME_EPISODE_TRACE_PATH, createRuntimeEpisode } from "../src/episode/index.js";
import { createFakeBackend } from "./episode-fake-backend.js";

function contextFor(files: ArtifactFile[], path: string): BundleFileValidationContext {
  const bytesOf = (f: ArtifactFile): Uint8Array => (typeof f.content === "string" ? new TextEncoder().encode(f.content) : f.content);
  const file = files.find((f) => f.path === path)!;
  return {
    directory: "/bundle",
    path,
    kind: file.kind,
    bytes: bytesOf(file),
    text: new TextDecoder().decode(bytesOf(file)),
    async readFile(p) {
      const hit = files.find((f) => f.path === p);
      if (!hit) throw new Error(`ENOENT ${p}`);
      return bytesOf(hit);
    },
  };
}

async function collected(): Promise<ArtifactFile[]> {
  const episode = createRuntimeEpisode({}, createFakeBackend());
  await episode.reset();
  await episode.step({ command: "kv.set", args: ["key=a", "value=1"] }, { type: "big" });
  const { files } = await episode.collectArtifacts();
  await episode.close();
  return files;
}

test("importing the episode module registers bundle validators for the trace and events kinds", async () => {
  const files = await collected();
  const traceValidator = getBundleFileValidator(RUNTIME_EPISODE_TRACE_KIND);
  const eventsValidator = getBundleFileValidator(RUNTIME_EPISODE_EVENTS_KIND);
  assert.ok(traceValidator && eventsValidator);
  assert.deepEqual(await traceValidator(contextFor(files, RUNTIME_EPISODE_TRACE_PATH)), []);
  assert.deepEqual(await eventsValidator(contextFor(files, "files/runtime-episode.jsonl")), []);
});

test("the trace validator reports a tampered or missing observation payload file", async () => {
  const files = await collected();
  const payload = files.find((f) => f.path.startsWith("files/observations/"))!;
  const tampered = files.map((f) => (f === payload ? { ...f, content: `${String(f.content)} ` } : f));
  const issues = await getBundleFileValidator(RUNTIME_EPISODE_TRACE_KIND)!(contextFor(tampered, RUNTIME_EPISODE_TRACE_PATH));
  assert.equal(issues.length, 2, JSON.stringify(issues));
  assert.match(issues[0]!.message, /^\/steps\/0\/observation\/artifactRefs\/0: .* SHA-256/);
  const missing = files.filter((f) => f !== payload);
  const gone = await getBundleFileValidator(RUNTIME_EPISODE_TRACE_KIND)!(contextFor(missing, RUNTIME_EPISODE_TRACE_PATH));
  assert.match(gone[0]!.message, /missing from the bundle/);
  const badEvents = files.map((f) => (f.kind === RUNTIME_EPISODE_EVENTS_KIND ? { ...f, content: '{"type":"reward"}\n' } : f));
  assert.equal((await getBundleFileValidator(RUNTIME_EPISODE_EVENTS_KIND)!(contextFor(badEvents, "files/runtime-episode.jsonl"))).length > 0, true);
});
