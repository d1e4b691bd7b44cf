/** The tools and the command catalog cannot drift: every runnable command is a tool with the catalog's args. */
import assert from "node:assert/strict";
import { test } from "node:test";
import AjvModule from "ajv";
import { COMMAND_DEFINITIONS, WpCodeboxError, flattenCommandArgs, normalizePolicy, parseCommandArgs } from "@wp-codebox/runtime-core";
import { commandForToolName, commandTools, episodeTools, toolInputToArgs, toolNameForCommand, type McpToolDescription } from "../src/index.js";

test("every runnable catalog command has exactly one tool whose schema matches its args", () => {
  const tools = commandTools(undefined);
  const runnable = COMMAND_DEFINITIONS.filter((d) => d.runnable);
  assert.equal(tools.length, runnable.length);
  for (const def of runnable) {
    const tool = tools.find((t) => t.name === def.id.replace(/[.-]/g, "_"));
    assert.ok(tool, `no tool for ${def.id}`);
    assert.deepEqual(Object.keys(tool.inputSchema.properties), def.args.map((a) => a.name), def.id);
    assert.deepEqual(tool.inputSchema.required ?? [], def.args.filter((a) => a.required).map((a) => a.name), def.id);
    assert.equal(tool.inputSchema.additionalProperties, false);
    for (const arg of def.args) {
      const prop = tool.inputSchema.properties[arg.name]!;
      if (arg.format === "list") {
        // The catalog words lists for the command line ("comma-separated"); a tool takes a JSON array.
        assert.doesNotMatch(String(prop.description), /comma/i, `${def.id} ${arg.name} description`);
        assert.match(String(prop.description), /A JSON array of strings, e\.g\. \["a", "b"\]\.$/, `${def.id} ${arg.name} description`);
      } else assert.ok(String(prop.description).startsWith(arg.description), `${def.id} ${arg.name} description`);
      if (arg.format === "enum") assert.deepEqual(prop.enum, arg.values, `${def.id} ${arg.name} enum`);
    }
    for (const group of [...(def.exactlyOneOf ?? []), ...(def.atMostOneOf ?? [])]) assert.match(tool.description, new RegExp(group.join(", ")));
  }
  assert.equal(tools.find((t) => t.name === "wordpress_browser_actions_evaluate"), undefined, "policy-only capabilities are not tools");
});

test("tool names follow the catalog ids with . and - as _", () => {
  assert.equal(toolNameForCommand("wordpress.run-php"), "wordpress_run_php");
  assert.equal(toolNameForCommand("inspect-mounted-inputs"), "inspect_mounted_inputs");
  assert.equal(commandForToolName("wordpress_state_export")?.id, "wordpress.state-export");
  assert.equal(commandForToolName("reset"), undefined);
  assert.deepEqual(episodeTools().map((t) => t.name), ["reset", "observe", "snapshot", "restore", "collect_artifacts"]);
});

test("tools the policy does not grant are marked unavailable", () => {
  const tools = commandTools(normalizePolicy({ commands: ["wordpress.run-php"] }));
  assert.doesNotMatch(tools.find((t) => t.name === "wordpress_run_php")!.description, /UNAVAILABLE/);
  const rest = tools.find((t) => t.name === "wordpress_rest_request")!;
  assert.match(rest.description, /^UNAVAILABLE: .*policy-denied/);
  assert.equal(rest.annotations?.unavailable, true);
});

