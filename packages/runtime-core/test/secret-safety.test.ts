/**
 * `secret-unsafe`: a secret value too short, or one the bundle spells itself, is refused; every
 * value the rule accepts leaves a bundle that verifies and keeps its own structure, even when the
 * value sits next to the bundle's words in the output.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle, writeArtifactBundle } from "../src/artifact-bundle/index.js";
import { WpCodeboxError } from "../src/errors.js";
import { validateRecipe } from "../src/recipe/validate-recipe.js";
import type { RuntimeArtifacts } from "../src/runtime.js";
import { SECRET_MIN_CHARS, assertSecretsSafe, bundleStructureWords, secretValueProblem } from "../src/secrets/secret-safety.js";

const SHORT = /shorter than 8 characters/;
const STRUCTURE = /the bundle's own structure/;

const VALUES: { value: string; refused?: RegExp }[] = [
  { value: "1", refused: SHORT },
  { value: "v1", refused: SHORT },
  { value: "codebox", refused: SHORT },
  { value: "ok", refused: SHORT },
  { value: "7 chars", refused: SHORT },
  { value: "🧪🧪🧪🧪🧪🧪🧪", refused: SHORT }, // 7 characters, 14 UTF-16 units
  { value: "wp-codebox/artifact-review/v1", refused: STRUCTURE },
  { value: "artifact-manifest", refused: STRUCTURE },
  { value: "ARTIFACTS", refused: STRUCTURE },
  { value: "timed-out", refused: STRUCTURE },
  { value: "files/commands.jsonl", refused: STRUCTURE },
  { value: "durationMs", refused: STRUCTURE },
  { value: "wordpressVersion", refused: STRUCTURE },
  { value: "readwrite-mounts", refused: STRUCTURE },
  { value: "REDACTED", refused: STRUCTURE },
  { value: "" }, // nothing to redact
  { value: "🧪🧪🧪🧪🧪🧪🧪🧪" },
  { value: "password" },
  { value: "12345678" },
  { value: "Zq7-s3cret/Token+42" },
  { value: "status-ok!" },
  { value: "[REDACTED]-plus" },
  { value: "artifacts-and-more" },
  { value: "durationMs2" },
];

test("secretValueProblem: too short, or spelled by the bundle, is refused; the reason never quotes the value", () => {
  for (const { value, refused } of VALUES) {
    const problem = secretValueProblem(value);
    if (refused) {
      assert.match(problem ?? "", refused, JSON.stringify(value));
      if (value.length > 2) assert.ok(!problem!.toLowerCase().includes(value.toLowerCase()), `${value}: ${problem}`);
    } else assert.equal(problem, undefined, JSON.stringify(value));
  }
});

test("every word the bundle spells, of 8 characters or more, is refused in any letter case", () => {
  const words = bundleStructureWords();
  assert.ok(words.includes("wp-codebox/artifact-review/v1") && words.includes("exitcode") && words.includes("files/review.json") && words.includes("timed-out"));
  const long = words.filter((w) => [...w].length >= SECRET_MIN_CHARS);
  assert.ok(long.length > 40);
  for (const word of long) {
    for (const cased of [word, word.toUpperCase()]) assert.match(secretValueProblem(cased) ?? "", STRUCTURE, cased);
    // And any 8-character piece of it.
    assert.match(secretValueProblem(word.slice(-SECRET_MIN_CHARS)) ?? "", STRUCTURE, word.slice(-SECRET_MIN_CHARS));
  }
});

test("assertSecretsSafe throws secret-unsafe naming every unsafe variable, never the value", () => {
  assert.doesNotThrow(() => assertSecretsSafe({ A: "Zq7-s3cret/Token+42", B: "" }, "--secret-env"));
  assert.throws(
    () => assertSecretsSafe({ GOOD: "Zq7-s3cret/Token+42", SHORT: "pw", WORD: "artifact-manifest" }, "--secret-env"),
    (error: unknown) => {
      assert.ok(error instanceof WpCodeboxError);
      assert.equal(error.code, "secret-unsafe");
      assert.equal(error.category, "input");
      assert.match(error.message, /^--secret-env SHORT: the value is shorter than 8 characters.*\(also WORD\)$/s);
      assert.deepEqual(error.data, { name: "SHORT", names: ["SHORT", "WORD"] });
      assert.ok(!JSON.stringify(error.data).includes("artifact-manifest") && !error.message.includes("artifact-manifest"));
      return true;
    },
  );
});

test("recipe validation: a set secretEnv value that is unsafe is flagged (secretSafetyEnv), an unset one is not", () => {
  const recipe = { schema: "wp-codebox/workspace-recipe/v1", inputs: { secretEnv: ["SAFE", "SHORT", "UNSET"] }, steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] };
  const report = validateRecipe(recipe, join(tmpdir(), "recipe.json"), { secretSafetyEnv: { SAFE: "Zq7-s3cret/Token+42", SHORT: "1" } });
  assert.equal(report.valid, false);
  assert.deepEqual(
    report.issues.map((i) => i.path),
    ["/inputs/secretEnv/1"],
  );
  assert.match(report.issues[0]!.message, /^secret-unsafe: the value of SHORT: the value is shorter than 8 characters/);
  assert.equal(validateRecipe(recipe, join(tmpdir(), "recipe.json"), {}).valid, true, "without an environment nothing is read");
});

/** A run's artifacts whose output puts `secret` next to the bundle's own words, in every file kind. */
function artifacts(secret: string): RuntimeArtifacts {
  const at = "2024-01-01T00:00:00.000Z";
  const words = bundleStructureWords().join(" ");
  return {
    info: {
      id: "rt-1",
      backend: "test",
      wordpressVersion: "6.5",
      phpVersion: "8.3",
      siteUrl: "http://127.0.0.1:9400",
      bootMode: "cached",
      bootDurationMs: 1,
      mounts: [],
      policy: { commands: ["wordpress.run-php"], network: "deny", filesystem: "readwrite-mounts", secrets: "scoped" },
      plugins: [],
      themes: [],
    },
    results: [
      { id: "exec-1", command: "wordpress.run-php", args: ["code=<?php"], status: "ok", exitCode: 0, stdout: `${secret} ${words} ${secret}`, stderr: "", json: { [secret]: secret, status: "ok" }, startedAt: at, finishedAt: at, durationMs: 1 },
      { id: "exec-2", command: "wordpress.run-php", args: ["code=<?php"], status: "error", exitCode: 1, stdout: "", stderr: secret, error: { code: "php-fatal", message: `fatal ${secret}` }, startedAt: at, finishedAt: at, durationMs: 1 },
    ],
    events: [{ at, type: "runtime-booted", data: { note: secret } }],
    files: [
      { path: "files/out.json", kind: "text", contentType: "application/json", content: JSON.stringify({ schema: "x", value: secret, words }) },
      { path: "files/blob.bin", kind: "blob", contentType: "application/octet-stream", content: Buffer.from(`\0${secret}\0${words}`) },
    ],
    secrets: [secret],
  };
}

