/**
 * Unit: doctor's Node check. wp-codebox runs on Node 20 or newer; dependencies may declare a newer
 * Node in `engines.node` (npm then prints EBADENGINE warnings), and doctor names them and their
 * ranges, reading every range form dependencies use and admitting when it cannot read one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dependencyEngines, describeNodeSupport, satisfiesEngine } from "../../packages/cli/src/commands/node-support.js";

test("satisfiesEngine reads >=, ^, || and *, and says undefined for other forms", () => {
  const cases: [string, string, boolean | undefined][] = [
    ["20.20.2", ">=24.18.0", false],
    ["24.18.0", ">=24.18.0", true],
    ["24.22.1", ">=24.18.0", true],
    ["24.9.0", ">=24.18.0", false],
    ["v25.0.0", ">=24.18", true],
    ["20.20.2", ">=20", true],
    ["18.19.0", ">=18", true],
    ["20.1.0", "^18.0.0 || ^20.0.0", true],
    ["22.0.0", "^18.0.0 || ^20.0.0", false],
    ["22.0.0", "*", true],
    ["20.0.0", "20.x", undefined],
    ["20.0.0", ">=18 <22", undefined],
  ];
  for (const [version, range, expected] of cases) assert.equal(satisfiesEngine(version, range), expected, `${version} against ${range}`);
});

test("describeNodeSupport: too old, supported with unmet dependency ranges, supported by all", () => {
  const unmet = { name: "@php-wasm/node", version: "3.1.56", engines: ">=24.18.0", satisfied: false };
  const met = { name: "bullmq", version: "5.0.0", engines: ">=14.18.0", satisfied: true };
  const old = describeNodeSupport("18.20.0", [met]);
  assert.deepEqual([old.supported, old.dependenciesSatisfied], [false, false]);
  assert.match(old.detail, /too old: install Node 20 or newer/);
  const partly = describeNodeSupport("20.20.2", [unmet, met]);
  assert.deepEqual([partly.supported, partly.dependenciesSatisfied], [true, false]);
  assert.match(partly.detail, /@php-wasm\/node 3\.1\.56 declare node >=24\.18\.0/);
  assert.match(partly.detail, /EBADENGINE/);
  assert.doesNotMatch(partly.detail, /bullmq/);
  const all = describeNodeSupport("24.22.0", [{ ...unmet, satisfied: true }, met]);
  assert.deepEqual([all.supported, all.dependenciesSatisfied], [true, true]);
});

test("dependencyEngines reads installed packages' engines.node and skips packages without it", () => {
  const root = mkdtempSync(join(tmpdir(), "wp-codebox-node-support-"));
  try {
    const write = (name: string, pkg: object) => {
      mkdirSync(join(root, "node_modules", name), { recursive: true });
      writeFileSync(join(root, "node_modules", name, "package.json"), JSON.stringify(pkg));
    };
    write("@php-wasm/node", { version: "3.1.56", engines: { node: ">=24.18.0" } });
    write("bullmq", { version: "5.1.0" });
    const from = join(root, "packages", "cli", "dist");
    mkdirSync(from, { recursive: true });
    assert.deepEqual(dependencyEngines("20.20.2", from), [{ name: "@php-wasm/node", version: "3.1.56", engines: ">=24.18.0", satisfied: false }]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
