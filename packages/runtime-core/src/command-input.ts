/**
 * Offline checks of one command invocation and one observation request: everything that can be
 * known about them without a booted sandbox. `planRun` uses these for `run`, recipe steps and
 * episode steps alike, so a mistake is refused before anything boots, with the same code on every
 * path.
 */
import { existsSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { browserInteractionScriptUsesEvaluate, readBrowserScriptArgs } from "./browser-interaction-script.js";
import { getCommandDefinition, parseCommandArgs, readJsonArg, type CommandDefinition } from "./command-registry.js";
import { WpCodeboxError } from "./errors.js";
import type { ObservationSpec } from "./runtime.js";
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
 * Turns structured args into flat `key=value` strings. A string array is kept as is. In an
 * object, strings, numbers and booleans become `key=value`; an object or array value for `k`
 * becomes `k-json=<inline JSON>` (or `k=<JSON>` when `k` already ends in `-json`). A string value
 * under the base name of a JSON-valued argument (`"steps": "@flow.json"` when the command has
 * `steps-json` and no `steps`) goes to that argument, since that is what people write first.
 * @param command - command id; unknown ids get no base-name mapping.
 * @returns the flat args and, per arg, the key it came from (for error pointers).
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
  const jsonArg = (key: string): boolean =>
    definition !== undefined && !definition.args.some((a) => a.name === key) && definition.args.some((a) => a.name === `${key}-json` && a.format === "json");
  const out: string[] = [];
  const keys: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (value !== null && typeof value === "object") out.push(`${key.endsWith("-json") ? key : `${key}-json`}=${JSON.stringify(value)}`);
    else if (typeof value === "string" && jsonArg(key)) out.push(`${key}-json=${value}`);
    else out.push(`${key}=${String(value)}`);
    keys.push(key);
  }
  return { args: out, keys };
}

/**
 * Checks one command invocation completely without a sandbox: the command exists and is runnable,
 * the args parse (`parseCommandArgs`), JSON args are readable JSON, `path` args name existing
 * files, a browser script is valid, and a state export asks for nothing its redaction forbids.
 * @param cwd - base of relative `@file` and path args.
 * @returns the args with file references made absolute, so the plan no longer depends on `cwd`.
 * @throws WpCodeboxError `unknown-command`, `invalid-argument`, `missing-argument`,
 *   `invalid-json-arg`, `invalid-steps-json`, `invalid-state-request`.
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
      if (!existsSync(file) || !statSync(file).isFile()) {
        throw new WpCodeboxError("invalid-argument", `${command}: ${spec.name} ${value} is not a file (resolved to ${file}). Check the path.`, { command, argument: spec.name, path: file });
      }
      parsed[spec.name] = file;
    }
  }
  let usesEvaluate = false;
  if (definition.kind === "browser" && (parsed["steps-json"] !== undefined || parsed["actions-json"] !== undefined)) {
    usesEvaluate = browserInteractionScriptUsesEvaluate(readBrowserScriptArgs(parsed, cwd));
  }
  if (definition.kind === "state") normalizeWordPressStateRequest(wordPressStateRequestFromArgs(parsed));
  // Keep the caller's order; only values changed.
  const resolvedArgs = args.map((raw) => {
    const key = raw.slice(0, raw.indexOf("="));
    return `${key}=${parsed[key]}`;
  });
  return { command, args: resolvedArgs, parsed, capability: definition.capability, usesEvaluate };
}

/** Every observation type a runtime answers (`runtime.observe`, episode `observe`). */
export const OBSERVATION_TYPES = ["runtime-info", "mounts", "command-result", "wordpress-state", "http-response", "browser-result", "runtime-events", "runtime-logs"] as const;
export type ObservationType = (typeof OBSERVATION_TYPES)[number];

/**
 * Checks an observation request without a sandbox: a known type, and the fields that type reads
 * (`wordpress-state` through `normalizeWordPressStateRequest`, so identity user fields without
 * `redaction: "none"` are refused here; string fields of `command-result` and `http-response`).
 * @throws WpCodeboxError `observation-unsupported` (unknown type), `invalid-state-request`,
 *   `invalid-argument`, `missing-argument`.
 */
export function checkObservationRequest(spec: ObservationSpec): void {
  if (!(OBSERVATION_TYPES as readonly string[]).includes(spec.type)) {
    throw new WpCodeboxError("observation-unsupported", `Unknown observation type "${spec.type}". Use one of: ${OBSERVATION_TYPES.join(", ")}.`, {
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
