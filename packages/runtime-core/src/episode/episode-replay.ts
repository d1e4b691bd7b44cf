/**
 * `replayEpisodeBundle`: re-executes a bundle's episode trace in a fresh runtime and reports, step
 * by step, whether the execution and observation digests match once the DECLARED volatile fields
 * are taken out. Nothing else is ignored: every field not declared here takes part in the digest.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { verifyArtifactBundle } from "../artifact-bundle/verify-artifact-bundle.js";
import { domainDigest } from "../digest.js";
import { RUNTIME_EPISODE_TRACE_PATH } from "./episode-constants.js";
import type { RuntimeEpisodeExecution } from "./episode-execution.js";
import type { RuntimeEpisodeObservation } from "./episode-observation.js";
import type { RuntimeEpisodeTrace } from "./episode-trace.js";
import { createRuntimeEpisode, type RuntimeEpisode } from "./runtime-episode.js";
import { validateRuntimeEpisodeTrace } from "./validate-runtime-episode-trace.js";
import type { WpDefineValue } from "../wp-defines.js";
import { COMMAND_DEFINITIONS } from "../command-registry.js";
import { WpCodeboxError } from "../errors.js";
import type { MountSpec, ObservationSpec, RuntimeBackend, RuntimeCreateSpec } from "../runtime.js";

/** Digest domain of the normalised values replay compares. */
export const EPISODE_REPLAY_DIGEST_DOMAIN = "wp-codebox/episode-replay-comparison/v1" as const;

/**
 * A field excluded from replay digests. `scope` is `execution`, an observation type, or `*`;
 * `pointer` is a JSON pointer pattern where `*` matches one segment and `**` any number.
 */
export interface EpisodeReplayVolatileField {
  scope: string;
  pointer: string;
  reason: string;
}

/**
 * THE list of volatile fields: every value that legitimately differs between two runs of the same
 * actions on the same inputs. Replay removes exactly these before comparing.
 */
export const EPISODE_REPLAY_VOLATILE_FIELDS: readonly EpisodeReplayVolatileField[] = [
  { scope: "*", pointer: "**/timingMs", reason: "how long the host took to answer a request (host speed)" },
  { scope: "command-result", pointer: "/id", reason: "execution ids are random UUIDs drawn by the host, outside the sandbox's seed" },
  { scope: "command-result", pointer: "/startedAt", reason: "host wall clock when the runtime started the command (the sandbox's own clock is virtual; this bookkeeping is not)" },
  { scope: "command-result", pointer: "/finishedAt", reason: "host wall clock when the command finished" },
  { scope: "command-result", pointer: "/durationMs", reason: "how long the host took (host speed)" },
  { scope: "browser-result", pointer: "/id", reason: "execution ids are random UUIDs drawn by the host" },
];

/** Commands whose results are not expected to repeat (timing, screenshots, page state): compared and reported, never failing a replay. */
export const EPISODE_REPLAY_NONDETERMINISTIC_COMMANDS: readonly string[] = COMMAND_DEFINITIONS.filter((d) => d.kind === "browser").map((d) => d.id);
/** Observation types that describe the run itself (lifecycle timestamps, logs): compared and reported, never failing a replay. */
export const EPISODE_REPLAY_NONDETERMINISTIC_OBSERVATIONS: readonly string[] = ["runtime-events", "runtime-logs"];

/** One compared item. */
export interface EpisodeReplayComparison {
  match: boolean;
  original: string;
  replay: string;
  /** JSON pointers where the normalised values differ (first 20). */
  differences?: string[];
}

/** One step of the replay report. */
export interface EpisodeReplayStepReport {
  id: string;
  index: number;
  command: string;
  deterministic: boolean;
  originalStatus: string;
  replayStatus: string;
  execution: EpisodeReplayComparison;
  observation?: EpisodeReplayComparison;
  match: boolean;
}

/**
 * The replay report. `ok` is false when a deterministic step, a reset observation or a standalone
 * observation of a deterministic type mismatched.
 */
export interface EpisodeReplayReport {
  bundle: string;
  traceId: string;
  ok: boolean;
  reset: { observations: EpisodeReplayComparison[] };
  steps: EpisodeReplayStepReport[];
  observations: EpisodeReplayComparison[];
  volatileFields: readonly EpisodeReplayVolatileField[];
  summary: { steps: number; deterministic: number; matched: number; mismatched: number };
}

