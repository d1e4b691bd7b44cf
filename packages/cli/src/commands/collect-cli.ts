/**
 * Registers `wp-codebox collect --attach` (the work is in `attach.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES, reportPageLine } from "../cli-exit-error.js";
import { examples, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox collect --attach` to `program`. */
export function registerCollectCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command("collect")
    .description("Write the artifact bundle of everything done so far in a live (serve) sandbox; the sandbox keeps running.")
    .requiredOption("--attach <control-url>", "control endpoint printed by wp-codebox serve")
    .option("--token <token>", "control token (default $WP_CODEBOX_TOKEN)")
    .option("--artifacts <dir>", "bundle directory, created; refused if not empty (default ./wp-codebox-artifacts/collect-<id>)")
    .option("--include-snapshots", "also write the runtime snapshots taken in the sandbox into the bundle")
    .option("--json", 'print {"bundle": {"directory", "id", "valid"}, "results"} on stdout')
    .addHelpText("after", "\nWith serve --pool each session has its own sandbox, so a separate collect sees a fresh one: run --attach already writes the bundle of its session." + "\nExit codes: 0 bundle written and valid; 2 invalid input or wrong token; 3 serve not reachable." + examples(["WP_CODEBOX_TOKEN=T wp-codebox collect --attach http://127.0.0.1:PORT --artifacts ./out"]))
    .action(async (opts: { attach: string; token?: string; artifacts?: string; includeSnapshots?: boolean; json?: boolean }) => {
      const { collectAttached } = await import("./attach.js");
      const outcome = await collectAttached({
        control: opts.attach,
        ...(opts.token !== undefined ? { token: opts.token } : {}),
        processEnv: io.env,
        cwd: io.cwd,
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts } : {}),
        ...(opts.includeSnapshots ? { includeSnapshots: true } : {}),
        onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`),
      });
      if (opts.json) ctx.printJson({ bundle: { directory: outcome.bundle.directory, id: outcome.bundle.id, valid: outcome.bundle.valid }, results: outcome.results });
      io.stderr(`results:  ${outcome.results} command(s) from ${outcome.siteUrl}\nbundle:   ${outcome.bundle.directory}\nid:       ${outcome.bundle.id}\nverify:   ${outcome.bundle.valid ? "valid" : "INVALID"}\n${reportPageLine(outcome.bundle)}`);
      if (!outcome.bundle.valid) throw new CliExitError("bundle-invalid", `The bundle in ${outcome.bundle.directory} failed verification (a wp-codebox bug; please report it).`, EXIT_CODES.internal);
    });
}
