/**
 * Canonical JSON and SHA-256 digests.
 * Source: RFC 8785 (JSON Canonicalization Scheme), through the `canonicalize` library.
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/**
 * Serialises `value` as RFC 8785 canonical JSON (sorted keys, no whitespace, ES number format).
 * @throws TypeError when the value has no JSON form (e.g. `undefined` at the top level).
 */
export function canonicalJson(value: unknown): string {
  const text = (canonicalize as unknown as (v: unknown) => string | undefined)(value);
  if (text === undefined) throw new TypeError("canonicalJson: value has no JSON representation");
  return text;
}

/** SHA-256 of a UTF-8 string or bytes, as 64 lowercase hex characters. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Domain-separated digest: SHA-256 over `schemaId + "\n" + canonicalJson(payload)`,
 * so equal payloads under different contracts never share a digest.
 */
export function domainDigest(schemaId: string, payload: unknown): string {
  return sha256Hex(`${schemaId}\n${canonicalJson(payload)}`);
}
