/**
 * Registers `wp-codebox artifacts verify` (the work is in `artifacts-verify.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES } from "../cli-exit-error.js";
import { examples, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox artifacts verify` to `program`. */
export function registerArtifactsCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  const artifacts = program.command("artifacts").description("Work with artifact bundles.").addHelpText("after", examples(["wp-codebox artifacts verify ./wp-codebox-artifacts/<run id>"]));
  artifacts
    .command("verify")
    .description("Verify an artifact bundle byte for byte: manifest, hashes, sizes, ids, references.")
    .argument("<dir>", "bundle directory (holding manifest.json)")
    .option("--json", 'print {"directory", "valid", "id", "violations": [{"code", "path", "message"}]} on stdout')
    .addHelpText(
      "after",
      "\nPrints each violation as `code path: message`. Exit codes: 0 valid, 1 invalid, 2 not a directory." +
        examples(["wp-codebox artifacts verify ./wp-codebox-artifacts/run-20250131-142501-a1b2c3", "wp-codebox artifacts verify ./out --json"]),
    )
    .action(async (dir: string, opts: { json?: boolean }) => {
      const { verifyArtifacts, formatViolations } = await import("./artifacts-verify.js");
      const report = await verifyArtifacts(dir, io.cwd);
      if (opts.json) ctx.printJson(report);
      else {
        io.stdout(formatViolations(report));
        if (report.valid) io.stderr(`valid: ${report.directory}${report.id ? ` (${report.id})` : ""}\n`);
      }
      if (!report.valid) {
        throw new CliExitError(
          "bundle-invalid",
          `${report.directory} is not a valid bundle: ${report.violations.length} violation(s)${opts.json ? "" : " listed above"}. The bundle was changed after it was written, or is incomplete.`,
          EXIT_CODES.sandboxFailed,
          { violations: report.violations.length },
        );
      }
    });
}
