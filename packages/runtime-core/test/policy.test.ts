import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RUNTIME_POLICY_SCHEMA, assertCapability, isHostAllowed, normalizePolicy, parsePolicyArg } from "../src/policy.js";
import { PolicyDeniedError } from "../src/errors.js";
import { validateAgainstSchema } from "../src/schema-validation.js";
import { scratchDir } from "../../../test/support/scratch-dir.js";

test("normalizePolicy fills defaults; a commands list alone is complete", () => {
  const policy = normalizePolicy({ commands: ["wordpress.run-php"] });
  assert.deepEqual(policy, { commands: ["wordpress.run-php"], network: "deny", filesystem: "readwrite-mounts", secrets: "none" });
  assert.deepEqual(validateAgainstSchema(RUNTIME_POLICY_SCHEMA, policy), []);
  assert.deepEqual(normalizePolicy(undefined), { commands: [], network: "deny", filesystem: "readwrite-mounts", secrets: "none" });
  assert.deepEqual(normalizePolicy({ network: { allowHosts: ["Example.COM"] }, secrets: "scoped" }).network, { allowHosts: ["example.com"] });
  assert.deepEqual(normalizePolicy({ commands: ["wordpress.run-php", "wordpress.run-php"] }).commands, ["wordpress.run-php"]);
});

test("normalizePolicy lists every issue: unknown fields, bad values, unknown capabilities", () => {
  assert.throws(
    () => normalizePolicy({ commands: ["wordpress.run-php"], netwrk: "allow", filesystem: "everything" }),
    (e: any) => {
      assert.equal(e.code, "invalid-policy");
      assert.match(e.message, /\/netwrk: unknown field/);
      assert.match(e.message, /\/filesystem/);
      assert.ok(e.data.issues.length >= 2);
      return true;
    },
  );
  assert.throws(
    () => normalizePolicy({ commands: ["wordpress.run-php", "wordpress.shell"] }),
    (e: any) => e.code === "invalid-policy" && e.message.includes("/commands/1") && e.message.includes("wordpress.shell") && e.message.includes("wordpress.browser-actions.evaluate"),
  );
  assert.throws(() => normalizePolicy("deny"), { code: "invalid-policy" });
  assert.throws(() => normalizePolicy({ network: { allowHosts: ["a"], extra: 1 } }), { code: "invalid-policy" });
});

test("parsePolicyArg: inline JSON or a file path", async () => {
  const dir = scratchDir("wpcb-policy-");
  await writeFile(join(dir, "policy.json"), JSON.stringify({ commands: ["wordpress.wp-cli"], network: "allow" }));
  assert.deepEqual(parsePolicyArg('{"commands":["wordpress.run-php"]}', dir).commands, ["wordpress.run-php"]);
  const fromFile = parsePolicyArg("policy.json", dir);
  assert.equal(fromFile.network, "allow");
  assert.deepEqual(parsePolicyArg("@policy.json", dir).commands, ["wordpress.wp-cli"]);
  assert.throws(() => parsePolicyArg("missing.json", dir), { code: "invalid-policy" });
  assert.throws(() => parsePolicyArg("{not json", dir), { code: "invalid-policy" });
});

test("assertCapability denies what the policy does not grant", () => {
  const policy = normalizePolicy({ commands: ["wordpress.browser-actions"] });
  assert.doesNotThrow(() => assertCapability(policy, "wordpress.browser-actions"));
  assert.throws(
    () => assertCapability(policy, "wordpress.browser-actions.evaluate"),
    (e: unknown) =>
      e instanceof PolicyDeniedError && e.code === "policy-denied" && e.capability === "wordpress.browser-actions.evaluate" && e.message.includes("wordpress.browser-actions.evaluate"),
  );
});

test("isHostAllowed: deny, allow, allow-list with wildcard", () => {
  assert.equal(isHostAllowed(normalizePolicy({}), "example.com"), false);
  assert.equal(isHostAllowed(normalizePolicy({ network: "allow" }), "example.com"), true);
  const list = normalizePolicy({ network: { allowHosts: ["api.example.com", "*.wordpress.org"] } });
  assert.equal(isHostAllowed(list, "api.example.com"), true);
  assert.equal(isHostAllowed(list, "API.example.com:443"), true);
  assert.equal(isHostAllowed(list, "https://api.example.com/v1"), true);
  assert.equal(isHostAllowed(list, "example.com"), false);
  assert.equal(isHostAllowed(list, "evil-api.example.com"), false);
  assert.equal(isHostAllowed(list, "downloads.wordpress.org"), true);
  assert.equal(isHostAllowed(list, "wordpress.org"), false);
  assert.equal(isHostAllowed(list, "notwordpress.org"), false);
});

test("isHostAllowed: a wildcard entry never matches an IP address, an exact entry does", () => {
  const list = normalizePolicy({ network: { allowHosts: ["*.0.0.1", "*.1", "*.168.1.1", "*.ff", "10.0.0.5", "*.example.com"] } });
  const cases: Array<[string, boolean]> = [
    ["127.0.0.1", false],
    ["http://127.0.0.1:8080/", false],
    ["192.168.1.1", false],
    ["0x7f.0.0.1", false],
    ["[::1]:80", false],
    ["http://[fe80::ff]/", false],
    ["10.0.0.5", true],
    ["10.0.0.5:443", true],
    ["api.example.com", true],
    ["a.1", true], // a host name under the label "1", not an address

  ];
  for (const [host, allowed] of cases) assert.equal(isHostAllowed(list, host), allowed, host);
});
