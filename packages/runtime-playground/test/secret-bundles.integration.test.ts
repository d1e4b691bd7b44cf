/**
 * Integration (one WordPress for the file): a `--secret-env` value that PHP wrote into the site
 * (an option, a post, a file in wp-content, an uploaded file, an uploaded zip) never reaches a
 * bundle in any of its forms, snapshot files included. The bundle is searched byte for byte with
 * the redactor's own list of forms (raw, base64, hex, other letter cases, escapes), and the zip's
 * entries are searched inflated. Binary files are masked with as many bytes, so the database keeps
 * its size and its SQLite header, the bundle verifies, and the snapshot is refused for restore with
 * `snapshot-redacted` instead of failing its hashes.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { unzipSync } from "fflate";
import { createRedactor, readArtifactFile, readRuntimeSnapshotFromBundle, verifyArtifactBundle, writeArtifactBundle, type WordPressRuntimeSnapshot } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const SECRET = "Zq7-s3cret/Token+42";
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-secret-bundles-"));
let runtime: PlaygroundRuntime;
let snapshot: WordPressRuntimeSnapshot;
let bundleDir = "";

/** Where PHP puts the secret, and the snapshot file (path ending) that must then hold it (masked). */
const PLACES = [
  { name: "an option (raw)", php: "update_option('wedge_raw', $s);", file: "wp-content/database/.ht.sqlite" },
  { name: "an option (base64)", php: "update_option('wedge_b64', base64_encode($s));", file: "wp-content/database/.ht.sqlite" },
  { name: "an option (hex)", php: "update_option('wedge_hex', bin2hex($s));", file: "wp-content/database/.ht.sqlite" },
  { name: "a post", php: "wp_insert_post(['post_title' => 'Secret post', 'post_content' => 'key: ' . $s, 'post_status' => 'publish']);", file: "wp-content/database/.ht.sqlite" },
  { name: "a file in wp-content", php: "file_put_contents(WP_CONTENT_DIR . '/wedge-secret.txt', 'token=' . strtoupper($s));", file: "wp-content/wedge-secret.txt" },
  { name: "an uploaded file", php: "$u = wp_upload_bits('wedge-note.txt', null, json_encode(['k' => $s])); if ($u['error']) throw new Exception($u['error']);", file: "/wedge-note.txt" },
  {
    name: "an uploaded zip (deflated)",
    php: "$z = new ZipArchive(); $p = wp_upload_dir()['path'] . '/wedge.zip'; $z->open($p, ZipArchive::CREATE); $z->addFromString('inside/secret.txt', str_repeat('padding ', 50) . $s . str_repeat(' padding', 50)); $z->addFromString('other.txt', str_repeat('plain ', 100)); $z->close();",
    file: "/wedge.zip",
  },
];

before(async () => {
  runtime = await createPlaygroundBackend().create({ secretEnv: { WEDGE_SECRET: SECRET } });
  for (const place of PLACES) {
    const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php $s = getenv('WEDGE_SECRET'); ${place.php}`] });
    assert.equal(result.status, "ok", `${place.name}: ${JSON.stringify(result.error)} ${result.stderr}`);
  }
  snapshot = await runtime.snapshot();
  const bundle = await writeArtifactBundle(join(scratch, "bundle"), await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: true }));
  bundleDir = bundle.directory;
});

after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** True when `bytes` hold a form of the secret the redactor knows (raw, base64, hex, cases, escapes). */
function secretIn(bytes: Uint8Array): boolean {
  return createRedactor([SECRET]).redactBytes(bytes) !== bytes;
}

/** `secretIn` for a file, inside each entry of a zip archive too. */
function secretInFile(path: string, bytes: Uint8Array): boolean {
  return secretIn(bytes) || (path.endsWith(".zip") && Object.values(unzipSync(bytes)).some((entry) => secretIn(entry)));
}

for (const place of PLACES) {
  test(`a secret PHP wrote to ${place.name} is in the snapshot, and masked in the bundle`, () => {
    const file = snapshot.files.find((f) => f.path.endsWith(place.file));
    assert.ok(file?.content && secretInFile(file.path, file.content), `the snapshot itself holds the secret in ${place.file}`);
    const stored = readFileSync(join(bundleDir, "files/runtime-snapshots", snapshot.id, file.path));
    // A zip's masked entries are deflated again; every other file keeps its size byte for byte.
    if (!file.path.endsWith(".zip")) assert.equal(stored.byteLength, file.bytes, `${file.path} keeps its size`);
    assert.ok(!secretInFile(file.path, stored), `${file.path} holds no form of the secret`);
  });
}

test("no byte of the bundle holds the secret in any form it knows (raw, base64, hex, other case), zip entries inflated", () => {
  const forms = [Buffer.from(SECRET), Buffer.from(Buffer.from(SECRET).toString("base64")), Buffer.from(Buffer.from(SECRET).toString("hex"))];
  let files = 0;
  for (const path of walk(bundleDir)) {
    const bytes = readFileSync(path);
    files++;
    for (const form of forms) assert.equal(bytes.indexOf(form), -1, `${relative(bundleDir, path)} holds ${form.toString()}`);
    assert.ok(!secretIn(bytes), `${relative(bundleDir, path)} holds a form of the secret`);
    if (path.endsWith(".zip")) {
      const entries = unzipSync(bytes);
      assert.deepEqual(Object.keys(entries).sort(), ["inside/secret.txt", "other.txt"], "the masked zip is still a zip with its entries");
      for (const [name, data] of Object.entries(entries)) assert.ok(!secretIn(data), `zip entry ${name} holds a form of the secret`);
      assert.match(Buffer.from(entries["inside/secret.txt"]!).toString(), /padding \*{19} padding/);
    }
  }
  assert.ok(files > 10);
});

test("the masked database keeps its SQLite header and size; the bundle verifies and lists the masked files", async () => {
  const db = readFileSync(join(bundleDir, "files/runtime-snapshots", snapshot.id, "wp-content/database/.ht.sqlite"));
  assert.equal(db.subarray(0, 16).toString("latin1"), "SQLite format 3\0");
  assert.equal(db.byteLength, snapshot.database.bytes);
  assert.equal((await verifyArtifactBundle(bundleDir)).valid, true);
  const review = JSON.parse(readFileSync(join(bundleDir, "files/review.json"), "utf8")) as { redaction: { applied: boolean; maskedFiles?: string[] } };
  assert.equal(review.redaction.applied, true);
  assert.ok(review.redaction.maskedFiles?.includes(`files/runtime-snapshots/${snapshot.id}/wp-content/database/.ht.sqlite`), JSON.stringify(review.redaction));
});

test("a snapshot with masked files is refused for restore from the bundle with snapshot-redacted", async () => {
  await assert.rejects(readRuntimeSnapshotFromBundle(bundleDir, snapshot.id), (error: { code?: string; message?: string }) => {
    assert.equal(error.code, "snapshot-redacted");
    assert.match(error.message ?? "", /held a secret/);
    return true;
  });
});

test("a snapshot file read on its own (read-artifact) is masked as in the bundle", async () => {
  const artifacts = await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: true });
  const read = readArtifactFile(artifacts, `files/runtime-snapshots/${snapshot.id}/wp-content/wedge-secret.txt`);
  assert.ok(!secretIn(read.content));
  assert.match(Buffer.from(read.content).toString(), /^token=\*{19}$/);
});
