/**
 * Ability tools (names, input schemas, arguments) and every tool's outputSchema and behaviour
 * hints, without a sandbox: the records the server returns are checked against the schemas the
 * way the SDK client checks them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import AjvModule from "ajv";
import { COMMAND_DEFINITIONS, normalizePolicy, WpCodeboxError, type AbilityDescription } from "@wp-codebox/runtime-core";
import {
  REFUSAL_OUTPUT_SCHEMA,
  abilityCommandArgs,
  abilityForToolName,
  abilityInputFromArguments,
  abilityInputSchema,
  abilityTools,
  commandTools,
  episodeTools,
  stepOutputSchema,
  toolNameForAbility,
  toolNameForCommand,
  type McpToolDescription,
} from "../src/index.js";

const ability = (name: string, inputSchema: Record<string, unknown>, extra: Partial<AbilityDescription> = {}): AbilityDescription => ({
  name,
  label: `Label of ${name}`,
  description: `What ${name} does.`,
  inputSchema,
  outputSchema: {},
  annotations: {},
  ...extra,
});

test("ability tool names: / as __, both ways, never a catalog or episode tool", () => {
  for (const [abilityName, tool] of [
    ["core/get-site-info", "core__get-site-info"],
    ["my-plugin/export-orders", "my-plugin__export-orders"],
    ["a1/b2", "a1__b2"],
  ]) {
    assert.equal(toolNameForAbility(abilityName), tool);
    assert.equal(abilityForToolName(tool), abilityName);
    assert.match(tool, /^[A-Za-z0-9_-]{1,64}$/, "the name strict function-calling clients accept");
  }
  const others = [...COMMAND_DEFINITIONS.filter((d) => d.runnable).map((d) => toolNameForCommand(d.id)), ...episodeTools().map((t) => t.name)];
  for (const name of [...others, "core__Get", "core__a__b", "__x", "core__", "core_get"]) assert.equal(abilityForToolName(name), undefined, name);
});

test("an ability's input schema becomes the tool's: an object schema as it is, any other input wrapped as { input }, none as no properties", () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>, unknown][] = [
    [
      "object schema",
      { type: "object", properties: { fields: { type: "array", items: { type: "string" } } }, additionalProperties: false, default: {} },
      { type: "object", properties: { fields: { type: "array", items: { type: "string" } } }, additionalProperties: false, default: {} },
      { fields: ["version"] },
      { fields: ["version"] },
    ],
    ["object schema without additionalProperties", { type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: true }, { a: "x" }, { a: "x" }],
    ["string input", { type: "string", minLength: 1 }, { type: "object", properties: { input: { type: "string", minLength: 1 } }, required: ["input"], additionalProperties: false }, { input: "hi" }, "hi"],
    ["array input", { type: "array", items: { type: "integer" } }, { type: "object", properties: { input: { type: "array", items: { type: "integer" } } }, required: ["input"], additionalProperties: false }, { input: [1, 2] }, [1, 2]],
    ["no input", {}, { type: "object", properties: {}, additionalProperties: false }, {}, null],
    ["not a JSON Schema: taken as no input schema", { type: 5 }, { type: "object", properties: {}, additionalProperties: false }, {}, null],
  ];
  for (const [label, inputSchema, toolSchema, args, input] of cases) {
    const a = ability("probe/x", inputSchema);
    assert.deepEqual(abilityInputSchema(a), toolSchema, label);
    assert.deepEqual(abilityInputFromArguments(a, args), input, label);
  }
  // An object schema called with no arguments still gets an (empty) object; an unknown ability gets the arguments.
  assert.deepEqual(abilityInputFromArguments(ability("probe/x", { type: "object", properties: {} }), {}), {});
  assert.deepEqual(abilityInputFromArguments(undefined, { a: 1 }), { a: 1 });
  assert.deepEqual(abilityCommandArgs("core/get-site-info", null), ["name=core/get-site-info"]);
  assert.deepEqual(abilityCommandArgs("probe/x", { a: "b c" }), ["name=probe/x", 'input-json={"a":"b c"}']);
});

test("ability tools carry the ability's hints and are marked unavailable when the policy does not grant wordpress.ability", () => {
  const [readOnly, destructive, plain] = abilityTools(
    [
      ability("core/get-site-info", {}, { annotations: { readonly: true, destructive: false, idempotent: true } }),
      ability("probe/delete-all", {}, { annotations: { readonly: false, destructive: true } }),
      ability("probe/plain", {}, { annotations: { readonly: null } }),
    ],
    undefined,
  );
  assert.deepEqual(readOnly!.annotations, { title: "Label of core/get-site-info", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  assert.deepEqual(destructive!.annotations, { title: "Label of probe/delete-all", readOnlyHint: false, destructiveHint: true, openWorldHint: false });
  assert.deepEqual(plain!.annotations, { title: "Label of probe/plain", openWorldHint: false });
  const [denied] = abilityTools([ability("core/get-site-info", {})], normalizePolicy({ commands: ["wordpress.run-php"] }));
  assert.match(denied!.description, /^UNAVAILABLE: .*"wordpress\.ability"/);
  assert.equal(denied!.annotations?.unavailable, true);
});

test("command tools: readOnlyHint for state export and inspect commands only; openWorldHint false on every tool; reset and restore destructive", () => {
  for (const tool of commandTools(undefined)) {
    const def = COMMAND_DEFINITIONS.find((d) => toolNameForCommand(d.id) === tool.name)!;
    assert.equal(tool.annotations?.readOnlyHint, def.kind === "state" || def.kind === "inspect", tool.name);
    assert.equal(tool.annotations?.openWorldHint, false, tool.name);
  }
  const episode = Object.fromEntries(episodeTools().map((t) => [t.name, t.annotations!]));
  assert.equal(episode.observe!.readOnlyHint, true);
  assert.equal(episode.reset!.destructiveHint, true);
  assert.equal(episode.restore!.destructiveHint, true);
  for (const hints of Object.values(episode)) assert.equal(hints.openWorldHint, false);
});

// ajv is CommonJS: its class is the default export under tsx, or `.default` of it. Configured as the SDK client's.
const Ajv = ((AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule) as unknown as new (options: object) => { compile(schema: object): ((v: unknown) => boolean) & { errors?: unknown } };
const validator = (schema: object) => new Ajv({ strict: false, allErrors: true }).compile(schema);

const step = {
  step: "step-0002",
  command: "wordpress.run-php",
  args: ["code=<?php echo 1;"],
  status: "ok",
  exitCode: 0,
  stdout: "1",
  stderr: "",
  json: 1,
  durationMs: 12.5,
  artifactRefs: [{ path: "files/browser/a.png", kind: "browser-screenshot" }],
  execution: { id: "exec-1", digest: "abc" },
};
const refusal = { error: { code: "policy-denied", message: "no", data: { capability: "x" } } };

test("every tool's outputSchema is an object schema that accepts what the tool returns, and a refusal, and nothing else", () => {
  const tools: McpToolDescription[] = [...commandTools(undefined), ...episodeTools(["runtime-info"]), ...abilityTools([ability("core/get-site-info", {}, { outputSchema: { type: "object", properties: { version: { type: "string" } }, additionalProperties: false } })], undefined)];
  const returned: Record<string, unknown> = {
    reset: { reset: { id: "reset-1", observations: [] } },
    observe: { observation: { id: "obs-1", type: "runtime-info", digest: "d" }, data: { any: "thing" } },
    snapshot: { snapshot: { id: "snap-1", digest: "d", semantics: "full" } },
    restore: { snapshot: { id: "snap-1", digest: "d", semantics: "full" } },
    collect_artifacts: { bundle: { directory: "/b", id: "artifact-bundle-x", digest: "d", valid: true, violations: [], trace: { id: "t", digest: "d", steps: 2 } } },
    "core__get-site-info": { ...step, command: "wordpress.ability", json: { version: "7.0.4" } },
  };
  for (const tool of tools) {
    assert.equal(tool.outputSchema?.type, "object", tool.name);
    const valid = validator(tool.outputSchema!);
    const good = returned[tool.name] ?? step;
    assert.equal(valid(good), true, `${tool.name}: ${JSON.stringify(valid.errors)}`);
    assert.equal(valid(refusal), true, `${tool.name} refusal`);
    assert.equal(valid({}), false, `${tool.name} accepts an empty record`);
  }
  // The ability's output schema shapes `json`: an output it does not allow is refused.
  const abilityTool = tools.find((t) => t.name === "core__get-site-info")!;
  assert.equal(validator(abilityTool.outputSchema!)({ ...step, json: { version: 7 } }), false);
  assert.equal(validator(stepOutputSchema())({ ...step, status: "maybe" }), false);
  assert.equal(validator(REFUSAL_OUTPUT_SCHEMA)({ error: { code: "x" } }), false);
});

test("abilityCommandArgs: an input nested past MAX_JSON_DEPTH is invalid-json-arg, not a stack overflow; a shallow one is inline JSON", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i += 1) deep = { k: deep };
  assert.throws(() => abilityCommandArgs("core/get-site-info", { fields: deep }), (error: unknown) => {
    assert.ok(error instanceof WpCodeboxError, String(error));
    assert.equal(error.code, "invalid-json-arg");
    return true;
  });
  assert.deepEqual(abilityCommandArgs("core/get-site-info", { fields: ["name"] }), ["name=core/get-site-info", 'input-json={"fields":["name"]}']);
});
