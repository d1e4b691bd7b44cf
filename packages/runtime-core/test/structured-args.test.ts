/**
 * Structured command args (recipe steps, episode actions, MCP tool calls) become `key=value`
 * strings through one converter, which checks each value's JSON type against its argument's
 * format: a number given for PHP source is refused, never turned into the code "1".
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ARG_FORMATS, WpCodeboxError, flattenCommandArgs, getCommandDefinition } from "@wp-codebox/runtime-core";

interface Case {
  format: string;
  command: string;
  key: string;
  value: unknown;
  /** The flat arg, or the start of the error message after "<command>: ". */
  flat?: string;
  error?: string;
}

const CASES: Case[] = [
  // text: a string only
  { format: "text", command: "wordpress.run-php", key: "code", value: "<?php echo 1;", flat: "code=<?php echo 1;" },
  { format: "text", command: "wordpress.run-php", key: "code", value: 1, error: 'argument "code" must be a string (got 1)' },
  { format: "text", command: "wordpress.run-php", key: "code", value: true, error: 'argument "code" must be a string (got true)' },
  { format: "text", command: "wordpress.run-php", key: "code", value: ["x"], error: 'argument "code" must be a string (got an array)' },
  { format: "text", command: "wordpress.run-php", key: "code", value: { php: "x" }, error: 'argument "code" must be a string (got an object)' },
  // enum
  { format: "enum", command: "wordpress.run-php", key: "bootstrap", value: "none", flat: "bootstrap=none" },
  { format: "enum", command: "wordpress.run-php", key: "bootstrap", value: 0, error: 'argument "bootstrap" must be a string, one of "wordpress", "none" (got 0)' },
  // actor, path, url, viewport
  { format: "actor", command: "wordpress.run-php", key: "as", value: { user: 1 }, error: 'argument "as" must be a string (got an object)' },
  { format: "path", command: "wordpress.run-php", key: "code-file", value: 7, error: 'argument "code-file" must be a string (got 7)' },
  { format: "url", command: "wordpress.http-request", key: "url", value: ["/"], error: 'argument "url" must be a string (got an array)' },
  { format: "viewport", command: "wordpress.browser-actions", key: "viewport", value: 1280, error: 'argument "viewport" must be a string (got 1280)' },
  // integer
  { format: "integer", command: "wordpress.http-request", key: "expect-status", value: 404, flat: "expect-status=404" },
  { format: "integer", command: "wordpress.http-request", key: "expect-status", value: "404", flat: "expect-status=404" },
  { format: "integer", command: "wordpress.http-request", key: "expect-status", value: 4.5, error: 'argument "expect-status" must be an integer (got 4.5)' },
  { format: "integer", command: "wordpress.http-request", key: "expect-status", value: false, error: 'argument "expect-status" must be an integer (got false)' },
  // boolean
  { format: "boolean", command: "wordpress.state-export", key: "include-content", value: true, flat: "include-content=true" },
  { format: "boolean", command: "wordpress.state-export", key: "include-content", value: 1, error: 'argument "include-content" must be true or false (got 1)' },
  // duration: a string or whole milliseconds
  { format: "duration", command: "wordpress.browser-actions", key: "timeout", value: 1500, flat: "timeout=1500" },
  { format: "duration", command: "wordpress.browser-actions", key: "timeout", value: "2s", flat: "timeout=2s" },
  { format: "duration", command: "wordpress.browser-actions", key: "timeout", value: -1, error: 'argument "timeout" must be a duration string such as "30s" or a whole number of milliseconds (got -1)' },
  // json: an object or array, or a string; its base name goes to it
  { format: "json", command: "wordpress.rest-request", key: "params-json", value: { per_page: 1 }, flat: 'params-json={"per_page":1}' },
  { format: "json", command: "wordpress.rest-request", key: "params-json", value: '{"per_page":1}', flat: 'params-json={"per_page":1}' },
  { format: "json", command: "wordpress.rest-request", key: "params", value: { per_page: 1 }, flat: 'params-json={"per_page":1}' },
  { format: "json", command: "wordpress.browser-actions", key: "steps", value: "@flow.json", flat: "steps-json=@flow.json" },
  { format: "json", command: "wordpress.rest-request", key: "params-json", value: 3, error: 'argument "params-json" must be a JSON object or array, or a string holding JSON or @file (got 3)' },
  // list: an array of strings or the comma-separated string
  { format: "list", command: "wordpress.state-export", key: "sections", value: ["options", "plugins"], flat: "sections=options,plugins" },
  { format: "list", command: "wordpress.state-export", key: "sections", value: "options,plugins", flat: "sections=options,plugins" },
  { format: "list", command: "wordpress.state-export", key: "sections", value: ["a,b"], error: 'argument "sections" must be an array of strings (without commas) or a comma-separated string (got an array)' },
  { format: "list", command: "wordpress.state-export", key: "sections", value: [1], error: 'argument "sections" must be an array of strings (without commas) or a comma-separated string (got an array)' },
  // a key the command lacks is refused with the valid keys; one with "=" cannot move its value into another argument
  { format: "unknown key", command: "wordpress.run-php", key: "colour", value: "red", error: 'unknown argument "colour". Valid keys: code, code-file, bootstrap, as, background-errors' },
  { format: "unknown key", command: "wordpress.run-php", key: "colour", value: { r: 1 }, error: 'unknown argument "colour". Valid keys: code, code-file, bootstrap, as, background-errors' },
  { format: "unknown key", command: "wordpress.run-php", key: "code=<?php echo 7*6;//", value: 5, error: 'unknown argument "code=<?php echo 7*6;//". Valid keys: code, code-file, bootstrap, as, background-errors' },
  { format: "unknown key", command: "wordpress.run-php", key: "__proto__", value: "x", error: 'unknown argument "__proto__". Valid keys: code, code-file, bootstrap, as, background-errors' },
];

