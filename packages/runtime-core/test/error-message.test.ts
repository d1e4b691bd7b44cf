/** errorMessage: anything thrown becomes a readable message, never "[object Object]". */
import { test } from "node:test";
import assert from "node:assert/strict";
import { errorMessage, serializeError } from "@wp-codebox/runtime-core";

class ErrnoError {
  constructor(readonly errno: number) {}
}

const cases: [string, unknown, string | RegExp][] = [
  ["an Error", new Error("boom"), "boom"],
  ["a string", "plain text", "plain text"],
  ["an empty string", "", "an empty error message"],
  ["undefined", undefined, "undefined was thrown"],
  ["a number", 42, "42"],
  ["an object with a message", { message: "from an object" }, "from an object"],
  ["an object whose message is an Error", { message: new Error("nested") }, "nested"],
  ["an Emscripten ErrnoError (errno only)", new ErrnoError(10), "ErrnoError: file system error EBUSY"],
  ["an unknown errno", new ErrnoError(999), "ErrnoError: file system error errno 999"],
  ["an object with a code", { code: "ECONNRESET" }, "ECONNRESET"],
  ["a plain object", { reason: "x" }, '{"reason":"x"}'],
  ["an empty object", {}, "Object without a message was thrown"],
  ["a huge object", { data: "y".repeat(2000) }, /^\{"data":"y+…$/],
];

for (const [name, thrown, expected] of cases) {
  test(`errorMessage: ${name}`, () => {
    const message = errorMessage(thrown);
    if (typeof expected === "string") assert.equal(message, expected);
    else assert.match(message, expected);
    assert.doesNotMatch(message, /\[object Object\]/);
    assert.equal(serializeError(thrown).message, message);
  });
}
