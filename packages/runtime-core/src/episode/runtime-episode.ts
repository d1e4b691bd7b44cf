/**
 * `createRuntimeEpisode`: a stateful reset/step/observe/snapshot loop over any RuntimeBackend that
 * records a verifiable trace. It knows nothing of rewards, graders or scenarios.
 */
import { domainDigest } from "../digest.js";
import { WpCodeboxError } from "../errors.js";
import { SerialQueue } from "../serial-queue.js";
import type {
  ArtifactFile,
  ArtifactSpec,
  ObservationSpec,
  Runtime,
  RuntimeArtifacts,
  RuntimeBackend,
  RuntimeCreateSpec,
  RuntimeInfo,
} from "../runtime.js";
import { createEpisodeAction, type RuntimeEpisodeAction, type RuntimeEpisodeActionInput } from "./episode-action.js";
import {
  DEFAULT_RESET_OBSERVATIONS,
  RUNTIME_EPISODE_EVENTS_KIND,
  RUNTIME_EPISODE_EVENTS_PATH,
  RUNTIME_EPISODE_SNAPSHOT_DIGEST_DOMAIN,
  RUNTIME_EPISODE_TRACE_KIND,
  RUNTIME_EPISODE_TRACE_PATH,
  RUNTIME_EPISODE_TRACE_SCHEMA,
} from "./episode-constants.js";
import { episodeEventsJsonl } from "./episode-events.js";
import { createEpisodeExecution, type EpisodeExecutionOutcome, type RuntimeEpisodeExecution } from "./episode-execution.js";
import { createEpisodeObservation, externalizeObservationPayload, type RuntimeEpisodeObservation } from "./episode-observation.js";
import { pickArtifactRefs, type RuntimeEpisodeRef } from "./episode-refs.js";
import {
  finalizeEpisodeTrace,
  type RuntimeEpisodeObservationEntry,
  type RuntimeEpisodeReset,
  type RuntimeEpisodeRestore,
  type RuntimeEpisodeRuntime,
  type RuntimeEpisodeSnapshot,
  type RuntimeEpisodeStep,
  type RuntimeEpisodeTrace,
} from "./episode-trace.js";
import { isRecord, omitKeys, pad4, redactSecrets, toJsonValue } from "./json-value.js";

/** What `createRuntimeEpisode` takes: a runtime create spec plus the observations `reset()` records. */
export type RuntimeEpisodeSpec = RuntimeCreateSpec & {
  /** Observed after every reset. Default: `[{ type: "runtime-info" }, { type: "mounts" }]`. */
  resetObservations?: ObservationSpec[];
};

/**
 * What `step()` returns (Gymnasium-style, but without reward/terminated semantics):
 * - `action`: the recorded action envelope (`id`, `digest`; secret values redacted).
 * - `execution`: the execution record — `status` `ok` | `error` | `timed-out`, `exitCode`, `stdout`,
 *   `stderr`, `data` (the command's JSON output), `error?`, `durationMs` (ms).
 * - `observation?`: the observation taken after the step, when one was requested.
 * - `refs`: `{ step: "step-0001", action, execution, observation? }`, each ref `{ id, digest }`.
 */
export interface RuntimeEpisodeStepResult {
  action: RuntimeEpisodeAction;
  execution: RuntimeEpisodeExecution;
  observation?: RuntimeEpisodeObservation;
  refs: { step: string; action: RuntimeEpisodeRef; execution: RuntimeEpisodeRef; observation?: RuntimeEpisodeRef };
}

