/**
 * Offline checks of one command invocation and one observation request: everything that can be
 * known about them without a booted sandbox. `planRun` uses these for `run`, recipe steps and
 * episode steps alike, so a mistake is refused before anything boots, with the same code on every
 * path.
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { browserInteractionScriptUsesEvaluate, readBrowserScriptArgs } from "./browser-interaction-script.js";
import { getCommandDefinition, parseCommandArgs, readJsonArg, unknownArgumentError, type CommandArgument, type CommandDefinition } from "./command-registry.js";
import { WpCodeboxError, quoteValue } from "./errors.js";
import { checkInputFile, pathArgumentKind } from "./input-files.js";
import type { ObservationSpec } from "./runtime.js";
import { parseWpCliCommand } from "./wp-cli-command.js";
import { checkAbilityName } from "./abilities.js";
import { gotText, jsonPointerToken, type SchemaIssue } from "./schema-validation.js";
import { jsonValueTooDeep, MAX_JSON_DEPTH } from "./json-syntax.js";
import { normalizeWordPressStateRequest, wordPressStateRequestFromArgs } from "./wordpress-state.js";

/** A command invocation that passed every offline check. */
export interface CheckedCommandInput {
  command: string;
  /** `key=value` args as `execute` receives them: `@file` JSON references and `path` args absolute. */
  args: string[];
  /** key → value of `args`. */
  parsed: Record<string, string>;
  /** The capability the policy must grant to run it. */
  capability: string;
  /** True when it is a browser script with an `evaluate` step (needs the evaluate capability). */
  usesEvaluate: boolean;
}

/**
 * Turns structured args (a recipe step's, an episode action's or an MCP tool call's object) into
 * flat `key=value` strings, checking each value's JSON type against its argument's catalog format,
 * so that a number never reaches PHP as source text and every caller refuses the same values:
 * - a string is taken as the catalog's string form of any argument (`"5"`, `"true"`, `"a,b"`);
 * - `integer`: an integer; `boolean`: true or false; `duration`: a whole number of milliseconds;
 * - `json`: an object or array (written as inline JSON); `list`: an array of strings without commas;
 * - every other format (text, path, url, enum, actor, viewport): a string only;
 * - `null` is "not given".
 * A value under the base name of a JSON argument (`"steps": [...]` or `"steps": "@flow.json"` when
 * the command has `steps-json` and no `steps`) goes to that argument, since that is what people
 * write first. A key the command does not have is refused with the list of valid keys (a key
 * such as `"code=<?php …"` would otherwise smuggle text into another argument). A string array
 * is kept as is.
 * @param command - command id; for an unknown id there are no type checks (its error comes from
 *   the catalog) and an object or array value for `k` becomes `k-json=<inline JSON>`.
 * @returns the flat args and, per arg, the key it came from (for error pointers).
 * @throws WpCodeboxError `invalid-argument` with `data.argument` (the key as given) for an
 *   unknown key, a key given twice (`steps` and `steps-json`), or a value of the wrong JSON type.
 */
export function flattenCommandArgs(command: string, args: readonly string[] | Record<string, unknown> | undefined): { args: string[]; keys: string[] } {
  if (args === undefined) return { args: [], keys: [] };
  if (Array.isArray(args)) return { args: [...args], keys: args.map((_, i) => String(i)) };
  let definition: CommandDefinition | undefined;
  try {
    definition = getCommandDefinition(command);
  } catch {
    definition = undefined;
  }
  const out: string[] = [];
  const keys: string[] = [];
  const given = new Map<string, string>();
  for (const [key, value] of Object.entries(args)) {
    if (value === null || value === undefined) continue;
    if (definition === undefined) {
      // A key with "=" would move its value into another argument once flattened.
      if (key.includes("=") || key === "") throw new WpCodeboxError("invalid-argument", `${command}: "${key}" is not an argument name.`, { command, argument: key });
      out.push(`${typeof value === "object" && !key.endsWith("-json") ? `${key}-json` : key}=${typeof value === "object" ? jsonArgumentText(command, key, value) : String(value)}`);
      keys.push(key);
      continue;
    }
    const spec = argumentOf(definition, key);
    if (!spec) throw unknownArgumentError(definition, key);
    const twice = given.get(spec.name);
    if (twice !== undefined) {
      throw new WpCodeboxError("invalid-argument", `${command}: ${quoteValue(twice)} and ${quoteValue(key)} are the same argument (${spec.name}); give it once.`, { command, argument: key });
    }
    given.set(spec.name, key);
    out.push(`${spec.name}=${argumentText(command, key, spec, value)}`);
    keys.push(key);
  }
  return { args: out, keys };
}

