/**
 * The task fingerprint, no sandbox: every input a task reads changes it, nothing else does, and
 * results that say nothing about the task (internal, environment, interrupt, crash) are not kept.
 */
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { execFileSync } from "node:child_process";
import type { BatchTaskResult } from "@wp-codebox/runtime-core";
import { isResumableFingerprint, isRetryableResult, taskFingerprint, validateTaskLines, type ResolvedTask } from "@wp-codebox/batch";

const root = mkdtempSync(join(tmpdir(), "wp-codebox-fingerprint-"));
after(() => rmSync(root, { recursive: true, force: true }));

// Resolves versions as a backend would, without builds: "latest" is whatever `latestIs` says.
let latestIs = "7.0.4";
const backend = {
  preflight(spec: { wordpress?: { version?: string; path?: string }; php?: string } = {}) {
    const wp = spec.wordpress?.path ? `custom:${spec.wordpress.path}` : spec.wordpress?.version === "latest" || spec.wordpress?.version === undefined ? latestIs : spec.wordpress.version;
    return { wordpressVersion: wp, phpVersion: spec.php ?? "8.3" };
  },
};

/** A fresh workspace: a recipe and an episode naming a plugin, a theme, a mount and @file payloads. */
function workspace(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "plugin/inc"), { recursive: true });
  writeFileSync(join(dir, "plugin/plugin.php"), "<?php\n/* Plugin Name: P */\nrequire __DIR__ . '/inc/a.php';\n");
  writeFileSync(join(dir, "plugin/inc/a.php"), "<?php function p_a() { return 1; }\n");
  mkdirSync(join(dir, "theme"), { recursive: true });
  writeFileSync(join(dir, "theme/style.css"), "/* Theme Name: T */\n");
  mkdirSync(join(dir, "data"), { recursive: true });
  writeFileSync(join(dir, "data/seed.txt"), "seed\n");
  writeFileSync(join(dir, "body.json"), JSON.stringify({ title: "x" }));
  writeFileSync(join(dir, "snippet.php"), "<?php echo 1;\n");
  writeFileSync(
    join(dir, "recipe.json"),
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      runtime: { wp: "latest" },
      inputs: { plugins: ["plugin"], themes: ["theme"], mounts: [{ source: "data", target: "/wordpress/wp-content/uploads/data" }] },
      steps: [
        { command: "wordpress.http-request", args: { method: "POST", path: "/wp-json/wp/v2/posts", "body-json": "@body.json" } },
        { command: "wordpress.run-php", args: { "code-file": "snippet.php" } },
      ],
    }),
  );
  writeFileSync(
    join(dir, "episode.json"),
    JSON.stringify({
      schema: "wp-codebox/episode-script/v1",
      plugins: ["plugin"],
      mounts: [{ source: "data", target: "/wordpress/wp-content/uploads/data" }],
      steps: [{ action: { command: "wordpress.rest-request", args: { method: "POST", route: "/wp/v2/posts", "body-json": "@body.json" } } }],
    }),
  );
  return dir;
}

function task(dir: string, line: string): ResolvedTask {
  const v = validateTaskLines(line, dir, { backend });
  assert.deepEqual(v.issues, []);
  return v.tasks[0]!;
}

const RECIPE = '{"id": "r", "recipe": "recipe.json"}';
const EPISODE = '{"id": "e", "episode": "episode.json"}';

