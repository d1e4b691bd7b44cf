/**
 * Finding ASCII needles (a secret's base64, base64url or hex, and their escapes) in text or bytes
 * where a program cut them into lines or groups: `chunk_split($b64, 76, "\r\n")` (MIME),
 * `chunk_split($b64, 64)`, `chunk_split($b64, 4, " ")`, `wordwrap`, hex as `aa:bb:cc`, and the same
 * once JSON-escaped (`\r\n` as four characters) or URL-encoded (`%0D%0A`).
 *
 * The haystack is read in bounded windows; in each, every run of separators of at most
 * `WRAP_SEPARATOR_MAX_CHARS` is dropped (a longer run becomes a break), and the needles are searched
 * with `indexOf` in what is left, so the cost is linear in the haystack and no RegExp can backtrack.
 */

/**
 * Longest run of separators (in UTF-16 units or bytes) between two characters of a wrapped form:
 * room for a CRLF JSON-escaped three times (`\\\\r\\\\n`, 10) and a few spaces or `<br />`.
 */
export const WRAP_SEPARATOR_MAX_CHARS = 16;

/** Haystack units compacted at a time (plus an overlap as long as the longest needle can stretch). */
const WINDOW_UNITS = 1 << 20;

/** A haystack as code units: a string's UTF-16 units, or a file's bytes. */
export type CodeUnits = Uint16Array | Uint8Array;

/** 1 for the ASCII codes a separator token can start with (whitespace, `. : ; , |`, `\`, `%`, `<`). */
const SEPARATOR_START = new Uint8Array(128);
for (const c of "\t\n\v\f\r .:;,|\\%<") SEPARATOR_START[c.charCodeAt(0)] = 1;

const lower = (c: number): number => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c);

/**
 * Length of the separator token that starts at `i`, or 0: a space, tab, CR, LF, VT or FF; one of
 * `. : ; , |` (punctuation used to group encoded text, in no base64, base64url or hex alphabet nor
 * in their escapes); backslashes followed by `r`, `n` or `t` (an escaped line break, at any JSON
 * depth); `%0A`, `%0D`, `%09`, `%20` (URL-encoded); `<br>`, `<br/>`, `<br />` (`nl2br`).
 */
function separatorLength(units: CodeUnits, length: number, i: number): number {
  const c = units[i]!;
  if (c >= 128 || SEPARATOR_START[c] === 0) return 0;
  if (c === 0x5c) {
    let k = i;
    while (k < length && units[k] === 0x5c) k++;
    const next = k < length ? units[k] : -1;
    return next === 0x72 || next === 0x6e || next === 0x74 ? k - i + 1 : 0;
  }
  if (c === 0x25) {
    if (i + 2 >= length) return 0;
    const a = units[i + 1];
    const b = lower(units[i + 2]!);
    return (a === 0x30 && (b === 0x61 || b === 0x64 || b === 0x39)) || (a === 0x32 && b === 0x30) ? 3 : 0;
  }
  if (c === 0x3c) {
    if (i + 3 >= length || lower(units[i + 1]!) !== 0x62 || lower(units[i + 2]!) !== 0x72) return 0;
    let k = i + 3;
    while (k < length && units[k] === 0x20) k++;
    if (k < length && units[k] === 0x2f) k++;
    return k < length && units[k] === 0x3e ? k - i + 1 : 0;
  }
  return 1;
}

/** The UTF-16 units of `text` (a copy), for `findWrapped`. */
export function textUnits(text: string): Uint16Array {
  const bytes = Buffer.from(text, "utf16le");
  return bytes.byteOffset % 2 === 0 ? new Uint16Array(bytes.buffer, bytes.byteOffset, text.length) : new Uint16Array(new Uint8Array(bytes).buffer);
}

/**
 * Spans `[start, end)` (indexes into `units`) of every occurrence of every needle with separator
 * runs of up to `WRAP_SEPARATOR_MAX_CHARS` between any two of its characters. Occurrences without
 * any separator may be found too. A span starts and ends on a needle character.
 * @param units - the haystack: a string's UTF-16 units (`textUnits`) or a file's bytes; only
 *   ASCII units can match.
 * @param exact - ASCII needles matched as they are.
 * @param caseless - ASCII needles, lower case, matched in any ASCII letter case.
 */
export function findWrapped(units: CodeUnits, exact: readonly string[], caseless: readonly string[]): [number, number][] {
  const found: [number, number][] = [];
  const length = units.length;
  const longest = Math.max(0, ...exact.map((n) => n.length), ...caseless.map((n) => n.length));
  if (longest === 0 || length === 0) return found;
  // A match that starts in a window ends within this many units of its start.
  const overlap = longest * (WRAP_SEPARATOR_MAX_CHARS + 1);
  for (let start = 0; start < length; start += WINDOW_UNITS) {
    const end = Math.min(length, start + WINDOW_UNITS + overlap);
    const codes = new Uint8Array(end - start);
    const where = new Int32Array(end - start);
    let n = 0;
    let dropped = false;
    for (let i = start; i < end; ) {
      const c = units[i]!;
      if (c < 128 && SEPARATOR_START[c] === 1) {
        let run = 0;
        for (let len = separatorLength(units, length, i); len > 0 && i + run < end; len = i + run < length ? separatorLength(units, length, i + run) : 0) run += len;
        if (run > 0) {
          if (run > WRAP_SEPARATOR_MAX_CHARS) {
            codes[n] = 0;
            where[n++] = i;
          } else dropped = true;
          i += run;
          continue;
        }
      }
      // Needles are ASCII: anything else is a break (and keeps the compacted text one byte a unit).
      codes[n] = c > 0 && c < 0x80 ? c : 0;
      where[n++] = i;
      i++;
    }
    // Nothing dropped: the plain search has seen this window as it is.
    if (!dropped) continue;
    const compact = Buffer.from(codes.buffer, 0, n).toString("latin1");
    const search = (text: string, needles: readonly string[]): void => {
      for (const needle of needles) {
        for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push([where[i]!, where[i + needle.length - 1]! + 1]);
      }
    };
    search(compact, exact);
    if (caseless.length > 0) search(compact.toLowerCase(), caseless);
  }
  return found;
}
