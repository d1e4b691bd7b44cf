/**
 * The WordPress Abilities API (WordPress 6.9+) as the sandbox sees it: the shape of an ability
 * name, the facts the `abilities` observation reports, and the JSON Schema clean-up PHP needs
 * (an empty PHP array prints as `[]` where a schema means `{}`).
 */
import { WpCodeboxError, quoteValue } from "./errors.js";

/** An ability name as WordPress registers it: `namespace/ability-name`, lowercase letters, digits, dashes. */
export const ABILITY_NAME_PATTERN = /^[a-z0-9-]+\/[a-z0-9-]+$/;

/**
 * Longest ability name this project runs: its MCP tool name (`/` as `__`) then stays within the
 * 128 characters MCP clients accept for a tool name.
 */
export const ABILITY_NAME_MAX_CHARS = 127;

/** Whether `name` is an ability name this project can run: the pattern, at most `ABILITY_NAME_MAX_CHARS`. */
export function isAbilityName(name: string): boolean {
  return name.length <= ABILITY_NAME_MAX_CHARS && ABILITY_NAME_PATTERN.test(name);
}

/** The first WordPress release with the Abilities API. */
export const ABILITIES_API_MIN_WORDPRESS = "6.9";

/** One registered ability, as the `abilities` observation reports it. */
export interface AbilityDescription {
  name: string;
  label: string;
  description: string;
  /** The ability's input JSON Schema (`{}` when it takes none). */
  inputSchema: Record<string, unknown>;
  /** The ability's output JSON Schema (`{}` when it declares none). */
  outputSchema: Record<string, unknown>;
  /** `meta.annotations` of the ability: `readonly`, `destructive`, `idempotent` (booleans or null). */
  annotations: Record<string, unknown>;
}

/** Data of the `abilities` observation: `available` false (and no abilities) before WordPress 6.9. */
export interface AbilitiesObservation {
  available: boolean;
  abilities: AbilityDescription[];
}

/**
 * Checks an ability name before boot: a name WordPress would refuse to register can never be run,
 * and one longer than `ABILITY_NAME_MAX_CHARS` could not be an MCP tool.
 * @throws WpCodeboxError `invalid-argument` naming the expected form (the name quoted, cut to 200 characters).
 */
export function checkAbilityName(name: string): void {
  if (name.length > ABILITY_NAME_MAX_CHARS) {
    throw new WpCodeboxError(
      "invalid-argument",
      `wordpress.ability: name ${quoteValue(name, 60)} is ${name.length} characters long; an ability name has at most ${ABILITY_NAME_MAX_CHARS}.`,
      { command: "wordpress.ability", argument: "name", length: name.length },
    );
  }
  if (!ABILITY_NAME_PATTERN.test(name)) {
    throw new WpCodeboxError(
      "invalid-argument",
      `wordpress.ability: name ${quoteValue(name)} is not an ability name: it is "namespace/ability-name" in lowercase letters, digits and dashes, e.g. core/get-site-info.`,
      { command: "wordpress.ability", argument: "name" },
    );
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Keywords whose value is a map of name → schema (`[]` from PHP means an empty map). */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions", "$defs", "dependentSchemas"]);

/**
 * A JSON Schema as PHP printed it, made a JSON Schema again: an empty array where a map of
 * schemas or an object default belongs becomes `{}`, a schema that is an empty array becomes
 * `{}` (any value), and WordPress's per-property `required: true` (the REST API's draft-03 form)
 * becomes the parent's `required` list. Nested schemas are walked; other values are kept.
 * @param schema - decoded JSON printed by `json_encode` of a PHP schema array.
 */
export function schemaFromPhp(schema: unknown): Record<string, unknown> {
  if (Array.isArray(schema) && schema.length === 0) return {};
  if (!isObject(schema)) return {};
  // Read before the walk: each property's own walk drops its boolean `required`.
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
  if (isObject(schema.properties)) {
    for (const [name, child] of Object.entries(schema.properties)) if (isObject(child) && child.required === true) required.add(name);
  }
  const out = walkSchema(schema);
  delete out.required;
  if (required.size) out.required = [...required];
  return out;
}

function walkSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(key)) {
      const map: Record<string, unknown> = {};
      if (isObject(value)) for (const [k, v] of Object.entries(value)) map[k] = schemaFromPhp(v);
      out[key] = map;
    } else if (key === "items" || key === "additionalProperties" || key === "not" || key === "additionalItems" || key === "contains") {
      out[key] = typeof value === "boolean" ? value : Array.isArray(value) && value.length > 0 ? value.map(schemaFromPhp) : schemaFromPhp(value);
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf") {
      out[key] = Array.isArray(value) ? value.map(schemaFromPhp) : value;
    } else if (key === "default" && Array.isArray(value) && value.length === 0 && schema.type === "object") {
      out[key] = {};
    } else {
      out[key] = value;
    }
  }
  return out;
}