/** A stateful sandbox loop. Call `reset()` first; every other method (except `close`) throws `episode-not-started` before it. */
export interface RuntimeEpisode {
  /** Creates the runtime (first call) or returns it to its initial state; starts a fresh trace. */
  reset(): Promise<RuntimeEpisodeReset>;
  /**
   * Executes one action; failures, timeouts and thrown contract errors are recorded, not thrown.
   * `options.signal` stops the command when it aborts (recorded like a timeout: `timed-out`); it is
   * not part of the recorded action.
   */
  step(action: RuntimeEpisodeActionInput, observe?: ObservationSpec, options?: { signal?: AbortSignal }): Promise<RuntimeEpisodeStepResult>;
  /** Records an observation between steps. */
  observe(spec: ObservationSpec): Promise<RuntimeEpisodeObservation>;
  /** Takes a runtime snapshot and records `{ id, sequence, semantics, digest, artifactRefs? }`. */
  snapshot(): Promise<RuntimeEpisodeSnapshot>;
  /** Replaces the runtime with one restored from a snapshot (record, id, or raw runtime snapshot). */
  restore(snapshotOrId: RuntimeEpisodeSnapshot | string | object): Promise<RuntimeEpisodeSnapshot>;
  /** The runtime's artifacts plus the trace, the JSONL events and moved observation payloads. */
  collectArtifacts(options?: ArtifactSpec): Promise<RuntimeArtifacts>;
  /** The trace so far (a copy; `id` and `digest` computed now). */
  trace(): RuntimeEpisodeTrace;
  /** The full `data` of an observation of this trace, also when its payload was moved to a file. */
  observationData(observationId: string): unknown;
  /** Disposes the runtime. Idempotent; `trace()` still works afterwards. */
  close(): Promise<void>;
}

interface TraceState {
  createdAt: string;
  runtime: RuntimeEpisodeRuntime;
  reset: RuntimeEpisodeReset;
  steps: RuntimeEpisodeStep[];
  observations: RuntimeEpisodeObservationEntry[];
  snapshots: RuntimeEpisodeSnapshot[];
  restores: RuntimeEpisodeRestore[];
  sequence: number;
  observationCount: number;
  payloadFiles: Map<string, ArtifactFile>;
  fullData: Map<string, unknown>;
}

/** The replay-relevant, deterministic part of `RuntimeInfo` (no ids, timings or host paths). */
function runtimeRecord(info: RuntimeInfo): RuntimeEpisodeRuntime {
  return {
    backend: info.backend,
    wordpressVersion: info.wordpressVersion,
    phpVersion: info.phpVersion,
    siteUrl: info.siteUrl,
    plugins: [...(info.plugins ?? [])],
    themes: [...(info.themes ?? [])],
    policy: toJsonValue(info.policy ?? {}) as Record<string, unknown>,
    mounts: (info.mounts ?? []).map((m) => ({ target: m.target, mode: m.mode, kind: m.kind })),
    ...(info.determinism ? { determinism: { ...info.determinism } } : {}),
  };
}

function refOf(target: { id: string; digest: string }): RuntimeEpisodeRef {
  return { id: target.id, digest: target.digest };
}

/**
 * Creates an episode over `backend`. Nothing is booted until `reset()`.
 * @param spec a `RuntimeCreateSpec` (passed to `backend.create` / `backend.restore` without
 *   `resetObservations`) plus `resetObservations?` (default runtime-info and mounts).
 *   `secretEnv` values are replaced by `[redacted]` in everything the trace records.
 * @param backend any `RuntimeBackend`.
 * @returns a `RuntimeEpisode`. Ids are positional and content-derived (`reset-0001`, `step-0001`,
 *   `action-0001-<16 hex>`, `execution-0001-<16 hex>`, `observation-0001-<16 hex>`,
 *   `snapshot-0003-<16 hex>`), so the same actions give the same ids and digests.
 * @throws (from the methods) WpCodeboxError `episode-not-started` (reset() not called yet),
 *   `episode-closed`, `invalid-episode-action`, `observation-unsupported` (runtime has no `observe`
 *   and the type is not runtime-info/mounts), `snapshot-unsupported` (no `runtime.snapshot` /
 *   `backend.restore`), `snapshot-not-found`; errors from `backend.create` and `runtime.observe`
 *   propagate unchanged.
 * @example
 * const episode = createRuntimeEpisode({ php: "8.3" }, backend);
 * await episode.reset();
 * const { execution } = await episode.step({ command: "wordpress.run-php", args: ["code=<?php echo 1;"] });
 * const artifacts = await episode.collectArtifacts();
 * await episode.close();
 */
