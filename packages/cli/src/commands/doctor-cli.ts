/**
 * Registers `wp-codebox doctor` (the checks are in `doctor.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES } from "../cli-exit-error.js";
import { examples, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox doctor` to `program`. */
export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command("doctor")
    .description("Check this machine: Node, offline WordPress builds, cache, installed site, Chromium, WP-CLI.")
    .option("--json", "print the report (wp-codebox/doctor-report/v1) on stdout")
    .addHelpText("after", "\nExit codes: 0 ready (Chromium and WP-CLI are optional), 3 a required piece is missing." + examples(["wp-codebox doctor", "wp-codebox doctor --json"]))
    .action(async (opts: { json?: boolean }) => {
      const { runDoctor, formatDoctorReport } = await import("./doctor.js");
      const report = await runDoctor({ env: io.env });
      if (opts.json) ctx.printJson(report);
      else io.stdout(formatDoctorReport(report));
      if (!report.ok) {
        const missing = report.checks.filter((c) => c.required && c.status !== "ok").map((c) => c.id);
        throw new CliExitError("environment-incomplete", `Required pieces are missing: ${missing.join(", ")}. Fix them as described${opts.json ? " in the report" : " above"}.`, EXIT_CODES.environment, { missing });
      }
    });
}