test("tool input becomes catalog args that the catalog parser accepts", () => {
  const rest = commandForToolName("wordpress_rest_request")!;
  const args = toolInputToArgs(rest, { route: "/wp/v2/posts", "params-json": { per_page: 1 }, method: "GET" });
  assert.deepEqual(args, ["method=GET", "route=/wp/v2/posts", 'params-json={"per_page":1}']);
  assert.deepEqual(parseCommandArgs(rest.id, args), { method: "GET", route: "/wp/v2/posts", "params-json": '{"per_page":1}' });
  const http = commandForToolName("wordpress_http_request")!;
  assert.deepEqual(toolInputToArgs(http, { path: "/", "expect-status": 200 }), ["path=/", "expect-status=200"]);
  const state = commandForToolName("wordpress_state_export")!;
  assert.deepEqual(toolInputToArgs(state, { sections: ["summary", "options"], "include-content": true }), ["sections=summary,options", "include-content=true"]);
  assert.throws(() => toolInputToArgs(rest, { nope: 1 }), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument");
  assert.throws(() => toolInputToArgs(http, { path: "/", "expect-status": 2.5 }), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument");
  // What the catalog refuses is refused here too, naming the tool; the base name of a -json argument is taken.
  assert.throws(() => toolInputToArgs(http, { "expect-status": 200 }), (e: unknown) => e instanceof WpCodeboxError && e.code === "missing-argument" && /^wordpress_http_request: give exactly one of "path" or "url"/.test(e.message));
  const browser = commandForToolName("wordpress_browser_actions")!;
  assert.deepEqual(toolInputToArgs(browser, { steps: [{ kind: "navigate", url: "/" }] }), ['steps-json=[{"kind":"navigate","url":"/"}]']);
  assert.throws(() => toolInputToArgs(browser, { steps: [{ kind: "click" }] }), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-steps-json");
});

test("a tool call and an episode action or recipe step take the same values the same way", () => {
  const php = commandForToolName("wordpress_run_php")!;
  const state = commandForToolName("wordpress_state_export")!;
  for (const [def, input] of [
    [php, { code: "<?php echo 1;", bootstrap: "none" }],
    [state, { sections: ["summary", "options"], "include-content": true, "option-names": "blogname" }],
  ] as const) {
    assert.deepEqual(toolInputToArgs(def, input), flattenCommandArgs(def.id, input).args);
  }
  for (const input of [{ code: 1 }, { code: ["<?php"] }, { code: "<?php", bootstrap: false }]) {
    const core = (() => {
      try {
        flattenCommandArgs(php.id, input);
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    })();
    assert.match(core, /^wordpress\.run-php: argument /);
    assert.throws(() => toolInputToArgs(php, input), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument" && e.message === core.replace("wordpress.run-php: ", "wordpress_run_php: "));
  }
});

/**
 * Every keyword a generated schema may use: the subset strict function-calling clients (OpenAI
 * function calling, Gemini) take. A schema that needs another keyword must be checked against those clients first.
 */
const PORTABLE_KEYWORDS = new Set(["type", "properties", "required", "additionalProperties", "items", "enum", "description"]);

/** Every problem of one schema node and the nodes under it, as `pointer: problem`. */
function portabilityProblems(schema: Record<string, unknown>, pointer: string): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(schema)) if (!PORTABLE_KEYWORDS.has(key)) problems.push(`${pointer}: keyword "${key}"`);
  if (typeof schema.type !== "string") problems.push(`${pointer}: type must be one string, got ${JSON.stringify(schema.type)}`);
  if (schema.type === "array") {
    if (schema.items === null || typeof schema.items !== "object" || Array.isArray(schema.items)) problems.push(`${pointer}: array without one items schema`);
    else problems.push(...portabilityProblems(schema.items as Record<string, unknown>, `${pointer}/items`));
  }
  if (schema.type === "object") {
    if (schema.properties === undefined && schema.additionalProperties === undefined) problems.push(`${pointer}: object without properties or additionalProperties`);
    for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) problems.push(...portabilityProblems(sub, `${pointer}/properties/${name}`));
    if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== "boolean") problems.push(`${pointer}: additionalProperties must be a boolean`);
  }
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0 || schema.enum.some((v) => typeof v !== schema.type))) problems.push(`${pointer}: enum must list values of its type`);
  return problems;
}

// ajv is CommonJS: its class is the default export under tsx, or `.default` of it.
const Ajv = ((AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule) as unknown as new (options: object) => { compile(schema: object): unknown };

/** Every tool as `tools/list` can give it: with and without a policy, with and without known observation types. */
const ALL_TOOLS: [string, McpToolDescription][] = [
  ...commandTools(undefined).map((t): [string, McpToolDescription] => [t.name, t]),
  ...commandTools(normalizePolicy({ commands: ["wordpress.run-php"] })).map((t): [string, McpToolDescription] => [`${t.name} under a narrow policy`, t]),
  ...episodeTools().map((t): [string, McpToolDescription] => [t.name, t]),
  ...episodeTools(["runtime-info", "wordpress-state"]).map((t): [string, McpToolDescription] => [`${t.name} with known observation types`, t]),
];

for (const [label, tool] of ALL_TOOLS) {
  test(`${label}: the input schema is portable JSON Schema that Ajv compiles in strict mode`, () => {
    assert.deepEqual(portabilityProblems(tool.inputSchema as unknown as Record<string, unknown>, tool.name), []);
    const ajv = new Ajv({ strict: true, allErrors: true });
    assert.doesNotThrow(() => ajv.compile(tool.inputSchema));
  });
}

test("the portability check catches what strict clients refuse", () => {
  const problems = (schema: Record<string, unknown>) => portabilityProblems(schema, "#");
  assert.match(problems({ type: ["integer", "string"] }).join(), /type must be one string/);
  assert.match(problems({ type: "array" }).join(), /array without one items/);
  assert.match(problems({ type: "object" }).join(), /object without properties/);
  assert.match(problems({ type: "string", anyOf: [] }).join(), /keyword "anyOf"/);
  assert.match(problems({ type: "object", properties: { a: { type: "array", items: { type: ["string", "null"] } } } }).join(), /#\/properties\/a\/items: type/);
});

test("each catalog format has one canonical type, and the catalog's string forms are still taken", () => {
  const formats = new Map<string, string>();
  for (const tool of commandTools(undefined)) {
    const def = commandForToolName(tool.name)!;
    for (const arg of def.args) formats.set(arg.format, String(tool.inputSchema.properties[arg.name]!.type));
  }
  assert.deepEqual(Object.fromEntries([...formats].sort()), {
    actor: "string",
    boolean: "boolean",
    duration: "string",
    enum: "string",
    integer: "integer",
    json: "string",
    list: "array",
    path: "string",
    text: "string",
    url: "string",
    viewport: "string",
  });
  const http = commandForToolName("wordpress_http_request")!;
  assert.deepEqual(toolInputToArgs(http, { path: "/", "expect-status": "200", "body-json": '{"a":1}' }), ["path=/", 'body-json={"a":1}', "expect-status=200"]);
  const state = commandForToolName("wordpress_state_export")!;
  assert.deepEqual(toolInputToArgs(state, { sections: "summary,options", "include-content": "true" }), ["sections=summary,options", "include-content=true"]);
});
