/**
 * `wp-codebox episode run SCRIPT.json`: runs an episode script (`wp-codebox/episode-script/v1`)
 * through `planRun` (the whole script checked before boot) and `runSession` (the bundle is always
 * written: trace, events, observations, snapshots when asked).
 */
import { BACKEND_NAMES, planRun, readInputTextSync, runSession, type RunSessionOutcome, type RuntimeBackend } from "@wp-codebox/runtime-core";
import { bundleVerifyText, reportPageLine } from "../cli-exit-error.js";
import { dirname, resolve } from "node:path";
import { createBackend } from "./backends.js";

/** Inputs of `episode run`. */
export interface EpisodeRunOptions {
  script: string;
  /** Bundle directory; default the script's `artifacts.directory`, else `./wp-codebox-artifacts/<episode id>`. */
  artifactsDir?: string;
  /** `--clock` / `--seed`: override the script's `runtime.clock` / `runtime.seed` (episodes default to a virtual clock and seed 0). */
  clock?: string;
  seed?: string;
  cwd?: string;
  processEnv?: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
  /** Aborting it (reason `"SIGINT"`/`"SIGTERM"`) stops the episode: bundle written, sandbox disposed. */
  interrupt?: AbortSignal;
  backend?: RuntimeBackend;
  /** `--backend NAME`: overrides the script's `runtime.backend` (default playground). Ignored with `backend`. */
  backendName?: string;
  /** `--allow-path DIR`: host paths beyond the script's folder it may name (relative to `cwd`). */
  allowPaths?: readonly string[];
  /** `--allow-network ORIGIN`: hosts the script's policy may reach (`*` = every host). */
  allowNetwork?: readonly string[];
}

/**
 * Reads, validates and runs the script.
 * @returns the session outcome; `outcome.episode` holds the trace (absent when the sandbox did not
 *   boot) and the step list.
 * @throws `invalid-episode-script` (file missing, not JSON, or invalid: every issue listed; nothing
 *   booted), `artifacts-dir-not-empty`.
 */
export async function runEpisode(options: EpisodeRunOptions): Promise<RunSessionOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const path = resolve(cwd, options.script);
  const backend = options.backend ?? createBackend(options.backendName ?? scriptBackendName(path), { cwd: dirname(path), offline: (options.processEnv ?? process.env).WP_CODEBOX_OFFLINE === "1" });
  const plan = planRun(
    { kind: "episode", file: options.script, ...(options.clock !== undefined ? { clock: options.clock } : {}), ...(options.seed !== undefined ? { seed: options.seed } : {}) },
    { cwd, ...(options.processEnv ? { processEnv: options.processEnv } : {}), ...(options.artifactsDir !== undefined ? { artifactsDir: options.artifactsDir } : {}), backend, ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}), ...(options.allowNetwork ? { allowNetwork: options.allowNetwork } : {}) },
  );
  return runSession(plan, { backend, ...(options.backend?.kind === "attached" ? { sandboxOutlives: true } : {}), ...(options.interrupt ? { signal: options.interrupt } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
}

/**
 * The script's `runtime.backend` when it names a backend, else undefined (the default). A script
 * that cannot be read (a special file, over its cap), or names no known backend, is left to
 * `planRun`, which refuses it or lists the issue.
 */
function scriptBackendName(path: string): string | undefined {
  try {
    // Through the bounded reader: /dev/zero, a FIFO or a huge file is refused here, not read.
    const name = (JSON.parse(readInputTextSync(path, "episode-script")) as { runtime?: { backend?: unknown } } | null)?.runtime?.backend;
    return (BACKEND_NAMES as readonly unknown[]).includes(name) ? (name as string) : undefined;
  } catch {
    return undefined;
  }
}

/** Human summary of an episode run (stderr). */
export function formatEpisodeOutcome(outcome: RunSessionOutcome): string {
  const episode = outcome.episode ?? { steps: [], allOk: false };
  const lines = episode.steps.map((s) => {
    const label = s.kind === "action" ? `${s.command} → ${s.status}${s.errorCode ? ` (${s.errorCode})` : ""}` : s.kind === "snapshot" ? `snapshot ${s.snapshotId}` : `observe ${s.observationId}`;
    return `  ${String(s.index + 1).padStart(2)}. ${s.name ? `${s.name}: ` : ""}${label}`;
  });
  const head = episode.trace ? `trace:    ${episode.trace.id}` : `trace:    (none: ${outcome.summary})`;
  return [head, ...lines, `bundle:   ${outcome.bundle.directory}`, `id:       ${outcome.bundle.id}`, `verify:   ${bundleVerifyText(outcome.bundle)}`, ""].join("\n") + reportPageLine(outcome.bundle);
}
