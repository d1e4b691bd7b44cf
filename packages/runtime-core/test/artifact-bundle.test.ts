import { test } from "node:test";
import assert from "node:assert/strict";
import { link, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ARTIFACT_MANIFEST_SCHEMA,
  ARTIFACT_METADATA_SCHEMA,
  ARTIFACT_REVIEW_SCHEMA,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA,
  computeBundleId,
  registerBundleFileValidator,
  verifyArtifactBundle,
  writeArtifactBundle,
  type ArtifactManifest,
  type WriteArtifactBundleOptions,
} from "../src/artifact-bundle/index.js";
import { validateAgainstSchema } from "../src/schema-validation.js";
import type { ExecutionResult, RuntimeArtifacts } from "../src/runtime.js";

const SECRET = "tok_9b1d4e7f";

function result(overrides: Partial<ExecutionResult> = {}): ExecutionResult {
  return {
    id: "exec-1",
    command: "wordpress.run-php",
    args: [`code=<?php echo getenv('API_TOKEN'); // ${SECRET}`],
    status: "ok",
    exitCode: 0,
    stdout: `token is ${SECRET}\n`,
    stderr: "",
    startedAt: "2024-01-01T00:00:00.000Z",
    finishedAt: "2024-01-01T00:00:00.050Z",
    durationMs: 50,
    ...overrides,
  };
}

function artifacts(overrides: Partial<RuntimeArtifacts> = {}): RuntimeArtifacts {
  return {
    info: {
      id: "rt-1",
      backend: "test",
      wordpressVersion: "6.5",
      phpVersion: "8.3",
      siteUrl: "http://127.0.0.1:9400",
      bootMode: "cached",
      bootDurationMs: 1200,
      mounts: [{ source: "/host/plugin", target: "/wordpress/wp-content/plugins/plugin", mode: "readonly", kind: "directory" }],
      policy: { commands: ["wordpress.run-php"], network: "deny", filesystem: "readwrite-mounts", secrets: "scoped" },
      plugins: ["plugin"],
      themes: [],
    },
    results: [result()],
    events: [{ at: "2024-01-01T00:00:00.000Z", type: "boot", data: { cookie: "wordpress_logged_in_abc123=admin%7Csecret" } }],
    files: [
      { path: "files/browser/steps.jsonl", kind: "browser-steps", contentType: "application/x-ndjson", content: `{"index":0,"note":"${SECRET}"}\n` },
      { path: "files/browser/screenshot-a.png", kind: "browser-screenshot", contentType: "image/png", content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) },
      { path: "files/browser/screenshot-b.png", kind: "browser-screenshot", contentType: "image/png", content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 4, 5]) },
    ],
    secrets: [SECRET],
    ...overrides,
  };
}

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "wpcb-bundle-"));
}

async function writeBundle(options: WriteArtifactBundleOptions = {}, input: RuntimeArtifacts = artifacts()) {
  const dir = join(await tempDir(), "bundle");
  const written = await writeArtifactBundle(dir, input, options);
  return { dir, written };
}

async function readJson<T = any>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, "utf8")) as T;
}

function codes(violations: Array<{ code: string }>): string[] {
  return [...new Set(violations.map((v) => v.code))].sort();
}