describe("flattenCommandArgs: one rule per argument format", () => {
  for (const c of CASES) {
    it(`${c.format}: ${c.command} ${c.key}=${JSON.stringify(c.value)}`, () => {
      if (c.flat !== undefined) {
        assert.deepEqual(flattenCommandArgs(c.command, { [c.key]: c.value }), { args: [c.flat], keys: [c.key] });
        return;
      }
      assert.throws(
        () => flattenCommandArgs(c.command, { [c.key]: c.value }),
        (error: unknown) => {
          assert.ok(error instanceof WpCodeboxError);
          assert.equal(error.code, "invalid-argument");
          assert.equal(error.message, `${c.command}: ${c.error}.`);
          assert.equal(error.data.argument, c.key);
          return true;
        },
      );
    });
  }

  it("null is not given; a string array is kept as is; an unknown command gets no type checks", () => {
    assert.deepEqual(flattenCommandArgs("wordpress.run-php", { code: "<?php", as: null }).args, ["code=<?php"]);
    assert.deepEqual(flattenCommandArgs("wordpress.run-php", ["code=1", "x"]).args, ["code=1", "x"]);
    assert.deepEqual(flattenCommandArgs("wordpress.fly", { n: 2, steps: [1] }).args, ["n=2", "steps-json=[1]"]);
    assert.throws(() => flattenCommandArgs("wordpress.fly", { "a=b": 1 }), { code: "invalid-argument" });
  });

  it("an argument given under its name and its base name is refused", () => {
    assert.throws(
      () => flattenCommandArgs("wordpress.browser-actions", { steps: [], "steps-json": "[]" }),
      (error: unknown) => error instanceof WpCodeboxError && error.message === 'wordpress.browser-actions: "steps" and "steps-json" are the same argument (steps-json); give it once.',
    );
  });

  it("the table covers every catalog format, each case under its argument's real format", () => {
    const covered = new Set(CASES.map((c) => c.format));
    assert.deepEqual(ARG_FORMATS.filter((f) => !covered.has(f)), []);
    for (const c of CASES.filter((x) => x.format !== "unknown key")) {
      const args = getCommandDefinition(c.command).args;
      const spec = args.find((a) => a.name === c.key) ?? args.find((a) => a.name === `${c.key}-json`);
      assert.equal(spec?.format, c.format, `${c.command} ${c.key}`);
    }
  });
});
