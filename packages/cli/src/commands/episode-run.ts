/**
 * `wp-codebox episode run SCRIPT.json`: runs an episode script (`wp-codebox/episode-script/v1`,
 * SPEC §5) and writes its bundle (trace, events, observations, snapshots when asked).
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { WpCodeboxError, runEpisodeScript, type EpisodeScriptOutcome, type RuntimeBackend } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { newRunId } from "./run.js";

/** Inputs of `episode run`. */
export interface EpisodeRunOptions {
  script: string;
  /** Bundle directory; default the script's `artifacts.directory`, else `./wp-codebox-artifacts/<run id>`. */
  artifactsDir?: string;
  cwd?: string;
  processEnv?: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
  backend?: RuntimeBackend;
}

/**
 * Reads, validates and runs the script.
 * @throws `invalid-episode-script` (file missing, not JSON, or invalid: every issue listed), and
 *   what `runEpisodeScript` throws.
 */
export async function runEpisode(options: EpisodeRunOptions): Promise<EpisodeScriptOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const path = resolve(cwd, options.script);
  let script: unknown;
  try {
    script = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new WpCodeboxError("invalid-episode-script", `Cannot read the episode script ${path}: ${(error as Error).message}. Pass a JSON file with schema "wp-codebox/episode-script/v1".`, { path });
  }
  const baseDir = dirname(path);
  const scripted = (script as { artifacts?: { directory?: string } })?.artifacts?.directory;
  const artifactsDir = options.artifactsDir !== undefined ? resolve(cwd, options.artifactsDir) : scripted ? undefined : resolve(cwd, "wp-codebox-artifacts", newRunId().replace(/^run-/, "episode-"));
  return runEpisodeScript(script, options.backend ?? createPlaygroundBackend({ cwd: baseDir }), {
    baseDir,
    ...(artifactsDir ? { artifactsDir } : {}),
    ...(options.processEnv ? { processEnv: options.processEnv } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

/** Human summary of an episode run (stderr). */
export function formatEpisodeOutcome(outcome: EpisodeScriptOutcome): string {
  const lines = outcome.steps.map((s) => {
    const label = s.kind === "action" ? `${s.command} → ${s.status}${s.errorCode ? ` (${s.errorCode})` : ""}` : s.kind === "snapshot" ? `snapshot ${s.snapshotId}` : `observe ${s.observationId}`;
    return `  ${String(s.index + 1).padStart(2)}. ${s.name ? `${s.name}: ` : ""}${label}`;
  });
  return [`trace:    ${outcome.trace.id}`, ...lines, `bundle:   ${outcome.bundle.directory}`, `id:       ${outcome.bundle.id}`, `verify:   ${outcome.bundle.valid ? "valid" : "INVALID"}`, ""].join("\n");
}
