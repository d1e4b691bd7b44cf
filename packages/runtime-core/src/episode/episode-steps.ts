/**
 * The episode part of a run session: drives a planned episode script (reset, then each step:
 * actions, snapshots, observations) on a booted runtime and returns the trace and the artifacts
 * for the bundle. `runSession` owns boot, bundle and dispose.
 */
import { createRuntimeEpisode, type RuntimeEpisode } from "./runtime-episode.js";
import type { RuntimeEpisodeTrace } from "./episode-trace.js";
import { WpCodeboxError, serializeError, type SerializedError } from "../errors.js";
import type { PlannedEpisodeStep } from "./episode-script.js";
import type { ObservationSpec, Runtime, RuntimeArtifacts, RuntimeBackend, RuntimeCreateSpec } from "../runtime.js";

/** What the steps read of an episode run plan (session/run-plan.ts `EpisodeRunPlan` is one). */
interface EpisodeStepsPlan {
  createSpec: RuntimeCreateSpec;
  episode: { steps: PlannedEpisodeStep[]; resetObservations?: ObservationSpec[]; includeRuntimeSnapshotBundles: boolean };
}

/** One line of the run report. */
export interface EpisodeScriptStepReport {
  index: number;
  kind: "action" | "snapshot" | "observe";
  name?: string;
  command?: string;
  status?: "ok" | "error" | "timed-out";
  errorCode?: string;
  observationId?: string;
  snapshotId?: string;
}

/** What the episode part of a session produced. */
export interface EpisodeSessionWork {
  /** Undefined when the episode never started (its reset failed). */
  trace?: RuntimeEpisodeTrace;
  steps: EpisodeScriptStepReport[];
  /** True when every action step ended `ok` and nothing threw. */
  allOk: boolean;
  /** The episode's artifacts (runtime + trace + events + observation payloads); undefined when it never started. */
  artifacts?: RuntimeArtifacts;
  /** Something the episode could not record as a step (a reset or an observation that threw). */
  error?: SerializedError;
}

/**
 * A view of `runtime` whose `dispose` does nothing: the session, not the episode, owns the
 * runtime it booted (or was handed).
 */
function borrowed(runtime: Runtime): Runtime {
  return new Proxy(runtime, {
    get(target, property) {
      if (property === "dispose") return async () => undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Runs the planned script's steps on `runtime`. Failing and timed-out actions are recorded in the
 * trace, not thrown; a reset or observation that throws ends the steps and is returned as `error`.
 * Runtimes the episode creates itself (a reset without a fast path, a restore) come from `backend`
 * and are disposed before this returns; `runtime` itself is left running.
 * @param shouldStop - checked before each step; true (an interrupt) skips the rest.
 */
export async function runEpisodeSteps(
  plan: EpisodeStepsPlan,
  runtime: Runtime,
  backend: RuntimeBackend | undefined,
  progress: (message: string) => void,
  shouldStop: () => boolean = () => false,
  /** Aborting it stops the step running now in the sandbox (recorded `timed-out`, error `interrupted`); no later step runs. */
  signal?: AbortSignal,
): Promise<EpisodeSessionWork> {
  let handedOut = false;
  const episodeBackend: RuntimeBackend = {
    kind: backend?.kind ?? runtime.info().backend,
    async create(spec) {
      if (!handedOut) {
        handedOut = true;
        return borrowed(runtime);
      }
      if (!backend) throw new WpCodeboxError("snapshot-unsupported", "This episode runs on a runtime it was handed, without a backend, so it cannot create another runtime. Pass the backend too.");
      return backend.create(spec);
    },
    ...(backend?.restore ? { restore: (snapshot: unknown, spec?: Parameters<NonNullable<RuntimeBackend["restore"]>>[1]) => backend.restore!(snapshot, spec) } : {}),
  };
  const episode: RuntimeEpisode = createRuntimeEpisode(
    { ...plan.createSpec, ...(plan.episode.resetObservations ? { resetObservations: plan.episode.resetObservations } : {}), onProgress: progress },
    episodeBackend,
  );
  const reports: EpisodeScriptStepReport[] = [];
  let started = false;
  let error: SerializedError | undefined;
  try {
    try {
      progress("Resetting the episode");
      await episode.reset();
      started = true;
      for (const step of plan.episode.steps) {
        if (shouldStop()) break;
        const { index } = step;
        const name = step.name !== undefined ? { name: step.name } : {};
        if (step.kind === "action") {
          const { command, args, timeoutMs, intent } = step.action;
          progress(`Step ${index + 1}: ${command}`);
          const result = await episode.step({ ...intent, command, args, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }, step.observe, signal ? { signal } : undefined);
          reports.push({
            index,
            kind: "action",
            ...name,
            command,
            status: result.execution.status,
            ...(result.execution.error ? { errorCode: result.execution.error.code } : {}),
            ...(result.observation ? { observationId: result.observation.id } : {}),
          });
        } else if (step.kind === "snapshot") {
          progress(`Step ${index + 1}: snapshot`);
          const snapshot = await episode.snapshot();
          reports.push({ index, kind: "snapshot", ...name, snapshotId: snapshot.id });
        } else {
          progress(`Step ${index + 1}: observe ${step.observe.type}`);
          const observation = await episode.observe(step.observe);
          reports.push({ index, kind: "observe", ...name, observationId: observation.id });
        }
      }
    } catch (thrown) {
      error = serializeError(thrown);
    }
    if (!started) return { steps: reports, allOk: false, ...(error ? { error } : {}) };
    const artifacts = await episode.collectArtifacts({ includeRuntimeSnapshotBundles: plan.episode.includeRuntimeSnapshotBundles });
    const trace = episode.trace();
    const allOk = !error && trace.steps.every((s) => s.execution.status === "ok");
    return { trace, steps: reports, allOk, artifacts, ...(error ? { error } : {}) };
  } finally {
    await episode.close();
  }
}
