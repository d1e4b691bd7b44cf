/**
 * Reading PHP fatal errors from what PHP printed or logged, for the cases where its shutdown
 * functions could not record them (the request ran out of memory in deep recursion, so no
 * userland code can run any more), and from a crash of PHP's engine (a WebAssembly trap), where
 * PHP itself never gets to report anything.
 */
import { BOOT_FAILURE_CAUSE_MAX_CHARS, errorMessage, fatalFromPhpOutput } from "@wp-codebox/runtime-core";
import type { PhpFatal } from "./php-worker-protocol.js";

/** The first fatal error in PHP's output or error log (`fatalFromPhpOutput`, shared by the backends). */
export function fatalFromOutput(output: string): PhpFatal | undefined {
  return fatalFromPhpOutput(output);
}

/**
 * The fatal error reported when PHP's engine died under a request: php-wasm threw a WebAssembly
 * trap instead of returning, so PHP itself never got to report anything; `file` is the script or
 * URL that was running and `line` is 0. Most traps are a stack overflow: PHP recursed through its
 * own C functions (e.g. `array_map` calling itself) until a stack ran out, either the engine's
 * native stack (`RangeError: Maximum call stack size exceeded`) or PHP's stack in WebAssembly
 * memory, which first runs over PHP's globals and then traps where that led (`memory access out
 * of bounds`, `null function or function signature mismatch`, …, or a longjmp with nowhere to go:
 * Emscripten throws the number `Infinity` for it).
 * @returns `undefined` when `error` is not a trap (php-wasm's own failure; the caller rethrows it).
 */
export function engineCrashFatal(error: unknown, where: string): PhpFatal | undefined {
  const message = (error as Error | undefined)?.message ?? String(error);
  let what: string;
  if (error instanceof RangeError || /Maximum call stack size exceeded|stack overflow/i.test(message)) {
    what = "Maximum call stack size exceeded: unbounded recursion overflowed the PHP engine's WebAssembly stack";
  } else if (error instanceof WebAssembly.RuntimeError && /^Aborted\(/.test(message)) {
    // php-wasm stopped on purpose. "missing function": the script reached a C function this
    // build was linked without (PHP's Fibers do: their stack switching is not in php-wasm 3.1).
    const reason = /^Aborted\((.*?)\)(?:\. Build with|$)/s.exec(message)?.[1] ?? message;
    what = /^missing function/.test(reason)
      ? `php-wasm aborted PHP (${reason}): the script used something this PHP build does not have, such as Fibers`
      : `php-wasm aborted PHP (${reason})`;
  } else if (error instanceof WebAssembly.RuntimeError) {
    what = /memory access out of bounds/.test(message)
      ? "memory access out of bounds: unbounded recursion overflowed the PHP engine's WebAssembly stack"
      : `PHP's engine crashed (WebAssembly trap: ${message}), most likely after unbounded recursion overflowed its stack`;
  } else if (typeof error === "number") {
    // Emscripten throws a number for longjmp (Infinity) and C++ exceptions; one that reaches the
    // top found no setjmp of PHP's left to land in (PHP's stack was overwritten).
    what = `PHP's engine crashed (a longjmp found no frame to return to: ${error}), most likely after unbounded recursion overflowed its stack`;
  } else {
    return undefined;
  }
  return { type: 1, message: `${what} (PHP could not report the line)`, file: where, line: 0 };
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
