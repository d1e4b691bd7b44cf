/**
 * Unit: a boot that fails inside php-wasm's `PHP.run()` is reported with what PHP said (its fatal
 * with file:line, else its output on one line, capped), not php-wasm's "=== Stdout === …
 * === Stderr ===" template; other errors keep their message. Table-driven; nothing booted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BOOT_FAILURE_CAUSE_MAX_CHARS } from "@wp-codebox/runtime-core";
import { bootFailureMessage, phpRunFailure } from "../src/worker/php-fatal.js";

/** php-wasm's PHPExecutionFailureError: this message template, with the response beside it. */
function phpRunError(exitCode: number, text: string, errors: string): Error & { response: { exitCode: number; text: string; errors: string } } {
  const error = new Error(`PHP.run() failed with exit code ${exitCode}. \n\n=== Stdout ===\n ${text}\n\n=== Stderr ===\n ${errors}`) as Error & { response: { exitCode: number; text: string; errors: string } };
  error.response = { exitCode, text, errors };
  return error;
}

const THROWN = '\nFatal error: Uncaught RuntimeException: boom from mu-plugin in /wordpress/wp-content/mu-plugins/boom.php:2\nStack trace:\n#0 /wordpress/wp-settings.php(2): include_once()\n#1 {main}\n  thrown in /wordpress/wp-content/mu-plugins/boom.php on line 2\n';
const PARSE = '\nParse error: syntax error, unexpected token "{", expecting variable in /wordpress/wp-content/mu-plugins/boom.php on line 2\n';

const CASES: Array<{ name: string; error: unknown; message: string | RegExp }> = [
  { name: "an uncaught exception printed on stdout", error: phpRunError(255, THROWN, ""), message: "PHP exited with code 255: Uncaught RuntimeException: boom from mu-plugin (/wordpress/wp-content/mu-plugins/boom.php:2)" },
  { name: "a parse error (not a fatal line) on one line", error: phpRunError(255, PARSE, ""), message: 'PHP exited with code 255: Parse error: syntax error, unexpected token "{", expecting variable in /wordpress/wp-content/mu-plugins/boom.php on line 2' },
  { name: "error_log() then exit: stderr is the cause", error: phpRunError(1, "", "the real cause: missing table\n"), message: "PHP exited with code 1: the real cause: missing table" },
  { name: "exit with nothing printed says so", error: phpRunError(1, "", ""), message: /^PHP exited with code 1 and printed nothing: .*exit or die\.$/ },
  { name: "only the message survived (posted across threads)", error: new Error(phpRunError(255, THROWN, "").message), message: "PHP exited with code 255: Uncaught RuntimeException: boom from mu-plugin (/wordpress/wp-content/mu-plugins/boom.php:2)" },
  { name: "another error keeps its message", error: new Error("Failed to install WordPress – installer responded with \"x\""), message: 'Failed to install WordPress – installer responded with "x"' },
];

for (const c of CASES) {
  test(`boot failure: ${c.name}`, () => {
    const message = bootFailureMessage(c.error);
    if (typeof c.message === "string") assert.equal(message, c.message);
    else assert.match(message, c.message);
    assert.doesNotMatch(message, /=== Std(out|err) ===/);
  });
}

test("boot failure: long output is cut at the cap with an ellipsis", () => {
  const message = bootFailureMessage(phpRunError(1, "x".repeat(BOOT_FAILURE_CAUSE_MAX_CHARS + 500), ""));
  assert.equal(message, `PHP exited with code 1: ${"x".repeat(BOOT_FAILURE_CAUSE_MAX_CHARS)}…`);
});

test("phpRunFailure reads the response, else the template, else nothing", () => {
  assert.deepEqual(phpRunFailure(phpRunError(3, "out", "err")), { exitCode: 3, stdout: "out", stderr: "err" });
  assert.deepEqual(phpRunFailure(new Error(phpRunError(3, "out", "err").message)), { exitCode: 3, stdout: "out", stderr: "err" });
  assert.equal(phpRunFailure(new Error("something else")), undefined);
});
