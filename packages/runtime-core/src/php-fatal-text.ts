/** Reading a PHP fatal error from what PHP printed or logged (any backend). */

/** A PHP fatal error: PHP's error type, its message, file and line. */
export interface PhpFatalText {
  type: number;
  message: string;
  file: string;
  line: number;
}

/**
 * The first fatal error in PHP's output or error log (`PHP Fatal error:  msg in /file.php on line 3`,
 * or the display form `Fatal error: msg in /file.php:3`). Later ones are usually shutdown code
 * failing for the same reason (`in Unknown on line 0`) and are skipped.
 * @returns `undefined` when the text names no fatal error.
 */
export function fatalFromPhpOutput(output: string): PhpFatalText | undefined {
  const re = /(?:PHP )?Fatal error: +([\s\S]*?) in (\/[^\n]*?)(?: on line |:)(\d+)/g;
  for (const m of output.matchAll(re)) {
    return { type: 1, message: m[1]!.replace(/^Uncaught /, "Uncaught ").trim(), file: m[2]!, line: Number(m[3]) };
  }
  return undefined;
}
