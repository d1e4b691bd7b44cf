/**
 * What a backend's bundle makes of the commands' outcomes, the same on every backend: the review
 * blocks (browser assertions and test counts summed over commands), the browser action summary,
 * and one file list in which a `.jsonl` file several commands wrote is appended to.
 */
import { isBrowserCommand, type ArtifactFile, type ExecutionResult, type TestCounts } from "@wp-codebox/runtime-core";
import type { CommandOutcome } from "./command-context.js";

/** Browser assertions of one command or of several, summed. */
export type AssertionsBlock = NonNullable<CommandOutcome["assertions"]>;

/** The assertions of `list` as one block (totals summed, results in order); undefined for none. */
export function assertionsBlock(list: readonly AssertionsBlock[]): AssertionsBlock | undefined {
  if (list.length === 0) return undefined;
  return {
    total: list.reduce((n, a) => n + a.total, 0),
    passed: list.reduce((n, a) => n + a.passed, 0),
    failed: list.reduce((n, a) => n + a.failed, 0),
    results: list.flatMap((a) => a.results),
  };
}

/** The test counts of `list` (wordpress.phpunit commands), summed (review.json `tests`); undefined for none. */
export function testsBlock(list: readonly TestCounts[]): TestCounts | undefined {
  if (list.length === 0) return undefined;
  const sum = (key: keyof TestCounts) => list.reduce((n, c) => n + c[key], 0);
  return {
    tests: sum("tests"),
    assertions: sum("assertions"),
    failures: sum("failures"),
    errors: sum("errors"),
    skipped: sum("skipped"),
    incomplete: sum("incomplete"),
    warnings: sum("warnings"),
    risky: sum("risky"),
    passed: sum("passed"),
  };
}

/** `files/browser/action-summary.json`: the browser commands among `results` and their assertions. */
export function actionSummaryFile(results: readonly ExecutionResult[], assertions: AssertionsBlock): ArtifactFile {
  const executions = results.filter((r) => isBrowserCommand(r.command)).map((r) => ({ id: r.id, command: r.command, status: r.status, ...(r.error ? { error: r.error } : {}) }));
  return {
    path: "files/browser/action-summary.json",
    kind: "browser-action-summary",
    contentType: "application/json",
    content: `${JSON.stringify({ executions, assertions }, null, 2)}\n`,
  };
}

/** Adds files to a bundle file list in place; a `.jsonl` file that is there already is appended to, any other replaced. */
export function mergeBundleFiles(list: ArtifactFile[], files: readonly ArtifactFile[]): void {
  for (const file of files) {
    const existing = list.findIndex((f) => f.path === file.path);
    if (existing >= 0 && file.path.endsWith(".jsonl")) {
      const before = list[existing]!;
      list[existing] = { ...before, content: `${String(before.content)}${String(file.content)}` };
    } else if (existing >= 0) {
      list[existing] = file;
    } else {
      list.push(file);
    }
  }
}
