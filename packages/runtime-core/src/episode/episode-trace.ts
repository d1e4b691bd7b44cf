/**
 * The episode trace `wp-codebox/runtime-episode-trace/v1`: runtime facts, the reset, every step
 * (action, execution, optional observation, with refs), standalone observations, snapshots and
 * restores.
 */
import { Type, type Static } from "@sinclair/typebox";
import { domainDigest } from "../digest.js";
import { RUNTIME_DETERMINISM_SCHEMA } from "../determinism.js";
import { RuntimeEpisodeActionSchema } from "./episode-action.js";
import { RUNTIME_EPISODE_TRACE_SCHEMA } from "./episode-constants.js";
import { RuntimeEpisodeExecutionSchema } from "./episode-execution.js";
import { RuntimeEpisodeObservationSchema } from "./episode-observation.js";
import {
  RuntimeEpisodeArtifactRefSchema,
  RuntimeEpisodeBundleRefSchema,
  RuntimeEpisodeRefSchema,
  Sha256HexSchema,
  type RuntimeEpisodeBundleRef,
} from "./episode-refs.js";

/** Position of a recorded item in the episode's timeline: the reset is 0, then 1, 2, … in call order. */
const Sequence = Type.Integer({ minimum: 1 });

/**
 * Runtime facts that matter for replay (timing and random ids left out so equal runs digest equal):
 * `backend`, `wordpressVersion`, `phpVersion`, `siteUrl?`, `plugins?`, `themes?`, `policy?`,
 * `mounts?` (sandbox `target`, `mode`, `kind`; host paths are not recorded), `determinism?`
 * (`{ clock: "real" | "virtual", start?, seed?, origin }`).
 */
