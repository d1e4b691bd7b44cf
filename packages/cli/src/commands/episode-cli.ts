/**
 * Registers `wp-codebox episode run|replay` (the work is in `episode-run.ts` and `episode-replay.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES, sessionExitError } from "../cli-exit-error.js";
import { examples, type CliContext } from "../cli-options.js";
import { addHostAccessOptions, hostAccessGrants, type HostAccessFlags } from "../host-access-flags.js";

/** Adds `wp-codebox episode run|replay` to `program`. */
export function registerEpisodeCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  const episode = program.command("episode").description("Run stateful episodes and replay their traces.").addHelpText("after", examples(["wp-codebox episode run examples/episodes/seed-and-snapshot.json --artifacts out-episode", "wp-codebox episode replay out-episode"]));
  addHostAccessOptions(episode
    .command("run"), "the script")
    .description("Run an episode script (wp-codebox/episode-script/v1) and write its bundle: trace, events, observations, snapshots.")
    .argument("<script>", "episode script JSON file; relative paths in it resolve against its folder")
    .option("--artifacts <dir>", "bundle directory, created; refused if not empty (default: the script's artifacts.directory, else ./wp-codebox-artifacts/<episode id>)")
    .option("--json", 'print {"trace": {"id", "digest"}, "steps", "bundle": {"directory", "id", "valid"}} on stdout')
    .option("--clock <iso|real>", 'virtual clock start (ISO-8601 instant) or "real"; overrides runtime.clock (episode default: 2025-01-01T00:00:00Z)')
    .option("--seed <n>", "seed of every source of randomness; overrides runtime.seed (episode default: 0; refused with outbound network)")
    .option("--backend <name>", "playground or native (Debian's PHP and a private MariaDB under bubblewrap; every catalog command and observation, no virtual clock or seed); overrides runtime.backend (default playground)")
    .option("--attach <control-url>", "drive a live sandbox of wp-codebox serve (reset first; the script's runtime, inputs and policy are not used)")
    .option("--token <token>", "control token (default $WP_CODEBOX_TOKEN)")
    .addHelpText("after", "\nA failing step is recorded, not fatal. Exit codes: 0 every step ok; 1 a step failed or timed out (the bundle is still written); 2 invalid script (every issue listed)." + examples(["wp-codebox episode run episode.json --artifacts out-episode --json"]))
    .action(async (script: string, opts: { artifacts?: string; json?: boolean; attach?: string; token?: string; clock?: string; seed?: string; backend?: string } & HostAccessFlags) => {
      const { runEpisode, formatEpisodeOutcome } = await import("./episode-run.js");
      const attached = opts.attach !== undefined ? await (await import("./attach.js")).attach({ control: opts.attach, ...(opts.token !== undefined ? { token: opts.token } : {}), processEnv: io.env }) : undefined;
      let outcome: Awaited<ReturnType<typeof runEpisode>>;
      try {
        const backend = attached ? (await import("@wp-codebox/live/client")).attachedBackend(attached, { resetOnCreate: true }) : undefined;
        outcome = await ctx.withInterrupt((interrupt) =>
          runEpisode({
            script,
            ...(opts.artifacts ? { artifactsDir: opts.artifacts } : {}),
            ...(opts.clock !== undefined ? { clock: opts.clock } : {}),
            ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
            ...(opts.backend !== undefined ? { backendName: opts.backend } : {}),
            ...hostAccessGrants(opts),
            cwd: io.cwd,
            processEnv: io.env,
            interrupt,
            onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`),
            ...(backend ? { backend } : {}),
          }),
          { attached: backend !== undefined },
        );
      } finally {
        await attached?.dispose();
      }
      const trace = outcome.episode?.trace;
      if (opts.json) {
        ctx.printJson({
          ...(trace ? { trace: { id: trace.id, digest: trace.digest } } : {}),
          steps: outcome.episode?.steps ?? [],
          bundle: { directory: outcome.bundle.directory, id: outcome.bundle.id, valid: outcome.bundle.valid, ...(outcome.bundle.written === false ? { written: false, error: outcome.bundle.error } : {}) },
          ...(outcome.error ? { error: outcome.error } : {}),
        });
      }
      io.stderr(formatEpisodeOutcome(outcome));
      const exit = sessionExitError(outcome, { code: "episode-step-failed", message: "At least one episode step failed or timed out; it is recorded in the trace. See the step list above." });
      if (exit) throw exit;
    });
  episode
    .command("replay")
    .description("Re-execute a bundle's episode trace in a fresh sandbox and report per step whether the digests match.")
    .argument("<bundle>", "bundle directory written by episode run")
    .option("--json", "print the replay report (per-step digests, declared volatile fields) on stdout")
    .addHelpText("after", "\nReplay boots with the clock, seed and origin the trace recorded. Volatile fields (host timings and ids only) are declared in EPISODE_REPLAY_VOLATILE_FIELDS and listed in the --json report. Exit codes: 0 every deterministic step matches; 1 a mismatch; 2 not an episode bundle." + examples(["wp-codebox episode replay out-episode", "wp-codebox episode replay out-episode --json"]))
    .action(async (bundle: string, opts: { json?: boolean }) => {
      const { replayEpisode, formatReplayReport } = await import("./episode-replay.js");
      const report = await replayEpisode({ bundle, cwd: io.cwd, onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`) });
      if (opts.json) ctx.printJson(report);
      else io.stdout(formatReplayReport(report));
      if (!report.ok) throw new CliExitError("replay-mismatch", `${report.summary.mismatched} deterministic step(s) did not reproduce; the report lists the differing fields.`, EXIT_CODES.sandboxFailed);
    });
}
