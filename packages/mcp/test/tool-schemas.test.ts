/** The tools and the command catalog cannot drift: every runnable command is a tool with the catalog's args. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { COMMAND_DEFINITIONS, WpCodeboxError, normalizePolicy, parseCommandArgs } from "@wp-codebox/runtime-core";
import { commandForToolName, commandTools, episodeTools, toolInputToArgs, toolNameForCommand } from "../src/index.js";

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
      assert.ok(String(prop.description).startsWith(arg.description), `${def.id} ${arg.name} description`);
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
  assert.throws(() => toolInputToArgs(http, { "expect-status": 2.5 }), (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument");
});
