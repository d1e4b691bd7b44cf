/**
 * A few lines of source around a `file:line`, as the check's page shows them under each finding.
 */

/** Lines shown before and after the finding's line. */
export const SOURCE_EXCERPT_RADIUS_LINES = 3;
/** Most characters kept of one source line. */
export const SOURCE_EXCERPT_LINE_CHARS = 300;

/**
 * One excerpt (an entry of `files/check/sources.json`'s `excerpts`).
 * - `file`, `line`: the finding's location (1-based line), exactly as the finding spells it.
 * - `startLine`: the 1-based number of `lines[0]`.
 */
export interface SourceExcerpt {
  file: string;
  line: number;
  startLine: number;
  lines: string[];
}

/**
 * The lines around `line` of a source text.
 * @param source - the whole file as text.
 * @param line - 1-based.
 * @param radius - lines before and after; default `SOURCE_EXCERPT_RADIUS_LINES`.
 * @returns `{ startLine, lines }` (each line cut to `SOURCE_EXCERPT_LINE_CHARS`), or undefined
 *   when `line` is not a line of the text.
 */
export function sourceExcerpt(source: string, line: number, radius = SOURCE_EXCERPT_RADIUS_LINES): { startLine: number; lines: string[] } | undefined {
  const all = source.split(/\r\n|\r|\n/);
  if (!Number.isInteger(line) || line < 1 || line > all.length) return undefined;
  const start = Math.max(1, line - radius);
  const end = Math.min(all.length, line + radius);
  return { startLine: start, lines: all.slice(start - 1, end).map((l) => (l.length > SOURCE_EXCERPT_LINE_CHARS ? `${l.slice(0, SOURCE_EXCERPT_LINE_CHARS)}…` : l)) };
}
