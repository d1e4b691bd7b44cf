/**
 * The observation envelope `wp-codebox/runtime-episode-observation/v1`: what the runtime looked
 * like at one point.
 */
import { Type, type Static } from "@sinclair/typebox";
import { canonicalJson, domainDigest, sha256Hex } from "../digest.js";
import type { ArtifactFile } from "../runtime.js";
import {
  EPISODE_OBSERVATION_INLINE_LIMIT_BYTES,
  RUNTIME_EPISODE_OBSERVATION_PAYLOAD_KIND,
  RUNTIME_EPISODE_OBSERVATION_SCHEMA,
  RUNTIME_EPISODE_OBSERVATIONS_DIR,
} from "./episode-constants.js";
import { RuntimeEpisodeArtifactRefSchema, Sha256HexSchema, type RuntimeEpisodeArtifactRef } from "./episode-refs.js";
import { omitKeys, pad4, toJsonValue } from "./json-value.js";

/**
 * The observation envelope: `schema`, stable `id`, `type` (e.g. `runtime-info`, `mounts`,
 * `command-result`, `wordpress-state`, `http-response`, `browser-result`, `runtime-events`,
 * `runtime-logs`), free-form JSON `data`, ISO-8601 `timestamp` (presentation only, not digested),
 * optional bundle-relative `artifactRefs`, and `digest` over the envelope minus `id`, `digest`,
 * `timestamp`.
 */
export const RuntimeEpisodeObservationSchema = Type.Object(
  {
    schema: Type.Literal(RUNTIME_EPISODE_OBSERVATION_SCHEMA),
    id: Type.String({ minLength: 1 }),
    type: Type.String({ minLength: 1 }),
    data: Type.Unknown(),
    timestamp: Type.String({ format: "date-time" }),
    artifactRefs: Type.Optional(Type.Array(RuntimeEpisodeArtifactRefSchema)),
    digest: Sha256HexSchema,
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeObservation = Static<typeof RuntimeEpisodeObservationSchema>;

/** Input of `createEpisodeObservation`. `data` is converted to its JSON form. */
export interface RuntimeEpisodeObservationInput {
  type: string;
  data: unknown;
  /** ISO-8601; default: now. */
  timestamp?: string;
  artifactRefs?: RuntimeEpisodeArtifactRef[];
}

/** Fields left out of an observation digest (identity and presentation). */
const OBSERVATION_NON_DIGEST_FIELDS = ["id", "digest", "timestamp"] as const;

/** Recomputes an observation's digest: SHA-256 over the envelope minus `id`, `digest`, `timestamp`. */
export function episodeObservationDigest(observation: Omit<RuntimeEpisodeObservation, "id" | "digest"> | RuntimeEpisodeObservation): string {
  return domainDigest(RUNTIME_EPISODE_OBSERVATION_SCHEMA, omitKeys(observation, OBSERVATION_NON_DIGEST_FIELDS));
}

/**
 * Builds an observation envelope with its digest and a stable id.
 * @param input `{ type, data, timestamp? (ISO-8601, default now), artifactRefs? }`; `data` is stored
 *   as its JSON form (`undefined` members dropped, `undefined` → `null`).
 * @param options.position 1-based position among the episode's observations; the id is
 *   `observation-<0001>-<16 hex of digest>` (or `observation-<16 hex>` without a position).
 * @returns `{ schema, id, type, data, timestamp, artifactRefs?, digest }`; the digest ignores the timestamp.
 * @example createEpisodeObservation({ type: "runtime-info", data: { wordpressVersion: "6.8" } })
 */
export function createEpisodeObservation(input: RuntimeEpisodeObservationInput, options: { position?: number } = {}): RuntimeEpisodeObservation {
  const payload: Omit<RuntimeEpisodeObservation, "id" | "digest"> = {
    schema: RUNTIME_EPISODE_OBSERVATION_SCHEMA,
    type: input.type,
    data: toJsonValue(input.data),
    timestamp: input.timestamp ?? new Date().toISOString(),
  };
  if (input.artifactRefs && input.artifactRefs.length > 0) payload.artifactRefs = input.artifactRefs.map((r) => ({ ...r }));
  const digest = episodeObservationDigest(payload);
  const id = options.position === undefined ? `observation-${digest.slice(0, 16)}` : `observation-${pad4(options.position)}-${digest.slice(0, 16)}`;
  return { schema: payload.schema, id, type: payload.type, data: payload.data, timestamp: payload.timestamp, ...(payload.artifactRefs ? { artifactRefs: payload.artifactRefs } : {}), digest };
}

/** An observation whose payload may have been moved to a bundle file. */
export interface ExternalizedObservation {
  observation: RuntimeEpisodeObservation;
  /** The payload file (`files/observations/<observation-id>.json`), when the payload was moved. */
  file?: ArtifactFile;
}

/**
 * Moves a large observation payload out of the envelope. When the canonical JSON of `data` is
 * larger than `limitBytes` (UTF-8; default 65536), the payload is written as canonical JSON to
 * `files/observations/<observation-id>.json`; the envelope keeps its id, its `data` becomes
 * `{ artifact, sha256, bytes }` (the artifact-entry form), an artifact ref
 * `{ path, sha256, bytes, kind: "runtime-episode-observation-payload" }` is appended, and the digest
 * is recomputed. Smaller payloads are returned unchanged.
 */
export function externalizeObservationPayload(
  observation: RuntimeEpisodeObservation,
  limitBytes: number = EPISODE_OBSERVATION_INLINE_LIMIT_BYTES,
): ExternalizedObservation {
  const content = canonicalJson(observation.data);
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes <= limitBytes) return { observation };
  const path = `${RUNTIME_EPISODE_OBSERVATIONS_DIR}/${observation.id}.json`;
  const sha256 = sha256Hex(content);
  const ref: RuntimeEpisodeArtifactRef = { path, sha256, bytes, kind: RUNTIME_EPISODE_OBSERVATION_PAYLOAD_KIND };
  const moved = { ...observation, data: { artifact: path, sha256, bytes }, artifactRefs: [...(observation.artifactRefs ?? []), ref] };
  moved.digest = episodeObservationDigest(moved);
  return { observation: moved, file: { path, kind: RUNTIME_EPISODE_OBSERVATION_PAYLOAD_KIND, contentType: "application/json", content } };
}