function patternMatches(pattern: string[], path: string[]): boolean {
  if (pattern.length === 0) return path.length === 0;
  const [head, ...rest] = pattern;
  if (head === "**") {
    for (let i = 0; i <= path.length; i++) if (patternMatches(rest, path.slice(i))) return true;
    return false;
  }
  if (path.length === 0) return false;
  return (head === "*" || head === path[0]) && patternMatches(rest, path.slice(1));
}

/**
 * The comparable form of a value: declared volatile fields (for `scope`) removed and the sandbox
 * origin replaced by `{siteUrl}` in every string.
 */
export function normalizeForReplay(value: unknown, scope: string, origin: string, skip: (path: string[]) => boolean = () => false): unknown {
  const patterns = EPISODE_REPLAY_VOLATILE_FIELDS.filter((f) => f.scope === "*" || f.scope === scope).map((f) => f.pointer.split("/").filter((s) => s.length > 0));
  const escaped = origin.replaceAll("/", "\\/");
  const visit = (v: unknown, path: string[]): unknown => {
    if (typeof v === "string") return origin ? v.replaceAll(origin, "{siteUrl}").replaceAll(escaped, "{siteUrl}") : v;
    if (Array.isArray(v)) return v.map((x, i) => visit(x, [...path, String(i)]));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const p = [...path, k];
        if (skip(p) || patterns.some((pattern) => patternMatches(pattern, p))) continue;
        out[k] = visit(x, p);
      }
      return out;
    }
    return v;
  };
  return visit(value, []);
}

