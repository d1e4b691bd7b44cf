/**
 * MCP tools generated from the command catalog: one tool per runnable command, named after the
 * command id with `.` and `-` as `_` (`wordpress.run-php` → `wordpress_run_php`), its input schema
 * derived from the command's `args`, so the catalog and the tools never drift.
 */
import { stepOutputSchema, type ToolOutputSchema } from "./tool-output-schemas.js";
import { COMMAND_DEFINITIONS, WpCodeboxError, checkCommandInput, flattenCommandArgs, hasCapability, type CommandArgument, type CommandDefinition, type RuntimePolicy } from "@wp-codebox/runtime-core";

/** A JSON Schema object as MCP carries it in `tools/list` (`inputSchema`). */
export interface ToolInputSchema {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties: boolean | Record<string, unknown>;
  /** Other keywords of a schema that comes from elsewhere (an ability's input schema). */
  [keyword: string]: unknown;
}

/** An MCP tool description (`tools/list` entry). */
export interface McpToolDescription {
  name: string;
  title?: string;
  description: string;
  inputSchema: ToolInputSchema;
  /** The shape of the call's `structuredContent` (see tool-output-schemas). */
  outputSchema?: ToolOutputSchema;
  /** `title` and MCP's behaviour hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). */
  annotations?: Record<string, unknown>;
}

/** The MCP tool name of a command id: `.` and `-` become `_` (`wordpress.run-php` → `wordpress_run_php`). */
export function toolNameForCommand(commandId: string): string {
  return commandId.replace(/[.-]/g, "_");
}

/** The catalog commands that become tools (runnable ones; policy-only capabilities are not tools). */
export function catalogToolCommands(): CommandDefinition[] {
  return COMMAND_DEFINITIONS.filter((d) => d.runnable);
}

/**
 * A list argument's description for a tool schema: the catalog words it for the command line
 * ("Comma-separated sections: …", as in `--arg sections=a,b`), where a tool takes a JSON array.
 */
function listDescription(description: string): string {
  const words = description.replace(/^comma-separated (\w)/i, (_m, c: string) => c.toUpperCase()).replace(/\bcomma-separated /gi, "");
  return `${words} A JSON array of strings, e.g. ["a", "b"].`;
}

/**
 * The JSON Schema of one catalog argument, in the subset of JSON Schema that strict
 * function-calling clients accept (OpenAI, Gemini): one `type` per schema, never a list of types,
 * `items` on every array. Each argument gets ONE canonical type:
 * - `integer` → `integer`, `boolean` → `boolean`, `enum` → `string` with `enum`;
 * - `list` → an array of strings;
 * - `json` → a string holding the JSON text (or `@path` of a JSON file): the catalog reads JSON
 *   args from text, and a free-form object or array schema is what those clients refuse;
 * - everything else (text, path, url, duration, actor, viewport) → `string`.
 * The schema is what clients see, not the validator: `toolInputToArgs` still takes the catalog's
 * string form of any argument (`"5"`, `"true"`, `"a,b"`) and a JSON object/array for a `json`
 * argument, and the catalog parser checks every value on the call.
 */
export function argumentSchema(arg: CommandArgument): Record<string, unknown> {
  const description = arg.description;
  switch (arg.format) {
    case "enum":
      return { type: "string", enum: [...(arg.values ?? [])], description };
    case "integer":
      return { type: "integer", description };
    case "boolean":
      return { type: "boolean", description };
    case "json":
      return { type: "string", description: `${description} Pass the JSON text as a string (a JSON object or array value is accepted too).` };
    case "list":
      return { type: "array", items: { type: "string" }, description: listDescription(description) };
    default:
      return { type: "string", description };
  }
}

/**
 * The input schema of a command's tool: one property per catalog arg (same names), `required`
 * from the catalog. "Exactly one of" / "at most one of" groups are stated in the tool description
 * (several MCP clients refuse top-level `oneOf`) and enforced by the catalog parser on every call.
 */
