/**
 * Runs an episode script (`wp-codebox/episode-script/v1`) on any backend and writes its artifact
 * bundle: reset, each step in order, snapshots, observations, then `collectArtifacts` and one
 * `writeArtifactBundle`. Used by `wp-codebox episode run`.
 */
import { isAbsolute, resolve } from "node:path";
import { writeArtifactBundle, type WrittenArtifactBundle } from "./artifact-bundle/write-artifact-bundle.js";
import { createRuntimeEpisode, type RuntimeEpisodeStepResult } from "./episode/runtime-episode.js";
import type { RuntimeEpisodeObservation } from "./episode/episode-observation.js";
import type { RuntimeEpisodeSnapshot, RuntimeEpisodeTrace } from "./episode/episode-trace.js";
import { assertEpisodeScript, episodeScriptArgs, type EpisodeScript } from "./episode-script.js";
import { WpCodeboxError } from "./errors.js";
import type { MountSpec, RuntimeBackend, RuntimeCreateSpec } from "./runtime.js";

/** Options of `runEpisodeScript`. */
export interface RunEpisodeScriptOptions {
  /** Folder relative paths in the script resolve against (the script's folder). */
  baseDir: string;
  /** Bundle directory; default the script's `artifacts.directory`, else required. */
  artifactsDir?: string;
  /** Where `secretEnv` names are read; default `process.env`. */
  processEnv?: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
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

/** What `runEpisodeScript` returns. */
export interface EpisodeScriptOutcome {
  trace: RuntimeEpisodeTrace;
  bundle: WrittenArtifactBundle;
  steps: EpisodeScriptStepReport[];
  /** True when every action step ended `ok`. */
  allOk: boolean;
}

/** The runtime create spec a script describes (paths resolved against `baseDir`). */
export function episodeScriptCreateSpec(script: EpisodeScript, baseDir: string, processEnv: NodeJS.ProcessEnv = process.env): RuntimeCreateSpec {
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  const secretEnv: Record<string, string> = {};
  for (const name of script.secretEnv ?? []) {
    const value = processEnv[name];
    if (value === undefined) throw new WpCodeboxError("missing-argument", `secretEnv names ${name}, which is not set in the environment: export it before running the episode.`, { name });
    secretEnv[name] = value;
  }
  return {
    ...(script.runtime?.wp ? { wordpress: { version: script.runtime.wp } } : {}),
    ...(script.runtime?.wordpress ? { wordpress: { path: abs(script.runtime.wordpress) } } : {}),
    ...(script.runtime?.php ? { php: script.runtime.php } : {}),
    ...(script.plugins ? { plugins: script.plugins.map(abs) } : {}),
    ...(script.themes ? { themes: script.themes.map(abs) } : {}),
    ...(script.mounts ? { mounts: script.mounts.map((m): MountSpec => ({ source: abs(m.source), target: m.target, mode: m.mode ?? "readonly" })) } : {}),
    ...(script.policy ? { policy: script.policy } : {}),
    ...(script.env ? { env: script.env } : {}),
    ...(Object.keys(secretEnv).length ? { secretEnv } : {}),
  };
}

/**
 * Validates and runs a script, always writing the bundle (also when a step fails: failures are
 * recorded in the trace) and always closing the episode.
 * @throws `invalid-episode-script` (nothing ran), `missing-argument` (no bundle directory or an
 *   unset secret), backend errors from boot, `artifacts-dir-not-empty`.
 */
export async function runEpisodeScript(script: unknown, backend: RuntimeBackend, options: RunEpisodeScriptOptions): Promise<EpisodeScriptOutcome> {
  assertEpisodeScript(script);
  const dir = options.artifactsDir ?? (script.artifacts?.directory ? resolve(options.baseDir, script.artifacts.directory) : undefined);
  if (!dir) throw new WpCodeboxError("missing-argument", "No bundle directory: pass --artifacts DIR or set artifacts.directory in the script.");
  const spec = episodeScriptCreateSpec(script, options.baseDir, options.processEnv);
  const episode = createRuntimeEpisode({ ...spec, ...(script.resetObservations ? { resetObservations: script.resetObservations } : {}), onProgress: options.onProgress }, backend);
  const reports: EpisodeScriptStepReport[] = [];
  try {
    options.onProgress?.("Booting the episode runtime");
    await episode.reset();
    for (const [index, step] of script.steps.entries()) {
      const name = step.name;
      if ("action" in step) {
        const { args, ...action } = step.action;
        options.onProgress?.(`Step ${index + 1}: ${action.command}`);
        const result: RuntimeEpisodeStepResult = await episode.step({ ...action, args: episodeScriptArgs(args) }, step.observe);
        reports.push({
          index,
          kind: "action",
          ...(name ? { name } : {}),
          command: action.command,
          status: result.execution.status,
          ...(result.execution.error ? { errorCode: result.execution.error.code } : {}),
          ...(result.observation ? { observationId: result.observation.id } : {}),
        });
      } else if ("snapshot" in step) {
        options.onProgress?.(`Step ${index + 1}: snapshot`);
        const snapshot: RuntimeEpisodeSnapshot = await episode.snapshot();
        reports.push({ index, kind: "snapshot", ...(name ? { name } : {}), snapshotId: snapshot.id });
      } else {
        options.onProgress?.(`Step ${index + 1}: observe ${step.observe.type}`);
        const observation: RuntimeEpisodeObservation = await episode.observe(step.observe);
        reports.push({ index, kind: "observe", ...(name ? { name } : {}), observationId: observation.id });
      }
    }
    options.onProgress?.("Writing the bundle");
    const artifacts = await episode.collectArtifacts({ includeRuntimeSnapshotBundles: script.artifacts?.includeRuntimeSnapshotBundles ?? false });
    const trace = episode.trace();
    const failed = trace.steps.find((s) => s.execution.status !== "ok");
    const bundle = await writeArtifactBundle(dir, artifacts, {
      status: failed ? failed.execution.status : "ok",
      summary: `Episode ${trace.id}: ${trace.steps.length} step(s), ${trace.steps.filter((s) => s.execution.status === "ok").length} ok, ${trace.snapshots.length} snapshot(s).`,
    });
    return { trace, bundle, steps: reports, allOk: !failed };
  } finally {
    await episode.close();
  }
}
