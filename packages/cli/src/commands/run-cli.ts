/**
 * Registers `wp-codebox run` (the work is in `run.ts`, or `attach.ts` with --attach);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES, bundleLostError, bundleVerifyText, reportPageLine } from "../cli-exit-error.js";
import { addRuntimeOptions, collect, examples, jsonError, runtimeRunOptions, type CliContext } from "../cli-options.js";
import type { RunOptions, RunOutcome } from "./run.js";

/** Adds `wp-codebox run` to `program`. */
export function registerRunCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  addRuntimeOptions(
    program
      .command("run")
      .description("Boot a sandbox, run one command, write the artifact bundle, dispose the sandbox.")
      .requiredOption("--command <id>", "command id (see wp-codebox commands)")
      .option("--arg <key=value>", "command argument (repeatable); *-json args take inline JSON or @file", collect)
      .option("--timeout <duration>", 'wall-clock limit of the command, e.g. 30s, 500ms, 2m ("0" = none; default 60s)')
      .option("--artifacts <dir>", "bundle directory, created; refused if it exists and is not empty (default ./wp-codebox-artifacts/<run id>)")
      .option("--json", 'print {"result": ExecutionResult, "bundle": {"directory", "id", "valid"}} on stdout')
      .option("--backend <name>", "playground (default: PHP in WebAssembly, SQLite) or native (Debian's PHP and a private MariaDB under bubblewrap; runs every catalog command; see docs/native-backend.md)")
      .option("--attach <control-url>", "run in a live sandbox of wp-codebox serve instead of booting one (no runtime flags then)")
      .option("--token <token>", "control token of the serve sandbox (default $WP_CODEBOX_TOKEN)")
      .option("--update-baselines", "browser scripts: write each compared screenshot as its baseline (the compare path, inside the script's folder) instead of comparing"),
  )
    .addHelpText(
      "after",
      `\nThe command's stdout goes to stdout, a summary (status, duration, bundle, verification) to stderr.` +
        `\nExit codes: 0 status ok; 1 status error or timed-out (or a policy denial); 2 invalid input (checked before boot); 3 environment.` +
        examples([
          `wp-codebox run --command wordpress.run-php --arg 'code=<?php echo get_bloginfo("version");'`,
          "wp-codebox run --command wordpress.run-php --arg code-file=./probe.php --plugin ./my-plugin --timeout 30s",
          "wp-codebox run --command wordpress.rest-request --arg route=/wp/v2/posts --json",
          "wp-codebox run --command inspect-mounted-inputs --mount ./data:/workspace/data:ro --artifacts ./out",
          "API_TOKEN=... wp-codebox run --command wordpress.run-php --secret-env API_TOKEN --arg 'code=<?php echo strlen(getenv(\"API_TOKEN\"));'",
        ]),
    )
    .action(async (opts: Record<string, unknown>) => {
      if (opts.attach !== undefined) {
        const { assertNoRuntimeFlags } = await import("./attach.js");
        assertNoRuntimeFlags(opts);
        if (opts.updateBaselines === true) {
          // The serve sandbox was created without it and would compare instead of writing.
          const { WpCodeboxError } = await import("@wp-codebox/runtime-core");
          throw new WpCodeboxError("invalid-argument", "--update-baselines cannot be used with --attach: run the script in its own sandbox (without --attach) to write baselines.", { flags: ["--update-baselines"] });
        }
      }
      const runOptions: RunOptions = {
        command: opts.command as string,
        args: (opts.arg as string[] | undefined) ?? [],
        ...(opts.timeout !== undefined ? { timeout: opts.timeout as string } : {}),
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts as string } : {}),
        ...(opts.updateBaselines === true ? { updateBaselines: true } : {}),
        ...(opts.backend !== undefined ? { backendName: opts.backend as string } : {}),
        ...runtimeRunOptions(opts, io),
      };
      const outcome: RunOutcome = await ctx.withInterrupt(async (interrupt) => {
        if (opts.attach !== undefined) {
          const { runAttached } = await import("./attach.js");
          return runAttached({ ...runOptions, interrupt, control: opts.attach as string, ...(opts.token !== undefined ? { token: opts.token as string } : {}), processEnv: io.env });
        }
        const { runCommand } = await import("./run.js");
        return runCommand({ ...runOptions, interrupt });
      }, { attached: opts.attach !== undefined });
      printRunOutcome(ctx, outcome, opts.json === true);
      const lost = bundleLostError(outcome.bundle);
      if (lost) throw lost;
      if (outcome.error) throw outcome.error;
      if (outcome.result.status !== "ok") {
        const error = outcome.result.error ?? { code: outcome.result.status === "timed-out" ? "timeout" : "internal-error", message: `${outcome.result.command} ended with status ${outcome.result.status}.` };
        throw new CliExitError(error.code, error.message, EXIT_CODES.sandboxFailed);
      }
      if (!outcome.bundle.valid) {
        throw new CliExitError("bundle-invalid", `The bundle in ${outcome.bundle.directory} failed verification (a wp-codebox bug; please report it).`, EXIT_CODES.internal);
      }
    });
}

/** Human output of `run`: command stdout to stdout; stderr, summary and verification to stderr. */
function printRunOutcome(ctx: CliContext, outcome: RunOutcome, asJson: boolean): void {
  const { io } = ctx;
  const { result, bundle } = outcome;
  if (asJson) {
    ctx.printJson({
      result,
      bundle: { directory: bundle.directory, id: bundle.id, valid: bundle.valid, ...(bundle.written === false ? { written: false, error: bundle.error } : {}) },
      ...(outcome.error ? { error: jsonError(outcome.error) } : {}),
    });
  } else {
    if (result.stdout) io.stdout(result.stdout);
    else if (result.json !== undefined) io.stdout(`${JSON.stringify(result.json, null, 2)}\n`);
    if (result.stderr) io.stderr(result.stderr.endsWith("\n") ? result.stderr : `${result.stderr}\n`);
  }
  const lines = [
    "",
    // A command that never ran or was cut off (no boot, an interrupt) has no exit code of its own.
    outcome.error && result.error?.code === outcome.error.code
      ? `status:   ${result.status} (no exit code: error[${outcome.error.code}]) in ${result.durationMs} ms — ${result.command}`
      : `status:   ${result.status} (command exit code ${result.exitCode}) in ${result.durationMs} ms — ${result.command}`,
    `bundle:   ${bundle.directory}`,
    `id:       ${bundle.id}`,
    `verify:   ${bundle.written === false ? bundleVerifyText(bundle) : bundle.valid ? "valid" : `INVALID (${bundle.violations.map((v) => `${v.code} ${v.path}`).join("; ")})`}`,
  ];
  io.stderr(`${lines.join("\n")}\n${reportPageLine(bundle)}`);
}
