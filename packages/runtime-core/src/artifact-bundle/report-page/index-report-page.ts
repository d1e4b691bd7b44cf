/**
 * The page beside a batch's `report.json` or a matrix's `matrix-summary.json`: one row per task
 * (or cell) linking to that bundle's own `report.html`.
 */
import type { BatchReport } from "../../batch/batch-schemas.js";
import type { RecipeMatrixSummary } from "../../test-results.js";
import { REPORT_PAGE_PATH } from "./report-page-data.js";
import { badge, bundleHref, escapeHtml as esc, formatDuration, htmlDocument, table } from "./html.js";

/** Link to `<folder>/report.html` relative to the index page, or plain text when `folder` is not a plain relative folder name. */
function pageLink(folder: string, label: string): string {
  const href = bundleHref(`${folder}/${REPORT_PAGE_PATH}`);
  return href === undefined ? esc(label) : `<a href="${esc(href)}">${esc(label)}</a>`;
}

/**
 * The batch page (`DIR/report.html`): counts, then one row per task with status, exit code,
 * duration, bundle id and a link to `DIR/<id>/report.html` (tasks without a bundle are not linked).
 * @param report - the batch report as written to `DIR/report.json`.
 * @returns the complete HTML document.
 */
export function renderBatchReportPage(report: BatchReport): string {
  const rows = report.tasks.map((t) => [
    t.bundle ? pageLink(t.id, t.id) : esc(t.id),
    esc(t.kind),
    badge(t.status),
    esc(t.exitCode),
    esc(formatDuration(t.durationMs)),
    t.bundle ? `<code>${esc(t.bundle.id)}</code>` : `<span class="muted">no bundle</span>`,
    t.error ? `${badge(t.error.code)} ${esc(t.error.message)}` : "",
  ]);
  const body = `<h1>wp-codebox batch: ${esc(report.tasksFile)}</h1>
<p>${badge(report.counts.failed ? "failed" : "passed")} ${esc(report.counts.total)} task(s): ${esc(report.counts.passed)} passed, ${esc(report.counts.failed)} failed${report.counts.resumed ? `, ${esc(report.counts.resumed)} resumed` : ""} · ${esc(formatDuration(report.durationMs))} · ${esc(report.mode)}${report.concurrency ? `, ${esc(report.concurrency)} at once` : ""}</p>
<p class="muted">Each task's page is in its bundle; <a href="report.json">report.json</a> and <a href="junit.xml">junit.xml</a> hold the same results.</p>
${table(["Task", "Kind", "Status", "Exit", "Duration", "Bundle", "Error"], rows, "tasks")}`;
  return htmlDocument(`wp-codebox batch: ${report.counts.failed ? "failed" : "passed"}`, body);
}

/**
 * The matrix page (`DIR/report.html` beside `matrix-summary.json`): one row per cell linking to
 * `DIR/<cell id>/report.html`.
 * @returns the complete HTML document.
 */
export function renderMatrixReportPage(summary: RecipeMatrixSummary): string {
  const rows = summary.cells.map((c) => [
    pageLink(c.id, c.id),
    esc(c.wp ?? "default"),
    esc(c.php ?? "default"),
    badge(c.outcome),
    esc(c.exitCode),
    c.tests ? esc(`${c.tests.passed}/${c.tests.total}`) : "",
    esc(c.summary),
    `<code>${esc(c.bundle.id)}</code>`,
  ]);
  const body = `<h1>wp-codebox recipe matrix: ${esc(summary.recipe.name ?? summary.recipe.path)}</h1>
<p>${badge(summary.outcome)} ${esc(summary.counts.cells)} cell(s): ${esc(summary.counts.passed)} passed, ${esc(summary.counts.failed)} failed</p>
${table(["Cell", "WordPress", "PHP", "Outcome", "Exit", "Tests passed", "Summary", "Bundle"], rows, "cells")}`;
  return htmlDocument(`wp-codebox matrix: ${summary.outcome}`, body);
}
