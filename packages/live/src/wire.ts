/**
 * The control protocol's JSON encoding. Bundle files and snapshot contents are bytes
 * (`Uint8Array`); on the wire a byte array is `{ "$bytes": "<base64>" }`, everything else is
 * plain JSON. `toWire` and `fromWire` are exact inverses for JSON-safe values with bytes inside.
 */

const BYTES_KEY = "$bytes";

/** Replaces every `Uint8Array` (at any depth) with `{ "$bytes": base64 }`; drops `undefined` like JSON. */
export function toWire(value: unknown): unknown {
  if (value instanceof Uint8Array) return { [BYTES_KEY]: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  if (Array.isArray(value)) return value.map((v) => toWire(v));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined && typeof v !== "function") out[k] = toWire(v);
    return out;
  }
  return value;
}

/** Turns every `{ "$bytes": base64 }` back into a `Uint8Array`. */
export function fromWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => fromWire(v));
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1 && keys[0] === BYTES_KEY && typeof record[BYTES_KEY] === "string") {
      const buffer = Buffer.from(record[BYTES_KEY] as string, "base64");
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(record)) out[k] = fromWire(v);
    return out;
  }
  return value;
}