export const RuntimeEpisodeRuntimeSchema = Type.Object(
  {
    backend: Type.String({ minLength: 1 }),
    wordpressVersion: Type.String(),
    phpVersion: Type.String(),
    siteUrl: Type.Optional(Type.String()),
    plugins: Type.Optional(Type.Array(Type.String())),
    themes: Type.Optional(Type.Array(Type.String())),
    policy: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    mounts: Type.Optional(
      Type.Array(
        Type.Object(
          { target: Type.String(), mode: Type.String(), kind: Type.Optional(Type.String()) },
          { additionalProperties: false },
        ),
      ),
    ),
    /** Clock mode, start instant, seed and origin mode: what replay boots with. */
    determinism: Type.Optional(RUNTIME_DETERMINISM_SCHEMA),
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeRuntime = Static<typeof RuntimeEpisodeRuntimeSchema>;

/** The reset that began the episode: `id` (`reset-<0001>`), its observations and refs to them (same order). */
export const RuntimeEpisodeResetSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    observations: Type.Array(RuntimeEpisodeObservationSchema),
    observationRefs: Type.Array(RuntimeEpisodeRefSchema),
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeReset = Static<typeof RuntimeEpisodeResetSchema>;

/**
 * One step: `id` (`step-<0001>`), 0-based `index`, timeline `sequence`, the `action` envelope and
 * `actionRef`, the `execution` record and `executionRef`, and the optional `observation` with
 * `observationRef`. A failed or timed-out execution is a recorded step, not an error.
 */
export const RuntimeEpisodeStepSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    index: Type.Integer({ minimum: 0 }),
    sequence: Sequence,
    action: RuntimeEpisodeActionSchema,
    actionRef: RuntimeEpisodeRefSchema,
    execution: RuntimeEpisodeExecutionSchema,
    executionRef: RuntimeEpisodeRefSchema,
    observation: Type.Optional(RuntimeEpisodeObservationSchema),
    observationRef: Type.Optional(RuntimeEpisodeRefSchema),
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeStep = Static<typeof RuntimeEpisodeStepSchema>;

/** An observation taken with `episode.observe()` between steps, at timeline position `sequence`. */
export const RuntimeEpisodeObservationEntrySchema = Type.Object(
  { sequence: Sequence, observation: RuntimeEpisodeObservationSchema, observationRef: RuntimeEpisodeRefSchema },
  { additionalProperties: false },
);
export type RuntimeEpisodeObservationEntry = Static<typeof RuntimeEpisodeObservationEntrySchema>;

/**
 * A snapshot known to the episode: `id`, timeline `sequence`, `semantics` (e.g.
 * `runtime-state-artifact`; branch on it before restore), `digest` (the runtime snapshot's own
 * SHA-256 when it has one) and optional artifact refs.
 */
export const RuntimeEpisodeSnapshotSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    sequence: Sequence,
    semantics: Type.String({ minLength: 1 }),
    digest: Sha256HexSchema,
    artifactRefs: Type.Optional(Type.Array(RuntimeEpisodeArtifactRefSchema)),
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeSnapshot = Static<typeof RuntimeEpisodeSnapshotSchema>;

/** A restore at timeline position `sequence`, pointing at a snapshot in `snapshots`. */
export const RuntimeEpisodeRestoreSchema = Type.Object(
  { sequence: Sequence, snapshotRef: RuntimeEpisodeRefSchema },
  { additionalProperties: false },
);
export type RuntimeEpisodeRestore = Static<typeof RuntimeEpisodeRestoreSchema>;

/**
 * The trace. `id` is `runtime-episode-trace-<16 hex of digest>`; `createdAt` (ISO-8601) is
 * presentation. `digest` covers the structure of the trace through refs (see `episodeTraceDigest`).
 */
export const RuntimeEpisodeTraceSchema = Type.Object(
  {
    schema: Type.Literal(RUNTIME_EPISODE_TRACE_SCHEMA),
    version: Type.Literal(1),
    id: Type.String({ minLength: 1 }),
    createdAt: Type.String({ format: "date-time" }),
    runtime: RuntimeEpisodeRuntimeSchema,
    reset: RuntimeEpisodeResetSchema,
    steps: Type.Array(RuntimeEpisodeStepSchema),
    observations: Type.Optional(Type.Array(RuntimeEpisodeObservationEntrySchema)),
    snapshots: Type.Array(RuntimeEpisodeSnapshotSchema),
    restores: Type.Optional(Type.Array(RuntimeEpisodeRestoreSchema)),
    artifactRef: Type.Optional(RuntimeEpisodeBundleRefSchema),
    digest: Sha256HexSchema,
  },
  { $id: RUNTIME_EPISODE_TRACE_SCHEMA, title: "WP Codebox runtime episode trace", additionalProperties: false },
);
export type RuntimeEpisodeTrace = Static<typeof RuntimeEpisodeTraceSchema>;

/**
 * The published JSON Schema of `wp-codebox/runtime-episode-trace/v1` (draft-07 compatible; `$id`
 * is the schema id). The same object the validator uses, so schema and code cannot drift.
 */
export const RUNTIME_EPISODE_TRACE_JSON_SCHEMA = RuntimeEpisodeTraceSchema;

/** A trace without its derived `id` and `digest`, as `finalizeEpisodeTrace` takes it. */
export type RuntimeEpisodeTraceDraft = Omit<RuntimeEpisodeTrace, "id" | "digest">;

/**
 * The trace digest: `domainDigest(trace schema, payload)` where the payload is the trace with every
 * embedded envelope replaced by its ref, i.e. `{ schema, version, runtime, reset: { id,
 * observationRefs }, steps: [{ id, index, sequence, actionRef, executionRef, observationRef? }],
 * observations?: [{ sequence, observationRef }], snapshots, restores?, artifactRef? }`. Ids,
 * `createdAt`, timestamps and durations are excluded, so the same actions give the same digest;
 * tampering with any envelope is caught because the validator checks each ref against its target.
 */
export function episodeTraceDigest(trace: RuntimeEpisodeTraceDraft | RuntimeEpisodeTrace): string {
  const payload: Record<string, unknown> = {
    schema: trace.schema,
    version: trace.version,
    runtime: trace.runtime,
    reset: { id: trace.reset.id, observationRefs: trace.reset.observationRefs },
    steps: trace.steps.map((s) => ({
      id: s.id,
      index: s.index,
      sequence: s.sequence,
      actionRef: s.actionRef,
      executionRef: s.executionRef,
      ...(s.observationRef ? { observationRef: s.observationRef } : {}),
    })),
    snapshots: trace.snapshots,
  };
  if (trace.observations) payload.observations = trace.observations.map((o) => ({ sequence: o.sequence, observationRef: o.observationRef }));
  if (trace.restores) payload.restores = trace.restores;
  if (trace.artifactRef) payload.artifactRef = trace.artifactRef;
  return domainDigest(RUNTIME_EPISODE_TRACE_SCHEMA, payload);
}

/**
 * Computes `digest` and `id` (`runtime-episode-trace-<16 hex>`) for a trace draft.
 * @returns a new trace object in canonical member order; the draft is not modified.
 */
export function finalizeEpisodeTrace(draft: RuntimeEpisodeTraceDraft): RuntimeEpisodeTrace {
  const normal: RuntimeEpisodeTraceDraft = {
    schema: draft.schema,
    version: draft.version,
    createdAt: draft.createdAt,
    runtime: draft.runtime,
    reset: draft.reset,
    steps: draft.steps,
    ...(draft.observations && draft.observations.length > 0 ? { observations: draft.observations } : {}),
    snapshots: draft.snapshots,
    ...(draft.restores && draft.restores.length > 0 ? { restores: draft.restores } : {}),
    ...(draft.artifactRef ? { artifactRef: draft.artifactRef } : {}),
  };
  const digest = episodeTraceDigest(normal);
  const { schema, version, ...rest } = normal;
  return { schema, version, id: `runtime-episode-trace-${digest.slice(0, 16)}`, ...rest, digest };
}

/**
 * Returns a copy of `trace` that points at the artifact bundle it was collected into, with its id
 * and digest recomputed (for the bundle writer, once the bundle id/digest is known).
 */
export function withEpisodeTraceArtifactRef(trace: RuntimeEpisodeTrace, artifactRef: RuntimeEpisodeBundleRef): RuntimeEpisodeTrace {
  const { id: _id, digest: _digest, ...draft } = trace;
  return finalizeEpisodeTrace({ ...draft, artifactRef: { bundleId: artifactRef.bundleId, digest: artifactRef.digest } });
}
