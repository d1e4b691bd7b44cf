/**
 * `--define NAME=VALUE` / `runtime.defines`: wp-config.php constants a sandbox sets or overrides.
 * Values are data (JSON scalars), never PHP code: the backend hands them to PHP as data. Names the
 * sandbox itself owns (the database, paths, the site URL, how the network policy reaches PHP) are
 * refused, so a define can neither break the boot nor widen the policy.
 */
import { Type } from "@sinclair/typebox";
import { WpCodeboxError } from "./errors.js";

/** A constant's value: what PHP's `define()` gets (string, int/float, bool or null). */
export type WpDefineValue = string | number | boolean | null;

/** PHP constant names this project accepts: letters, digits and `_`, not starting with a digit. */
export const DEFINE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Exact names the sandbox owns. */
const RESERVED_NAMES = new Set([
  "ABSPATH",
  "WPINC",
  "WP_CONTENT_DIR",
  "WP_CONTENT_URL",
  "WP_PLUGIN_DIR",
  "WP_PLUGIN_URL",
  "WPMU_PLUGIN_DIR",
  "WPMU_PLUGIN_URL",
  "WP_HOME",
  "WP_SITEURL",
  "WP_HTTP_BLOCK_EXTERNAL",
  "WP_ACCESSIBLE_HOSTS",
  "WP_TEMP_DIR",
  "WP_LANG_DIR",
  "TRUE",
  "FALSE",
  "NULL",
  // PHP's own; the stream constants are defined by run-php's wrapper.
  "STDIN",
  "STDOUT",
  "STDERR",
  "DIRECTORY_SEPARATOR",
  "PATH_SEPARATOR",
]);

/** Prefixes the sandbox or PHP own: the database (`DB_*`, SQLite's), this project's own, PHP's predefined. */
const RESERVED_PREFIXES = ["DB_", "SQLITE_", "WP_CODEBOX_", "PHP_", "E_", "__"];

/**
 * Why `name` cannot be defined, or undefined when it can.
 * @example defineNameProblem("DB_NAME") // "DB_NAME is reserved: …"
 */
export function defineNameProblem(name: string): string | undefined {
  if (!DEFINE_NAME_PATTERN.test(name)) return `"${name}" is not a constant name (letters, digits and _, not starting with a digit)`;
  const upper = name.toUpperCase();
  if (RESERVED_NAMES.has(upper) || RESERVED_PREFIXES.some((p) => upper.startsWith(p))) {
    return `${name} is reserved: the sandbox sets it itself (the database, paths, the site URL, the network policy, PHP's own constants cannot be overridden)`;
  }
  return undefined;
}

/** Why `value` cannot be a constant's value, or undefined. */
function defineValueProblem(value: unknown): string | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : "a number must be finite";
  return `the value must be a string, number, boolean or null (got ${Array.isArray(value) ? "an array" : typeof value})`;
}

/**
 * Reads the VALUE of `--define NAME=VALUE`: a JSON scalar (`true`, `false`, `null`, `42`, `1.5`,
 * `"quoted"`) is that value; anything else is the text itself (`--define WP_ENVIRONMENT_TYPE=local`).
 */
export function parseDefineValue(text: string): WpDefineValue {
  const trimmed = text.trim();
  if (trimmed === "true") return true;
  if (trimmed === "false") return false;
  if (trimmed === "null") return null;
  if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(trimmed)) {
    const n = Number(trimmed);
    if (Number.isFinite(n)) return n;
  }
  if (trimmed.startsWith('"')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === "string") return parsed;
    } catch {
      // not a JSON string: the text itself
    }
  }
  return text;
}

/**
 * Parses repeated `--define NAME=VALUE` flags into a record (a later flag for the same name wins).
 * @throws WpCodeboxError `invalid-define` naming every bad flag (`data.problems: [{ flag, message }]`).
 */
export function parseDefineFlags(flags: readonly string[]): Record<string, WpDefineValue> {
  const defines: Record<string, WpDefineValue> = {};
  const problems: { flag: string; message: string }[] = [];
  for (const flag of flags) {
    const eq = flag.indexOf("=");
    if (eq <= 0) {
      problems.push({ flag, message: "expected NAME=VALUE, e.g. --define WP_ENVIRONMENT_TYPE=local" });
      continue;
    }
    const name = flag.slice(0, eq);
    const problem = defineNameProblem(name);
    if (problem) problems.push({ flag, message: problem });
    else defines[name] = parseDefineValue(flag.slice(eq + 1));
  }
  if (problems.length) {
    throw new WpCodeboxError("invalid-define", problems.map((p) => `--define ${p.flag}: ${p.message}.`).join(" "), { problems });
  }
  return defines;
}

/**
 * Every problem of a defines record (a recipe's or episode script's `runtime.defines`), as
 * `{ name, message }`; empty when it is valid.
 */
export function defineProblems(defines: unknown): { name: string; message: string }[] {
  if (defines === null || typeof defines !== "object" || Array.isArray(defines)) return [{ name: "", message: "defines must be an object of NAME: value" }];
  const problems: { name: string; message: string }[] = [];
  for (const [name, value] of Object.entries(defines)) {
    const problem = defineNameProblem(name) ?? defineValueProblem(value);
    if (problem) problems.push({ name, message: problem });
  }
  return problems;
}

/**
 * Checks a defines record.
 * @throws WpCodeboxError `invalid-define` naming every bad entry (`data.problems`).
 */
export function assertDefines(defines: unknown, source = "defines"): asserts defines is Record<string, WpDefineValue> {
  const problems = defineProblems(defines);
  if (problems.length) {
    throw new WpCodeboxError("invalid-define", problems.map((p) => `${source}${p.name ? `.${p.name}` : ""}: ${p.message}.`).join(" "), { problems });
  }
}

/** JSON shape of `runtime.defines` in recipes and episode scripts (names are checked again by `defineProblems`). */
export const WP_DEFINES_SCHEMA = Type.Record(Type.String({ pattern: DEFINE_NAME_PATTERN.source }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
  description: "wp-config.php constants to set or override: NAME → string, number, boolean or null (data, never PHP code). DB_*, ABSPATH, WP_HOME, WP_SITEURL and other names the sandbox owns are refused.",
});
