/**
 * The quick validity check in front of Ajv (`certainlyValid`) must never accept what Ajv refuses.
 * Checked on the repository's example documents and on many mutations of them, against Ajv
 * itself; and it must accept the common valid documents, or it saves nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import {
  BROWSER_INTERACTION_SCRIPT_SCHEMA,
  EPISODE_SCRIPT_JSON_SCHEMA,
  RUNTIME_POLICY_INPUT_SCHEMA,
  WORKSPACE_RECIPE_SCHEMA,
  certainlyValid,
  validateAgainstSchema,
} from "@wp-codebox/runtime-core";

const require = createRequire(import.meta.url);
const Ajv = require("ajv") as new (o: object) => { compile(s: object): (v: unknown) => boolean };
const addFormats = require("ajv-formats") as (a: unknown) => void;
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const ajvValid = (schema: object, value: unknown) => ajv.compile(schema)(value);

const examples = (path: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../../../examples/${path}`, import.meta.url)), "utf8"));

const documents: Array<[string, object, unknown]> = [
  ["episode script", EPISODE_SCRIPT_JSON_SCHEMA, examples("episodes/seed-and-snapshot.json")],
  ["browser script", BROWSER_INTERACTION_SCRIPT_SCHEMA, examples("browser/sortable-board.json")],
  ["browser script", BROWSER_INTERACTION_SCRIPT_SCHEMA, examples("browser/block-editor-publish.json")],
  ["recipe", WORKSPACE_RECIPE_SCHEMA, examples("recipes/plugin-smoke/recipe.json")],
  ["recipe", WORKSPACE_RECIPE_SCHEMA, examples("recipes/seeded-content/recipe.json")],
  ["policy", RUNTIME_POLICY_INPUT_SCHEMA, { commands: ["wordpress.run-php"], network: { allowHosts: ["example.org"] }, filesystem: "readonly-mounts" }],
];

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES: unknown[] = [undefined, null, "", "😀", "x".repeat(5000), 0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, true, [], {}, [1], { unknown: 1 }, "wordpress.run-php"];

/** One random change somewhere in a JSON-like tree: replace, delete or add a value. */
function mutate(doc: unknown, random: () => number): unknown {
  const copy = structuredClone(doc);
  const containers: Array<Record<string, unknown> | unknown[]> = [];
  const walk = (v: unknown) => {
    if (v && typeof v === "object") {
      containers.push(v as Record<string, unknown>);
      for (const child of Object.values(v)) walk(child);
    }
  };
  walk(copy);
  if (containers.length === 0) return ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
  const target = containers[Math.floor(random() * containers.length)]!;
  const keys = Object.keys(target);
  const odd = ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
  const roll = random();
  if (keys.length > 0 && roll < 0.6) (target as Record<string, unknown>)[keys[Math.floor(random() * keys.length)]!] = odd;
  else if (keys.length > 0 && roll < 0.8) {
    if (Array.isArray(target)) target.splice(Math.floor(random() * target.length), 1);
    else delete target[keys[Math.floor(random() * keys.length)]!];
  } else if (Array.isArray(target)) target.push(odd);
  else target[random() < 0.5 ? "unexpected" : keys[0] ?? "x"] = odd;
  return copy;
}

test("the example documents pass the quick check, and Ajv agrees", () => {
  for (const [name, schema, doc] of documents) {
    assert.equal(ajvValid(schema, doc), true, `${name} is valid`);
    assert.equal(certainlyValid(schema, doc), true, `${name} takes the quick path`);
  }
});

test("the quick check never accepts a mutated document that Ajv refuses", () => {
  const random = rng(20261201);
  let refused = 0;
  for (const [name, schema, doc] of documents) {
    for (let i = 0; i < 400; i++) {
      let value = doc;
      for (let k = 1 + Math.floor(random() * 3); k > 0; k--) value = mutate(value, random);
      const valid = ajvValid(schema, value);
      if (!valid) refused++;
      if (certainlyValid(schema, value)) assert.equal(valid, true, `${name}: quick check accepted what Ajv refuses: ${JSON.stringify(value)?.slice(0, 400)}`);
    }
  }
  assert.ok(refused > 500, `the mutations produced invalid documents (${refused})`);
});