test("write → verify: a fresh bundle is valid, shaped and digest-addressed", async () => {
  const { dir, written } = await writeBundle({ extraReview: { assertions: { total: 1, passed: 1, failed: 0, results: [{ ok: true }] } } });
  assert.equal(written.valid, true);
  assert.match(written.id, /^artifact-bundle-sha256-[0-9a-f]{64}$/);
  assert.equal(written.id, `artifact-bundle-sha256-${written.digest}`);

  const manifest = await readJson<ArtifactManifest>(join(dir, "manifest.json"));
  assert.deepEqual(validateAgainstSchema(ARTIFACT_MANIFEST_SCHEMA, manifest), []);
  assert.deepEqual(manifest, written.manifest);
  const paths = manifest.files.map((f) => f.path);
  assert.deepEqual(paths, [...paths].sort());
  assert.deepEqual(paths, [
    "files/browser/screenshot-a.png",
    "files/browser/screenshot-b.png",
    "files/browser/steps.jsonl",
    "files/commands.jsonl",
    "files/events.jsonl",
    "files/review.json",
    "files/runtime-reference-manifest.json",
    "metadata.json",
    "report.html",
  ]);
  assert.deepEqual(manifest.bundle, computeBundleId(manifest.files));

  const review = await readJson(join(dir, "files/review.json"));
  assert.deepEqual(validateAgainstSchema(ARTIFACT_REVIEW_SCHEMA, review), []);
  assert.equal(review.status, "ok");
  assert.deepEqual(review.assertions.total, 1);
  assert.equal(review.evidence.commands, "files/commands.jsonl");
  assert.deepEqual(review.evidence.browserScreenshot, ["files/browser/screenshot-a.png", "files/browser/screenshot-b.png"]);
  assert.equal(review.redaction.applied, true);
  assert.ok(review.redaction.count >= 4, `count ${review.redaction.count}`);

  const metadata = await readJson(join(dir, "metadata.json"));
  assert.deepEqual(validateAgainstSchema(ARTIFACT_METADATA_SCHEMA, metadata), []);
  assert.equal(metadata.versions.wordpress, "6.5");
  assert.equal(metadata.policy.secrets, "scoped");
  assert.equal(metadata.artifacts.review, "files/review.json");
  assert.equal(metadata.artifacts.browserSteps, "files/browser/steps.jsonl");

  const reference = await readJson(join(dir, "files/runtime-reference-manifest.json"));
  assert.deepEqual(validateAgainstSchema(RUNTIME_REFERENCE_MANIFEST_SCHEMA, reference), []);
  assert.equal(reference.id, `runtime-reference-manifest-sha256-${reference.digest}`);
  assert.deepEqual(reference.artifactBundle, manifest.bundle);
  assert.deepEqual(
    reference.refs.map((r: { path: string }) => r.path),
    paths.filter((p) => p !== "files/runtime-reference-manifest.json"),
  );

  assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
});

test("secrets, cookies never reach a text artifact; binary files are untouched", async () => {
  const { dir } = await writeBundle();
  for (const p of ["files/commands.jsonl", "files/events.jsonl", "files/browser/steps.jsonl", "files/review.json", "metadata.json", "report.html"]) {
    const text = await readFile(join(dir, p), "utf8");
    assert.ok(!text.includes(SECRET), `${p} leaks the secret`);
    assert.ok(!text.includes("admin%7Csecret"), `${p} leaks the cookie`);
  }
  const line = JSON.parse((await readFile(join(dir, "files/commands.jsonl"), "utf8")).trim());
  assert.equal(line.stdout, "token is [REDACTED]\n");
  assert.deepEqual([...(await readFile(join(dir, "files/browser/screenshot-b.png")))], [0x89, 0x50, 0x4e, 0x47, 4, 5]);
});

test("review status is derived from results unless given", async () => {
  const input = artifacts({ results: [result(), result({ id: "exec-2", status: "timed-out", exitCode: 124 }), result({ id: "exec-3", status: "error", exitCode: 255, error: { code: "php-fatal", message: "boom" } })] });
  const a = await writeBundle({}, input);
  const reviewA = await readJson(join(a.dir, "files/review.json"));
  assert.equal(reviewA.status, "timed-out");
  assert.deepEqual(reviewA.commands.map((c: { status: string }) => c.status), ["ok", "timed-out", "error"]);
  assert.equal(reviewA.commands[2].error.code, "php-fatal");
  const b = await writeBundle({ status: "error", summary: "custom" }, artifacts());
  const reviewB = await readJson(join(b.dir, "files/review.json"));
  assert.equal(reviewB.status, "error");
  assert.equal(reviewB.summary, "custom");
});

test("bundle digest is independent of createdAt and changes with content", async () => {
  const a = await writeBundle({ createdAt: "2024-01-01T00:00:00.000Z" });
  const b = await writeBundle({ createdAt: "2025-06-01T00:00:00.000Z" });
  const c = await writeBundle({ createdAt: "2024-01-01T00:00:00.000Z" }, artifacts({ results: [result({ stdout: "other" })] }));
  // metadata.json records process.version, so the same input on the same Node yields the same id.
  assert.equal(a.written.id, b.written.id);
  assert.notEqual(a.written.id, c.written.id);
  const refA = await readJson(join(a.dir, "files/runtime-reference-manifest.json"));
  const refB = await readJson(join(b.dir, "files/runtime-reference-manifest.json"));
  assert.equal(refA.id, refB.id);
});

