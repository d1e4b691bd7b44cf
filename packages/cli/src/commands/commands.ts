/** `wp-codebox commands`: the command catalog (`wp-codebox/command-catalog/v1`). */
import { commandCatalog, type CommandCatalog, type CommandDefinition } from "@wp-codebox/runtime-core";

/**
 * The catalog of commands and policy-only capabilities.
 * @returns `{ schema: "wp-codebox/command-catalog/v1", commands }` (a fresh copy).
 */
export async function listCommands(): Promise<CommandCatalog> {
  return commandCatalog();
}

function argText(def: CommandDefinition): string {
  if (def.args.length === 0) return "(no args)";
  return def.args
    .map((a) => {
      const value = a.format === "enum" && a.values ? a.values.join("|") : a.format;
      return a.required ? `${a.name}=<${value}>` : `[${a.name}=<${value}>]`;
    })
    .join(" ");
}

/** Human table: id, summary, args (one command per block). */
export function formatCommandCatalog(catalog: CommandCatalog): string {
  const width = Math.max(...catalog.commands.map((c) => c.id.length));
  const lines: string[] = [];
  for (const def of catalog.commands) {
    lines.push(`${def.id.padEnd(width)}  ${def.summary}`);
    lines.push(`${"".padEnd(width)}  args: ${argText(def)}`);
    for (const group of def.exactlyOneOf ?? []) lines.push(`${"".padEnd(width)}  exactly one of: ${group.join(", ")}`);
    if (!def.runnable) lines.push(`${"".padEnd(width)}  (policy-only capability; grant it with --policy)`);
  }
  lines.push("", 'Run a command: wp-codebox run --command <id> --arg key=value …   Details: wp-codebox commands --json');
  return `${lines.join("\n")}\n`;
}
