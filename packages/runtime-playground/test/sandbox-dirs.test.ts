/**
 * Stale sandbox folders: after a SIGKILL nothing cleans up, so the next sandbox created in the same
 * place removes the folders whose owning process is gone, and only those.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { sweepStaleSandboxDirs } from "../src/sandbox/sandbox-dirs.js";

const linux = existsSync("/proc/self/stat");

test("removes the folders of dead owners; keeps live, foreign and unmarked ones", { skip: !linux && "needs /proc" }, () => {
  const base = mkdtempSync(join(tmpdir(), "wp-codebox-sweep-test-"));
  try {
    const start = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!;
    const ns = readlinkSync("/proc/self/ns/pid");
    const me = { pid: process.pid, start: start(process.pid), ns, host: hostname() };
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const folder = (name: string, owner?: object) => {
      mkdirSync(join(base, name, "wp-content"), { recursive: true });
      if (owner) writeFileSync(join(base, name, ".wp-codebox-owner.json"), JSON.stringify(owner));
    };
    folder("wp-codebox-dead", { ...me, pid: dead, start: "1" });
    folder("wp-codebox-reused-pid", { ...me, start: String(Number(me.start) - 1) });
    folder("wp-codebox-alive", me);
    folder("wp-codebox-other-namespace", { ...me, pid: dead, ns: "pid:[1]" });
    folder("wp-codebox-other-host", { ...me, pid: dead, host: `${hostname()}-elsewhere` });
    folder("wp-codebox-unmarked");
    folder("not-a-sandbox", { ...me, pid: dead });
    const removed = sweepStaleSandboxDirs(base).map((d) => d.slice(base.length + 1)).sort();
    assert.deepEqual(removed, ["wp-codebox-dead", "wp-codebox-reused-pid"]);
    for (const kept of ["wp-codebox-alive", "wp-codebox-other-namespace", "wp-codebox-other-host", "wp-codebox-unmarked", "not-a-sandbox"]) {
      assert.ok(existsSync(join(base, kept)), kept);
    }
    assert.deepEqual(sweepStaleSandboxDirs(base), [], "once per place and process");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
