/**
 * Human duration strings → milliseconds (`"3s"`, `"500ms"`, `"2m"`, `"1500"`).
 */
import { WpCodeboxError, quoteValue } from "./errors.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;
/** Longest duration a Node timer can wait (2^31 − 1 ms, about 24.8 days); larger ones fire at once. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * Parses a duration into whole milliseconds. A bare number is milliseconds; units are
 * `ms`, `s`, `m`, `h`; decimals are allowed (`"1.5s"` → 1500). `"0"` means "no limit" to callers
 * that accept it.
 * @param input - duration text, or a non-negative finite number of ms (returned rounded).
 * @returns milliseconds (integer, ≥ 0).
 * @throws WpCodeboxError `invalid-duration` for empty, negative, unit-less garbage, unknown units, or
 *   more than `MAX_DURATION_MS` (a Node timer would fire at once).
 * @example parseDuration("3s") // 3000
 */
export function parseDuration(input: string | number): number {
  if (typeof input === "number") {
    if (Number.isFinite(input) && input >= 0 && input <= MAX_DURATION_MS) return Math.round(input);
    throw invalid(String(input));
  }
  const text = String(input).trim();
  const match = DURATION_RE.exec(text);
  if (!match) throw invalid(text);
  const value = Number(match[1]) * UNIT_MS[match[2] ?? "ms"]!;
  if (!Number.isFinite(value) || value > MAX_DURATION_MS) throw invalid(text);
  return Math.round(value);
}

function invalid(text: string): WpCodeboxError {
  return new WpCodeboxError(
    "invalid-duration",
    `Invalid duration ${quoteValue(text)}: use a non-negative number of milliseconds ("1500") or a number with a unit ms, s, m or h ("500ms", "3s", "2m"), at most ${MAX_DURATION_MS} ms (about 24.8 days).`,
    { input: text },
  );
}
