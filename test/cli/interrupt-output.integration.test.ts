/**
 * Integration: Ctrl-C keeps what PHP printed. A real `wp-codebox` process runs PHP that prints a
 * line, then marks a file in a read-write mount and loops; once the mark appears the test sends
 * the process SIGINT. `run` and `recipe run` then record the stopped command's own result, with the
 * printed line as its stdout, in what they print and in the bundle.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { show, spawnCli, type CliRun } from "./spawn-cli.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-interrupt-output-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const PRINTED = "printed before the signal";
const code = `<?php echo ${JSON.stringify(`${PRINTED}\n`)}; file_put_contents('/workspace/flag/ready', '1'); while (true) {}`;

/** The bundle's command results (`files/commands.jsonl`). */
function commands(bundle: string): { id: string; stdout: string }[] {
  return readFileSync(join(bundle, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; stdout: string });
}

/** Runs the CLI (whose argv mounts `flagDir` read-write at /workspace/flag) and sends SIGINT once PHP wrote `ready` there. */
async function interruptedAfterOutput(name: string, argv: (flagDir: string) => string[]): Promise<CliRun & { sent: boolean }> {
  const flagDir = join(scratch, `${name}-flag`);
  mkdirSync(flagDir);
  let child: ChildProcess | undefined;
  let sent = false;
  const fire = () => {
    if (!sent && child && existsSync(join(flagDir, "ready"))) {
      sent = true;
      child.kill("SIGINT");
    }
  };
  const watcher = watch(flagDir, fire);
  try {
    const run = await spawnCli(argv(flagDir), {
      onStderr: (_stderr, c) => {
        child = c;
        fire();
      },
    });
    return { ...run, sent };
  } finally {
    watcher.close();
  }
}

test("run: Ctrl-C after PHP printed → exit 130, interrupted, and the result's stdout holds what PHP printed", { timeout: 180_000 }, async () => {
  const out = join(scratch, "run-out");
  const run = await interruptedAfterOutput("run", (flag) => ["run", "--command", "wordpress.run-php", "--arg", `code=${code}`, "--timeout", "120s", "--mount", `${flag}:/workspace/flag:rw`, "--artifacts", out, "--json"]);
  assert.equal(run.sent, true, show(run));
  assert.equal(run.code, 130, show(run));
  const printed = JSON.parse(run.stdout) as { error: { code: string }; result: { stdout: string; error?: { code: string } } };
  assert.equal(printed.error.code, "interrupted");
  assert.equal(printed.result.stdout, `${PRINTED}\n`);
  assert.equal(printed.result.error?.code, "interrupted");
  assert.deepEqual(await verifyArtifactBundle(out), { valid: true, violations: [] });
  assert.equal(commands(out).at(-1)!.stdout, `${PRINTED}\n`);
});

test("recipe run: Ctrl-C after a step's PHP printed → exit 130, the step interrupted with its printed stdout in the bundle", { timeout: 180_000 }, async () => {
  const file = join(scratch, "recipe.json");
  const out = join(scratch, "recipe-out");
  const run = await interruptedAfterOutput("recipe", (flag) => {
    const recipe = {
      schema: "wp-codebox/workspace-recipe/v1",
      inputs: { mounts: [{ source: flag, target: "/workspace/flag", mode: "readwrite" }] },
      steps: [{ name: "prints then loops", command: "wordpress.run-php", args: { code }, timeout: "120s" }],
    };
    writeFileSync(file, JSON.stringify(recipe));
    return ["recipe", "run", file, "--artifacts", out];
  });
  assert.equal(run.sent, true, show(run));
  assert.equal(run.code, 130, show(run));
  assert.deepEqual(await verifyArtifactBundle(out), { valid: true, violations: [] });
  const report = JSON.parse(readFileSync(join(out, "files/recipe-report.json"), "utf8"));
  assert.equal(report.steps[0].status, "failed");
  assert.equal(report.steps[0].result.error.code, "interrupted");
  assert.equal(commands(out).find((r) => r.id === report.steps[0].executionId)?.stdout, `${PRINTED}\n`);
});