test("every accepted value leaves a bundle that verifies, with its own schemas and statuses untouched", async () => {
  const root = await mkdtemp(join(tmpdir(), "wpcb-secret-safety-"));
  try {
    for (const [i, { value }] of VALUES.filter((v) => !v.refused && v.value !== "").entries()) {
      const dir = join(root, String(i));
      await writeArtifactBundle(dir, artifacts(value));
      assert.equal((await verifyArtifactBundle(dir)).valid, true, value);
      const review = JSON.parse(await readFile(join(dir, "files/review.json"), "utf8"));
      assert.equal(review.schema, "wp-codebox/artifact-review/v1", value);
      assert.deepEqual(review.commands.map((c: { status: string }) => c.status), ["ok", "error"], value);
      assert.equal(review.redaction.applied, true, value);
      const commands = await readFile(join(dir, "files/commands.jsonl"), "utf8");
      assert.ok(!commands.includes(value), value);
      assert.ok(commands.includes(bundleStructureWords().join(" ")), `${value}: the bundle's words in the output stay`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("the refused values are the ones that would have rewritten the bundle: redacting one makes it invalid", async () => {
  const root = await mkdtemp(join(tmpdir(), "wpcb-secret-safety-"));
  try {
    for (const value of ["wp-codebox/artifact-review/v1", "codebox", "v1", "1"]) {
      await assert.rejects(writeArtifactBundle(join(root, value.replace(/\W/g, "-")), artifacts(value)), (e: { code?: string }) => e.code === "bundle-invalid", value);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
