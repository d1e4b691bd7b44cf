/**
 * Cache entries under concurrency: one builder, the others wait and use its entry; a dead holder's
 * lock is taken over; a failed or killed build leaves no half entry behind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheLockPath, ensureCacheEntry, isStaleLock, sweepStalePartials, withCacheLock, writeFileAtomic, type CacheLockOwner } from "../src/site/cache-entry.js";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

const linux = existsSync("/proc/self/stat");
const here = dirname(fileURLToPath(import.meta.url));
const builder = join(here, "fixtures", "cache-entry-builder.ts");

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "wp-codebox-cache-entry-test-"));
}

const complete = (dir: string) => existsSync(join(dir, "done"));
const buildDone = (staging: string) => {
  mkdirSync(staging);
  writeFileSync(join(staging, "done"), "1");
};

function me(): CacheLockOwner {
  const start = readFileSync(`/proc/${process.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!;
  return { pid: process.pid, host: hostname(), ns: readlinkSync("/proc/self/ns/pid"), start, startedAt: new Date().toISOString(), token: "live" };
}

test("isStaleLock: dead, reused and silent holders are stale; live ones are not", { skip: !linux && "needs /proc" }, () => {
  const self = me();
  const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
  const now = Date.now();
  const rows: Array<[string, CacheLockOwner | undefined, number, boolean]> = [
    ["live holder on this host", self, now - 3_600_000, false],
    ["dead pid on this host", { ...self, pid: dead }, now, true],
    ["pid reused by another process", { ...self, start: String(Number(self.start) - 1) }, now, true],
    ["other host, refreshed recently", { ...self, host: `${hostname()}-elsewhere` }, now - 1_000, false],
    ["other host, silent for longer than staleMs", { ...self, host: `${hostname()}-elsewhere` }, now - 10_000, true],
    ["other pid namespace, silent", { ...self, pid: dead, ns: "pid:[1]" }, now - 10_000, true],
    ["other pid namespace, refreshed", { ...self, pid: dead, ns: "pid:[1]" }, now, false],
    ["unreadable lock, fresh", undefined, now, false],
    ["unreadable lock, old", undefined, now - 10_000, true],
  ];
  for (const [name, owner, mtimeMs, stale] of rows) assert.equal(isStaleLock(owner, mtimeMs, 5_000, now), stale, name);
});

test("a build that fails leaves no entry, no staging folder and no lock; the next call builds", async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "sites", "site-a");
    await assert.rejects(
      ensureCacheEntry(entry, {
        isComplete: complete,
        build: (staging) => {
          mkdirSync(staging, { recursive: true });
          writeFileSync(join(staging, "half"), "x");
          throw new Error("installer crashed");
        },
      }),
      /installer crashed/,
    );
    assert.deepEqual(readdirSync(join(dir, "sites")), [], "nothing is left beside the entry");
    const again = await ensureCacheEntry(entry, { isComplete: complete, build: buildDone });
    assert.deepEqual(again, { path: entry, built: true });
    assert.deepEqual(readdirSync(join(dir, "sites")), ["site-a"]);
    assert.deepEqual(await ensureCacheEntry(entry, { isComplete: complete, build: () => assert.fail("built twice") }), { path: entry, built: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an incomplete entry is replaced; a complete one is never rebuilt", async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "tree");
    mkdirSync(entry);
    writeFileSync(join(entry, "stale-file"), "old");
    await ensureCacheEntry(entry, { isComplete: complete, build: buildDone });
    assert.deepEqual(readdirSync(entry), ["done"]);
    assert.deepEqual(readdirSync(dir), ["tree"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("concurrent builders in one process: one builds, the others wait for it", async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "entry");
    let builds = 0;
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        ensureCacheEntry(entry, {
          pollMs: 10,
          isComplete: complete,
          build: async (staging) => {
            builds++;
            await new Promise((r) => setTimeout(r, 50));
            buildDone(staging);
          },
        }),
      ),
    );
    assert.equal(builds, 1);
    assert.deepEqual(results.map((r) => r.built).sort(), [false, false, false, false, true]);
    assert.equal(existsSync(cacheLockPath(entry)), false, "lock released");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function runBuilder(entry: string, log: string, buildMs: number): { child: ReturnType<typeof spawn>; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", builder, entry, log, String(buildMs)], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

test("concurrent builder processes: exactly one builds, all succeed and see the complete entry", async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "sites", "entry");
    const log = join(dir, "builds.log");
    writeFileSync(log, "");
    const runs = await Promise.all(Array.from({ length: 4 }, () => runBuilder(entry, log, 300).done));
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const outcomes = runs.map((r) => JSON.parse(r.stdout.trim().split("\n").pop()!) as { built: boolean; complete: boolean });
    assert.equal(outcomes.filter((o) => o.built).length, 1);
    assert.ok(outcomes.every((o) => o.complete));
    assert.equal(readFileSync(log, "utf8").trim().split("\n").length, 1, "built once");
    assert.deepEqual(readdirSync(join(dir, "sites")), ["entry"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a holder killed mid-build: its lock is taken over and its half-built staging folder removed", { skip: !linux && "needs /proc" }, async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "entry");
    const log = join(dir, "builds.log");
    writeFileSync(log, "");
    const { child, done } = runBuilder(entry, log, 60_000);
    await new Promise<void>((resolve) => child.stdout!.on("data", (d) => String(d).includes("building") && resolve()));
    child.kill("SIGKILL");
    await done;
    assert.ok(existsSync(cacheLockPath(entry)), "the dead holder's lock is still there");
    assert.ok(readdirSync(dir).some((n) => n.startsWith("entry.staging-")), "and its half-built staging folder");
    const result = await ensureCacheEntry(entry, { pollMs: 10, isComplete: complete, build: buildDone });
    assert.equal(result.built, true);
    assert.deepEqual(readdirSync(dir).sort(), ["builds.log", "entry"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("waiting for a live holder ends with `interrupted` when the signal aborts; the lock stays its", { skip: !linux && "needs /proc" }, async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "entry");
    writeFileSync(cacheLockPath(entry), JSON.stringify(me()));
    const controller = new AbortController();
    let waitedFor: CacheLockOwner | undefined;
    const waiting = withCacheLock(entry, () => assert.fail("ran without the lock"), {
      pollMs: 10,
      signal: controller.signal,
      onWait: (owner) => {
        waitedFor = owner;
        controller.abort();
      },
    });
    await assert.rejects(waiting, (error: unknown) => error instanceof WpCodeboxError && error.code === "interrupted" && /pid \d+/.test(error.message));
    assert.equal(waitedFor?.token, "live");
    assert.equal(JSON.parse(readFileSync(cacheLockPath(entry), "utf8")).token, "live");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a lock from another host is taken over once it has not been refreshed for staleMs", async () => {
  const dir = scratch();
  try {
    const entry = join(dir, "entry");
    writeFileSync(cacheLockPath(entry), JSON.stringify({ pid: 1, host: `${hostname()}-elsewhere`, startedAt: "2020-01-01T00:00:00.000Z", token: "old" }));
    const old = new Date(Date.now() - 60_000);
    utimesSync(cacheLockPath(entry), old, old);
    const result = await ensureCacheEntry(entry, { staleMs: 30_000, pollMs: 10, isComplete: complete, build: buildDone });
    assert.equal(result.built, true);
    assert.equal(existsSync(cacheLockPath(entry)), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("writeFileAtomic replaces a file whole and leaves no temporary file", () => {
  const dir = scratch();
  try {
    const file = join(dir, "releases", "6.8.json");
    writeFileAtomic(file, "one");
    writeFileAtomic(file, "two");
    assert.equal(readFileSync(file, "utf8"), "two");
    assert.deepEqual(readdirSync(join(dir, "releases")), ["6.8.json"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A download saved by writeFileAtomic and cut off by a killed process left its partial file in the
// cache's releases folder for good; the next resolution of any release sweeps the stale ones.
test("sweepStalePartials removes partial files older than a minute, of every file or of the one named", () => {
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-partials-"));
  try {
    const old = Date.now() / 1000 - 120;
    // [name, age, swept by a sweep of the whole folder?]
    const cases: [string, "old" | "new", boolean][] = [
      ["wordpress-6.9.4-29e587a8e945.zip.partial-7781-a1b2c3d4", "old", true], // a killed download
      ["6.9.4.json.partial-7781-0f0f0f0f", "old", true], // its record, killed mid-write
      ["wordpress-7.0.4-7a4aaeff993b.zip.partial-9120-deadbeef", "new", false], // another process saving it now
      ["wordpress-6.9.4-29e587a8e945.zip", "old", false], // a release
      ["6.9.4.json", "old", false],
      ["6.9.4.json.lock", "old", false], // a lock: withCacheLock's to judge
      ["notes.partial-x", "old", false], // not a name writeFileAtomic makes
    ];
    for (const [name, age] of cases) {
      writeFileSync(join(dir, name), "x");
      if (age === "old") utimesSync(join(dir, name), old, old);
    }
    assert.equal(sweepStalePartials(dir, "something-else.zip"), 0, "only the named file's partials when a name is given");
    assert.equal(sweepStalePartials(dir), cases.filter(([, , swept]) => swept).length);
    assert.deepEqual(readdirSync(dir).sort(), cases.filter(([, , swept]) => !swept).map(([name]) => name).sort());
    assert.equal(sweepStalePartials(join(dir, "missing")), 0, "a folder that is not there is nothing to sweep");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
