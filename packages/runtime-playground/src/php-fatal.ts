/**
 * Reading PHP fatal errors from what PHP printed or logged, for the cases where its shutdown
 * functions could not record them (the request ran out of memory in deep recursion, so no
 * userland code can run any more), and from a WebAssembly stack overflow, where PHP itself
 * never gets to report anything.
 */
import { BOOT_FAILURE_CAUSE_MAX_CHARS, errorMessage } from "@wp-codebox/runtime-core";
import type { PhpFatal } from "./php-worker-protocol.js";

/**
 * The first fatal error in PHP's output or error log (`PHP Fatal error:  msg in /file.php on line 3`,
 * or the display form `Fatal error: msg in /file.php:3`). Later ones are usually shutdown code
 * failing for the same reason (`in Unknown on line 0`) and are skipped.
 * @returns `undefined` when the text names no fatal error.
 */
export function fatalFromOutput(output: string): PhpFatal | undefined {
  const re = /(?:PHP )?Fatal error: +([\s\S]*?) in (\/[^\n]*?)(?: on line |:)(\d+)/g;
  for (const m of output.matchAll(re)) {
    return { type: 1, message: m[1]!.replace(/^Uncaught /, "Uncaught ").trim(), file: m[2]!, line: Number(m[3]) };
  }
  return undefined;
}

/**
 * How PHP's engine died when php-wasm threw instead of returning: its stack overflowed. Two forms,
 * depending on which stack runs out first: the engine's native stack (`RangeError: Maximum call
 * stack size exceeded`), or PHP's own stack in WebAssembly memory, which then traps with
 * `memory access out of bounds` (with baseline-only compilation, native frames are smaller, so
 * this one comes first).
 * @returns the message to report, or `undefined` when the error is something else.
 */
export function wasmStackOverflow(error: unknown): string | undefined {
  const message = (error as Error | undefined)?.message ?? String(error);
  if (error instanceof RangeError || /Maximum call stack size exceeded|stack overflow/i.test(message)) return "Maximum call stack size exceeded";
  if (error instanceof WebAssembly.RuntimeError && /memory access out of bounds/.test(message)) return "memory access out of bounds";
  return undefined;
}

/**
 * The fatal error reported for a WebAssembly stack overflow: PHP recursed through its own C
 * functions (e.g. `array_map` calling itself) until the engine's stack ran out. PHP had no chance
 * to say where, so `file` is the script or URL that was running and `line` is 0.
 * @param how - what `wasmStackOverflow` returned.
 */
export function wasmStackOverflowFatal(where: string, how: string): PhpFatal {
  return {
    type: 1,
    message: `${how}: unbounded recursion overflowed the PHP engine's WebAssembly stack (PHP could not report the line)`,
    file: where,
    line: 0,
  };
}

/** What PHP printed in a php-wasm `PHP.run()` that ended with a non-zero exit code. */
export interface PhpRunFailure {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Reads php-wasm's `PHPExecutionFailureError` (thrown by `PHP.run()` on a non-zero exit code, which
 * WordPress's boot uses to install and check the site): from its `response`, or, when only the
 * message survived, from the message's `=== Stdout ===` / `=== Stderr ===` template.
 * @returns `undefined` for any other error.
 */
export function phpRunFailure(error: unknown): PhpRunFailure | undefined {
  const response = (error as { response?: { exitCode?: unknown; text?: unknown; errors?: unknown } } | undefined)?.response;
  if (response && typeof response.exitCode === "number") {
    return { exitCode: response.exitCode, stdout: typeof response.text === "string" ? response.text : "", stderr: typeof response.errors === "string" ? response.errors : "" };
  }
  const m = /PHP\.run\(\) failed with exit code (\d+)\.\s*=== Stdout ===\n ?([\s\S]*?)\n*=== Stderr ===\n ?([\s\S]*)$/.exec(errorMessage(error));
  return m ? { exitCode: Number(m[1]), stdout: m[2]!, stderr: m[3]! } : undefined;
}

/**
 * The message of a boot failure: for a PHP run that failed while WordPress booted, what PHP said
 * (its fatal error with file:line, else its output on one line, capped at
 * `BOOT_FAILURE_CAUSE_MAX_CHARS`) instead of php-wasm's template with its empty sections; any
 * other error's own message.
 * @example "PHP exited with code 255: Uncaught RuntimeException: boom (/wordpress/wp-content/mu-plugins/boom.php:2)"
 */
export function bootFailureMessage(error: unknown): string {
  const run = phpRunFailure(error);
  if (!run) return errorMessage(error);
  const head = `PHP exited with code ${run.exitCode}`;
  const fatal = fatalFromOutput(`${run.stderr}\n${run.stdout}`);
  if (fatal) return `${head}: ${fatal.message.split("\n")[0]} (${fatal.file}:${fatal.line})`;
  const said = [run.stderr, run.stdout]
    .flatMap((text) => text.split("\n"))
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ");
  if (said === "") {
    return `${head} and printed nothing: code WordPress loads (a must-use plugin, a drop-in such as db.php or object-cache.php, wp-config.php) probably ended the request with exit or die.`;
  }
  return `${head}: ${said.length > BOOT_FAILURE_CAUSE_MAX_CHARS ? `${said.slice(0, BOOT_FAILURE_CAUSE_MAX_CHARS)}…` : said}`;
}
