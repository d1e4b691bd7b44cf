/**
 * The batch aggregate: `DIR/report.json` (`wp-codebox/batch-report/v1`) and `DIR/junit.xml`, the
 * same for a local batch and a queued one. Pure functions plus one writer.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { BATCH_REPORT_SCHEMA_ID, REPORT_PAGE_PATH, bundleWriteError, renderBatchReportPage, type BatchReport, type BatchTaskResult, type SerializedError } from "@wp-codebox/runtime-core";

/** Inputs of `buildReport` besides the results. */
export interface ReportContext {
  tasksFile: string;
  artifactsDir: string;
  mode: BatchReport["mode"];
  concurrency?: number;
  queue?: string;
  startedAt: Date;
  finishedAt: Date;
}

/**
 * The report, tasks in the order of `order` (task-file order). A task id appears once: the last
 * result given for an id wins (a retried task is reported once).
 * @throws Error when a task of `order` has no result (a bug in the caller).
 */
export function buildReport(order: readonly string[], results: Iterable<BatchTaskResult>, context: ReportContext): BatchReport {
  const byId = new Map<string, BatchTaskResult>();
  for (const r of results) byId.set(r.id, r);
  const tasks = order.map((id) => {
    const r = byId.get(id);
    if (!r) throw new Error(`No result for task ${id}`);
    return r;
  });
  return {
    schema: BATCH_REPORT_SCHEMA_ID,
    tasksFile: context.tasksFile,
    artifactsDir: context.artifactsDir,
    mode: context.mode,
    ...(context.concurrency !== undefined ? { concurrency: context.concurrency } : {}),
    ...(context.queue !== undefined ? { queue: context.queue } : {}),
    startedAt: context.startedAt.toISOString(),
    finishedAt: context.finishedAt.toISOString(),
    durationMs: Math.max(0, context.finishedAt.getTime() - context.startedAt.getTime()),
    counts: {
      total: tasks.length,
      passed: tasks.filter((t) => t.status === "passed").length,
      failed: tasks.filter((t) => t.status === "failed").length,
      resumed: tasks.filter((t) => t.resumed).length,
    },
    tasks,
  };
}

// XML 1.0 allows tab, LF, CR and U+0020 and up (minus surrogates and U+FFFE/U+FFFF).
// eslint-disable-next-line no-control-regex
const INVALID_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Escapes text for an XML attribute or element, dropping characters XML cannot hold. */
export function xmlEscape(text: string): string {
  return text.replace(INVALID_XML, "\uFFFD").replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/**
 * JUnit XML of a report: one `<testsuite>` named after the task file, one `<testcase>` per task
 * (`classname` = recipe|episode, `name` = id). A failed task with a bundle is a `<failure>` (the
 * sandbox work failed); one without a bundle (crash, timeout, unreadable input) is an `<error>`.
 * The bundle folder, id and digest go to `<system-out>`.
 */
export function renderJUnit(report: BatchReport): string {
  const failures = report.tasks.filter((t) => t.status === "failed" && t.bundle).length;
  const errors = report.tasks.filter((t) => t.status === "failed" && !t.bundle).length;
  const suite = basename(report.tasksFile);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="wp-codebox batch" tests="${report.tasks.length}" failures="${failures}" errors="${errors}" time="${seconds(report.durationMs)}">`,
    `  <testsuite name="${xmlEscape(suite)}" tests="${report.tasks.length}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(report.durationMs)}" timestamp="${report.startedAt}">`,
  ];
  for (const t of report.tasks) {
    lines.push(`    <testcase classname="${t.kind}" name="${xmlEscape(t.id)}" time="${seconds(t.durationMs)}">`);
    if (t.status === "failed") {
      const element = t.bundle ? "failure" : "error";
      const code = t.error?.code ?? "failed";
      const message = t.error?.message ?? `exit code ${t.exitCode}`;
      lines.push(`      <${element} type="${xmlEscape(code)}" message="${xmlEscape(message.split("\n")[0]!.slice(0, 500))}">${xmlEscape(`${code}: ${message}\nexit code ${t.exitCode}`)}</${element}>`);
    }
    const out = t.bundle ? `bundle: ${join(report.artifactsDir, t.id)}\nid: ${t.bundle.id}\ndigest: ${t.bundle.digest}${t.resumed ? "\nresumed: kept from an earlier run" : ""}` : "no bundle";
    lines.push(`      <system-out>${xmlEscape(out)}</system-out>`, "    </testcase>");
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}

/** Paths of what a batch writes beside the bundles: `report.json`, `junit.xml` and `report.html` (one row per task, linking to each bundle's page). */
export interface BatchReportFiles {
  reportFile: string;
  junitFile: string;
  pageFile: string;
}

/** Writes `report.json`, `junit.xml` and `report.html` into `dir` (each atomically). */
export function writeReport(dir: string, report: BatchReport): BatchReportFiles {
  mkdirSync(dir, { recursive: true });
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
    return path;
  };
  return {
    reportFile: write("report.json", `${JSON.stringify(report, null, 2)}\n`),
    junitFile: write("junit.xml", renderJUnit(report)),
    pageFile: write(REPORT_PAGE_PATH, renderBatchReportPage(report)),
  };
}

/**
 * `writeReport`, but a filesystem failure (a disk that filled up or went read-only during the
 * batch) is returned as `error` (`artifacts-dir-unwritable`) instead of thrown, so the caller
 * still prints the report and exits 3.
 */
export function writeReportOrKeep(dir: string, report: BatchReport): { files: BatchReportFiles; error?: SerializedError } {
  try {
    return { files: writeReport(dir, report) };
  } catch (thrown) {
    const error = bundleWriteError(thrown, dir);
    if (!error) throw thrown;
    return { files: { reportFile: join(dir, "report.json"), junitFile: join(dir, "junit.xml"), pageFile: join(dir, REPORT_PAGE_PATH) }, error };
  }
}

/** Human summary of a report (stderr). */
export function formatReportSummary(report: BatchReport, files: BatchReportFiles): string {
  const lines = [`batch: ${report.counts.passed} passed, ${report.counts.failed} failed of ${report.counts.total}${report.counts.resumed ? ` (${report.counts.resumed} kept from an earlier run)` : ""} in ${(report.durationMs / 1000).toFixed(1)} s`];
  for (const t of report.tasks.filter((x) => x.status === "failed")) lines.push(`  FAILED ${t.id}: ${t.error?.code ?? `exit ${t.exitCode}`}${t.error ? ` — ${t.error.message.split("\n")[0]!.slice(0, 200)}` : ""}`);
  lines.push(`report: ${files.reportFile}`, `junit:  ${files.junitFile}`, `page:   ${files.pageFile}`);
  return `${lines.join("\n")}\n`;
}
