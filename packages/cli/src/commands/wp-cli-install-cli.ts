/**
 * Registers `wp-codebox wp-cli install` (the work is in `wp-cli-install.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { examples, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox wp-cli install` to `program`. */
export function registerWpCliCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  const wpCliCommand = program.command("wp-cli").description("Manage the WP-CLI phar that wordpress.wp-cli runs.");
  wpCliCommand
    .command("install")
    .description("Fetch WP-CLI's release phar once, check its published SHA-512 and cache it; wordpress.wp-cli then uses the newest cached phar by default.")
    .argument("[version]", 'a WP-CLI release such as 2.10.0, or "latest"', "latest")
    .option("--json", "print {version, pharPath, sha512, url, fetchedAt, fetched} on stdout")
    .addHelpText(
      "after",
      "\nFetched from $WP_CODEBOX_WP_CLI_MIRROR (default https://github.com/wp-cli/wp-cli/releases/) into <cache dir>/wp-cli/; WP_CODEBOX_OFFLINE=1 never fetches.\nExit codes: 0 installed (or already cached), 2 not a version, 3 wp-cli-download-failed or wp-cli-checksum-mismatch." +
        examples(["wp-codebox wp-cli install", "wp-codebox wp-cli install 2.10.0 --json"]),
    )
    .action(async (version: string, opts: { json?: boolean }) => {
      const { runWpCliInstall } = await import("./wp-cli-install.js");
      const report = await runWpCliInstall({ version, env: io.env, onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`) });
      if (opts.json) ctx.printJson(report);
      else io.stdout(`WP-CLI ${report.version} ${report.fetched ? "installed" : "already cached"}: ${report.pharPath} (sha512 ${report.sha512.slice(0, 16)}…)\n`);
    });
}
