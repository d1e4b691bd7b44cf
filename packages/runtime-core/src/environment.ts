/**
 * The environment variables a sandbox's PHP sees (`--env`, `--secret-env`, a recipe's
 * `runtimeEnv` / `secretEnv`, an episode script's `env` / `secretEnv`): what a name may be, what a
 * value may hold, and the one place secret values are read from the caller's environment.
 */
import { WpCodeboxError } from "./errors.js";

/** An environment variable name: letters, digits and `_`, not starting with a digit. */
export const ENV_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";
const ENV_NAME = new RegExp(ENV_NAME_PATTERN);

/** True when `name` can name an environment variable (`ENV_NAME_PATTERN`). */
export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/** Index of the first unpaired UTF-16 surrogate in `s` (text with no UTF-8 form), or -1. */
export function loneSurrogateIndex(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

/**
 * The problems of one environment variable, or undefined when it is fine: the name must match
 * `ENV_NAME_PATTERN`; the value must be a string without NUL (no process environment can hold
 * one) and without a lone UTF-16 surrogate (it has no UTF-8 form, so PHP could not receive it
 * unchanged).
 */
export function environmentVariableProblem(name: string, value: unknown): string | undefined {
  if (!isEnvName(name)) return "an environment variable name is letters, digits and _ and does not start with a digit.";
  if (typeof value !== "string") return "the value must be a string.";
  if (value.includes("\0")) return "the value contains a NUL byte, which no process environment can hold.";
  const bad = loneSurrogateIndex(value);
  if (bad >= 0) {
    return `the value contains a lone UTF-16 surrogate (U+${value.charCodeAt(bad).toString(16).toUpperCase()} at index ${bad}); it has no UTF-8 form, so PHP cannot receive it unchanged. Send well-formed Unicode text.`;
  }
  return undefined;
}

/**
 * Checks environment variables PHP will see (see `environmentVariableProblem`).
 * @param flag - names the source in the message, e.g. `"--env"`.
 * @throws WpCodeboxError `invalid-argument` `"<flag> <name>: <problem>"` for the first bad variable.
 */
export function assertEnvironment(env: Record<string, unknown>, flag: string): void {
  for (const [name, value] of Object.entries(env)) {
    const problem = environmentVariableProblem(name, value);
    if (problem) throw new WpCodeboxError("invalid-argument", `${flag} ${JSON.stringify(name).slice(1, -1)}: ${problem}`, { name });
  }
}

/**
 * Reads the values of secret environment variables: the one lookup every path uses.
 * @returns `values` (name → value) and the `missing` names (unset in `processEnv`).
 */
export function readSecretEnv(names: readonly string[], processEnv: NodeJS.ProcessEnv): { values: Record<string, string>; missing: string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    const value = processEnv[name];
    if (value === undefined) missing.push(name);
    else values[name] = value;
  }
  return { values, missing };
}