test("writer refuses a non-empty directory and bad artifact paths", async () => {
  const dir = await tempDir();
  await writeFile(join(dir, "existing.txt"), "x");
  await assert.rejects(writeArtifactBundle(dir, artifacts()), { code: "artifacts-dir-not-empty" });
  const empty = await tempDir();
  await assert.doesNotReject(writeArtifactBundle(empty, artifacts()));
  for (const path of ["files/../escape.txt", "/etc/passwd", "other/x.txt", "files/commands.jsonl", "files//x"]) {
    const target = join(await tempDir(), "b");
    await assert.rejects(
      writeArtifactBundle(target, artifacts({ files: [{ path, kind: "x", contentType: "text/plain", content: "x" }] })),
      { code: "invalid-artifact-path" },
      path,
    );
    await assert.rejects(stat(target), "nothing is written for a rejected bundle");
  }
});

test("reference extras: trace, events and snapshots are declared and verified", async () => {
  const input = artifacts({
    files: [
      { path: "files/runtime-episode-trace.json", kind: "runtime-episode-trace", contentType: "application/json", content: '{"schema":"wp-codebox/runtime-episode-trace/v1"}\n' },
      { path: "files/runtime-episode.jsonl", kind: "runtime-episode-events", contentType: "application/x-ndjson", content: "{}\n" },
      { path: "files/runtime-snapshots/snap-1/database.sqlite", kind: "runtime-snapshot-database", contentType: "application/vnd.sqlite3", content: new Uint8Array([1, 2, 3]) },
    ],
  });
  const { dir } = await writeBundle(
    { referenceExtras: { snapshots: [{ id: "snap-1", semantics: "runtime-state-artifact", replay: { status: "runtime-state-artifact" }, artifacts: ["files/runtime-snapshots/snap-1/database.sqlite"] }] } },
    input,
  );
  const reference = await readJson(join(dir, "files/runtime-reference-manifest.json"));
  assert.equal(reference.trace.path, "files/runtime-episode-trace.json");
  assert.equal(reference.events.kind, "runtime-episode-events");
  assert.equal(reference.snapshots[0].artifacts[0].bytes, 3);
  const metadata = await readJson(join(dir, "metadata.json"));
  assert.equal(metadata.artifacts.runtimeEpisodeTrace, "files/runtime-episode-trace.json");
  assert.equal(metadata.artifacts.runtimeEpisodeEvents, "files/runtime-episode.jsonl");
  assert.equal((await verifyArtifactBundle(dir)).valid, true);

  // Tamper the snapshot ref's hash (and re-pair the reference manifest's own digest so only the ref is wrong).
  reference.snapshots[0].artifacts[0].sha256 = "0".repeat(64);
  await rm(join(dir, "files/runtime-reference-manifest.json"));
  await writeFile(join(dir, "files/runtime-reference-manifest.json"), JSON.stringify(reference));
  const result = await verifyArtifactBundle(dir);
  assert.ok(result.violations.some((v) => v.code === "reference-manifest-mismatch" && v.path.includes("/snapshots/0/artifacts/0")), JSON.stringify(result.violations));

  await assert.rejects(writeBundle({ referenceExtras: { trace: "files/none.json" } }), { code: "invalid-artifact-path" });
});

test("registered validators check files of their kind", async () => {
  const input = artifacts({
    files: [{ path: "files/runtime-episode-trace.json", kind: "runtime-episode-trace", contentType: "application/json", content: '{"ok":false}' }],
  });
  const { dir } = await writeBundle({}, input);
  const unregister = registerBundleFileValidator("runtime-episode-trace", ({ text }) =>
    JSON.parse(text).ok ? [] : [{ code: "trace-invalid", message: "trace says not ok" }],
  );
  try {
    const result = await verifyArtifactBundle(dir);
    assert.deepEqual(result.violations, [{ code: "trace-invalid", path: "files/runtime-episode-trace.json", message: "trace says not ok" }]);
  } finally {
    unregister();
  }
  assert.equal((await verifyArtifactBundle(dir)).valid, true);
});

// ---- Tampering: each case must be caught with its code. ----

test("tamper: one changed byte → digest-mismatch", async () => {
  const { dir } = await writeBundle();
  const path = join(dir, "files/commands.jsonl");
  const bytes = await readFile(path);
  bytes[5] = bytes[5]! ^ 0x01;
  await writeFile(path, bytes);
  const result = await verifyArtifactBundle(dir);
  assert.equal(result.valid, false);
  assert.deepEqual(codes(result.violations), ["digest-mismatch"]);
  assert.equal(result.violations[0]!.path, "files/commands.jsonl");
});

