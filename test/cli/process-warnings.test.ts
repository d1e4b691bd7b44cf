/**
 * `routeProcessWarnings`: while routed, a process warning reaches the given handler and Node's
 * default printer writes nothing to stderr; once restored, Node prints warnings again. Run in a
 * child process, since the default printer writes to the real stderr.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const MODULE = fileURLToPath(new URL("../../packages/cli/src/process-warnings.ts", import.meta.url));

test("routed warnings reach the handler only; restored warnings print as before", () => {
  const script = `
    const { routeProcessWarnings } = await import(${JSON.stringify(MODULE)});
    const restore = routeProcessWarnings((w) => console.log(JSON.stringify({ event: "warning", name: w.name, message: w.message })));
    process.emitWarning("routed one", "ExperimentalWarning");
    await new Promise((r) => setImmediate(r));
    restore();
    process.emitWarning("printed one", "ExperimentalWarning");
    await new Promise((r) => setImmediate(r));
  `;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(child.stdout.trim().split("\n").map((l) => JSON.parse(l)), [{ event: "warning", name: "ExperimentalWarning", message: "routed one" }]);
  assert.doesNotMatch(child.stderr, /routed one/);
  assert.match(child.stderr, /ExperimentalWarning: printed one/);
});
