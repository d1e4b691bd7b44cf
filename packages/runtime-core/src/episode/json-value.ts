/**
 * Small helpers that turn runtime values into the JSON the episode records, so a trace read back
 * from disk has exactly the digests it was written with.
 */
import { createRedactor } from "../redaction.js";
import { EPISODE_REDACTED } from "./episode-constants.js";

/**
 * Returns the JSON form of `value` (what `JSON.parse(JSON.stringify(value))` gives): `undefined`
 * members dropped, `NaN`/`Infinity` → `null`, `Date` → ISO string. `undefined` itself → `null`.
 */
export function toJsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Uint8Array ? { bytes: v.byteLength } : typeof v === "bigint" ? v.toString() : v,
  );
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/**
 * Replaces every occurrence of each secret (non-empty strings) in every string inside `value`, then
 * applies the bundle writer's credential patterns (cookies, nonces, password fields) to the JSON
 * text, so the writer's redaction of the trace file is a no-op and recorded digests stay valid.
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const replaced = replaceSecrets(value, secrets);
  if (replaced === undefined) return replaced;
  const text = JSON.stringify(replaced);
  if (text === undefined) return replaced;
  // The same redactor as the bundle writer, with every encoded form of the secrets (base64, hex,
  // other cases, escapes): if the trace kept one, the writer would change the file after its
  // digests were taken, and the bundle would fail verification.
  const redacted = createRedactor(secrets).redactJson(replaced);
  return redacted === text ? replaced : (JSON.parse(redacted) as T);
}

function replaceSecrets<T>(value: T, secrets: readonly string[]): T {
  const list = secrets.filter((s) => s.length > 0);
  if (list.length === 0) return value;
  const visit = (v: unknown): unknown => {
    if (typeof v === "string") return list.reduce((text, secret) => text.split(secret).join(EPISODE_REDACTED), v);
    if (Array.isArray(v)) return v.map(visit);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [visit(k) as string, visit(x)]));
    }
    return v;
  };
  return visit(value) as T;
}

/** A shallow copy of `value` without the named keys. */
export function omitKeys<T extends object>(value: T, keys: readonly string[]): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!keys.includes(k)) out[k] = v;
  return out as Partial<T>;
}

/** `true` for a plain (non-array, non-null) object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Zero-padded 1-based position label: `pad4(1)` → `"0001"`. */
export function pad4(position: number): string {
  return String(position).padStart(4, "0");
}