export function commandInputSchema(def: CommandDefinition): ToolInputSchema {
  const properties: ToolInputSchema["properties"] = {};
  for (const arg of def.args) properties[arg.name] = argumentSchema(arg);
  const required = def.args.filter((a) => a.required).map((a) => a.name);
  return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The description of a command's tool: the catalog summary, arg groups, output, policy state. */
export function commandToolDescription(def: CommandDefinition, policy: RuntimePolicy | undefined): string {
  const parts = [def.summary];
  for (const group of def.exactlyOneOf ?? []) parts.push(`Give exactly one of: ${group.join(", ")}.`);
  for (const group of def.atMostOneOf ?? []) parts.push(`Give at most one of: ${group.join(", ")}.`);
  parts.push(`Returns: ${def.output.description}`);
  if (policy && !hasCapability(policy, def.capability)) {
    parts.unshift(`UNAVAILABLE: this sandbox's policy does not grant "${def.capability}"; a call is refused with error code policy-denied.`);
  }
  return parts.join(" ");
}

/** Command kinds that only read the site: state export and the runtime's own facts. */
const READ_ONLY_KINDS: readonly CommandDefinition["kind"][] = ["state", "inspect"];

/**
 * MCP behaviour hints of a command's tool: `readOnlyHint` for state export and inspect commands;
 * the others may change the site (run PHP, send requests), so they are not read-only and keep
 * MCP's default `destructiveHint`. `openWorldHint` is false: the tools act on the sandbox only.
 */
export function commandToolAnnotations(def: CommandDefinition): Record<string, unknown> {
  const readOnly = READ_ONLY_KINDS.includes(def.kind);
  return { title: def.id, readOnlyHint: readOnly, openWorldHint: false };
}

/** The `tools/list` entries of every catalog command, marked unavailable where `policy` denies them. */
export function commandTools(policy: RuntimePolicy | undefined): McpToolDescription[] {
  return catalogToolCommands().map((def) => ({
    name: toolNameForCommand(def.id),
    title: def.id,
    description: commandToolDescription(def, policy),
    inputSchema: commandInputSchema(def),
    outputSchema: stepOutputSchema(),
    annotations: { ...commandToolAnnotations(def), ...(policy && !hasCapability(policy, def.capability) ? { unavailable: true } : {}) },
  }));
}

/** The catalog command of a tool name, or undefined when the tool is not a catalog command. */
export function commandForToolName(name: string): CommandDefinition | undefined {
  return catalogToolCommands().find((d) => toolNameForCommand(d.id) === name);
}

/**
 * Turns a tool call's arguments into the command's checked flat `key=value` args, in catalog
 * order, with the same rules as recipe steps and episode actions: `flattenCommandArgs` (a string
 * is the catalog's string form of any argument, other JSON types only where the argument's format
 * takes them, a base name such as `steps` for its `-json` argument), then `checkCommandInput` (the
 * catalog parser, JSON and browser-script checks, `path` args made absolute against `cwd`). So a
 * call the command would refuse is refused before anything boots or runs.
 * @param cwd - base of relative `code-file` and `@file` values (the MCP server's working directory).
 * @throws WpCodeboxError what those throw (`invalid-argument`, `missing-argument`,
 *   `invalid-json-arg`, `invalid-steps-json`, …), the message naming the tool (`wordpress_run_php:`).
 */
export function toolInputToArgs(def: CommandDefinition, input: Record<string, unknown> | undefined, cwd: string = process.cwd()): string[] {
  const tool = toolNameForCommand(def.id);
  try {
    const flat = flattenCommandArgs(def.id, input ?? {}).args;
    // Catalog order, as the tool schema lists them: the same call always gives the same args.
    const position = (arg: string) => def.args.findIndex((a) => arg.startsWith(`${a.name}=`));
    const ordered = [...flat].sort((x, y) => position(x) - position(y));
    return checkCommandInput(def.id, ordered, cwd).args;
  } catch (error) {
    if (error instanceof WpCodeboxError && error.message.startsWith(`${def.id}: `)) {
      throw new WpCodeboxError(error.code, `${tool}: ${error.message.slice(def.id.length + 2)}`, error.data);
    }
    throw error;
  }
}
