/**
 * `wp-codebox episode replay BUNDLE`: re-executes the bundle's episode trace in a fresh sandbox and
 * reports per step whether the execution and observation digests match (volatile fields declared
 * in `EPISODE_REPLAY_VOLATILE_FIELDS` excluded).
 */
import { resolve } from "node:path";
import { replayEpisodeBundle, type EpisodeReplayReport, type RuntimeBackend } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";

/** Inputs of `episode replay`. */
export interface EpisodeReplayOptions {
  bundle: string;
  cwd?: string;
  onProgress?: (message: string) => void;
  backend?: RuntimeBackend;
}

/** Replays a bundle. @throws `invalid-episode-bundle`, backend boot errors. */
export async function replayEpisode(options: EpisodeReplayOptions): Promise<EpisodeReplayReport> {
  const dir = resolve(options.cwd ?? process.cwd(), options.bundle);
  return replayEpisodeBundle(dir, options.backend ?? createPlaygroundBackend({ cwd: options.cwd }), options.onProgress ? { onProgress: options.onProgress } : {});
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