/** An object or array argument as inline JSON; nesting past {@link MAX_JSON_DEPTH} is `invalid-json-arg`, as it is in a JSON file, not a stack overflow. */
function jsonArgumentText(command: string, key: string, value: object | null): string {
  if (jsonValueTooDeep(value)) {
    throw new WpCodeboxError("invalid-json-arg", `${command}: argument "${key}": arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels.`, { command, argument: key });
  }
  return JSON.stringify(value);
}

/** The catalog argument a structured key names: itself, or the `-json` argument of its base name. */
function argumentOf(definition: CommandDefinition, key: string): CommandArgument | undefined {
  return definition.args.find((a) => a.name === key) ?? definition.args.find((a) => a.name === `${key}-json` && a.format === "json");
}

function argumentText(command: string, key: string, spec: CommandArgument, value: unknown): string {
  if (typeof value === "string") return value;
  const bad = (expected: string): never => {
    throw new WpCodeboxError("invalid-argument", `${command}: argument "${key}" must be ${expected}${gotText(value)}.`, {
      command,
      argument: key,
      expected,
    });
  };
  switch (spec.format) {
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value) ? String(value) : bad("an integer");
    case "boolean":
      return typeof value === "boolean" ? String(value) : bad("true or false");
    case "duration":
      return typeof value === "number" && Number.isInteger(value) && value >= 0 ? String(value) : bad('a duration string such as "30s" or a whole number of milliseconds');
    case "json":
      return typeof value === "object" ? jsonArgumentText(command, key, value) : bad("a JSON object or array, or a string holding JSON or @file");
    case "list":
      if (Array.isArray(value) && value.every((v) => typeof v === "string" && !v.includes(","))) return value.join(",");
      return bad("an array of strings (without commas) or a comma-separated string");
    default:
      return bad(spec.format === "enum" && spec.values ? `a string, one of ${spec.values.map((v) => `"${v}"`).join(", ")}` : "a string");
  }
}

/**
 * A failed check of structured args (`flattenCommandArgs`, `checkCommandInput`) as issues pointed
 * into the object the args came from: at the key an error is about (the key as written, also for
 * a base name such as `steps`), each browser-script problem at its step inside that key, and an
 * error about no single argument (a missing one of a group) at the args object itself.
 * @param base - pointer of the args object, e.g. `/steps/2/args`.
 * @param flat - what `flattenCommandArgs` made of it (empty when it failed there).
 * @returns `[{ path, message }]`; messages are `code: message`, browser-script problems their own.
 */
export function commandArgsIssues(error: WpCodeboxError, base: string, flat: { args: readonly string[]; keys: readonly string[] } = { args: [], keys: [] }): SchemaIssue[] {
  const argument = typeof error.data.argument === "string" && !error.data.argument.includes("|") ? error.data.argument : undefined;
  const index = argument === undefined ? -1 : flat.args.findIndex((a) => a.startsWith(`${argument}=`));
  const key = index >= 0 ? flat.keys[index] : argument;
  const at = key === undefined ? base : `${base}/${jsonPointerToken(key)}`;
  const inner = error.data.issues;
  if (error.code === "invalid-steps-json" && Array.isArray(inner)) {
    const within = typeof error.data.within === "string" ? error.data.within : "";
    return (inner as SchemaIssue[]).map((issue) => ({ path: `${at}${within}${issue.path === "/" ? "" : issue.path}`, message: issue.message }));
  }
  return [{ path: at, message: `${error.code}: ${error.message}` }];
}

/**
 * Checks one command invocation completely without a sandbox: the command exists and is runnable,
 * the args parse (`parseCommandArgs`), JSON args are readable JSON, `path` args name existing
 * files, a browser script is valid, and a state export asks for nothing its redaction forbids.
 * @param cwd - base of relative `@file` and path args.
 * @returns the args with file references made absolute, so the plan no longer depends on `cwd`.
 * @throws WpCodeboxError `unknown-command`, `invalid-argument`, `missing-argument`,
 *   `invalid-json-arg`, `invalid-steps-json`, `invalid-state-request`, `wp-cli-unsupported`, `invalid-argument` (a malformed ability name), `input-file-invalid` and
 *   `input-file-too-large` (an `@file` or `path` argument that is not a regular file or is over its cap).
 */
