/**
 * Registers `wp-codebox commands` (the catalog is in `commands.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { examples, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox commands` to `program`. */
export function registerCommandsCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command("commands")
    .description("List the commands a sandbox can run, with their arguments (the command catalog).")
    .option("--json", "print the catalog (wp-codebox/command-catalog/v1) on stdout")
    .addHelpText("after", examples(["wp-codebox commands", "wp-codebox commands --json | jq '.commands[].id'"]))
    .action(async (opts: { json?: boolean }) => {
      const { listCommands, formatCommandCatalog } = await import("./commands.js");
      const catalog = await listCommands();
      if (opts.json) ctx.printJson(catalog);
      else io.stdout(formatCommandCatalog(catalog));
    });
}
