/**
 * `wp-codebox episode replay BUNDLE`: re-executes the bundle's episode trace in a fresh sandbox and
 * reports per step whether the execution and observation digests match (volatile fields declared
 * in `EPISODE_REPLAY_VOLATILE_FIELDS` excluded).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BACKEND_NAMES, RUNTIME_EPISODE_TRACE_PATH, replayEpisodeBundle, type BackendName, type EpisodeReplayReport, type RuntimeBackend } from "@wp-codebox/runtime-core";
import { createBackend } from "./backends.js";

/** Inputs of `episode replay`. */
export interface EpisodeReplayOptions {
  bundle: string;
  cwd?: string;
  onProgress?: (message: string) => void;
  backend?: RuntimeBackend;
}

/**
 * Replays a bundle on the backend it was recorded on (the trace's `runtime.backend`; Playground
 * when the trace names none this CLI knows), unless `options.backend` is given.
 * @throws `invalid-episode-bundle`, backend boot errors (e.g. `native-backend-unavailable`).
 */
export async function replayEpisode(options: EpisodeReplayOptions): Promise<EpisodeReplayReport> {
  const dir = resolve(options.cwd ?? process.cwd(), options.bundle);
  const backend = options.backend ?? createBackend(recordedBackend(dir), { cwd: options.cwd ?? process.cwd() });
  return replayEpisodeBundle(dir, backend, options.onProgress ? { onProgress: options.onProgress } : {});
}

/** The backend a bundle's episode trace says it ran on, when it is one of `BACKEND_NAMES`; unreadable traces are left to `replayEpisodeBundle` to refuse. */
export function recordedBackend(bundleDir: string): BackendName | undefined {
  try {
    const name = (JSON.parse(readFileSync(join(bundleDir, ...RUNTIME_EPISODE_TRACE_PATH.split("/")), "utf8")) as { runtime?: { backend?: unknown } }).runtime?.backend;
    return (BACKEND_NAMES as readonly unknown[]).includes(name) ? (name as BackendName) : undefined;
  } catch {
    return undefined;
  }
}

/** Human report: one line per step. */
export function formatReplayReport(report: EpisodeReplayReport): string {
  const mark = (match: boolean) => (match ? "match" : "MISMATCH");
  const lines = [
    `reset observations: ${report.reset.observations.map((o) => mark(o.match)).join(", ") || "none"}`,
    ...report.steps.map(
      (s) =>
        `${s.id} ${s.command} [${s.deterministic ? "deterministic" : "non-deterministic"}] execution ${mark(s.execution.match)}${s.observation ? `, observation ${mark(s.observation.match)}` : ""}` +
        `${s.match ? "" : ` (differs at ${[...(s.execution.differences ?? []), ...(s.observation?.differences ?? [])].slice(0, 5).join(", ")})`}`,
    ),
    ...report.observations.map((o, i) => `observation ${i + 1}: ${mark(o.match)}`),
    `${report.ok ? "replay ok" : "replay MISMATCH"}: ${report.summary.matched}/${report.summary.steps} steps match (${report.summary.deterministic} deterministic).`,
  ];
  return `${lines.join("\n")}\n`;
}