function differences(a: unknown, b: unknown, path = ""): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`));
  }
  return [path || "/"];
}

function compare(original: unknown, replay: unknown): EpisodeReplayComparison {
  const o = domainDigest(EPISODE_REPLAY_DIGEST_DOMAIN, original ?? null);
  const r = domainDigest(EPISODE_REPLAY_DIGEST_DOMAIN, replay ?? null);
  return { match: o === r, original: o, replay: r, ...(o === r ? {} : { differences: differences(original, replay).slice(0, 20) }) };
}

function comparableExecution(e: RuntimeEpisodeExecution, origin: string): unknown {
  // The id and digest are derived from the whole record (durationMs included); durationMs is host speed.
  const { id: _id, digest: _digest, durationMs: _d, ...rest } = e;
  return normalizeForReplay(rest, "execution", origin);
}

/** Rebuilds the observation request from a recorded observation (the request itself is not in the trace). */
export function observationRequestFromRecord(type: string, data: unknown): ObservationSpec {
  const d = (data ?? {}) as Record<string, unknown>;
  if (type === "wordpress-state" && d.config && typeof d.config === "object") return { type, ...(d.config as Record<string, unknown>) };
  if (type === "http-response") return { type, ...(typeof d.method === "string" ? { method: d.method } : {}), ...(typeof d.path === "string" ? { path: d.path } : {}), ...(typeof d.as === "string" ? { as: d.as } : {}) };
  return { type };
}

type ArtifactReader = (path: string) => Promise<string | undefined>;

/** Observation data with externalised payloads loaded and state-section files embedded (normalised). */
async function comparableObservation(o: RuntimeEpisodeObservation, fullData: unknown, read: ArtifactReader, origin: string): Promise<unknown> {
  const sections: Record<string, unknown> = {};
  for (const ref of o.artifactRefs ?? []) {
    if (ref.kind === "runtime-episode-observation-payload") continue;
    const text = await read(ref.path);
    const name = ref.path.split("/").pop()!;
    sections[name] = text === undefined ? null : normalizeForReplay(JSON.parse(text), o.type, origin);
  }
  return { type: o.type, data: normalizeForReplay(fullData, o.type, origin), sections };
}

/**
 * Replays a bundle's episode in a fresh runtime.
 * @param bundleDir - a bundle written by an episode (it must verify).
 * @param backend - the backend to replay on (the same kind that recorded it).
 * @param options.mounts - mounts of the fresh runtime; default the bundle's `metadata.json` mounts
 *   (host sources, which must still exist; plugins and themes are re-activated).
 * @returns the per-step report; `ok` is false when a deterministic step or reset observation differs.
 * @throws `invalid-episode-bundle` (not a valid bundle, or no valid trace), backend boot errors.
 */
export async function replayEpisodeBundle(
  bundleDir: string,
  backend: RuntimeBackend,
  options: { mounts?: MountSpec[]; onProgress?: (message: string) => void; runtime?: RuntimeCreateSpec } = {},
): Promise<EpisodeReplayReport> {
  const verified = await verifyArtifactBundle(bundleDir);
  if (!verified.valid) {
    throw new WpCodeboxError("invalid-episode-bundle", `${bundleDir} is not a valid bundle (${verified.violations.slice(0, 3).map((v) => `${v.code} ${v.path}`).join("; ")}): run wp-codebox artifacts verify on it.`, {
      violations: verified.violations,
    });
  }
  const read: ArtifactReader = async (path) => {
    try {
      return await readFile(join(bundleDir, ...path.split("/")), "utf8");
    } catch {
      return undefined;
    }
  };
  const traceText = await read(RUNTIME_EPISODE_TRACE_PATH);
  if (traceText === undefined) throw new WpCodeboxError("invalid-episode-bundle", `${bundleDir} has no ${RUNTIME_EPISODE_TRACE_PATH}: replay needs a bundle written by an episode (wp-codebox episode run).`);
  const trace = JSON.parse(traceText) as RuntimeEpisodeTrace;
  const validation = validateRuntimeEpisodeTrace(trace);
  if (!validation.valid) throw new WpCodeboxError("invalid-episode-bundle", `The trace in ${bundleDir} is invalid: ${validation.issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join("; ")}.`, { issues: validation.issues });
  const metadata = JSON.parse((await read("metadata.json")) ?? "{}") as { mounts?: { source: string; target: string; mode: "readonly" | "readwrite" }[]; runtime?: { phpExtensions?: string[]; defines?: unknown } };

  // Recorded payloads: an externalised observation keeps `{ artifact, sha256, bytes }` as data.
  const recordedData = async (o: RuntimeEpisodeObservation): Promise<unknown> => {
    const payload = (o.artifactRefs ?? []).find((r) => r.kind === "runtime-episode-observation-payload");
    if (!payload) return o.data;
    const text = await read(payload.path);
    return text === undefined ? o.data : JSON.parse(text);
  };

  const plugins = new Set(trace.runtime.plugins ?? []);
  const themes = new Set(trace.runtime.themes ?? []);
  // The recorded clock, seed and origin: a deterministic episode replays on the same instants and entropy.
  const recorded = trace.runtime.determinism;
  const spec: RuntimeCreateSpec = {
    wordpress: { version: trace.runtime.wordpressVersion },
    php: trace.runtime.phpVersion,
    // The PHP extensions the episode ran with (metadata.json), so PHP behaves the same.
    ...(Array.isArray(metadata.runtime?.phpExtensions) ? { extensions: [...metadata.runtime.phpExtensions] } : {}),
    // The wp-config constants it ran with (--define / runtime.defines), so WordPress behaves the same.
    ...(metadata.runtime?.defines && typeof metadata.runtime.defines === "object" ? { defines: { ...(metadata.runtime.defines as Record<string, WpDefineValue>) } } : {}),
    ...(trace.runtime.policy ? { policy: trace.runtime.policy as RuntimeCreateSpec["policy"] } : {}),
    ...(recorded ? { clock: recorded.clock === "virtual" && recorded.start ? recorded.start : "real", origin: recorded.origin, ...(recorded.seed !== undefined ? { seed: recorded.seed } : {}) } : {}),
    ...(options.runtime ?? {}),
  };
  if (options.mounts) spec.mounts = options.mounts;
  else {
    for (const m of metadata.mounts ?? []) {
      const name = m.target.split("/").pop()!;
      if (m.target === `/wordpress/wp-content/plugins/${name}` && plugins.has(name)) (spec.plugins ??= []).push(m.source);
      else if (m.target === `/wordpress/wp-content/themes/${name}` && themes.has(name)) (spec.themes ??= []).push(m.source);
      else (spec.mounts ??= []).push({ source: m.source, target: m.target, mode: m.mode });
    }
  }
  const originalOrigin = trace.runtime.siteUrl ?? "";
  const resetRequests = await Promise.all(trace.reset.observations.map(async (o) => observationRequestFromRecord(o.type, await recordedData(o))));
  const episode: RuntimeEpisode = createRuntimeEpisode({ ...spec, resetObservations: resetRequests, ...(options.onProgress ? { onProgress: options.onProgress } : {}) }, backend);
  const replayRead = new Map<string, string>();
  try {
    options.onProgress?.("Booting a fresh runtime for the replay");
    await episode.reset();
    const replayOrigin = episode.trace().runtime.siteUrl ?? "";
    const replayReader: ArtifactReader = async (path) => replayRead.get(path);
    const refreshReplayFiles = async () => {
      // Section files of the replay live in the replay runtime's artifacts.
      const collected = await episode.collectArtifacts();
      for (const f of collected.files) replayRead.set(f.path, typeof f.content === "string" ? f.content : new TextDecoder().decode(f.content));
    };
    await refreshReplayFiles();
    const replayTrace0 = episode.trace();
    const resetComparisons: EpisodeReplayComparison[] = [];
    for (const [i, o] of trace.reset.observations.entries()) {
      const r = replayTrace0.reset.observations[i]!;
      resetComparisons.push(
        compare(await comparableObservation(o, await recordedData(o), read, originalOrigin), await comparableObservation(r, episode.observationData(r.id), replayReader, replayOrigin)),
      );
    }

    type Item = { sequence: number; run: () => Promise<void> };
    const stepReports: EpisodeReplayStepReport[] = [];
    const observationReports: EpisodeReplayComparison[] = [];
    const observationTypes: string[] = [];
    const items: Item[] = [
      ...trace.steps.map((s): Item => ({
        sequence: s.sequence,
        run: async () => {
          options.onProgress?.(`Replaying ${s.id}: ${s.action.command}`);
          const { schema: _s, id: _i, digest: _d, ...action } = s.action;
          const request = s.observation ? observationRequestFromRecord(s.observation.type, await recordedData(s.observation)) : undefined;
          const result = await episode.step(action, request);
          await refreshReplayFiles();
          const execution = compare(comparableExecution(s.execution, originalOrigin), comparableExecution(result.execution, replayOrigin));
          const observation =
            s.observation && result.observation
              ? compare(
                  await comparableObservation(s.observation, await recordedData(s.observation), read, originalOrigin),
                  await comparableObservation(result.observation, episode.observationData(result.observation.id), replayReader, replayOrigin),
                )
              : undefined;
          const deterministic = !EPISODE_REPLAY_NONDETERMINISTIC_COMMANDS.includes(s.action.command) && !(s.observation && EPISODE_REPLAY_NONDETERMINISTIC_OBSERVATIONS.includes(s.observation.type));
          stepReports.push({
            id: s.id,
            index: s.index,
            command: s.action.command,
            deterministic,
            originalStatus: s.execution.status,
            replayStatus: result.execution.status,
            execution,
            ...(observation ? { observation } : {}),
            match: execution.match && (observation?.match ?? true),
          });
        },
      })),
      ...(trace.observations ?? []).map((entry): Item => ({
        sequence: entry.sequence,
        run: async () => {
          const o = entry.observation;
          const replayed = await episode.observe(observationRequestFromRecord(o.type, await recordedData(o)));
          observationTypes.push(o.type);
          await refreshReplayFiles();
          observationReports.push(
            compare(await comparableObservation(o, await recordedData(o), read, originalOrigin), await comparableObservation(replayed, episode.observationData(replayed.id), replayReader, replayOrigin)),
          );
        },
      })),
      // Snapshots are re-taken so later restores have a target; their bytes (database pages) are not compared.
      ...trace.snapshots.map((s): Item => ({ sequence: s.sequence, run: async () => void (await episode.snapshot()) })),
    ];
    items.sort((a, b) => a.sequence - b.sequence);
    for (const item of items) await item.run();

    const deterministic = stepReports.filter((s) => s.deterministic);
    const mismatched =
      deterministic.filter((s) => !s.match).length +
      resetComparisons.filter((c) => !c.match).length +
      observationReports.filter((c, i) => !c.match && !EPISODE_REPLAY_NONDETERMINISTIC_OBSERVATIONS.includes(observationTypes[i]!)).length;
    return {
      bundle: bundleDir,
      traceId: trace.id,
      ok: mismatched === 0,
      reset: { observations: resetComparisons },
      steps: stepReports,
      observations: observationReports,
      volatileFields: EPISODE_REPLAY_VOLATILE_FIELDS,
      summary: { steps: stepReports.length, deterministic: deterministic.length, matched: stepReports.filter((s) => s.match).length, mismatched },
    };
  } finally {
    await episode.close();
  }
}
