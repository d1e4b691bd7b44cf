import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  COMMAND_CATALOG_SCHEMA,
  COMMAND_DEFINITIONS,
  allCapabilities,
  commandCatalog,
  getCommandDefinition,
  parseCommandArgs,
  readJsonArg,
} from "../src/command-registry.js";
import { validateAgainstSchema } from "../src/schema-validation.js";
import { scratchDir } from "../../../test/support/scratch-dir.js";

const EXPECTED_IDS = [
  "wordpress.run-php",
  "wordpress.wp-cli",
  "wordpress.phpunit",
  "wordpress.http-request",
  "wordpress.rest-request",
  "wordpress.browser-actions",
  "wordpress.browser-probe",
  "wordpress.ability",
  "wordpress.state-export",
  "wordpress.check",
  "inspect-mounted-inputs",
  "wordpress.browser-actions.evaluate",
];

test("catalog lists the v1 commands and matches its schema", () => {
  const catalog = commandCatalog();
  assert.equal(catalog.schema, "wp-codebox/command-catalog/v1");
  assert.deepEqual(catalog.commands.map((c) => c.id), EXPECTED_IDS);
  assert.deepEqual(validateAgainstSchema(COMMAND_CATALOG_SCHEMA, catalog), []);
  const evaluate = getCommandDefinition("wordpress.browser-actions.evaluate");
  assert.equal(evaluate.runnable, false);
  assert.equal(evaluate.recipe, false);
  assert.deepEqual(allCapabilities(), EXPECTED_IDS);
  // The catalog is a copy: mutating it does not change the registry.
  catalog.commands[0]!.summary = "changed";
  assert.notEqual(COMMAND_DEFINITIONS[0]!.summary, "changed");
});

test("schema rejects a malformed catalog entry", () => {
  const catalog = commandCatalog() as { commands: Array<Record<string, unknown>> };
  catalog.commands[0]!.runnable = "yes";
  delete catalog.commands[1]!.capability;
  const issues = validateAgainstSchema(COMMAND_CATALOG_SCHEMA, catalog);
  assert.ok(issues.some((i) => i.path === "/commands/0/runnable"), JSON.stringify(issues));
  assert.ok(issues.some((i) => i.path === "/commands/1/capability"), JSON.stringify(issues));
});

test("getCommandDefinition: unknown id lists known ids", () => {
  assert.throws(() => getCommandDefinition("wordpress.nope"), (e: any) => e.code === "unknown-command" && e.message.includes("wordpress.run-php"));
});

test("parseCommandArgs: splits at the first = and keeps the rest", () => {
  assert.deepEqual(parseCommandArgs("wordpress.run-php", ["code=<?php echo 'a=b';", "bootstrap=none"]), {
    code: "<?php echo 'a=b';",
    bootstrap: "none",
  });
  assert.deepEqual(parseCommandArgs("wordpress.wp-cli", ["command=plugin list --format=json"]), { command: "plugin list --format=json" });
  assert.deepEqual(parseCommandArgs("inspect-mounted-inputs", []), {});
});

const table: Array<{ id: string; args: string[]; code: string; mentions: string[] }> = [
  { id: "wordpress.run-php", args: ["cod=1"], code: "invalid-argument", mentions: ['"cod"', "code, code-file"] },
  { id: "wordpress.run-php", args: [], code: "missing-argument", mentions: ['"code" or "code-file"'] },
  { id: "wordpress.run-php", args: ["code=1", "code-file=x.php"], code: "invalid-argument", mentions: ['"code" and "code-file"'] },
  { id: "wordpress.run-php", args: ["code=1", "code=2"], code: "invalid-argument", mentions: ['"code" is given more than once'] },
  { id: "wordpress.run-php", args: ["code"], code: "invalid-argument", mentions: ["key=value"] },
  { id: "wordpress.run-php", args: ["code=1", "bootstrap=maybe"], code: "invalid-argument", mentions: ["bootstrap", "wordpress, none"] },
  { id: "wordpress.run-php", args: ["code=1", "as=root"], code: "invalid-argument", mentions: ['"as"'] },
  { id: "wordpress.wp-cli", args: [], code: "missing-argument", mentions: ['"command"'] },
  { id: "wordpress.rest-request", args: ["method=GET"], code: "missing-argument", mentions: ['"route"'] },
  { id: "wordpress.http-request", args: ["path=/", "expect-status=ok"], code: "invalid-argument", mentions: ["expect-status"] },
  { id: "wordpress.http-request", args: ["path=/", "body=a", "body-json={}"], code: "invalid-argument", mentions: ['"body" and "body-json"'] },
  { id: "wordpress.browser-actions", args: ["steps-json=[]", "step-timeout=soon"], code: "invalid-argument", mentions: ["step-timeout"] },
  { id: "wordpress.browser-probe", args: ["viewport=big"], code: "invalid-argument", mentions: ["viewport"] },
  { id: "inspect-mounted-inputs", args: ["x=1"], code: "invalid-argument", mentions: ["takes no args"] },
  { id: "wordpress.browser-actions.evaluate", args: [], code: "unknown-command", mentions: ["policy-only"] },
];
for (const row of table) {
  test(`parseCommandArgs ${row.id} ${JSON.stringify(row.args)} → ${row.code}`, () => {
    assert.throws(
      () => parseCommandArgs(row.id, row.args),
      (e: any) => {
        assert.equal(e.code, row.code);
        for (const m of row.mentions) assert.ok(e.message.includes(m), `message ${JSON.stringify(e.message)} should mention ${m}`);
        return true;
      },
    );
  });
}

test("readJsonArg: inline, @file relative to cwd, and errors", async () => {
  const dir = scratchDir("wpcb-json-");
  await writeFile(join(dir, "payload.json"), '{"a":[1,2]}');
  await writeFile(join(dir, "bad.json"), "{nope");
  assert.deepEqual(readJsonArg('{"x":1}', dir), { x: 1 });
  assert.deepEqual(readJsonArg("@payload.json", dir), { a: [1, 2] });
  assert.throws(() => readJsonArg("{x", dir), { code: "invalid-json-arg" });
  assert.throws(() => readJsonArg("@bad.json", dir), { code: "invalid-json-arg" });
  assert.throws(() => readJsonArg("@missing.json", dir), (e: any) => e.code === "invalid-json-arg" && e.message.includes("missing.json"));
});
