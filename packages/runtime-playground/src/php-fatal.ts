/**
 * Reading PHP fatal errors from what PHP printed or logged, for the cases where its shutdown
 * functions could not record them (the request ran out of memory in deep recursion, so no
 * userland code can run any more), and from a WebAssembly stack overflow, where PHP itself
 * never gets to report anything.
 */
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
