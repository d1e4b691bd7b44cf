/**
 * Registers `wp-codebox schema` (the schemas are in `schema.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { examples, type CliContext } from "../cli-options.js";
import { describeSchemaNames } from "./schema.js";

/** Adds `wp-codebox schema` to `program`. */
export function registerSchemaCommand(program: Command, ctx: CliContext): void {
  program
    .command("schema")
    .description("Print the JSON Schema of a wp-codebox contract.")
    .argument("<name>", "schema name (see below)")
    .option("--json", "accepted for symmetry: the output is always JSON")
    .addHelpText("after", () => `\nSchema names:\n${describeSchemaNames()}\n${examples(["wp-codebox schema policy", "wp-codebox schema browser-script > browser-script.schema.json"])}`)
    .action(async (name: string) => {
      const { getSchema } = await import("./schema.js");
      ctx.printJson(await getSchema(name));
    });
}