export function checkCommandInput(command: string, args: readonly string[], cwd: string): CheckedCommandInput {
  const parsed = parseCommandArgs(command, args);
  const definition = getCommandDefinition(command);
  const absolute = (p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
  for (const spec of definition.args) {
    const value = parsed[spec.name];
    if (value === undefined) continue;
    if (spec.format === "json") {
      readJsonArg(value, cwd);
      if (value.startsWith("@")) parsed[spec.name] = `@${absolute(value.slice(1))}`;
    } else if (spec.format === "path") {
      const file = absolute(value);
      if (!existsSync(file)) {
        throw new WpCodeboxError("invalid-argument", `${command}: ${spec.name} ${quoteValue(value)} is not a file (resolved to ${quoteValue(file)}). Check the path.`, { command, argument: spec.name, path: file });
      }
      checkInputFile(file, pathArgumentKind(spec.name));
      parsed[spec.name] = file;
    }
  }
  let usesEvaluate = false;
  if (definition.kind === "browser" && (parsed["steps-json"] !== undefined || parsed["actions-json"] !== undefined)) {
    usesEvaluate = browserInteractionScriptUsesEvaluate(readBrowserScriptArgs(parsed, cwd));
  }
  if (definition.kind === "state") normalizeWordPressStateRequest(wordPressStateRequestFromArgs(parsed));
  if (command === "wordpress.wp-cli" && parsed.command !== undefined) parseWpCliCommand(parsed.command);
  if (command === "wordpress.ability" && parsed.name !== undefined) checkAbilityName(parsed.name);
  // Keep the caller's order; only values changed.
  const resolvedArgs = args.map((raw) => {
    const key = raw.slice(0, raw.indexOf("="));
    return `${key}=${parsed[key]}`;
  });
  return { command, args: resolvedArgs, parsed, capability: definition.capability, usesEvaluate };
}

/** Every observation type a runtime answers (`runtime.observe`, episode `observe`). */
export const OBSERVATION_TYPES = ["runtime-info", "mounts", "command-result", "wordpress-state", "http-response", "browser-result", "runtime-events", "runtime-logs", "abilities"] as const;

/**
 * Checks an observation request without a sandbox: a known type, and the fields that type reads
 * (`wordpress-state` through `normalizeWordPressStateRequest`, so identity user fields without
 * `redaction: "none"` are refused here; string fields of `command-result` and `http-response`).
 * @throws WpCodeboxError `observation-unsupported` (unknown type), `invalid-state-request`,
 *   `invalid-argument`, `missing-argument`.
 */
export function checkObservationRequest(spec: ObservationSpec): void {
  if (!(OBSERVATION_TYPES as readonly string[]).includes(spec.type)) {
    throw new WpCodeboxError("observation-unsupported", `Unknown observation type ${quoteValue(spec.type)}. Use one of: ${OBSERVATION_TYPES.join(", ")}.`, {
      type: spec.type,
      supported: [...OBSERVATION_TYPES],
    });
  }
  const strings = (keys: string[]) => {
    for (const key of keys) {
      if (spec[key] !== undefined && typeof spec[key] !== "string") {
        throw new WpCodeboxError("invalid-argument", `Observation ${spec.type}: "${key}" must be a string.`, { type: spec.type, key });
      }
    }
  };
  if (spec.type === "wordpress-state") normalizeWordPressStateRequest(spec);
  else if (spec.type === "command-result") strings(["id"]);
  else if (spec.type === "http-response") {
    strings(["path", "url", "method", "as", "body"]);
    if (spec.path === undefined && spec.url === undefined) {
      throw new WpCodeboxError("missing-argument", 'Observation http-response needs "path" (e.g. "/wp-json/") or "url".', { type: spec.type, key: "path" });
    }
  }
}

/** One command the session will execute, with its args resolved (file references absolute). */
export interface PlannedAction {
  /** Where it came from: `/command` for `run`, `/steps/2` in a recipe or episode script. */
  pointer: string;
  command: string;
  args: string[];
  /** Undefined: the command's default (`defaultTimeoutMs` in the catalog). */
  timeoutMs?: number;
}
