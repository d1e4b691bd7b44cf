/**
 * Resume keeps a bundle only for the same inputs: with real WordPress sandboxes, a task whose
 * plugin changed between two batch runs runs again (and fails, as the broken plugin deserves),
 * while an untouched task beside it is kept.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { runLocalBatch, type BatchProgress } from "@wp-codebox/batch";

const work = mkdtempSync(join(tmpdir(), "wp-codebox-batch-resume-"));
after(() => rmSync(work, { recursive: true, force: true }));

const plugin = (answer: string) => `<?php\n/**\n * Plugin Name: Resume Probe\n */\nfunction resume_probe_answer() { return '${answer}'; }\n`;

test("a changed plugin makes batch run its task again; an unchanged task is kept", { timeout: 600_000 }, async () => {
  mkdirSync(join(work, "probe"));
  writeFileSync(join(work, "probe", "probe.php"), plugin("right"));
  const recipe = (expect: string, plugins: string[]) =>
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      inputs: { plugins },
      steps: [{ command: "wordpress.run-php", args: { code: "<?php echo function_exists('resume_probe_answer') ? resume_probe_answer() : 'none';" }, expect: { stdoutContains: expect } }],
    });
  writeFileSync(join(work, "with-plugin.json"), recipe("right", ["probe"]));
  writeFileSync(join(work, "without-plugin.json"), recipe("none", []));
  writeFileSync(join(work, "tasks.jsonl"), '{"id": "plugin-task", "recipe": "with-plugin.json"}\n{"id": "other-task", "recipe": "without-plugin.json"}\n');
  const out = join(work, "out");
  const batch = async () => {
    const seen: string[] = [];
    const progress: BatchProgress = { taskDone: (r) => void seen.push(`${r.id}:${r.resumed ? "kept" : "ran"}:${r.status}`), note() {}, stop() {} };
    const outcome = await runLocalBatch({ tasksFile: join(work, "tasks.jsonl"), artifactsDir: out, concurrency: 1, isolation: "in-process", log: () => undefined, progress });
    return { outcome, seen: seen.sort() };
  };

  const first = await batch();
  assert.deepEqual(first.seen, ["other-task:ran:passed", "plugin-task:ran:passed"]);
  const unchanged = await batch();
  assert.deepEqual(unchanged.seen, ["other-task:kept:passed", "plugin-task:kept:passed"]);

  // Break the plugin under test (the recipe file itself is untouched).
  writeFileSync(join(work, "probe", "probe.php"), plugin("wrong"));
  const changed = await batch();
  assert.deepEqual(changed.seen, ["other-task:kept:passed", "plugin-task:ran:failed"]);
  assert.equal(changed.outcome.exitCode, 1);
  assert.equal(changed.outcome.report.tasks.find((t) => t.id === "plugin-task")!.error?.code, "expectation-failed");
});
