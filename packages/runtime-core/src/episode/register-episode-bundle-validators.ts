/**
 * Hooks the episode files into `verifyArtifactBundle`: every bundle file of kind
 * `runtime-episode-trace` is checked with `validateRuntimeEpisodeTrace` plus the SHA-256 and size
 * of every file its observations and snapshots reference; every `runtime-episode-events` file is
 * checked line by line against `RUNTIME_EPISODE_EVENT`. So `verifyArtifactBundle` fails a bundle
 * whose trace is missing, invalid, or points at files that changed.
 */
import { sha256Hex } from "../digest.js";
import { registerBundleFileValidator, type BundleFileIssue, type BundleFileValidationContext } from "../artifact-bundle/bundle-file-validators.js";
import { validateAgainstSchema } from "../schema-validation.js";
import { RUNTIME_EPISODE_EVENTS_KIND, RUNTIME_EPISODE_TRACE_KIND } from "./episode-constants.js";
import { RUNTIME_EPISODE_EVENT } from "./episode-events.js";
import type { RuntimeEpisodeArtifactRef } from "./episode-refs.js";
import type { RuntimeEpisodeTrace } from "./episode-trace.js";
import { validateRuntimeEpisodeTrace } from "./validate-runtime-episode-trace.js";

/** Checks a `runtime-episode-trace` bundle file; issue messages start with the JSON pointer. */
export async function validateEpisodeTraceFile(context: BundleFileValidationContext): Promise<BundleFileIssue[]> {
  let trace: unknown;
  try {
    trace = JSON.parse(context.text);
  } catch (error) {
    return [{ message: `not JSON: ${error instanceof Error ? error.message : String(error)}` }];
  }
  const result = validateRuntimeEpisodeTrace(trace);
  if (!result.valid) return result.issues.map((i) => ({ message: `${i.path}: ${i.message}` }));
  const t = trace as RuntimeEpisodeTrace;
  const refs: Array<[string, RuntimeEpisodeArtifactRef]> = [
    ...t.reset.observations.flatMap((o, i) => (o.artifactRefs ?? []).map((r, j): [string, RuntimeEpisodeArtifactRef] => [`/reset/observations/${i}/artifactRefs/${j}`, r])),
    ...t.steps.flatMap((s, i) => (s.observation?.artifactRefs ?? []).map((r, j): [string, RuntimeEpisodeArtifactRef] => [`/steps/${i}/observation/artifactRefs/${j}`, r])),
    ...(t.observations ?? []).flatMap((e, i) => (e.observation.artifactRefs ?? []).map((r, j): [string, RuntimeEpisodeArtifactRef] => [`/observations/${i}/observation/artifactRefs/${j}`, r])),
    ...t.snapshots.flatMap((s, i) => (s.artifactRefs ?? []).map((r, j): [string, RuntimeEpisodeArtifactRef] => [`/snapshots/${i}/artifactRefs/${j}`, r])),
  ];
  const issues: BundleFileIssue[] = [];
  for (const [pointer, ref] of refs) {
    let bytes: Uint8Array;
    try {
      bytes = await context.readFile(ref.path);
    } catch {
      issues.push({ message: `${pointer}: referenced file ${ref.path} is missing from the bundle` });
      continue;
    }
    const sha256 = sha256Hex(bytes);
    if (sha256 !== ref.sha256) issues.push({ message: `${pointer}: ${ref.path} has SHA-256 ${sha256}, the trace says ${ref.sha256}` });
    if (bytes.byteLength !== ref.bytes) issues.push({ message: `${pointer}: ${ref.path} has ${bytes.byteLength} bytes, the trace says ${ref.bytes}` });
  }
  return issues;
}

/** Checks a `runtime-episode-events` bundle file: every line is one valid event. */
export function validateEpisodeEventsFile(context: BundleFileValidationContext): BundleFileIssue[] {
  const lines = context.text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.flatMap((line, n) => {
    try {
      return validateAgainstSchema(RUNTIME_EPISODE_EVENT, JSON.parse(line)).map((i) => ({ message: `line ${n + 1} ${i.path}: ${i.message}` }));
    } catch {
      return [{ message: `line ${n + 1}: not JSON` }];
    }
  });
}

/** Registers both validators (idempotent: a second call replaces the first registration). */
export function registerEpisodeBundleValidators(): void {
  registerBundleFileValidator(RUNTIME_EPISODE_TRACE_KIND, validateEpisodeTraceFile);
  registerBundleFileValidator(RUNTIME_EPISODE_EVENTS_KIND, validateEpisodeEventsFile);
}

registerEpisodeBundleValidators();
