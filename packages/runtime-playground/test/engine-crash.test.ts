/**
 * Unit: what a crash of PHP's engine (php-wasm threw a WebAssembly trap instead of returning) is
 * reported as. The integration side (a real overflow on PHP 8.2, the worker replaced) is in
 * failures.integration.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { engineCrashFatal } from "../src/worker/php-fatal.js";

/** A real trap of the given kind, thrown by the engine itself. */
function trap(wat: "unreachable" | "oob" | "signature"): WebAssembly.RuntimeError {
  // (module (memory 1) (table 1 funcref) (type (func)) (func (export "f") ...))
  const bodies = { unreachable: [0x00], oob: [0x41, 0x7f, 0x28, 0x02, 0x00, 0x1a], signature: [0x41, 0x00, 0x11, 0x00, 0x00] };
  const body = [0x00, ...bodies[wat], 0x0b];
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
    0x03, 0x02, 0x01, 0x00, // one function of type 0
    0x04, 0x04, 0x01, 0x70, 0x00, 0x01, // table of 1 funcref (empty)
    0x05, 0x03, 0x01, 0x00, 0x01, // memory of 1 page
    0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f"
    0x0a, body.length + 2, 0x01, body.length, ...body,
  ]);
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes));
  try {
    (instance.exports.f as () => void)();
  } catch (error) {
    return error as WebAssembly.RuntimeError;
  }
  throw new Error("no trap");
}

test("engine crashes are fatal errors naming the script, line 0, and what the engine said", () => {
  const recurse = (): number => recurse() + 1;
  let rangeError: unknown;
  try {
    recurse();
  } catch (error) {
    rangeError = error;
  }
  const cases: { error: unknown; message: RegExp }[] = [
    { error: rangeError, message: /^Maximum call stack size exceeded: unbounded recursion overflowed the PHP engine's WebAssembly stack/ },
    { error: trap("oob"), message: /^memory access out of bounds: unbounded recursion overflowed the PHP engine's WebAssembly stack/ },
    { error: trap("signature"), message: /^PHP's engine crashed \(WebAssembly trap: [^)]*signature[^)]*\), most likely after unbounded recursion/ },
    { error: trap("unreachable"), message: /^PHP's engine crashed \(WebAssembly trap: unreachable[^)]*\)/ },
    // What Emscripten throws for a longjmp (PHP 7.4's __toString recursion let one escape).
    { error: Infinity, message: /^PHP's engine crashed \(a longjmp found no frame to return to: Infinity\), most likely after unbounded recursion/ },
  ];
  // php-wasm's own abort (what it throws when PHP reaches a function its build lacks, as Fibers do).
  cases.push(
    { error: new WebAssembly.RuntimeError("Aborted(missing function: ${name}). Build with -sASSERTIONS for more info."), message: /^php-wasm aborted PHP \(missing function: \$\{name\}\): the script used something this PHP build does not have, such as Fibers/ },
    { error: new WebAssembly.RuntimeError("Aborted(OOM). Build with -sASSERTIONS for more info."), message: /^php-wasm aborted PHP \(OOM\) \(PHP could not report the line\)$/ },
  );
  for (const { error, message } of cases) {
    const fatal = engineCrashFatal(error, "/wp-admin/admin-ajax.php");
    assert.ok(fatal, String(error));
    assert.match(fatal.message, message);
    assert.match(fatal.message, /\(PHP could not report the line\)$/);
    assert.deepEqual([fatal.type, fatal.file, fatal.line], [1, "/wp-admin/admin-ajax.php", 0]);
  }
});

test("php-wasm's own errors are not engine crashes (the worker reports them as they are)", () => {
  for (const error of [new Error("PHP runtime has crashed – see the earlier error for details."), new TypeError("x is not a function"), "a string"]) {
    assert.equal(engineCrashFatal(error, "/x.php"), undefined);
  }
});
