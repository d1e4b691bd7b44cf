/**
 * Values already in memory (MCP tool arguments, a Node caller's step args) that nest arrays and
 * objects past MAX_JSON_DEPTH are refused as invalid-json-arg before JSON.stringify would
 * overflow the stack; shallow values pass unchanged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { flattenCommandArgs } from "../src/command-input.js";
import { WpCodeboxError } from "../src/errors.js";
import { jsonValueTooDeep, MAX_JSON_DEPTH } from "../src/json-syntax.js";

function nestedArrays(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i += 1) v = [v];
  return v;
}
function nestedObjects(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i += 1) v = { k: v };
  return v;
}

const depthCases: { name: string; value: unknown; deep: boolean }[] = [
  { name: "a scalar", value: 1, deep: false },
  { name: "null", value: null, deep: false },
  { name: "arrays at the limit", value: nestedArrays(MAX_JSON_DEPTH), deep: false },
  { name: "arrays one past the limit", value: nestedArrays(MAX_JSON_DEPTH + 1), deep: true },
  { name: "objects 100,000 deep", value: nestedObjects(100_000), deep: true },
  { name: "a wide, shallow object", value: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, [i]])), deep: false },
  { name: "deep under the second of two keys", value: { a: 1, b: nestedArrays(MAX_JSON_DEPTH) }, deep: true },
];

for (const c of depthCases) {
  test(`jsonValueTooDeep: ${c.name} → ${c.deep}`, () => {
    assert.equal(jsonValueTooDeep(c.value), c.deep);
  });
}

const deep = nestedArrays(100_000);
const argCases: { name: string; command: string; args: Record<string, unknown> }[] = [
  { name: "a -json argument given as an object", command: "wordpress.rest-request", args: { route: "/", "params-json": { a: deep } } },
  { name: "a -json argument under its base name", command: "wordpress.rest-request", args: { route: "/", params: { a: deep } } },
  { name: "a browser script as an array", command: "wordpress.browser-actions", args: { steps: [deep] } },
  { name: "an object for a command the catalog does not know", command: "no.such-command", args: { thing: deep } },
];

for (const c of argCases) {
  test(`flattenCommandArgs: ${c.name}, 100,000 deep → invalid-json-arg, not a stack overflow`, () => {
    assert.throws(() => flattenCommandArgs(c.command, c.args), (error: unknown) => {
      assert.ok(error instanceof WpCodeboxError, String(error));
      assert.equal(error.code, "invalid-json-arg");
      assert.match(error.message, new RegExp(`nest deeper than ${MAX_JSON_DEPTH} levels`));
      return true;
    });
  });
}

test("flattenCommandArgs: a shallow JSON argument is inline JSON as before", () => {
  assert.deepEqual(flattenCommandArgs("wordpress.rest-request", { route: "/", params: { a: [1, { b: 2 }] } }).args, ["route=/", 'params-json={"a":[1,{"b":2}]}']);
});
