/**
 * Unit: `assertBackendSupports` refuses, before anything boots, the commands and observations a
 * backend does not declare, naming the backend, each refused need with its pointer, and what the
 * backend runs; a backend without `supports` runs everything. (Both real backends now run the
 * whole catalog, so a declared-partial backend stands in.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WpCodeboxError, assertBackendSupports, unsupportedNeeds, type BackendNeed } from "@wp-codebox/runtime-core";

const PARTIAL = { kind: "partial", supports: { commands: ["wordpress.run-php"], observations: ["runtime-info"] } };

const cases: { name: string; backend: Parameters<typeof assertBackendSupports>[0]; needs: BackendNeed[]; refused: string[]; message?: RegExp }[] = [
  { name: "everything declared", backend: PARTIAL, needs: [{ pointer: "/command", command: "wordpress.run-php" }, { pointer: "/steps/1/observe", observation: "runtime-info" }], refused: [] },
  { name: "no supports: runs everything", backend: { kind: "full" }, needs: [{ pointer: "/command", command: "wordpress.phpunit" }], refused: [] },
  {
    name: "a command it does not declare",
    backend: PARTIAL,
    needs: [{ pointer: "/steps/0", command: "wordpress.phpunit" }],
    refused: ["/steps/0"],
    message: /^The partial backend cannot run wordpress\.phpunit \(\/steps\/0\): it runs wordpress\.run-php and observes runtime-info\./,
  },
  {
    name: "an observation and a command, both named",
    backend: PARTIAL,
    needs: [{ pointer: "/steps/0/action", command: "wordpress.run-php" }, { pointer: "/steps/1/observe", observation: "http-response" }, { pointer: "/steps/2/action", command: "wordpress.check" }],
    refused: ["/steps/1/observe", "/steps/2/action"],
    message: /cannot run observation http-response \(\/steps\/1\/observe\), wordpress\.check \(\/steps\/2\/action\)/,
  },
];

for (const c of cases) {
  test(`backend support: ${c.name}`, () => {
    assert.deepEqual(unsupportedNeeds(c.backend, c.needs).map((n) => n.pointer), c.refused);
    if (c.refused.length === 0) {
      assert.doesNotThrow(() => assertBackendSupports(c.backend, c.needs));
      return;
    }
    assert.throws(
      () => assertBackendSupports(c.backend, c.needs),
      (e: unknown) => e instanceof WpCodeboxError && e.code === "backend-unsupported" && c.message!.test(e.message) && (e.data as { unsupported: unknown[] }).unsupported.length === c.refused.length,
    );
  });
}
