/**
 * Shared pieces of the episode contracts: SHA-256 digests, `{ id, digest }` refs and
 * bundle-relative artifact refs. Declared once with TypeBox; types come from `Static<>`.
 */
import { Type, type Static } from "@sinclair/typebox";

/** A SHA-256 digest as 64 lowercase hex characters. */
export const Sha256HexSchema = Type.String({ pattern: "^[0-9a-f]{64}$", description: "SHA-256, 64 lowercase hex" });

/** A pointer to another envelope in the trace: its `id` and the `digest` it must carry. */
export const RuntimeEpisodeRefSchema = Type.Object(
  { id: Type.String({ minLength: 1 }), digest: Sha256HexSchema },
  { additionalProperties: false },
);
export type RuntimeEpisodeRef = Static<typeof RuntimeEpisodeRefSchema>;

/**
 * A bundle-relative file referenced by an observation or snapshot: `path` (under `files/`),
 * `sha256` of its bytes, size in `bytes`, artifact `kind`.
 */
export const RuntimeEpisodeArtifactRefSchema = Type.Object(
  {
    path: Type.String({ minLength: 1 }),
    sha256: Sha256HexSchema,
    bytes: Type.Integer({ minimum: 0 }),
    kind: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeArtifactRef = Static<typeof RuntimeEpisodeArtifactRefSchema>;

/** The artifact bundle a trace was collected into: its id and digest. */
export const RuntimeEpisodeBundleRefSchema = Type.Object(
  { bundleId: Type.String({ minLength: 1 }), digest: Sha256HexSchema },
  { additionalProperties: false },
);
export type RuntimeEpisodeBundleRef = Static<typeof RuntimeEpisodeBundleRefSchema>;

/** Picks the well-formed `{ path, sha256, bytes, kind }` entries out of an unknown list. */
export function pickArtifactRefs(value: unknown): RuntimeEpisodeArtifactRef[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((r: unknown) => {
    if (r === null || typeof r !== "object") return [];
    const { path, sha256, bytes, kind } = r as Record<string, unknown>;
    if (typeof path !== "string" || typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) return [];
    if (typeof bytes !== "number" || !Number.isInteger(bytes) || bytes < 0 || typeof kind !== "string") return [];
    return [{ path, sha256, bytes, kind }];
  });
}
