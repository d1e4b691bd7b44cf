/**
 * The few HTML building blocks the report pages use. Every string that reaches a page goes
 * through `escapeHtml` (text and attribute values alike), and every link or image source is a
 * bundle path checked by `bundlePathProblem`, so nothing PHP printed can become markup or a URL.
 */
import { bundlePathProblem } from "../bundle-layout.js";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

/** Escapes text for an HTML text node or a double- or single-quoted attribute value. `null`/`undefined` → "". */
export function escapeHtml(value: unknown): string {
  if (value === undefined || value === null) return "";
  return String(value).replace(/[&<>"'`]/g, (c) => ENTITIES[c]!);
}

/**
 * A relative URL for a bundle path (each segment percent-encoded), prefixed with `base` (a
 * `/`-ended relative folder, "" for a page at the bundle root); `undefined` for a path that is not
 * a plain bundle-relative path (absolute, `..`, a scheme such as `javascript:`).
 */
export function bundleHref(path: string, base = ""): string | undefined {
  if (bundlePathProblem(path) !== undefined || /^[a-z][a-z0-9+.-]*:/i.test(path)) return undefined;
  return base + path.split("/").map(encodeURIComponent).join("/");
}

/** `<a href>` to a bundle file, or the escaped path as plain text when it is not one. */
export function fileLink(path: string, base = "", label?: string): string {
  const href = bundleHref(path, base);
  const text = escapeHtml(label ?? path);
  return href === undefined ? text : `<a href="${escapeHtml(href)}">${text}</a>`;
}

/**
 * Text cut to at most `maxChars` characters (UTF-16 code units, never splitting a surrogate pair).
 * @returns `{ text, cut }`: `cut` is true when something was left off.
 */
export function capText(text: string, maxChars: number): { text: string; cut: boolean } {
  if (text.length <= maxChars) return { text, cut: false };
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), cut: true };
}

/** A table with escaped header cells; `rows` hold cells that are already HTML. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], className = ""): string {
  if (rows.length === 0) return "";
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("\n");
  return `<table${className ? ` class="${escapeHtml(className)}"` : ""}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A status word as a coloured badge (`ok`/`passed`/`sealed` green, `skipped`/`none`/`unknown` grey, anything else red). */
export function badge(status: unknown): string {
  const s = String(status ?? "unknown");
  const tone = s === "ok" || s === "passed" || s === "true" || s === "sealed" ? "good" : s === "skipped" || s === "none" || s === "unknown" ? "neutral" : "bad";
  return `<span class="badge ${tone}">${escapeHtml(s)}</span>`;
}

/** A duration in ms as "850 ms" / "12.3 s" / "2 min 5 s". */
export function formatDuration(ms: unknown): string {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Styles of every report page: inline, no fonts or images from anywhere. */
export const REPORT_PAGE_CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 16px 24px 48px; color: #1d2327; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 12px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #dcdcde; padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; } th, td { border: 1px solid #dcdcde; padding: 4px 8px; text-align: left; vertical-align: top; } th { background: #f6f7f7; }
table.facts th { width: 180px; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; } pre { background: #f6f7f7; border: 1px solid #dcdcde; padding: 8px; overflow: auto; max-height: 480px; white-space: pre-wrap; word-break: break-word; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-weight: 600; font-size: 12.5px; } .good { background: #d1f0d6; color: #005c12; } .bad { background: #fbd3d3; color: #8a1010; } .neutral { background: #e8e8e8; color: #3c434a; }
.excerpt { padding: 0; } .excerpt span { display: block; padding: 0 8px; } .excerpt .hit { background: #fcf0a8; font-weight: 600; }
.shots { display: flex; flex-wrap: wrap; gap: 12px; } figure { margin: 0; } figure img { max-width: 360px; border: 1px solid #dcdcde; display: block; } figcaption { font-size: 12.5px; color: #50575e; }
.compare { display: grid; grid-template-columns: repeat(3, 1fr); gap: 8px; } .compare img { max-width: 100%; }
img.step { max-width: 240px; border: 1px solid #dcdcde; display: block; }
nav a { margin-right: 12px; } .muted { color: #646970; } details > summary { cursor: pointer; }
`;

/** A complete self-contained document: inline CSS, no scripts; the CSP forbids scripts and any network fetch. */
export function htmlDocument(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${REPORT_PAGE_CSS}</style>
</head>
<body>
${body}
</body>
</html>
`;
}