// Each case changes one input; the fingerprint of the same task line must change.
const changes: { name: string; line: string; change: (dir: string) => void; toolVersion?: string }[] = [
  { name: "the recipe file", line: RECIPE, change: (d) => writeFileSync(join(d, "recipe.json"), `${readFileSync(join(d, "recipe.json"), "utf8")} `) },
  { name: "a plugin file (content, same size)", line: RECIPE, change: (d) => writeFileSync(join(d, "plugin/inc/a.php"), "<?php function p_a() { return 2; }\n") },
  { name: "a file added to the plugin", line: RECIPE, change: (d) => writeFileSync(join(d, "plugin/inc/b.php"), "<?php\n") },
  { name: "a file removed from the plugin", line: RECIPE, change: (d) => rmSync(join(d, "plugin/inc/a.php")) },
  { name: "a file renamed in the plugin", line: RECIPE, change: (d) => execFileSync("mv", [join(d, "plugin/inc/a.php"), join(d, "plugin/inc/c.php")]) },
  { name: "a symlink added to the plugin", line: RECIPE, change: (d) => symlinkSync("inc/a.php", join(d, "plugin/link.php")) },
  { name: "the theme", line: RECIPE, change: (d) => writeFileSync(join(d, "theme/style.css"), "/* Theme Name: T2 */\n") },
  { name: "a mounted folder", line: RECIPE, change: (d) => writeFileSync(join(d, "data/seed.txt"), "SEED\n") },
  { name: "an @file JSON payload", line: RECIPE, change: (d) => writeFileSync(join(d, "body.json"), JSON.stringify({ title: "y" })) },
  { name: "a path arg (code-file)", line: RECIPE, change: (d) => writeFileSync(join(d, "snippet.php"), "<?php echo 2;\n") },
  { name: "the resolved WordPress version (latest moved)", line: RECIPE, change: () => (latestIs = "7.0.5") },
  { name: "the tool version", line: RECIPE, change: () => undefined, toolVersion: "9.9.9" },
  { name: "the episode file", line: EPISODE, change: (d) => writeFileSync(join(d, "episode.json"), `${readFileSync(join(d, "episode.json"), "utf8")}\n`) },
  { name: "an episode's plugin", line: EPISODE, change: (d) => writeFileSync(join(d, "plugin/plugin.php"), "<?php\n/* Plugin Name: P */\nfatal();\n") },
  { name: "an episode's mount", line: EPISODE, change: (d) => writeFileSync(join(d, "data/new.txt"), "n") },
  { name: "an episode's @file payload", line: EPISODE, change: (d) => writeFileSync(join(d, "body.json"), "{}") },
];

for (const c of changes) {
  test(`the fingerprint changes with ${c.name}`, () => {
    latestIs = "7.0.4";
    const dir = workspace(`change-${changes.indexOf(c)}`);
    const before = taskFingerprint(task(dir, c.line), { backend, toolVersion: "1.0.0" });
    assert.equal(taskFingerprint(task(dir, c.line), { backend, toolVersion: "1.0.0" }), before, "deterministic before the change");
    c.change(dir);
    const afterChange = taskFingerprint(task(dir, c.line), { backend, toolVersion: c.toolVersion ?? "1.0.0" });
    assert.notEqual(afterChange, before);
    latestIs = "7.0.4";
  });
}

// Each line is a different task entry for the same file; all fingerprints must differ.
test("the fingerprint changes with each field of the task entry", () => {
  const dir = workspace("entry");
  const lines = [
    '{"id": "t", "recipe": "recipe.json"}',
    '{"id": "t", "recipe": "recipe.json", "runtime": {"php": "8.2"}}',
    '{"id": "t", "recipe": "recipe.json", "runtime": {"wp": "6.9"}}',
    '{"id": "t", "recipe": "recipe.json", "runtime": {"seed": 1}}',
    '{"id": "t", "recipe": "recipe.json", "runtime": {"clock": "2030-01-01T00:00:00Z"}}',
    '{"id": "t", "recipe": "recipe.json", "timeout": "5m"}',
  ];
  const prints = lines.map((l) => taskFingerprint(task(dir, l), { backend, toolVersion: "1.0.0" }));
  assert.equal(new Set(prints).size, lines.length);
});

