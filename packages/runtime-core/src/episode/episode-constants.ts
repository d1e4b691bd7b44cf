/**
 * Schema ids, digest domains, file paths and limits of the runtime episode contracts, in one place.
 */

/** Schema id of the episode trace. */
export const RUNTIME_EPISODE_TRACE_SCHEMA = "wp-codebox/runtime-episode-trace/v1" as const;
/** Schema id of the action envelope. */
export const RUNTIME_EPISODE_ACTION_SCHEMA = "wp-codebox/runtime-episode-action/v1" as const;
/** Schema id of the observation envelope. */
export const RUNTIME_EPISODE_OBSERVATION_SCHEMA = "wp-codebox/runtime-episode-observation/v1" as const;
/**
 * Digest domain of a step's execution record. The seed names no schema id for it; this string only
 * separates execution digests from other digests and never appears as a `schema` field.
 */
export const RUNTIME_EPISODE_EXECUTION_DIGEST_DOMAIN = "wp-codebox/runtime-episode-execution/v1" as const;
/** Digest domain of a snapshot record whose runtime snapshot carries no SHA-256 digest of its own. */
export const RUNTIME_EPISODE_SNAPSHOT_DIGEST_DOMAIN = "wp-codebox/runtime-episode-snapshot/v1" as const;

/** Bundle-relative path of the trace. */
export const RUNTIME_EPISODE_TRACE_PATH = "files/runtime-episode-trace.json" as const;
/** Bundle-relative path of the compact JSONL event stream. */
export const RUNTIME_EPISODE_EVENTS_PATH = "files/runtime-episode.jsonl" as const;
/** Artifact kind of the trace file. */
export const RUNTIME_EPISODE_TRACE_KIND = "runtime-episode-trace" as const;
/** Artifact kind of the JSONL event stream. */
export const RUNTIME_EPISODE_EVENTS_KIND = "runtime-episode-events" as const;
/** Folder (bundle-relative) for observation payloads stored as artifacts. */
export const RUNTIME_EPISODE_OBSERVATIONS_DIR = "files/observations" as const;
/** Artifact kind of an observation payload moved out of the trace. */
export const RUNTIME_EPISODE_OBSERVATION_PAYLOAD_KIND = "runtime-episode-observation-payload" as const;

export { EPISODE_OBSERVATION_INLINE_LIMIT_BYTES } from "../defaults.js";

/** Text that replaces secret values in everything an episode records. */
export const EPISODE_REDACTED = "[redacted]" as const;

/**
 * Field names that belong to consumers (evaluation harnesses), never to a generic trace. Rejected
 * anywhere in a trace except inside free-form `data` / `metadata` objects.2; the
 * snake/camel spellings are rejected too so the rule cannot be sidestepped by renaming.
 */
export const EPISODE_DOMAIN_FIELDS: readonly string[] = [
  "reward",
  "grader",
  "scenario",
  "benchmark",
  "task-set",
  "task_set",
  "taskSet",
  "model-eval",
  "model_eval",
  "modelEval",
  "success",
];

/** Keys whose object values are free-form: domain fields are allowed inside them. */
export const EPISODE_FREE_FORM_KEYS: readonly string[] = ["data", "metadata"];

/** Observations recorded by `reset()` when the episode spec names none. */
export const DEFAULT_RESET_OBSERVATIONS = [{ type: "runtime-info" }, { type: "mounts" }] as const;