test("tamper: appended byte → size-mismatch and digest-mismatch", async () => {
  const { dir } = await writeBundle();
  await writeFile(join(dir, "files/events.jsonl"), "\n", { flag: "a" });
  assert.deepEqual(codes((await verifyArtifactBundle(dir)).violations), ["digest-mismatch", "size-mismatch"]);
});

test("tamper: missing file → file-missing", async () => {
  const { dir } = await writeBundle();
  await rm(join(dir, "files/browser/steps.jsonl"));
  const result = await verifyArtifactBundle(dir);
  assert.deepEqual(codes(result.violations), ["file-missing"]);
  assert.equal(result.violations[0]!.path, "files/browser/steps.jsonl");
});

test("tamper: unlisted file → file-unlisted", async () => {
  const { dir } = await writeBundle();
  await mkdir(join(dir, "files/extra"), { recursive: true });
  await writeFile(join(dir, "files/extra/injected.txt"), "hello");
  const result = await verifyArtifactBundle(dir);
  assert.deepEqual(result.violations.map((v) => [v.code, v.path]), [["file-unlisted", "files/extra/injected.txt"]]);
});

test("tamper: file replaced by a symlink (even to identical bytes) → symlink", async () => {
  const { dir } = await writeBundle();
  const original = join(dir, "files/events.jsonl");
  const copy = join(await tempDir(), "events.jsonl");
  await writeFile(copy, await readFile(original));
  await rm(original);
  await symlink(copy, original);
  const result = await verifyArtifactBundle(dir);
  assert.deepEqual(result.violations.map((v) => [v.code, v.path]), [["symlink", "files/events.jsonl"]]);
});

test("tamper: hard link to a bundle file → hard-link", async () => {
  const { dir } = await writeBundle();
  await link(join(dir, "files/commands.jsonl"), join(await tempDir(), "outside-link"));
  const result = await verifyArtifactBundle(dir);
  assert.deepEqual(result.violations.map((v) => [v.code, v.path]), [["hard-link", "files/commands.jsonl"]]);
});

test("tamper: .. or absolute path in the manifest → path-escape", async () => {
  const { dir } = await writeBundle();
  const manifest = await readJson<ArtifactManifest>(join(dir, "manifest.json"));
  const entry = manifest.files.find((f) => f.path === "files/browser/steps.jsonl")!;
  entry.path = "files/../../outside.jsonl";
  manifest.files.push({ ...entry, path: "/etc/passwd" });
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
  const result = await verifyArtifactBundle(dir);
  const escapes = result.violations.filter((v) => v.code === "path-escape").map((v) => v.path);
  assert.deepEqual(escapes, ["files/../../outside.jsonl", "/etc/passwd"]);
  assert.equal(result.valid, false);
});

test("tamper: wrong bundle id → bundle-digest-mismatch", async () => {
  const { dir } = await writeBundle();
  const manifest = await readJson<ArtifactManifest>(join(dir, "manifest.json"));
  manifest.bundle.id = `artifact-bundle-sha256-${"a".repeat(64)}`;
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
  const result = await verifyArtifactBundle(dir);
  assert.deepEqual(codes(result.violations), ["bundle-digest-mismatch", "reference-manifest-mismatch"]);
});

for (const field of ["id", "digest"] as const) {
  test(`tamper: edited bundle ${field} → the reference-manifest violation names the ${field} that differs`, async () => {
    const { dir } = await writeBundle();
    const manifest = await readJson<ArtifactManifest>(join(dir, "manifest.json"));
    const was = manifest.bundle[field];
    const forged = `${was.slice(0, -1)}${was.endsWith("0") ? "1" : "0"}`;
    manifest.bundle[field] = forged;
    await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
    const result = await verifyArtifactBundle(dir);
    const violation = result.violations.find((v) => v.code === "reference-manifest-mismatch");
    assert.ok(violation, JSON.stringify(result.violations));
    assert.equal(violation.message, `Reference manifest names bundle ${field} ${was}; manifest.json says ${forged}.`);
  });
}

