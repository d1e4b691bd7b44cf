/**
 * `runEpisodeScript`: plans and runs an episode script in one call (`planRun` + `runSession`), for
 * callers that hold a parsed script and a backend.
 */
import type { EpisodeScriptStepReport } from "../episode/episode-steps.js";
import type { RuntimeEpisodeTrace } from "../episode/episode-trace.js";
import { planRun } from "./run-plan.js";
import { runSession, type RunSessionOutcome, type SessionBundle } from "./run-session.js";
import type { RuntimeBackend } from "../runtime.js";

/** Options of `runEpisodeScript`. */
export interface RunEpisodeScriptOptions {
  /** Folder relative paths in the script resolve against (the script's folder). */
  baseDir: string;
  /** Bundle directory; default the script's `artifacts.directory`, else `./wp-codebox-artifacts/<episode id>`. */
  artifactsDir?: string;
  /** Where `secretEnv` names are read; default `process.env`. */
  processEnv?: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
  /** Host paths beyond `baseDir` the script may name (`--allow-path`); relative to the process's working directory. */
  allowPaths?: readonly string[];
  /** Hosts the script's policy may reach (`--allow-network`; `*` = every host). */
  allowNetwork?: readonly string[];
}

/** What `runEpisodeScript` returns: the session outcome plus the episode's trace and step list. */
export interface EpisodeScriptOutcome {
  /** Undefined when the episode never started (the sandbox did not boot: see `session.error`). */
  trace?: RuntimeEpisodeTrace;
  bundle: SessionBundle;
  steps: EpisodeScriptStepReport[];
  /** True when every action step ended `ok`. */
  allOk: boolean;
  session: RunSessionOutcome;
}

/**
 * Validates the whole script before boot, then runs it; the bundle is always written (also when a
 * step fails, which the trace records, or the sandbox does not boot) and the sandbox disposed.
 * @throws WpCodeboxError `invalid-episode-script` listing every issue (nothing booted),
 *   `artifacts-dir-not-empty`, and bundle-writing errors.
 */
export async function runEpisodeScript(script: unknown, backend: RuntimeBackend, options: RunEpisodeScriptOptions): Promise<EpisodeScriptOutcome> {
  const plan = planRun(
    { kind: "episode", script, baseDir: options.baseDir },
    { backend, ...(options.artifactsDir !== undefined ? { artifactsDir: options.artifactsDir } : {}), ...(options.processEnv ? { processEnv: options.processEnv } : {}), ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}), ...(options.allowNetwork ? { allowNetwork: options.allowNetwork } : {}) },
  );
  const session = await runSession(plan, { backend, ...(options.onProgress ? { onProgress: options.onProgress } : {}), ...(options.signal ? { signal: options.signal } : {}) });
  const episode = session.episode ?? { steps: [], allOk: false };
  return { ...(episode.trace ? { trace: episode.trace } : {}), bundle: session.bundle, steps: episode.steps, allOk: episode.allOk, session };
}
