/**
 * Killing a confined process ends everything it started, whenever the kill comes: right after the
 * spawn (bubblewrap's PID 1 of the sandbox still waiting for bubblewrap's go-ahead, which
 * SIGKILL to bubblewrap alone left orphaned for good, its streams open, so Node never exited) or
 * once the command runs. Needs bubblewrap, prlimit and setpriv (the native backend's tools).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { randomInt } from "node:crypto";
import { PHP_LIMITS, confinedCommand } from "../src/bubblewrap.js";
import { startConfined } from "../src/confined-process.js";
import { DEFAULT_NATIVE_TOOLS } from "../src/native-tools.js";

const tools = DEFAULT_NATIVE_TOOLS;
const skip = [tools.bwrap, tools.prlimit, tools.setpriv].some((p) => !existsSync(p)) ? "bubblewrap, prlimit or setpriv missing" : false;

/** Pids whose command line has `needle` as an argument. */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(needle)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("killing a confined process", { skip }, () => {
  // Delay between spawn and kill (ms); each repeated, as the early kill is a race.
  const cases: { name: string; delayMs: number; repeat: number }[] = [
    { name: "at once", delayMs: 0, repeat: 8 },
    { name: "1 ms after the spawn", delayMs: 1, repeat: 8 },
    { name: "3 ms after the spawn", delayMs: 3, repeat: 8 },
    { name: "while the command runs", delayMs: 300, repeat: 2 },
  ];
  for (const c of cases) {
    it(c.name, { timeout: 60_000 }, async () => {
      for (let i = 0; i < c.repeat; i++) {
        // A unique duration names this run's processes in /proc.
        const needle = `1000.${randomInt(1e9)}`;
        const proc = startConfined(confinedCommand(tools, { binds: [], chdir: "/", limits: PHP_LIMITS }, ["/usr/bin/sleep", needle]), 1024);
        if (c.delayMs > 0) await new Promise((r) => setTimeout(r, c.delayMs));
        proc.kill();
        let timer: NodeJS.Timeout | undefined;
        const ended = await Promise.race([proc.done.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), 10_000)))]);
        clearTimeout(timer);
        const left = processesWith(needle);
        for (const pid of left) process.kill(pid, "SIGKILL");
        proc.child.stdout?.destroy();
        proc.child.stderr?.destroy();
        assert.equal(ended, true, `run ${i + 1}: the process's streams stayed open after kill()`);
        assert.deepEqual(left, [], `run ${i + 1}: processes left running`);
      }
    });
  }
});
