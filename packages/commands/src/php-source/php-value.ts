/**
 * The one way a value crosses into PHP source: every string, number, array or object that a
 * runtime places in PHP code it generates goes through `phpValue()`. Nothing else may splice a
 * value into PHP source (a unit test scans the sources for the old patterns).
 *
 * Rule: a value is data, never code. `phpValue()` returns a PHP *expression* that evaluates to the
 * value; the value itself appears in the source only as base64 of its JSON
 * (`json_decode(base64_decode('…'), true)`), so `$name`, `{${expr}}`, quotes, backslashes and NUL
 * are never interpreted by PHP's parser. Strings arrive byte-identical as UTF-8.
 */
import { WpCodeboxError, jsonPointerToken, loneSurrogateIndex } from "@wp-codebox/runtime-core";

/** A value `phpValue` accepts: the JSON data model (no undefined, functions, NaN or Infinity). */
export type PhpData = string | number | boolean | null | readonly PhpData[] | { readonly [key: string]: PhpData };

/**
 * A PHP expression that evaluates to `value`: strings → string, numbers → int/float, booleans,
 * null, arrays → list, plain objects → associative array (`json_decode(…, true)`; an empty object
 * becomes `[]`).
 * @param what - names the value in error messages, e.g. `"body-json"` or `"--env NOTE"`.
 * @throws WpCodeboxError `invalid-argument` when the value cannot reach PHP unchanged: a string
 *   with a lone UTF-16 surrogate (it has no UTF-8 form, so PHP would see `null` or U+FFFD), a
 *   non-finite number, or a value JSON cannot carry (undefined, a function, a bigint, a symbol).
 * @example phpValue("price $HOME {${x}}") // "json_decode(base64_decode('InByaWNl…'), true)"
 */
export function phpValue(value: unknown, what = "value"): string {
  assertPhpData(value, what);
  // Base64 holds only [A-Za-z0-9+/=]: nothing in it can end the single-quoted PHP string.
  return `json_decode(base64_decode('${Buffer.from(JSON.stringify(value), "utf8").toString("base64")}'), true)`;
}

/**
 * Checks that `value` survives the trip into PHP byte-identical.
 * @throws WpCodeboxError `invalid-argument` naming the JSON pointer of the first bad part.
 */
export function assertPhpData(value: unknown, what = "value", pointer = ""): asserts value is PhpData {
  const where = `${what}${pointer ? ` at ${pointer}` : ""}`;
  if (value === null || typeof value === "boolean") return;
  if (typeof value === "string") {
    const bad = loneSurrogateIndex(value);
    if (bad >= 0) {
      throw new WpCodeboxError(
        "invalid-argument",
        `${where} contains a lone UTF-16 surrogate (U+${value.charCodeAt(bad).toString(16).toUpperCase()} at index ${bad}); it has no UTF-8 form, so PHP cannot receive it unchanged. Send well-formed Unicode text.`,
        { what, pointer, index: bad },
      );
    }
    return;
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new WpCodeboxError("invalid-argument", `${where} is ${value}; PHP values must be finite numbers.`, { what, pointer });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertPhpData(item, what, `${pointer}/${i}`));
    return;
  }
  if (typeof value === "object" && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)) {
    for (const [key, item] of Object.entries(value)) {
      assertPhpData(key, what, `${pointer}/${jsonPointerToken(key)} (key)`);
      assertPhpData(item, what, `${pointer}/${jsonPointerToken(key)}`);
    }
    return;
  }
  throw new WpCodeboxError("invalid-argument", `${where} is a ${typeof value}; only JSON data (strings, numbers, booleans, null, arrays, plain objects) can be passed to PHP.`, { what, pointer });
}
