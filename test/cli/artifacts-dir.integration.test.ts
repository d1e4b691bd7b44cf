/**
 * Every command that writes a bundle checks the `--artifacts` folder before it boots anything: a
 * folder name the filesystem refuses, or a read-only filesystem, is `artifacts-dir-unwritable`
 * (exit 3) naming the cause, and no sandbox boots.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";

let tmp: string;
let readOnly: string | undefined;
let mountProblem = "";
before(() => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-artifacts-dir-"));
  writeFileSync(join(tmp, "recipe.json"), JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] }));
  writeFileSync(join(tmp, "episode.json"), JSON.stringify({ schema: "wp-codebox/episode-script/v1", steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }] }));
  writeFileSync(join(tmp, "tasks.jsonl"), `${JSON.stringify({ id: "one", recipe: "recipe.json" })}\n`);
  const target = mkdtempSync(join(tmp, "ro-"));
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", target], { encoding: "utf8" });
  if (mounted.status === 0) readOnly = target;
  else mountProblem = (mounted.stderr || mounted.error?.message || "").trim();
});
after(() => {
  if (readOnly) spawnSync("umount", [readOnly]);
  rmSync(tmp, { recursive: true, force: true });
});

/** argv of each bundle-writing command, given its --artifacts folder. */
const COMMANDS: Array<[string, (dir: string) => string[]]> = [
  ["run", (dir) => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", dir]],
  ["recipe run", (dir) => ["recipe", "run", join(tmp, "recipe.json"), "--artifacts", dir]],
  ["episode run", (dir) => ["episode", "run", join(tmp, "episode.json"), "--artifacts", dir]],
  ["check", (dir) => ["check", join(REPO_ROOT, "test/fixtures/plugins/check-clean"), "--artifacts", dir]],
  ["batch", (dir) => ["batch", join(tmp, "tasks.jsonl"), "--artifacts", dir]],
  ["collect --attach", (dir) => ["collect", "--attach", "http://127.0.0.1:9", "--token", "t", "--artifacts", dir]],
];

const FOLDERS: Array<[string, () => string | undefined, string]> = [
  ["a 300-character folder name", () => join(tmp, "n".repeat(300)), "ENAMETOOLONG"],
  ["a read-only filesystem", () => (readOnly ? join(readOnly, "out") : undefined), "EROFS"],
];

describe("--artifacts is checked before boot", { timeout: 240_000 }, () => {
  for (const [folder, path, cause] of FOLDERS) {
    for (const [name, argv] of COMMANDS) {
      it(`${name}: ${folder} → artifacts-dir-unwritable (${cause}), exit 3, nothing booted`, async (t) => {
        const dir = path();
        if (dir === undefined) return t.skip(`cannot mount a read-only tmpfs here (${mountProblem}); needs root or CAP_SYS_ADMIN`);
        const run = await spawnCli(argv(dir));
        assert.equal(run.code, 3, show(run));
        assert.match(run.stderr, /error\[artifacts-dir-unwritable\]/, show(run));
        assert.match(run.stderr, new RegExp(`\\(${cause}\\)`), show(run));
        assert.doesNotMatch(run.stderr, /Booting|Installing WordPress|internal-error/, show(run));
      });
    }
  }
});

// The cache and the sandboxes' scratch folder are the host's too: a file where either folder
// should be is host-dir-unusable (exit 3) naming the variable, before anything boots.
const HOST_DIRS: Array<[string, string]> = [
  ["WP_CODEBOX_CACHE_DIR", "the cache"],
  ["WP_CODEBOX_TMPDIR", "the sandboxes' scratch folder"],
];
describe("the cache and the scratch folder are checked before boot", { timeout: 240_000 }, () => {
  for (const [variable, role] of HOST_DIRS) {
    for (const [name, argv] of COMMANDS.filter(([n]) => ["run", "recipe run", "episode run", "check"].includes(n))) {
      it(`${name}: ${variable} naming a file → host-dir-unusable, exit 3, nothing booted`, async () => {
        const file = join(tmp, `${variable}-file`);
        writeFileSync(file, "a file where a folder should be");
        const run = await spawnCli(argv(mkdtempSync(join(tmp, "out-"))), { env: { [variable]: file, WP_CODEBOX_OFFLINE: "1" } });
        assert.equal(run.code, 3, show(run));
        assert.match(run.stderr, /error\[host-dir-unusable\]/, show(run));
        assert.ok(run.stderr.includes(`Point ${variable}`) && run.stderr.toLowerCase().includes(role), show(run));
        assert.doesNotMatch(run.stderr, /Booting WordPress|Installing WordPress|internal-error/, show(run));
        // The run's bundle, which says why, is written and verifies.
        assert.match(run.stderr, /verify:\s+valid/, show(run));
      });
    }
  }
});

describe("a lost bundle in the CLI's exit mapping", () => {
  it("bundleLostError / sessionExitError: exit 3 with the write error, before the work's own error; text says NOT WRITTEN", async () => {
    const { bundleLostError, bundleVerifyText, sessionExitError } = await import("../../packages/cli/src/cli-exit-error.js");
    const error = { code: "artifacts-dir-unwritable", message: "Cannot write the bundle to /x: its filesystem is full (ENOSPC).", data: { cause: "ENOSPC" } };
    const lost = { directory: "/x", id: "", digest: "", valid: false, violations: [], written: false as const, error };
    const written = { directory: "/y", id: "artifact-bundle-sha256-aa", digest: "aa", valid: true, violations: [] };
    assert.equal(bundleLostError(written), undefined);
    assert.equal(bundleLostError(lost)?.exitCode, 3);
    assert.equal(bundleVerifyText(lost), "NOT WRITTEN (ENOSPC)");
    assert.equal(bundleVerifyText(written), "valid");
    const outcome = { runId: "r", kind: "command" as const, status: "error" as const, exitCode: 3, summary: "", error: { code: "php-fatal", message: "fatal" }, bundle: lost };
    const exit = sessionExitError(outcome, { code: "x", message: "y" });
    assert.equal(exit?.code, "artifacts-dir-unwritable");
    assert.equal(exit?.exitCode, 3);
  });
});
