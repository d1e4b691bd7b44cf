export * from "./report-page-data.js";
export * from "./render-report-page.js";
export * from "./index-report-page.js";
export * from "./source-excerpt.js";
export { escapeHtml, bundleHref } from "./html.js";
