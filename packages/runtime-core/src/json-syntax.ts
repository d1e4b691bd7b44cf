/**
 * Parsing JSON that came from someone else (recipes, episode scripts, task files, policies, JSON
 * arguments) without echoing it back. V8's syntax errors quote the start of the text
 * (`Unexpected token 'h', "hello secret" is not valid JSON`), and an error message travels to
 * stderr, result files and bundles, where a secret in a malformed file must not go.
 */

/**
 * Parses `text` as JSON.
 * @param text - the whole document.
 * @returns the parsed value.
 * @throws SyntaxError whose message says what is wrong and where (line and column, 1-based) but
 *   quotes none of the text: see {@link jsonSyntaxMessage}.
 */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new SyntaxError(jsonSyntaxMessage(error, text));
  }
}

/**
 * V8's message for a JSON syntax error, with every quoted piece of the input removed and the
 * position given as line and column.
 * @param error - what `JSON.parse(text)` threw.
 * @param text - the text it was given (only used to turn a position into line and column).
 * @returns e.g. "expected double-quoted property name at line 3, column 7" or "unexpected token".
 */
export function jsonSyntaxMessage(error: unknown, text: string): string {
  const raw = error instanceof Error ? error.message : String(error);
  const position = /\bat position (\d+)/.exec(raw);
  let what = raw
    .replace(/\s*\(line \d+ column \d+\)/, "")
    .replace(/\s*in JSON at position \d+|\s*at position \d+/, "")
    // "Unexpected token 'x', "…" is not valid JSON": the token and the excerpt are the input's own bytes.
    .replace(/^Unexpected token\b.*$/s, "Unexpected token")
    .replace(/\s*of JSON input$/, " of the text")
    .replace(/["'`].*$/s, "")
    .trim();
  if (what === "") what = "not valid JSON";
  what = what[0]!.toLowerCase() + what.slice(1);
  if (!position) return what;
  const offset = Math.min(Number(position[1]), text.length);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${what} at line ${line}, column ${column}`;
}