export function createRuntimeEpisode(spec: RuntimeEpisodeSpec, backend: RuntimeBackend): RuntimeEpisode {
  const createSpec = omitKeys(spec, ["resetObservations"]) as RuntimeCreateSpec;
  const resetObservations: ObservationSpec[] = spec.resetObservations ?? DEFAULT_RESET_OBSERVATIONS.map((o) => ({ ...o }));
  const secrets = Object.values(spec.secretEnv ?? {});
  const rawSnapshots = new Map<string, unknown>();
  const knownSnapshots = new Map<string, RuntimeEpisodeSnapshot>();
  let runtime: Runtime | undefined;
  let state: TraceState | undefined;
  let resetCount = 0;
  let closed = false;

  const ensureOpen = (): void => {
    if (closed) throw new WpCodeboxError("episode-closed", "The episode is closed: create a new episode with createRuntimeEpisode().");
  };
  const started = (): { runtime: Runtime; state: TraceState } => {
    ensureOpen();
    if (!runtime || !state) throw new WpCodeboxError("episode-not-started", "The episode has not started: call episode.reset() first.");
    return { runtime, state };
  };

  async function observeRaw(rt: Runtime, request: ObservationSpec): Promise<{ data: unknown; artifactRefs: ReturnType<typeof pickArtifactRefs> }> {
    if (rt.observe) {
      const result = await rt.observe(request);
      if (isRecord(result) && typeof result.type === "string" && "data" in result) {
        return { data: result.data, artifactRefs: pickArtifactRefs(result.artifactRefs) };
      }
      return { data: result, artifactRefs: [] };
    }
    const info = rt.info();
    if (request.type === "runtime-info") return { data: runtimeRecord(info), artifactRefs: [] };
    if (request.type === "mounts") return { data: { mounts: runtimeRecord(info).mounts }, artifactRefs: [] };
    throw new WpCodeboxError(
      "observation-unsupported",
      `The ${info.backend} runtime cannot observe "${request.type}": it has no observe(). Use a backend with observations, or only runtime-info/mounts.`,
      { type: request.type, backend: info.backend },
    );
  }

  async function recordObservation(rt: Runtime, st: TraceState, request: ObservationSpec): Promise<RuntimeEpisodeObservation> {
    const raw = await observeRaw(rt, request);
    const data = redactSecrets(toJsonValue(raw.data), secrets);
    const built = createEpisodeObservation({ type: request.type, data, artifactRefs: raw.artifactRefs }, { position: ++st.observationCount });
    const { observation, file } = externalizeObservationPayload(built);
    st.fullData.set(observation.id, data);
    if (file) st.payloadFiles.set(observation.id, file);
    return observation;
  }

  function snapshotRecord(raw: unknown, sequence: number): RuntimeEpisodeSnapshot {
    const r = isRecord(raw) ? raw : {};
    const own = typeof r.sha256 === "string" ? r.sha256 : typeof r.digest === "string" ? r.digest : isRecord(r.digest) && r.digest.algorithm === "sha256" ? r.digest.value : undefined;
    const digest =
      typeof own === "string" && /^[0-9a-f]{64}$/.test(own)
        ? own
        : domainDigest(RUNTIME_EPISODE_SNAPSHOT_DIGEST_DOMAIN, toJsonValue(isRecord(raw) ? omitKeys(raw, ["id", "digest", "createdAt"]) : raw));
    const artifactRefs = pickArtifactRefs(r.artifactRefs);
    return {
      id: `snapshot-${pad4(sequence)}-${digest.slice(0, 16)}`,
      sequence,
      semantics: typeof r.semantics === "string" && r.semantics.length > 0 ? r.semantics : "opaque",
      digest,
      ...(artifactRefs.length > 0 ? { artifactRefs } : {}),
    };
  }

  // One call at a time, in call order: concurrent steps took the same position (two "step-0001"),
  // and a snapshot or observation called after a step was recorded before it.
  const order = new SerialQueue();

  const episode: RuntimeEpisode = {
    reset: () => order.run(async () => {
      ensureOpen();
      if (!runtime) runtime = await backend.create(createSpec);
      else if (runtime.reset) await runtime.reset();
      else {
        const old = runtime;
        runtime = undefined;
        await old.dispose();
        runtime = await backend.create(createSpec);
      }
      resetCount += 1;
      const st: TraceState = {
        createdAt: new Date().toISOString(),
        runtime: redactSecrets(runtimeRecord(runtime.info()), secrets),
        reset: { id: `reset-${pad4(resetCount)}`, observations: [], observationRefs: [] },
        steps: [],
        observations: [],
        snapshots: [],
        restores: [],
        sequence: 0,
        observationCount: 0,
        payloadFiles: new Map(),
        fullData: new Map(),
      };
      state = undefined;
      for (const request of resetObservations) {
        const observation = await recordObservation(runtime, st, request);
        st.reset.observations.push(observation);
        st.reset.observationRefs.push(refOf(observation));
      }
      state = st;
      return structuredClone(st.reset);
    }),

    step: (input, observe, options) => order.run(async () => {
      const { runtime: rt, state: st } = started();
      const position = st.steps.length + 1;
      const action = createEpisodeAction(redactSecrets(input, secrets), { position });
      const args = [...(input.args ?? [])];
      const startedAt = performance.now();
      let outcome: EpisodeExecutionOutcome;
      try {
        const result = await rt.execute({
          command: input.command,
          args,
          ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
          ...(options?.signal ? { signal: options.signal } : {}),
        });
        outcome = { result, durationMs: performance.now() - startedAt };
      } catch (thrown) {
        outcome = { thrown, command: input.command, args, durationMs: performance.now() - startedAt };
      }
      const execution = createEpisodeExecution(outcome, position, secrets);
      const step: RuntimeEpisodeStep = {
        id: `step-${pad4(position)}`,
        index: position - 1,
        sequence: ++st.sequence,
        action,
        actionRef: refOf(action),
        execution,
        executionRef: refOf(execution),
      };
      try {
        if (observe) {
          step.observation = await recordObservation(rt, st, observe);
          step.observationRef = refOf(step.observation);
        }
      } finally {
        st.steps.push(step);
      }
      return structuredClone({
        action,
        execution,
        ...(step.observation ? { observation: step.observation } : {}),
        refs: { step: step.id, action: step.actionRef, execution: step.executionRef, ...(step.observationRef ? { observation: step.observationRef } : {}) },
      });
    }),

    observe: (request) => order.run(async () => {
      const { runtime: rt, state: st } = started();
      const observation = await recordObservation(rt, st, request);
      st.observations.push({ sequence: ++st.sequence, observation, observationRef: refOf(observation) });
      return structuredClone(observation);
    }),

    snapshot: () => order.run(async () => {
      const { runtime: rt, state: st } = started();
      if (!rt.snapshot) {
        throw new WpCodeboxError("snapshot-unsupported", `The ${rt.info().backend} runtime cannot take snapshots. Use a backend that implements snapshot().`, { backend: rt.info().backend });
      }
      const raw = await rt.snapshot();
      const record = snapshotRecord(raw, ++st.sequence);
      rawSnapshots.set(record.id, raw);
      knownSnapshots.set(record.id, record);
      st.snapshots.push(record);
      return structuredClone(record);
    }),

    restore: (snapshotOrId) => order.run(async () => {
      const { runtime: rt, state: st } = started();
      if (!backend.restore) {
        throw new WpCodeboxError("snapshot-unsupported", `The ${backend.kind} backend cannot restore snapshots. Use a backend that implements restore().`, { backend: backend.kind });
      }
      let record: RuntimeEpisodeSnapshot | undefined;
      let raw: unknown;
      const id = typeof snapshotOrId === "string" ? snapshotOrId : isRecord(snapshotOrId) && typeof snapshotOrId.id === "string" ? snapshotOrId.id : undefined;
      if (id !== undefined && rawSnapshots.has(id)) {
        record = knownSnapshots.get(id);
        raw = rawSnapshots.get(id);
      } else if (typeof snapshotOrId === "string") {
        throw new WpCodeboxError("snapshot-not-found", `No snapshot "${snapshotOrId}" was taken in this episode. Pass an id returned by episode.snapshot() or the snapshot object.`, { id: snapshotOrId });
      } else {
        raw = snapshotOrId;
      }
      const next = await backend.restore(raw, createSpec);
      runtime = next;
      await rt.dispose();
      if (!record || !st.snapshots.some((s) => s.id === record!.id)) {
        // A snapshot from before the last reset, or one handed in from outside: it becomes known now.
        const fresh = snapshotRecord(raw, ++st.sequence);
        record = record ? { ...record, sequence: fresh.sequence } : fresh;
        rawSnapshots.set(record.id, raw);
        knownSnapshots.set(record.id, record);
        st.snapshots.push(record);
      }
      st.restores.push({ sequence: ++st.sequence, snapshotRef: refOf(record) });
      return structuredClone(record);
    }),

    collectArtifacts: (options) => order.run(async () => {
      const { runtime: rt, state: st } = started();
      const collected = await rt.collectArtifacts(options);
      const trace = episode.trace();
      const ids = new Set([
        ...trace.reset.observations.map((o) => o.id),
        ...trace.steps.flatMap((s) => (s.observation ? [s.observation.id] : [])),
        ...(trace.observations ?? []).map((o) => o.observation.id),
      ]);
      const ours: ArtifactFile[] = [
        ...[...st.payloadFiles.entries()].filter(([id]) => ids.has(id)).map(([, file]) => file),
        { path: RUNTIME_EPISODE_TRACE_PATH, kind: RUNTIME_EPISODE_TRACE_KIND, contentType: "application/json", content: `${JSON.stringify(trace, null, 2)}\n` },
        { path: RUNTIME_EPISODE_EVENTS_PATH, kind: RUNTIME_EPISODE_EVENTS_KIND, contentType: "application/x-ndjson", content: episodeEventsJsonl(trace) },
      ];
      const paths = new Set(ours.map((f) => f.path));
      return { ...collected, files: [...collected.files.filter((f) => !paths.has(f.path)), ...ours] };
    }),

    trace() {
      if (!state) throw new WpCodeboxError("episode-not-started", "The episode has not started: call episode.reset() first.");
      return structuredClone(
        finalizeEpisodeTrace({
          schema: RUNTIME_EPISODE_TRACE_SCHEMA,
          version: 1,
          createdAt: state.createdAt,
          runtime: state.runtime,
          reset: state.reset,
          steps: state.steps,
          observations: state.observations,
          snapshots: state.snapshots,
          restores: state.restores,
        }),
      );
    },

    observationData(observationId) {
      if (!state?.fullData.has(observationId)) {
        throw new WpCodeboxError("invalid-argument", `No observation "${observationId}" in this episode's trace. Pass an id from episode.trace().`, { id: observationId });
      }
      return structuredClone(state.fullData.get(observationId));
    },

    async close() {
      if (closed) return;
      closed = true;
      const rt = runtime;
      runtime = undefined;
      if (rt) await rt.dispose();
    },
  };
  return episode;
}
