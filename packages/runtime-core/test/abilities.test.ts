/** Ability names and the JSON Schemas PHP prints for abilities, made JSON Schema again. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ABILITY_NAME_MAX_CHARS, WpCodeboxError, checkAbilityName, checkCommandInput, isAbilityName, isValidJsonSchema, schemaFromPhp } from "../src/index.js";

test("schemaFromPhp: what json_encode makes of a PHP schema array becomes the schema it meant", () => {
  const cases: [string, unknown, Record<string, unknown>][] = [
    ["no schema (an empty PHP array)", [], {}],
    ["not a schema at all", "string", {}],
    ["an empty properties map", { type: "object", properties: [] }, { type: "object", properties: {} }],
    ["an object default", { type: "object", properties: { fields: { type: "array", items: { type: "string" } } }, default: [] }, { type: "object", properties: { fields: { type: "array", items: { type: "string" } } }, default: {} }],
    ["an array default stays an array", { type: "array", items: { type: "string" }, default: [] }, { type: "array", items: { type: "string" }, default: [] }],
    [
      "per-property required: true becomes the parent's required list",
      { type: "object", properties: { id: { type: "integer", required: true }, note: { type: "string", required: false } } },
      { type: "object", properties: { id: { type: "integer" }, note: { type: "string" } }, required: ["id"] },
    ],
    [
      "nested objects and items are walked",
      { type: "array", items: { type: "object", properties: { meta: { type: "object", properties: [] , required: true } } } },
      { type: "array", items: { type: "object", properties: { meta: { type: "object", properties: {} } }, required: ["meta"] } },
    ],
    ["an existing required list is kept", { type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { type: "object", properties: { a: { type: "string" } }, required: ["a"] }],
    ["an empty required list is dropped", { type: "object", properties: { a: { type: "string" } }, required: [] }, { type: "object", properties: { a: { type: "string" } } }],
    ["anyOf members are walked", { anyOf: [{ type: "object", properties: [] }, { type: "null" }] }, { anyOf: [{ type: "object", properties: {} }, { type: "null" }] }],
  ];
  for (const [label, php, expected] of cases) {
    const schema = schemaFromPhp(php);
    assert.deepEqual(schema, expected, label);
    assert.equal(isValidJsonSchema(schema), true, `${label}: a valid JSON Schema`);
  }
  // What WordPress prints before the clean-up is not valid JSON Schema: the clean-up is needed.
  assert.equal(isValidJsonSchema({ type: "object", properties: { id: { type: "integer", required: true } } }), false);
  assert.equal(isValidJsonSchema({ type: "object", properties: [] }), false);
});

test("an ability name is namespace/ability-name; anything else is refused before boot", () => {
  for (const name of ["core/get-site-info", "my-plugin/export-orders", "a1/b2"]) assert.doesNotThrow(() => checkAbilityName(name), name);
  for (const name of ["core", "Core/get", "core/get/more", "core/get_info", "/get", "core/", "core/get info", ""]) {
    assert.throws(() => checkAbilityName(name), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument" && /namespace\/ability-name/.test(e.message), name);
  }
  assert.throws(() => checkCommandInput("wordpress.ability", ["name=Not An Ability"], "/"), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument");
  assert.throws(() => checkCommandInput("wordpress.ability", ["name=core/get-site-info", "input-json={bad"], "/"), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-json-arg");
  assert.throws(() => checkCommandInput("wordpress.ability", [], "/"), (e: unknown) => e instanceof WpCodeboxError && e.code === "missing-argument");
  assert.deepEqual(checkCommandInput("wordpress.ability", ["name=core/get-site-info", 'input-json={"fields":["version"]}', "as=anonymous"], "/").args, ["name=core/get-site-info", 'input-json={"fields":["version"]}', "as=anonymous"]);
});

test("an ability name is at most ABILITY_NAME_MAX_CHARS long (an MCP tool name then fits in 128), and the error quotes a cut of it", () => {
  const exact = `a/${"b".repeat(ABILITY_NAME_MAX_CHARS - 2)}`;
  const cases: [string, boolean][] = [
    [exact, true],
    [`${exact}c`, false],
    [`a/${"b".repeat(1 << 20)}`, false],
  ];
  for (const [name, ok] of cases) {
    assert.equal(isAbilityName(name), ok, String(name.length));
    if (ok) {
      assert.doesNotThrow(() => checkAbilityName(name));
      assert.ok(name.replace("/", "__").length <= 128);
      continue;
    }
    assert.throws(
      () => checkAbilityName(name),
      (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument" && new RegExp(`is ${name.length} characters long; an ability name has at most ${ABILITY_NAME_MAX_CHARS}`).test(e.message) && e.message.length < 400,
    );
  }
  // The same bound before boot, through the command input check.
  assert.throws(() => checkCommandInput("wordpress.ability", [`name=a/${"b".repeat(5000)}`], "/"), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument" && e.message.length < 400);
});
