/**
 * Sandbox folders left by a killed process: removed when their owner process is gone (or its pid
 * now names another process), kept while it lives or when there is no owner record.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SANDBOX_DIR_PREFIX, markSandboxOwner, sweepStaleSandboxes } from "../src/stale-sandboxes.js";

const PIDNS = readlinkSync("/proc/self/ns/pid");

/** A pid no process has now: a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("sweepStaleSandboxes", () => {
  const cases: { name: string; make(root: string): void; kept: boolean }[] = [
    { name: "this live process's folder is kept", make: (root) => markSandboxOwner(root), kept: true },
    { name: "a folder whose process is gone is removed", make: (root) => writeFileSync(join(root, "owner.json"), JSON.stringify({ pid: deadPid(), start: "1", pidns: PIDNS })), kept: false },
    { name: "a folder of a process in another PID namespace is kept, whatever its pid says here", make: (root) => writeFileSync(join(root, "owner.json"), JSON.stringify({ pid: deadPid(), start: "1", pidns: "pid:[1]" })), kept: true },
    { name: "a folder whose pid now names another process (other start time) is removed", make: (root) => writeFileSync(join(root, "owner.json"), JSON.stringify({ pid: process.pid, start: "-1", pidns: PIDNS })), kept: false },
    { name: "a folder without an owner record is kept", make: () => undefined, kept: true },
    { name: "a folder whose owner record is not JSON is kept", make: (root) => writeFileSync(join(root, "owner.json"), "{"), kept: true },
    { name: "a folder whose owner record is a link is kept", make: (root) => symlinkSync("/etc/hostname", join(root, "owner.json")), kept: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const dir = mkdtempSync(join(tmpdir(), "wp-codebox-sweep-"));
      try {
        const root = join(dir, `${SANDBOX_DIR_PREFIX}x`);
        mkdirSync(join(root, "data"), { recursive: true });
        writeFileSync(join(root, "data", "ibdata1"), "x");
        const other = join(dir, "not-a-sandbox");
        mkdirSync(other);
        writeFileSync(join(other, "owner.json"), JSON.stringify({ pid: deadPid(), start: "1" }));
        c.make(root);
        const removed = sweepStaleSandboxes(dir);
        assert.equal(existsSync(root), c.kept);
        assert.deepEqual(removed, c.kept ? [] : [root]);
        assert.ok(existsSync(other), "only sandbox folders are looked at");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
