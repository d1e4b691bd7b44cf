#!/usr/bin/env node
/**
 * The summary a benchmark needs from a graded batch: passed/failed per task and why, from
 * DIR/report.json and each task's bundle (the assertions' JSON, or the error of a candidate that
 * did not run). Prints JSON; exits 0 (grading failures are results, not errors).
 *
 *   node examples/grading/grade-report.mjs DIR
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: grade-report.mjs ARTIFACTS_DIR");
  process.exit(2);
}
const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));

function reasons(task) {
  const commands = join(dir, task.id, "files", "commands.jsonl");
  if (!existsSync(commands)) return [task.error ? `${task.error.code}: ${task.error.message}` : "no bundle"];
  const results = readFileSync(commands, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  const failed = results.find((r) => r.status !== "ok");
  if (failed) return [`${failed.command} ${failed.status}: ${failed.error?.code ?? ""} ${failed.error?.message ?? failed.stderr}`.trim()];
  try {
    return JSON.parse(results.at(-1).stdout).failures;
  } catch {
    return [task.error ? `${task.error.code}: ${task.error.message}` : "the assertions printed no verdict"];
  }
}

const tasks = report.tasks.map((t) => ({ id: t.id, passed: t.status === "passed", ...(t.status === "passed" ? {} : { reasons: reasons(t) }) }));
const passed = tasks.filter((t) => t.passed).length;
console.log(JSON.stringify({ total: tasks.length, passed, failed: tasks.length - passed, score: tasks.length ? passed / tasks.length : 0, tasks }, null, 2));
