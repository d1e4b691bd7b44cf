/**
 * MCP tools made from the site's registered abilities (WordPress 6.9+ Abilities API): one tool per
 * ability, run through the `wordpress.ability` command (so the policy and the trace treat it like
 * every command). Tool name: the ability name with its `/` as `__` (`core/get-site-info` →
 * `core__get-site-info`): ability names are lowercase letters, digits and dashes around one `/`,
 * so the mapping is reversible and never meets a catalog tool (those have no `__`), and the name
 * stays within the `[A-Za-z0-9_-]` that strict function-calling clients accept.
 */
import { ABILITY_NAME_PATTERN, getCommandDefinition, hasCapability, isValidJsonSchema, jsonValueTooDeep, MAX_JSON_DEPTH, WpCodeboxError, type AbilityDescription, type RuntimePolicy } from "@wp-codebox/runtime-core";
import { stepOutputSchema } from "./tool-output-schemas.js";
import type { McpToolDescription, ToolInputSchema } from "./tool-schemas.js";

/** The command every ability tool runs. */
export const ABILITY_COMMAND = "wordpress.ability";

/** Property that carries the input of an ability whose input is not an object (a string, a list). */
export const WRAPPED_INPUT_PROPERTY = "input";

/** The MCP tool name of an ability: `/` becomes `__`. */
export function toolNameForAbility(abilityName: string): string {
  return abilityName.replace("/", "__");
}

/** The ability name of a tool name, or undefined when the name is not an ability tool's. */
export function abilityForToolName(toolName: string): string | undefined {
  const name = toolName.replace("__", "/");
  return name !== toolName && ABILITY_NAME_PATTERN.test(name) ? name : undefined;
}

/** Whether an ability's input schema is used as the tool's own (an object schema) or wrapped in `{ input }`. */
function takesObject(schema: Record<string, unknown>): boolean {
  return schema.type === "object";
}

/**
 * The tool input schema of an ability: its own input schema when that is an object schema;
 * otherwise `{ input: <its schema> }` (MCP tool inputs are objects); no properties when it takes
 * no input. A schema that is not valid JSON Schema is replaced by "any object".
 */
export function abilityInputSchema(ability: AbilityDescription): ToolInputSchema {
  const schema = isValidJsonSchema(ability.inputSchema) ? ability.inputSchema : {};
  if (Object.keys(schema).length === 0) return { type: "object", properties: {}, additionalProperties: false };
  if (takesObject(schema)) {
    const { type: _type, properties, additionalProperties, required, ...rest } = schema as Record<string, unknown>;
    return {
      ...rest,
      type: "object",
      properties: (properties ?? {}) as ToolInputSchema["properties"],
      ...(Array.isArray(required) && required.length ? { required: required as string[] } : {}),
      additionalProperties: additionalProperties === undefined ? true : (additionalProperties as boolean),
    };
  }
  return { type: "object", properties: { [WRAPPED_INPUT_PROPERTY]: schema }, required: [WRAPPED_INPUT_PROPERTY], additionalProperties: false };
}

/**
 * The ability's input from a tool call's arguments (see `abilityInputSchema`): the arguments
 * themselves for an object schema, `arguments.input` for a wrapped one, none (null) when the
 * ability takes no input and none was given.
 */
export function abilityInputFromArguments(ability: AbilityDescription | undefined, args: Record<string, unknown>): unknown {
  const schema = ability && isValidJsonSchema(ability.inputSchema) ? ability.inputSchema : {};
  if (Object.keys(schema).length && !takesObject(schema)) return args[WRAPPED_INPUT_PROPERTY] ?? null;
  return Object.keys(args).length === 0 && Object.keys(schema).length === 0 ? null : args;
}

/**
 * The `wordpress.ability` args of a call: `name=`, and `input-json=` unless the input is null.
 * @throws WpCodeboxError `invalid-json-arg` when the input nests deeper than `MAX_JSON_DEPTH` (it would overflow `JSON.stringify`).
 */
export function abilityCommandArgs(abilityName: string, input: unknown): string[] {
  if (jsonValueTooDeep(input)) {
    throw new WpCodeboxError("invalid-json-arg", `${abilityName}: the ability's input nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`, { name: abilityName });
  }
  return [`name=${abilityName}`, ...(input === null || input === undefined ? [] : [`input-json=${JSON.stringify(input)}`])];
}

const flag = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);

/** The `tools/list` entries of the site's abilities, marked unavailable where `policy` denies `wordpress.ability`. */
export function abilityTools(abilities: readonly AbilityDescription[], policy: RuntimePolicy | undefined): McpToolDescription[] {
  const capability = getCommandDefinition(ABILITY_COMMAND).capability;
  const denied = policy !== undefined && !hasCapability(policy, capability);
  return abilities.map((ability) => {
    const readOnly = flag(ability.annotations.readonly);
    const destructive = flag(ability.annotations.destructive);
    const idempotent = flag(ability.annotations.idempotent);
    const outputSchema = isValidJsonSchema(ability.outputSchema) ? ability.outputSchema : {};
    const parts = [
      ability.description || ability.label,
      `WordPress ability ${ability.name}, run as the administrator through ${ABILITY_COMMAND}; its output is structuredContent.json.`,
    ];
    if (denied) parts.unshift(`UNAVAILABLE: this sandbox's policy does not grant "${capability}"; a call is refused with error code policy-denied.`);
    return {
      name: toolNameForAbility(ability.name),
      title: ability.label || ability.name,
      description: parts.join(" "),
      inputSchema: abilityInputSchema(ability),
      outputSchema: stepOutputSchema(outputSchema),
      annotations: {
        title: ability.label || ability.name,
        ...(readOnly !== undefined ? { readOnlyHint: readOnly } : {}),
        ...(destructive !== undefined ? { destructiveHint: destructive } : {}),
        ...(idempotent !== undefined ? { idempotentHint: idempotent } : {}),
        openWorldHint: false,
        ...(denied ? { unavailable: true } : {}),
      },
    };
  });
}