test("keywords it does not know, other formats and code-point lengths are left to Ajv", () => {
  assert.equal(certainlyValid(Type.String({ format: "date-time" }), "2025-01-01T00:00:00.123Z"), true);
  assert.equal(certainlyValid(Type.String({ format: "date-time" }), "2024-02-29T23:59:59Z"), true);
  assert.equal(certainlyValid(Type.String({ format: "date-time" }), "2025-02-29T00:00:00Z"), false);
  assert.equal(certainlyValid(Type.String({ format: "date-time" }), "2025-01-01T00:00:00+01:00"), false);
  assert.equal(certainlyValid(Type.String({ format: "email" }), "a@example.org"), false);
  assert.equal(certainlyValid(Type.Record(Type.String({ pattern: "^[a-z]+$" }), Type.Number()), { a: 1 }), true);
  assert.equal(certainlyValid(Type.Record(Type.String({ pattern: "^[a-z]+$" }), Type.Number(), { additionalProperties: false }), { A: 1 }), false);
  assert.equal(certainlyValid(Type.Tuple([Type.String()]), ["a"]), false);
  assert.equal(certainlyValid(Type.Array(Type.String(), { uniqueItems: true }), ["a", "a"]), false);
  assert.equal(certainlyValid(Type.Object({ a: Type.Optional(Type.String()) }), { a: undefined }), false);
  assert.equal(certainlyValid(Type.Number(), Number.NaN), false);
  assert.equal(certainlyValid(Type.String({ minLength: 2 }), "😀"), false, "one code point, two UTF-16 units");
  assert.equal(certainlyValid(Type.String({ maxLength: 1 }), "😀"), true);
  assert.equal(certainlyValid(Type.Union([Type.Literal("a"), Type.Literal("b")]), "b"), true);
  // Invalid documents still get Ajv's issues.
  assert.deepEqual(validateAgainstSchema(RUNTIME_POLICY_INPUT_SCHEMA, { commands: [1] }), [{ path: "/commands/0", message: "must be a string (got 1)" }]);
});

test("validateAgainstSchema names the allowed values and the value given for literals, enums and unions of literals", () => {
  const mode = Type.Object({ mode: Type.Union([Type.Literal("readonly"), Type.Literal("readwrite")]) });
  const rows: [object, unknown, { path: string; message: string }[]][] = [
    [mode, { mode: "ro" }, [{ path: "/mode", message: 'must be "readonly" or "readwrite" (got "ro")' }]],
    [mode, { mode: 1 }, [{ path: "/mode", message: 'must be "readonly" or "readwrite" (got 1)' }]],
    [mode, { mode: { a: 1 } }, [{ path: "/mode", message: 'must be "readonly" or "readwrite" (got an object)' }]],
    [Type.Object({ v: Type.Literal("v1") }), { v: "v2" }, [{ path: "/v", message: 'must be "v1" (got "v2")' }]],
    [{ type: "object", properties: { n: { enum: [1, 2] } } }, { n: 3 }, [{ path: "/n", message: "must be 1 or 2 (got 3)" }]],
    [Type.Array(Type.Union([Type.Literal("a"), Type.Literal("b")])), ["a", "x".repeat(100)], [{ path: "/1", message: `must be "a" or "b" (got "${"x".repeat(56)}…)` }]],
    [Type.Object({ "a/b": Type.Literal(true) }), { "a/b": false }, [{ path: "/a~1b", message: "must be true (got false)" }]],
    [Type.Object({ snapshot: Type.Literal(true) }), { snapshot: "yes" }, [{ path: "/snapshot", message: "must be true (got \"yes\")" }]],
    [Type.Object({ schema: Type.Literal("v1") }), { schema: 1 }, [{ path: "/schema", message: "must be \"v1\" (got 1)" }]],
    // A union the value is of no branch of names each branch's literal or type.
    [Type.Object({ t: Type.Union([Type.Literal("x"), Type.Number()]) }), { t: "y" }, [{ path: "/t", message: 'must be "x" or a number (got "y")' }]],
    [Type.Object({ t: Type.Union([Type.Literal("x"), Type.Literal("y"), Type.Object({ a: Type.String() })]) }), { t: 5 }, [{ path: "/t", message: 'must be one of "x", "y", or an object (got 5)' }]],
    // Of the branches of the value's type, only their errors: the literals' mismatch is noise.
    [Type.Object({ t: Type.Union([Type.Literal("x"), Type.Object({ a: Type.String() }, { additionalProperties: false })]) }), { t: { b: 1 } }, [
      { path: "/t/a", message: "is required" },
      { path: "/t/b", message: "unknown field" },
    ]],
    // Types, patterns, ranges and repeats say what was given.
    [Type.Object({ n: Type.Integer({ minimum: 1 }) }), { n: 1.5 }, [{ path: "/n", message: "must be an integer (got 1.5)" }]],
    [Type.Object({ n: Type.Integer({ minimum: 1 }) }), { n: 0 }, [{ path: "/n", message: "must be >= 1 (got 0)" }]],
    [Type.Object({ s: Type.String({ pattern: "^[a-z]+$" }) }), { s: "Bad" }, [{ path: "/s", message: 'must match pattern "^[a-z]+$" (got "Bad")' }]],
    [Type.Array(Type.String(), { uniqueItems: true }), ["a", "b", "a"], [{ path: "/", message: "must not repeat an item (items 0 and 2 are the same)" }]],
  ];
  for (const [schema, value, expected] of rows) assert.deepEqual(validateAgainstSchema(schema, value), expected, JSON.stringify(value));
});
