/**
 * Parsing JSON that came from someone else (recipes, episode scripts, task files, policies, JSON
 * arguments) without echoing it back. V8's syntax errors quote the start of the text
 * (`Unexpected token 'h', "hello secret" is not valid JSON`), and an error message travels to
 * stderr, result files and bundles, where a secret in a malformed file must not go.
 */

/**
 * The deepest nesting of arrays and objects an input may have. `JSON.parse` accepts any depth, but
 * everything after it (schema checks, comparisons, `JSON.stringify` into results) recurses, so a
 * hostile file of 100,000 `[` overflowed the stack as an internal error. Real recipes, scripts
 * and policies stay far below this.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Parses `text` as JSON.
 * @param text - the whole document.
 * @returns the parsed value.
 * @throws SyntaxError whose message says what is wrong and where (line and column, 1-based) but
 *   quotes none of the text: see {@link jsonSyntaxMessage}; also when arrays and objects nest
 *   deeper than {@link MAX_JSON_DEPTH}.
 */
export function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new SyntaxError(jsonSyntaxMessage(error, text));
  }
  const tooDeep = depthExceededAt(text, MAX_JSON_DEPTH);
  if (tooDeep !== undefined) throw new SyntaxError(`arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels at ${lineAndColumn(text, tooDeep)}`);
  return value;
}

/**
 * Whether a value already in memory (an MCP tool's arguments, a Node caller's object) nests arrays
 * and objects deeper than `limit`, checked without recursion, before `JSON.stringify` would
 * overflow the stack on it.
 * @param value - any value; only arrays and plain objects are descended into.
 * @param limit - the deepest allowed nesting, default {@link MAX_JSON_DEPTH}.
 */
export function jsonValueTooDeep(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** The offset of the first `[` or `{` that opens level `limit + 1` of valid JSON `text`, or undefined. Iterative: no recursion on input depth. */
function depthExceededAt(text: string, limit: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return i;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return undefined;
}

/** "line L, column C" (1-based) of an offset in `text`. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  return `line ${before.split("\n").length}, column ${offset - before.lastIndexOf("\n")}`;
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
  return `${what} at ${lineAndColumn(text, Math.min(Number(position[1]), text.length))}`;
}