test("tamper: consistent re-hash of a changed file is still caught by the bundle digest", async () => {
  const { dir } = await writeBundle();
  const { sha256Hex } = await import("../src/digest.js");
  const path = join(dir, "files/browser/steps.jsonl");
  await writeFile(path, "forged\n");
  const manifest = await readJson<ArtifactManifest>(join(dir, "manifest.json"));
  const entry = manifest.files.find((f) => f.path === "files/browser/steps.jsonl")!;
  entry.sha256 = sha256Hex("forged\n");
  entry.bytes = 7;
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
  const result = await verifyArtifactBundle(dir);
  assert.ok(codes(result.violations).includes("bundle-digest-mismatch"));
  assert.ok(codes(result.violations).includes("reference-manifest-mismatch"));
});

test("tamper: reference manifest digest/id or refs changed → reference-manifest-mismatch", async () => {
  const { dir } = await writeBundle();
  const refPath = join(dir, "files/runtime-reference-manifest.json");
  const reference = await readJson(refPath);
  reference.refs[0].sha256 = "f".repeat(64);
  const { sha256Hex } = await import("../src/digest.js");
  const text = JSON.stringify(reference);
  await writeFile(refPath, text);
  // Re-list the reference manifest's new hash so only the reference checks can fail.
  const manifest = await readJson<ArtifactManifest>(join(dir, "manifest.json"));
  const entry = manifest.files.find((f) => f.path === "files/runtime-reference-manifest.json")!;
  entry.sha256 = sha256Hex(text);
  entry.bytes = Buffer.byteLength(text);
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
  const result = await verifyArtifactBundle(dir);
  assert.deepEqual(codes(result.violations), ["reference-manifest-mismatch"]);
  const pointers = result.violations.map((v) => v.path);
  assert.ok(pointers.includes("files/runtime-reference-manifest.json#/digest"), JSON.stringify(pointers));
  assert.ok(pointers.includes("files/runtime-reference-manifest.json#/refs/0"), JSON.stringify(pointers));
});

test("tamper: review evidence pointing at an unlisted path → dangling-reference", async () => {
  // The writer refuses a dangling reference up front, so one can only come from tampering.
  const target = join(await tempDir(), "b");
  await assert.rejects(writeArtifactBundle(target, artifacts(), { extraReview: { evidence: { ghost: "files/ghost.png" } } }), {
    code: "invalid-artifact-path",
  });
  await assert.rejects(stat(target));
  const ok = await writeBundle();
  const reviewPath = join(ok.dir, "files/review.json");
  const review = await readJson(reviewPath);
  review.evidence.ghost = "files/ghost.png";
  await writeFile(reviewPath, JSON.stringify(review));
  const result = await verifyArtifactBundle(ok.dir);
  assert.ok(result.violations.some((v) => v.code === "dangling-reference" && v.path === "files/review.json#/evidence/ghost"), JSON.stringify(result.violations));
});

test("bad bundles never throw: missing dir, missing or malformed manifest", async () => {
  const missing = await verifyArtifactBundle(join(await tempDir(), "nope"));
  assert.deepEqual(codes(missing.violations), ["bundle-missing"]);
  const { dir } = await writeBundle();
  await writeFile(join(dir, "manifest.json"), "{not json");
  assert.deepEqual(codes((await verifyArtifactBundle(dir)).violations), ["manifest-invalid"]);
  await writeFile(join(dir, "manifest.json"), JSON.stringify({ schema: "x", files: "no" }));
  const shaped = await verifyArtifactBundle(dir);
  assert.equal(shaped.valid, false);
  assert.ok(shaped.violations.every((v) => v.code === "manifest-invalid"));
  await rm(join(dir, "manifest.json"));
  assert.deepEqual(codes((await verifyArtifactBundle(dir)).violations), ["file-missing"]);
});

test("writeArtifactBundle refuses kernel pseudo-filesystems instead of hanging on mkdir", async () => {
  const { writeArtifactBundle } = await import("../src/artifact-bundle/write-artifact-bundle.js");
  const { WpCodeboxError } = await import("../src/errors.js");
  const info = { id: "r", backend: "fake", wordpressVersion: "6.5.5", phpVersion: "8.3", siteUrl: "", bootMode: "cached" as const, bootDurationMs: 0, mounts: [], policy: { commands: [], network: "deny" as const, filesystem: "readwrite-mounts" as const, secrets: "none" as const }, plugins: [], themes: [] };
  await assert.rejects(
    writeArtifactBundle("/proc/wp-codebox-test", { info, results: [], events: [], files: [], secrets: [] }),
    (e: unknown) => e instanceof WpCodeboxError && e.code === "artifacts-dir-invalid",
  );
});
