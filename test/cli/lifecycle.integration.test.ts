/**
 * Integration: the one run lifecycle on real WordPress. A sandbox whose plugin fatals on
 * activation does not boot; `run`, `recipe run` and `episode run` each still write a bundle that
 * verifies, record `boot-failed`, and exit 1. And an invalid episode observation is refused before
 * anything boots (exit 2, no bundle).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@wp-codebox/cli";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PLUGIN = join(ROOT, "test/fixtures/plugins/fatal-on-activate");
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-lifecycle-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: process.env, cwd: ROOT };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 3000)}\n--- stderr ---\n${stderr.slice(-3000)}` };
}

/** Runs the CLI and sends it SIGINT once stderr shows `when` (the step that must be interrupted is running). */
async function cliInterrupted(argv: string[], when: RegExp) {
  let stdout = "";
  let stderr = "";
  let send: ((signal: NodeJS.Signals) => void) | undefined;
  let sent = false;
  const io: CliIo = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => {
      stderr += t;
      if (!sent && send && when.test(stderr)) {
        sent = true;
        // After this write returns: the step's execute has started.
        setImmediate(() => send!("SIGINT"));
      }
    },
    env: process.env,
    cwd: ROOT,
  };
  const code = await runCli(argv, {
    io,
    installSignalHandlers: (onSignal) => {
      send = onSignal;
      return () => (send = undefined);
    },
  });
  return { code, stdout, stderr, sent, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 3000)}\n--- stderr ---\n${stderr.slice(-3000)}` };
}

async function assertBootFailedBundle(dir: string): Promise<void> {
  assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
  const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8"));
  assert.equal(review.status, "error");
  assert.match(readFileSync(join(dir, "files/events.jsonl"), "utf8"), /"type":"boot-failed"/);
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"));
  // The backend's preflight resolved the versions before boot, so even this bundle names them.
  assert.match(metadata.versions.wordpress, /^\d+\.\d+(\.\d+)?$/);
  assert.equal(metadata.versions.php, "8.3");
}

test("run: a plugin that fatals on activation → boot-failed, exit 1, a verifying bundle", { timeout: 120_000 }, async () => {
  const out = join(scratch, "run");
  const run = await cli(["run", "--plugin", PLUGIN, "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  assert.match(run.stderr, /^error\[boot-failed\]: /m);
  // The command never ran: the summary gives no exit code of its own.
  assert.match(run.stderr, /^status: +error \(no exit code: error\[boot-failed\]\) in \d+ ms — wordpress\.run-php$/m);
  const printed = JSON.parse(run.stdout);
  assert.equal(printed.result.error.code, "boot-failed");
  assert.equal(printed.bundle.valid, true);
  await assertBootFailedBundle(out);
});

// A plugin that ends PHP as it loads leaves the activation helper without a report: the run says
// which plugin ended PHP instead of failing inside wp-codebox.
const endingPlugins: [string, string][] = [
  ["exit-on-load", "exit(0);"],
  ["die-with-output", "echo 'partial'; die('bye');"],
];
for (const [name, body] of endingPlugins) {
  test(`run: a plugin that ends PHP at load (${body}) → boot-failed naming it, exit 1, a verifying bundle`, { timeout: 120_000 }, async () => {
    const plugin = join(scratch, "plugins", name);
    mkdirSync(plugin, { recursive: true });
    writeFileSync(join(plugin, `${name}.php`), `<?php\n/*\nPlugin Name: ${name}\n*/\n${body}\n`);
    const out = join(scratch, `run-${name}`);
    const run = await cli(["run", "--plugin", plugin, "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", out, "--json"]);
    assert.equal(run.code, 1, run.show());
    const printed = JSON.parse(run.stdout);
    assert.equal(printed.result.error.code, "boot-failed");
    assert.match(printed.result.error.message, new RegExp(`ended \\(exit or die\\) while activating the plugin ${name}\\b`));
    assert.equal(printed.bundle.valid, true);
    await assertBootFailedBundle(out);
  });
}

test("recipe run: the same plugin as a recipe input → boot-failed, exit 1, a verifying bundle with the report", { timeout: 120_000 }, async () => {
  const file = join(scratch, "recipe.json");
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", inputs: { plugins: [PLUGIN] }, steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] }));
  const out = join(scratch, "recipe-out");
  const run = await cli(["recipe", "run", file, "--allow-path", PLUGIN, "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  const printed = JSON.parse(run.stdout);
  assert.equal(printed.error.code, "boot-failed");
  assert.equal(printed.report.failure.phase, "boot");
  await assertBootFailedBundle(out);
  assert.ok(existsSync(join(out, "files/recipe-report.json")));
});

test("episode run: an episode whose boot fails → boot-failed, exit 1, a verifying bundle", { timeout: 120_000 }, async () => {
  const file = join(scratch, "episode.json");
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/episode-script/v1", plugins: [PLUGIN], steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }] }));
  const out = join(scratch, "episode-out");
  const run = await cli(["episode", "run", file, "--allow-path", PLUGIN, "--artifacts", out, "--json"]);
  assert.equal(run.code, 1, run.show());
  assert.equal(JSON.parse(run.stdout).error.code, "boot-failed");
  await assertBootFailedBundle(out);
});

test("episode run: identity user fields under redaction safe are refused before boot (exit 2, no bundle)", async () => {
  const file = join(scratch, "episode-invalid.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/episode-script/v1",
      steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } }, observe: { type: "wordpress-state", sections: ["users"], userFields: ["user_email"] } }],
    }),
  );
  const out = join(scratch, "episode-invalid-out");
  const run = await cli(["episode", "run", file, "--artifacts", out]);
  assert.equal(run.code, 2, run.show());
  assert.match(run.stderr, /error\[invalid-episode-script\]/);
  assert.match(run.stderr, /\/steps\/0\/observe: invalid-state-request/);
  assert.equal(existsSync(out), false);
});

// Each step below would run for its whole 60 s timeout if the interrupt did not end it.
const ENDLESS = "<?php while (true) {}";

test("recipe run: Ctrl-C during a step ends that step as interrupted; the outcome is failed, later steps skipped, exit 130", { timeout: 120_000 }, async () => {
  const file = join(scratch, "recipe-interrupted.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      steps: [
        { name: "first", command: "wordpress.run-php", args: { code: "<?php echo 1;" } },
        { name: "endless", command: "wordpress.run-php", args: { code: ENDLESS }, timeout: "60s" },
        { name: "never", command: "wordpress.run-php", args: { code: "<?php echo 3;" } },
      ],
    }),
  );
  const out = join(scratch, "recipe-interrupted-out");
  const run = await cliInterrupted(["recipe", "run", file, "--artifacts", out], /\/steps\/1 endless/);
  assert.equal(run.sent, true, run.show());
  assert.equal(run.code, 130, run.show());
  assert.match(run.stderr, /INTERRUPTED \/steps\/1 \(endless\): interrupted by SIGINT before it finished/);
  assert.match(run.stderr, /^outcome: +failed/m);
  assert.deepEqual(await verifyArtifactBundle(out), { valid: true, violations: [] });
  const report = JSON.parse(readFileSync(join(out, "files/recipe-report.json"), "utf8"));
  assert.deepEqual(report.steps.map((s: { status: string }) => s.status), ["passed", "failed", "skipped"]);
  assert.equal(report.steps[1].result.error.code, "interrupted");
  assert.equal(report.outcome, "failed");
});

test("episode run: Ctrl-C during a step stops it in the sandbox (timed-out, interrupted in the trace); no later step, exit 130", { timeout: 120_000 }, async () => {
  const file = join(scratch, "episode-interrupted.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/episode-script/v1",
      steps: [
        { action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } },
        { action: { command: "wordpress.run-php", args: { code: ENDLESS } } },
        { action: { command: "wordpress.run-php", args: { code: "<?php echo 3;" } } },
      ],
    }),
  );
  const out = join(scratch, "episode-interrupted-out");
  const run = await cliInterrupted(["episode", "run", file, "--artifacts", out, "--json"], /Step 2: wordpress\.run-php/);
  assert.equal(run.sent, true, run.show());
  assert.equal(run.code, 130, run.show());
  const printed = JSON.parse(run.stdout);
  assert.equal(printed.error.code, "interrupted");
  assert.deepEqual(printed.steps.map((s: { status: string; errorCode?: string }) => [s.status, s.errorCode ?? ""]), [["ok", ""], ["timed-out", "interrupted"]]);
  assert.deepEqual(await verifyArtifactBundle(out), { valid: true, violations: [] });
});
