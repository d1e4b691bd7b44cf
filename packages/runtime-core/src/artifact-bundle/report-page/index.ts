export { CHECK_SOURCES_PATH, readReportPageData, REPORT_PAGE_KIND, REPORT_PAGE_PATH, REPORT_PAGE_READ_LIMIT_BYTES, type ReportPageData, type ReportPageVerification } from "./report-page-data.js";
export { renderReportPage, REPORT_PAGE_MAX_ROWS, REPORT_PAGE_OUTPUT_CHARS } from "./render-report-page.js";
export { renderBatchReportPage, renderMatrixReportPage } from "./index-report-page.js";
export { SOURCE_EXCERPT_LINE_CHARS, SOURCE_EXCERPT_RADIUS_LINES, sourceExcerpt, type SourceExcerpt } from "./source-excerpt.js";
export { escapeHtml, bundleHref } from "./html.js";