test("what a task does not read leaves the fingerprint alone: other files, mtimes, the line number", () => {
  const dir = workspace("stable");
  const before = taskFingerprint(task(dir, RECIPE), { backend, toolVersion: "1.0.0" });
  writeFileSync(join(dir, "unrelated.txt"), "x");
  execFileSync("touch", ["-d", "2001-01-01", join(dir, "plugin/inc/a.php")]);
  assert.equal(taskFingerprint(task(dir, `\n\n${RECIPE}`), { backend, toolVersion: "1.0.0" }), before);
  // A copy of the workspace elsewhere is another task (paths are part of it), but content is read, not inodes.
  const copy = join(root, "stable-copy");
  cpSync(dir, copy, { recursive: true });
  assert.notEqual(taskFingerprint(task(copy, RECIPE), { backend, toolVersion: "1.0.0" }), before);
});

test("a FIFO in a mount is never opened; past the entry bound a task is not resumable; past the byte bound content is stat-hashed", () => {
  const dir = workspace("bounds");
  const t = task(dir, RECIPE);
  const normal = taskFingerprint(t, { backend, toolVersion: "1.0.0" });
  assert.equal(isResumableFingerprint(normal), true);
  const tiny = taskFingerprint(t, { backend, toolVersion: "1.0.0", limits: { maxEntries: 3 } });
  assert.equal(isResumableFingerprint(tiny), false);
  const statOnly = taskFingerprint(t, { backend, toolVersion: "1.0.0", limits: { maxContentBytes: 0 } });
  assert.equal(isResumableFingerprint(statOnly), true);
  // With no content budget, an edit that changes the size still changes the digest.
  writeFileSync(join(dir, "plugin/inc/a.php"), "<?php function p_a() { return 22; }\n");
  assert.notEqual(taskFingerprint(t, { backend, toolVersion: "1.0.0", limits: { maxContentBytes: 0 } }), statOnly);
  // An unreadable file is hashed as such instead of throwing.
  if (process.getuid?.() !== 0) {
    chmodSync(join(dir, "snippet.php"), 0o000);
    assert.doesNotThrow(() => taskFingerprint(t, { backend, toolVersion: "1.0.0" }));
    chmodSync(join(dir, "snippet.php"), 0o644);
  }
  // Task validation refuses a FIFO in a mount; one planted after it must still never be opened
  // (opening it would block this test forever).
  execFileSync("mkfifo", [join(dir, "data/pipe")]);
  assert.match(taskFingerprint(t, { backend, toolVersion: "1.0.0" }), /^[0-9a-f]{64}$/);
});

const base: BatchTaskResult = { id: "t", kind: "recipe", status: "failed", exitCode: 1, durationMs: 1, bundle: { id: "b", digest: "d" } };
const results: { name: string; result: Partial<BatchTaskResult>; retry: boolean }[] = [
  { name: "passed", result: { status: "passed", exitCode: 0 }, retry: false },
  { name: "failed expectation", result: { error: { code: "expectation-failed", message: "" } }, retry: false },
  { name: "php-fatal", result: { error: { code: "php-fatal", message: "" } }, retry: false },
  { name: "phpunit-failed", result: { error: { code: "phpunit-failed", message: "" } }, retry: false },
  { name: "internal-error", result: { exitCode: 70, error: { code: "internal-error", message: "" } }, retry: true },
  { name: "internal-error with exit 1", result: { error: { code: "internal-error", message: "" } }, retry: true },
  { name: "an environment error", result: { exitCode: 3, error: { code: "wordpress-download-failed", message: "" } }, retry: true },
  { name: "exit 3 without a code", result: { exitCode: 3 }, retry: true },
  { name: "interrupted", result: { exitCode: 130, error: { code: "interrupted", message: "" } }, retry: true },
  { name: "sandbox-crashed", result: { error: { code: "sandbox-crashed", message: "" } }, retry: true },
];
for (const r of results) {
  test(`a result that is ${r.name} is ${r.retry ? "run again" : "kept"} on resume`, () => {
    assert.equal(isRetryableResult({ ...base, ...r.result }), r.retry);
  });
}
