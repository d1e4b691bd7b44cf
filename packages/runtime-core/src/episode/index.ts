/** Runtime episodes: envelopes, trace contract and validator, event stream, and the episode loop. */
export { DEFAULT_RESET_OBSERVATIONS, EPISODE_DOMAIN_FIELDS, EPISODE_FREE_FORM_KEYS, EPISODE_OBSERVATION_INLINE_LIMIT_BYTES, EPISODE_REDACTED, RUNTIME_EPISODE_ACTION_SCHEMA, RUNTIME_EPISODE_EVENTS_KIND, RUNTIME_EPISODE_EVENTS_PATH, RUNTIME_EPISODE_EXECUTION_DIGEST_DOMAIN, RUNTIME_EPISODE_OBSERVATION_PAYLOAD_KIND, RUNTIME_EPISODE_OBSERVATION_SCHEMA, RUNTIME_EPISODE_OBSERVATIONS_DIR, RUNTIME_EPISODE_SNAPSHOT_DIGEST_DOMAIN, RUNTIME_EPISODE_TRACE_KIND, RUNTIME_EPISODE_TRACE_PATH, RUNTIME_EPISODE_TRACE_SCHEMA } from "./episode-constants.js";
export {
  Sha256HexSchema,
  RuntimeEpisodeRefSchema,
  RuntimeEpisodeArtifactRefSchema,
  RuntimeEpisodeBundleRefSchema,
} from "./episode-refs.js";
export type { RuntimeEpisodeRef, RuntimeEpisodeArtifactRef, RuntimeEpisodeBundleRef } from "./episode-refs.js";
export {
  RuntimeEpisodeActionKindSchema,
  RuntimeEpisodeActionSchema,
  RuntimeEpisodeActionInputSchema,
  createEpisodeAction,
  episodeActionDigest,
} from "./episode-action.js";
export type { RuntimeEpisodeAction, RuntimeEpisodeActionInput, RuntimeEpisodeActionKind } from "./episode-action.js";
export {
  RuntimeEpisodeObservationSchema,
  createEpisodeObservation,
  episodeObservationDigest,
  externalizeObservationPayload,
} from "./episode-observation.js";
export type { RuntimeEpisodeObservation, RuntimeEpisodeObservationInput, ExternalizedObservation } from "./episode-observation.js";
export {
  RuntimeEpisodeExecutionSchema,
  RuntimeEpisodeExecutionStatusSchema,
  createEpisodeExecution,
  episodeExecutionDigest,
} from "./episode-execution.js";
export type { RuntimeEpisodeExecution, RuntimeEpisodeExecutionStatus, EpisodeExecutionOutcome } from "./episode-execution.js";
export {
  RUNTIME_EPISODE_TRACE_JSON_SCHEMA,
  RuntimeEpisodeTraceSchema,
  RuntimeEpisodeRuntimeSchema,
  RuntimeEpisodeResetSchema,
  RuntimeEpisodeStepSchema,
  RuntimeEpisodeObservationEntrySchema,
  RuntimeEpisodeSnapshotSchema,
  RuntimeEpisodeRestoreSchema,
  episodeTraceDigest,
  finalizeEpisodeTrace,
  withEpisodeTraceArtifactRef,
} from "./episode-trace.js";
export type {
  RuntimeEpisodeTrace,
  RuntimeEpisodeTraceDraft,
  RuntimeEpisodeRuntime,
  RuntimeEpisodeReset,
  RuntimeEpisodeStep,
  RuntimeEpisodeObservationEntry,
  RuntimeEpisodeSnapshot,
  RuntimeEpisodeRestore,
} from "./episode-trace.js";
export { validateRuntimeEpisodeTrace } from "./validate-runtime-episode-trace.js";
export type { RuntimeEpisodeTraceValidation } from "./validate-runtime-episode-trace.js";
export { findEpisodeDomainFields } from "./domain-fields.js";
export { RUNTIME_EPISODE_EVENT, episodeEvents, episodeEventsJsonl } from "./episode-events.js";
export type { RuntimeEpisodeEvent } from "./episode-events.js";
export { createRuntimeEpisode } from "./runtime-episode.js";
export type { RuntimeEpisode, RuntimeEpisodeSpec, RuntimeEpisodeStepResult } from "./runtime-episode.js";
export { registerEpisodeBundleValidators, validateEpisodeTraceFile, validateEpisodeEventsFile } from "./register-episode-bundle-validators.js";
