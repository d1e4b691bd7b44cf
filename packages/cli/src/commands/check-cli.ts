/**
 * Registers `wp-codebox check` (the work is in `check.ts`, imported lazily so the CLI starts fast).
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES, bundleLostError, bundleVerifyText, reportPageLine } from "../cli-exit-error.js";
import type { CliIo } from "../cli-io.js";
import type { RunOptions } from "./run.js";

/** What `check` needs from the CLI invocation. */
export interface CheckCliContext {
  io: CliIo;
  printJson: (value: unknown) => void;
  /** Adds the shared runtime flags (`--wp`, `--php`, `--mount`, `--policy`, `--env`, …). */
  addRuntimeOptions: (command: Command) => Command;
  /** Maps parsed runtime flags to `RunOptions` fields. */
  runtimeOptions: (opts: Record<string, unknown>) => Omit<RunOptions, "command">;
  /** Runs the check with Ctrl-C/SIGTERM turned into an abort: the bundle of what ran is still written. */
  withInterrupt: <T>(work: (interrupt: AbortSignal) => Promise<T>) => Promise<T>;
}

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;

/** Adds `wp-codebox check` to `program`. */
export function registerCheckCommand(program: Command, ctx: CheckCliContext): void {
  const { io } = ctx;
  ctx
    .addRuntimeOptions(
      program
        .command("check")
        .description("Activate a plugin in a fresh sandbox, inventory what it adds, exercise every surface, and report each problem with evidence.")
        .argument("<plugin>", "the plugin: its folder, or a single-file plugin")
        .option("--browser", "also open every admin page it adds in Chromium (JavaScript errors, console errors, failed requests)")
        .option("--fail-on <severity>", "lowest severity that fails the check: error, warning or notice", "error")
        .option("--timeout <duration>", "wall-clock limit of the whole check (default 10m)")
        .option("--surface-timeout <duration>", "limit of each surface: an admin page, REST route, front-end visit or cron hook that takes longer is a timeout finding, and the check goes on (default 60s)")
        .option("--min-callback-coverage <percent>", "fail the check when fewer than this percentage (0-100) of the plugin's callbacks ran")
        .option("--coverage <kind>", "callbacks (default) or lines (line coverage needs Xdebug; where it cannot load, the report says why)")
        .option("--artifacts <dir>", "bundle directory, created; refused if it exists and is not empty (default ./wp-codebox-artifacts/<run id>)")
        .option("--json", "print the report (wp-codebox/plugin-check-report/v1) on stdout")
        .option("--backend <name>", "playground (default) or native: Debian's PHP and a private MariaDB (see docs/native-backend.md)"),
    )
    .addHelpText(
      "after",
      "\nA summary goes to stderr; the bundle holds files/check/report.json, files/check/junit.xml and the evidence each finding points at." +
        "\nExit codes: 0 no finding at or above --fail-on; 1 findings (or the check could not run); 2 invalid input; 3 environment." +
        examples(["wp-codebox check ./my-plugin", "wp-codebox check ./my-plugin --browser --fail-on warning --artifacts out-check", "wp-codebox check ./my-plugin --wp 6.4 --php 8.1 --json > report.json"]),
    )
    .action(async (plugin: string, opts: Record<string, unknown>) => {
      const { assertCliBackend } = await import("./backends.js");
      assertCliBackend("check", opts.backend as string | undefined, { cwd: io.cwd });
      const { runPluginCheck } = await import("./check.js");
      const { outcome, report } = await ctx.withInterrupt((interrupt) => runPluginCheck({
        ...ctx.runtimeOptions(opts),
        ...(opts.backend !== undefined ? { backendName: opts.backend as string } : {}),
        interrupt,
        pluginDir: plugin,
        browser: opts.browser === true,
        failOn: opts.failOn as string,
        ...(opts.timeout !== undefined ? { timeout: opts.timeout as string } : {}),
        ...(opts.surfaceTimeout !== undefined ? { surfaceTimeout: opts.surfaceTimeout as string } : {}),
        ...(opts.minCallbackCoverage !== undefined ? { minCallbackCoverage: opts.minCallbackCoverage as string } : {}),
        ...(opts.coverage !== undefined ? { coverage: opts.coverage as string } : {}),
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts as string } : {}),
      }));
      if (opts.json === true && report) ctx.printJson(report);
      if (outcome.result.stderr) io.stderr(outcome.result.stderr);
      io.stderr(`bundle:   ${outcome.bundle.directory}\nverify:   ${bundleVerifyText(outcome.bundle)}\n${reportPageLine(outcome.bundle)}`);
      const lost = bundleLostError(outcome.bundle);
      if (lost) throw lost;
      if (outcome.error) throw outcome.error;
      if (!outcome.bundle.valid) {
        throw new CliExitError("bundle-invalid", `The bundle in ${outcome.bundle.directory} failed verification (a wp-codebox bug; please report it).`, EXIT_CODES.internal);
      }
      if (outcome.result.status !== "ok") {
        const error = outcome.result.error ?? { code: "check-failed", message: "The check failed." };
        throw new CliExitError(error.code, error.message, EXIT_CODES.sandboxFailed);
      }
    });
}
