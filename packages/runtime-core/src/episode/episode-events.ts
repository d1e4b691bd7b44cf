/**
 * The compact event stream of an episode (`files/runtime-episode.jsonl`): one JSON line per
 * reset, step, observation, snapshot or restore, in timeline order, carrying refs but no payloads.
 */
import { Type, type Static } from "@sinclair/typebox";
import { RuntimeEpisodeActionKindSchema } from "./episode-action.js";
import { RuntimeEpisodeExecutionStatusSchema } from "./episode-execution.js";
import type { RuntimeEpisodeObservation } from "./episode-observation.js";
import { RuntimeEpisodeArtifactRefSchema, RuntimeEpisodeRefSchema, Sha256HexSchema } from "./episode-refs.js";
import type { RuntimeEpisodeTrace } from "./episode-trace.js";

const Sequence = Type.Integer({ minimum: 0, description: "timeline position; the reset and its observations are 0" });

/**
 * One line of `files/runtime-episode.jsonl`, discriminated by `type`:
 * - `reset`: `{ type, sequence: 0, traceId, traceDigest, id, backend, wordpressVersion, phpVersion, observationRefs }`
 * - `step`: `{ type, sequence, id, index, kind, command, args, actionRef, executionRef, status, exitCode, errorCode?, durationMs (ms), observationRef? }`
 * - `observation`: `{ type, sequence, id, digest, observationType, timestamp, parentId? (reset or step id; absent for observe()), artifactRefs? }`
 * - `snapshot`: `{ type, sequence, id, digest, semantics }`
 * - `restore`: `{ type, sequence, snapshotRef }`
 */
export const RUNTIME_EPISODE_EVENT = Type.Union([
  Type.Object(
    {
      type: Type.Literal("reset"),
      sequence: Sequence,
      traceId: Type.String(),
      traceDigest: Sha256HexSchema,
      id: Type.String(),
      backend: Type.String(),
      wordpressVersion: Type.String(),
      phpVersion: Type.String(),
      observationRefs: Type.Array(RuntimeEpisodeRefSchema),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("step"),
      sequence: Sequence,
      id: Type.String(),
      index: Type.Integer({ minimum: 0 }),
      kind: RuntimeEpisodeActionKindSchema,
      command: Type.String(),
      args: Type.Array(Type.String()),
      actionRef: RuntimeEpisodeRefSchema,
      executionRef: RuntimeEpisodeRefSchema,
      status: RuntimeEpisodeExecutionStatusSchema,
      exitCode: Type.Integer(),
      errorCode: Type.Optional(Type.String()),
      durationMs: Type.Number({ minimum: 0 }),
      observationRef: Type.Optional(RuntimeEpisodeRefSchema),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("observation"),
      sequence: Sequence,
      id: Type.String(),
      digest: Sha256HexSchema,
      observationType: Type.String(),
      timestamp: Type.String(),
      parentId: Type.Optional(Type.String()),
      artifactRefs: Type.Optional(Type.Array(RuntimeEpisodeArtifactRefSchema)),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal("snapshot"), sequence: Sequence, id: Type.String(), digest: Sha256HexSchema, semantics: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal("restore"), sequence: Sequence, snapshotRef: RuntimeEpisodeRefSchema }, { additionalProperties: false }),
]);
export type RuntimeEpisodeEvent = Static<typeof RUNTIME_EPISODE_EVENT>;

function observationEvent(o: RuntimeEpisodeObservation, sequence: number, parentId?: string): RuntimeEpisodeEvent {
  return {
    type: "observation",
    sequence,
    id: o.id,
    digest: o.digest,
    observationType: o.type,
    timestamp: o.timestamp,
    ...(parentId ? { parentId } : {}),
    ...(o.artifactRefs ? { artifactRefs: o.artifactRefs } : {}),
  };
}

/**
 * The events of a trace in timeline order: the reset, its observations, then every step (followed
 * by its observation), standalone observation, snapshot and restore sorted by `sequence`.
 */
export function episodeEvents(trace: RuntimeEpisodeTrace): RuntimeEpisodeEvent[] {
  const events: RuntimeEpisodeEvent[] = [
    {
      type: "reset",
      sequence: 0,
      traceId: trace.id,
      traceDigest: trace.digest,
      id: trace.reset.id,
      backend: trace.runtime.backend,
      wordpressVersion: trace.runtime.wordpressVersion,
      phpVersion: trace.runtime.phpVersion,
      observationRefs: trace.reset.observationRefs,
    },
    ...trace.reset.observations.map((o) => observationEvent(o, 0, trace.reset.id)),
  ];
  const timeline: Array<{ sequence: number; events: RuntimeEpisodeEvent[] }> = [];
  for (const step of trace.steps) {
    const stepEvent: RuntimeEpisodeEvent = {
      type: "step",
      sequence: step.sequence,
      id: step.id,
      index: step.index,
      kind: step.action.kind,
      command: step.action.command,
      args: step.action.args,
      actionRef: step.actionRef,
      executionRef: step.executionRef,
      status: step.execution.status,
      exitCode: step.execution.exitCode,
      ...(step.execution.error ? { errorCode: step.execution.error.code } : {}),
      durationMs: step.execution.durationMs,
      ...(step.observationRef ? { observationRef: step.observationRef } : {}),
    };
    timeline.push({ sequence: step.sequence, events: [stepEvent, ...(step.observation ? [observationEvent(step.observation, step.sequence, step.id)] : [])] });
  }
  for (const entry of trace.observations ?? []) timeline.push({ sequence: entry.sequence, events: [observationEvent(entry.observation, entry.sequence)] });
  for (const s of trace.snapshots) {
    timeline.push({ sequence: s.sequence, events: [{ type: "snapshot", sequence: s.sequence, id: s.id, digest: s.digest, semantics: s.semantics }] });
  }
  for (const r of trace.restores ?? []) timeline.push({ sequence: r.sequence, events: [{ type: "restore", sequence: r.sequence, snapshotRef: r.snapshotRef }] });
  timeline.sort((a, b) => a.sequence - b.sequence);
  return [...events, ...timeline.flatMap((t) => t.events)];
}

/**
 * Serialises `episodeEvents(trace)` as JSON Lines: one `JSON.stringify` object per line, each line
 * ending in `\n` (UTF-8, non-ASCII kept as is). The content of `files/runtime-episode.jsonl`.
 * @example writeFileSync("runtime-episode.jsonl", episodeEventsJsonl(episode.trace()))
 */
export function episodeEventsJsonl(trace: RuntimeEpisodeTrace): string {
  return episodeEvents(trace)
    .map((e) => `${JSON.stringify(e)}\n`)
    .join("");
}
