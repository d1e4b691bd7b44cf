/** One artifact file read back by path: only the runtime's own files, redacted like the bundle, capped. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ARTIFACT_READ_CAP_BYTES, WpCodeboxError, readArtifactFile, type RuntimeArtifacts, type RuntimeInfo } from "../src/index.js";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const info = { id: "rt", backend: "fake" } as RuntimeInfo;
const artifacts: RuntimeArtifacts = {
  info,
  results: [],
  events: [],
  secrets: ["s3cret"],
  files: [
    { path: "files/browser/screenshot-a.png", kind: "browser-screenshot", contentType: "image/png", content: PNG },
    { path: "files/logs/php.log", kind: "php-log", contentType: "text/plain", content: "token s3cret here" },
    { path: "files/data.json", kind: "data", contentType: "application/json", content: new TextEncoder().encode('{"password":"hunter2"}') },
  ],
};
const code = (expected: string) => (e: unknown) => e instanceof WpCodeboxError && e.code === expected;

test("a listed file comes back as bytes; binary unchanged, text redacted as in a bundle", () => {
  const png = readArtifactFile(artifacts, "files/browser/screenshot-a.png");
  assert.deepEqual([...png.content], [...PNG]);
  assert.equal(png.bytes, PNG.byteLength);
  assert.equal(png.contentType, "image/png");
  assert.equal(png.kind, "browser-screenshot");
  assert.equal(new TextDecoder().decode(readArtifactFile(artifacts, "files/logs/php.log").content), "token [REDACTED] here");
  assert.equal(new TextDecoder().decode(readArtifactFile(artifacts, "files/data.json").content), '{"password":"[REDACTED]"}');
});

test("paths that are not the runtime's files are refused with artifact-not-found", () => {
  for (const path of ["manifest.json", "commands.jsonl", "files/nope.png", "../files/browser/screenshot-a.png", "/files/browser/screenshot-a.png", "files/./browser/screenshot-a.png", "files\\browser\\screenshot-a.png", ""]) {
    assert.throws(() => readArtifactFile(artifacts, path), code("artifact-not-found"), path);
  }
});

test("content over maxBytes is refused with artifact-too-large; maxBytes never exceeds the cap", () => {
  assert.throws(() => readArtifactFile(artifacts, "files/browser/screenshot-a.png", { maxBytes: 4 }), (e: unknown) => code("artifact-too-large")(e) && (e as WpCodeboxError).data.bytes === PNG.byteLength && (e as WpCodeboxError).data.maxBytes === 4);
  const huge: RuntimeArtifacts = { ...artifacts, files: [{ path: "files/big.bin", kind: "blob", contentType: "application/octet-stream", content: new Uint8Array(ARTIFACT_READ_CAP_BYTES + 1) }] };
  assert.throws(() => readArtifactFile(huge, "files/big.bin", { maxBytes: ARTIFACT_READ_CAP_BYTES * 2 }), (e: unknown) => code("artifact-too-large")(e) && (e as WpCodeboxError).data.maxBytes === ARTIFACT_READ_CAP_BYTES);
});
