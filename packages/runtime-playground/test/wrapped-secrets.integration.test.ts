/**
 * Integration (one WordPress for the file): PHP prints a `--secret-env` value as base64, base64url
 * and hex cut with `chunk_split` (MIME's 76-character CRLF lines, `\n` every 64, groups of 4 with
 * spaces, 1 character per line, ` | ` and `:` groups), padded and not, alone and inside a longer
 * base64 text at each byte alignment; stores each variant in an option and all of them in a file.
 * The bundle holds none of them in stdout, the file or the database, read back with every
 * separator removed. And a secret too short to redact is refused by `create` before anything boots.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { REDACTED, verifyArtifactBundle, writeArtifactBundle, type WordPressRuntimeSnapshot } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

// `>>>` and `???` put `+` and `/` into its base64 (and `-`, `_` into base64url).
const SECRET = "wpcb>>>?secret???Ünï~";
const printer = readFileSync(fileURLToPath(new URL("../../../test/fixtures/php/print-wrapped-secret.php", import.meta.url)), "utf8");
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-wrapped-secrets-"));
let runtime: PlaygroundRuntime;
let snapshot: WordPressRuntimeSnapshot;
let stdout = "";
let bundleDir = "";

/** For each encoding the PHP program prints: the characters that depend on the secret's bytes alone. */
function cores(): { name: string; core: string; caseless: boolean }[] {
  const bytes = Buffer.from(SECRET, "utf8");
  const b64 = bytes.toString("base64");
  const out = [
    { name: "base64", core: b64.slice(0, Math.floor((bytes.length * 8) / 6)), caseless: false },
    { name: "base64url", core: bytes.toString("base64url").slice(0, Math.floor((bytes.length * 8) / 6)), caseless: false },
    { name: "hex", core: bytes.toString("hex"), caseless: true },
  ];
  for (const prefix of ["k", "ke", "key"]) {
    const whole = Buffer.concat([Buffer.from(prefix), bytes, Buffer.from(";end")]).toString("base64");
    out.push({ name: `base64 after ${prefix.length} bytes`, core: whole.slice(Math.ceil((prefix.length * 8) / 6), Math.floor(((prefix.length + bytes.length) * 8) / 6)), caseless: false });
  }
  return out;
}

/** `text` with the separators the program used removed, also JSON-escaped ones: what a reader joins back. */
const joined = (text: string): string => text.replace(/\\+[rn]|[\s|:]/g, "");

/** Names of the encodings whose secret-only characters `text` holds once joined. */
const leaks = (text: string): string[] => {
  const flat = joined(text);
  const lower = flat.toLowerCase();
  return cores()
    .filter((c) => (c.caseless ? lower.includes(c.core) : flat.includes(c.core)))
    .map((c) => c.name);
};

before(async () => {
  runtime = await createPlaygroundBackend().create({ secretEnv: { WRAP_SECRET: SECRET } });
  const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${printer}`] });
  assert.equal(result.status, "ok", `${JSON.stringify(result.error)} ${result.stderr}`);
  stdout = result.stdout;
  snapshot = await runtime.snapshot();
  bundleDir = (await writeArtifactBundle(join(scratch, "bundle"), await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: true }))).directory;
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

test("the secret's base64 has + and /, and PHP really printed and stored every wrapped variant (the checks can fail)", () => {
  assert.match(Buffer.from(SECRET).toString("base64"), /\+.*\/|\/.*\+/);
  assert.deepEqual(leaks(stdout).sort(), cores().map((c) => c.name).sort());
  assert.match(stdout, /\r\n/);
  const db = snapshot.files.find((f) => f.path.endsWith("wp-content/database/.ht.sqlite"));
  assert.deepEqual(leaks(Buffer.from(db!.content!).toString("latin1")).sort(), cores().map((c) => c.name).sort(), "the database holds every variant");
  const file = snapshot.files.find((f) => f.path.endsWith("wp-content/wrapped-secret.txt"));
  assert.ok(file, "the file is in the snapshot");
});

test("stdout in commands.jsonl holds no wrapped variant; the text around each stays", () => {
  const line = readFileSync(join(bundleDir, "files/commands.jsonl"), "utf8").split("\n").find((l) => l.includes("wordpress.run-php"))!;
  assert.deepEqual(leaks(line), [], "the JSON-escaped line");
  const redacted = JSON.parse(line).stdout as string;
  assert.deepEqual(leaks(redacted), [], "the stdout it holds");
  const variants = (stdout.match(/^## /gm) ?? []).length;
  assert.equal(variants, 8 * 7);
  assert.equal((redacted.match(/^## [\w-]+\/\d ##$/gm) ?? []).length, variants, "every marker line stays");
  assert.ok(redacted.split(REDACTED).length - 1 >= variants, "at least one [REDACTED] per variant");
});

test("no file of the bundle holds a wrapped variant: the wp-content file, the database (masked, same size), every other", async () => {
  const seen: string[] = [];
  for (const path of walk(bundleDir)) {
    seen.push(relative(bundleDir, path));
    assert.deepEqual(leaks(readFileSync(path).toString("latin1")), [], relative(bundleDir, path));
  }
  for (const end of ["files/commands.jsonl", "wp-content/database/.ht.sqlite", "wp-content/wrapped-secret.txt"]) assert.ok(seen.some((p) => p.endsWith(end)), `${end} in ${seen.join(", ")}`);
  const db = readFileSync(join(bundleDir, "files/runtime-snapshots", snapshot.id, "wp-content/database/.ht.sqlite"));
  assert.equal(db.subarray(0, 16).toString("latin1"), "SQLite format 3\0");
  assert.equal(db.byteLength, snapshot.database.bytes);
  const text = readFileSync(join(bundleDir, "files/runtime-snapshots", snapshot.id, "wp-content/wrapped-secret.txt"), "utf8");
  assert.match(text, /^## base64\/0 ##$/m);
  assert.equal((await verifyArtifactBundle(bundleDir)).valid, true);
  const review = JSON.parse(readFileSync(join(bundleDir, "files/review.json"), "utf8")) as { redaction: { maskedFiles?: string[] } };
  assert.ok(review.redaction.maskedFiles?.includes(`files/runtime-snapshots/${snapshot.id}/wp-content/database/.ht.sqlite`));
});

test("create refuses a secret too short to redact with secret-unsafe, before anything boots", async () => {
  for (const value of ["1", "v1", "codebox"]) {
    const progress: string[] = [];
    await assert.rejects(createPlaygroundBackend().create({ secretEnv: { SHORT_SECRET: value }, onProgress: (m) => progress.push(m) }), (error: { code?: string; message?: string }) => {
      assert.equal(error.code, "secret-unsafe");
      assert.match(error.message ?? "", /^--secret-env SHORT_SECRET: the value is shorter than 8 characters/);
      return true;
    });
    assert.deepEqual(progress, [], "nothing was prepared");
  }
});
