/**
 * Registers `wp-codebox report` (the work is in `report-page.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES } from "../cli-exit-error.js";
import { examples, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox report` to `program`. */
export function registerReportCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command("report")
    .description("Write the report page (report.html) of a bundle made before, outside the bundle so it still verifies.")
    .argument("<dir>", "bundle directory (holding manifest.json)")
    .option("--out <file>", "where the page goes (default <dir>-report.html beside the bundle); refused inside the bundle")
    .option("--json", 'print {"directory", "out", "valid", "id", "violations"} on stdout')
    .addHelpText(
      "after",
      "\nEvery bundle already holds its own report.html; this writes one for a bundle from an older version, or one to keep elsewhere. The page links to the bundle's files." +
        "\nExit codes: 0 page written, bundle valid; 1 page written, bundle invalid (the page lists the violations); 2 not a bundle, or --out inside it." +
        examples(["wp-codebox report ./wp-codebox-artifacts/run-20250131-142501-a1b2c3", "wp-codebox report ./out --out ./out-report.html"]),
    )
    .action(async (dir: string, opts: { out?: string; json?: boolean }) => {
      const { writeReportPage } = await import("./report-page.js");
      const outcome = await writeReportPage(dir, { cwd: io.cwd, ...(opts.out !== undefined ? { out: opts.out } : {}) });
      if (opts.json) ctx.printJson(outcome);
      io.stderr(`bundle:   ${outcome.directory}\nverify:   ${outcome.valid ? "valid" : `INVALID (${outcome.violations.length} violation(s), listed on the page)`}\nreport:   ${outcome.out}\n`);
      if (!outcome.valid) {
        throw new CliExitError("bundle-invalid", `${outcome.directory} is not a valid bundle: the page ${outcome.out} lists its ${outcome.violations.length} violation(s).`, EXIT_CODES.sandboxFailed, {
          violations: outcome.violations.length,
        });
      }
    });
}
