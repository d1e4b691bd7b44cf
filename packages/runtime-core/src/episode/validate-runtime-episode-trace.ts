/**
 * The episode trace checker: schema, every recomputed digest, every ref, and the no-domain-fields
 * rule (domain fields such as rewards or graders may appear only inside free-form `data` / `metadata`).
 */
import type { SchemaIssue } from "../schema-validation.js";
import { validateAgainstSchema } from "../schema-validation.js";
import { episodeActionDigest } from "./episode-action.js";
import { episodeExecutionDigest } from "./episode-execution.js";
import { episodeObservationDigest, type RuntimeEpisodeObservation } from "./episode-observation.js";
import type { RuntimeEpisodeRef } from "./episode-refs.js";
import { episodeTraceDigest, RUNTIME_EPISODE_TRACE_JSON_SCHEMA, type RuntimeEpisodeTrace } from "./episode-trace.js";
import { findEpisodeDomainFields } from "./domain-fields.js";

/** Result of `validateRuntimeEpisodeTrace`: `valid` is true exactly when `issues` is empty. */
export interface RuntimeEpisodeTraceValidation {
  valid: boolean;
  /** Each problem as `{ path: JSON pointer such as "/steps/2/action/digest", message }`. */
  issues: SchemaIssue[];
}

/**
 * Checks a trace (for example one parsed from `files/runtime-episode-trace.json`):
 * (a) it matches `RUNTIME_EPISODE_TRACE_JSON_SCHEMA`;
 * (b) every action, observation and execution digest, and the trace digest, equals the recomputed value;
 * (c) every ref (`actionRef`, `executionRef`, `observationRef`, `reset.observationRefs[i]`,
 *     `restores[i].snapshotRef`) has the id and digest of its target, step `index` equals its
 *     position, and ids are unique;
 * (d) no domain field (`reward`, `grader`, `scenario`, `benchmark`, `task-set`, `model-eval`,
 *     `success`) appears outside free-form `data` / `metadata` objects.
 * Digest and ref checks run only when the schema check passes. Never throws.
 * @returns `{ valid, issues: [{ path, message }] }`.
 *
 * @example const { valid, issues } = validateRuntimeEpisodeTrace(JSON.parse(text));
 */
export function validateRuntimeEpisodeTrace(trace: unknown): RuntimeEpisodeTraceValidation {
  const issues: SchemaIssue[] = [...validateAgainstSchema(RUNTIME_EPISODE_TRACE_JSON_SCHEMA, trace)];
  issues.push(...findEpisodeDomainFields(trace));
  if (issues.length === 0) {
    try {
      issues.push(...checkDigestsAndRefs(trace as RuntimeEpisodeTrace));
    } catch (error) {
      issues.push({ path: "/", message: `could not recompute digests: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return { valid: issues.length === 0, issues };
}

function checkDigestsAndRefs(trace: RuntimeEpisodeTrace): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const ids = new Map<string, string>();
  const unique = (id: string, path: string): void => {
    const seen = ids.get(id);
    if (seen !== undefined) issues.push({ path, message: `id "${id}" is already used at ${seen}` });
    else ids.set(id, path);
  };
  const digestMatches = (actual: string, expected: string, path: string, what: string): void => {
    if (actual !== expected) issues.push({ path, message: `${what} digest does not match its content (expected ${expected}, found ${actual})` });
  };
  const refMatches = (ref: RuntimeEpisodeRef | undefined, target: { id: string; digest: string } | undefined, path: string, what: string): void => {
    if (!ref && !target) return;
    if (!ref) return void issues.push({ path, message: `${what} ref is missing` });
    if (!target) return void issues.push({ path, message: `${what} ref points at no ${what}` });
    if (ref.id !== target.id) issues.push({ path: `${path}/id`, message: `${what} ref id "${ref.id}" does not match ${what} id "${target.id}"` });
    if (ref.digest !== target.digest) issues.push({ path: `${path}/digest`, message: `${what} ref digest ${ref.digest} does not match ${what} digest ${target.digest}` });
  };
  const observation = (o: RuntimeEpisodeObservation, path: string): void => {
    unique(o.id, path);
    digestMatches(o.digest, episodeObservationDigest(o), `${path}/digest`, "observation");
  };

  unique(trace.reset.id, "/reset");
  trace.reset.observations.forEach((o, i) => observation(o, `/reset/observations/${i}`));
  if (trace.reset.observationRefs.length !== trace.reset.observations.length) {
    issues.push({ path: "/reset/observationRefs", message: `has ${trace.reset.observationRefs.length} refs for ${trace.reset.observations.length} observations` });
  }
  trace.reset.observationRefs.forEach((ref, i) => refMatches(ref, trace.reset.observations[i], `/reset/observationRefs/${i}`, "observation"));

  trace.steps.forEach((step, i) => {
    const at = `/steps/${i}`;
    if (step.index !== i) issues.push({ path: `${at}/index`, message: `is ${step.index} but the step is at position ${i}` });
    unique(step.id, at);
    digestMatches(step.action.digest, episodeActionDigest(step.action), `${at}/action/digest`, "action");
    refMatches(step.actionRef, step.action, `${at}/actionRef`, "action");
    unique(step.execution.id, `${at}/execution`);
    digestMatches(step.execution.digest, episodeExecutionDigest(step.execution), `${at}/execution/digest`, "execution");
    refMatches(step.executionRef, step.execution, `${at}/executionRef`, "execution");
    if (step.observation) observation(step.observation, `${at}/observation`);
    refMatches(step.observationRef, step.observation, `${at}/observationRef`, "observation");
  });

  (trace.observations ?? []).forEach((entry, i) => {
    observation(entry.observation, `/observations/${i}/observation`);
    refMatches(entry.observationRef, entry.observation, `/observations/${i}/observationRef`, "observation");
  });

  const snapshots = new Map(trace.snapshots.map((s) => [s.id, s]));
  trace.snapshots.forEach((s, i) => unique(s.id, `/snapshots/${i}`));
  (trace.restores ?? []).forEach((r, i) => refMatches(r.snapshotRef, snapshots.get(r.snapshotRef.id), `/restores/${i}/snapshotRef`, "snapshot"));

  const sequences = new Map<number, string>();
  const sequenced: Array<[number, string]> = [
    ...trace.steps.map((s, i): [number, string] => [s.sequence, `/steps/${i}/sequence`]),
    ...(trace.observations ?? []).map((o, i): [number, string] => [o.sequence, `/observations/${i}/sequence`]),
    ...trace.snapshots.map((s, i): [number, string] => [s.sequence, `/snapshots/${i}/sequence`]),
    ...(trace.restores ?? []).map((r, i): [number, string] => [r.sequence, `/restores/${i}/sequence`]),
  ];
  for (const [sequence, path] of sequenced) {
    const seen = sequences.get(sequence);
    if (seen !== undefined) issues.push({ path, message: `sequence ${sequence} is already used at ${seen}` });
    else sequences.set(sequence, path);
  }

  digestMatches(trace.digest, episodeTraceDigest(trace), "/digest", "trace");
  return issues;
}
