/**
 * Pure batch logic, no sandbox and no Redis: task-file validation, the report, JUnit XML, the
 * queue URL, the concurrency decision and progress output.
 */
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BATCH_REPORT_SCHEMA, WpCodeboxError, validateAgainstSchema, type BatchTaskResult } from "@wp-codebox/runtime-core";
import { applyRuntimeOverrides, buildReport, createProgress, decideConcurrency, parseQueueUrl, readCgroupLimits, renderJUnit, validateTaskLines, xmlEscape } from "@wp-codebox/batch";
import { scratchDir } from "../../../test/support/scratch-dir.js";

const dir = scratchDir("wp-codebox-batch-unit-");
writeFileSync(join(dir, "ok.json"), JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] }));
writeFileSync(join(dir, "bad.json"), JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "nope" }] }));
writeFileSync(join(dir, "ep.json"), JSON.stringify({ schema: "wp-codebox/episode-script/v1", steps: [{ snapshot: true }] }));
writeFileSync(join(dir, "ep-bad.json"), JSON.stringify({ schema: "wp-codebox/episode-script/v1", steps: [] }));
writeFileSync(join(dir, "ep-net.json"), JSON.stringify({ schema: "wp-codebox/episode-script/v1", policy: { network: "allow" }, steps: [{ snapshot: true }] }));
writeFileSync(
  join(dir, "matrix.json"),
  JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", runtime: { matrix: { wp: ["6.4", "6.5"], php: ["8.2", "8.3"] } }, steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] }),
);
// What the Playground backend's preflight refuses, without its builds: WordPress 4.0 and PHP outside 7.4-8.5.
const PHP = ["7.4", "8.0", "8.1", "8.2", "8.3", "8.4", "8.5"];
const backend = {
  preflight(spec: { wordpress?: { version?: string }; php?: string } = {}) {
    if (spec.wordpress?.version === "4.0") throw new WpCodeboxError("wordpress-version-unavailable", "WordPress 4.0 is not available");
    if (spec.php !== undefined && !PHP.includes(spec.php)) throw new WpCodeboxError("php-version-unavailable", `PHP ${spec.php} is not available. Choose one of: ${PHP.join(", ")}.`);
    return { wordpressVersion: spec.wordpress?.version ?? "6.5.5", phpVersion: spec.php ?? "8.3" };
  },
};

test("a valid task file resolves paths, overrides and timeouts, skipping blank and // lines", () => {
  const text = [
    '{"id": "a", "recipe": "ok.json", "runtime": {"wp": "6.5", "php": "8.2", "clock": "2030-01-01T00:00:00Z", "seed": 7}, "timeout": "90s"}',
    "",
    "// a comment",
    '{"id": "b.2", "episode": "ep.json", "timeout": 5000}',
    '{"id": "c", "recipe": "ok.json", "runtime": {"wp": "latest", "clock": "real"}}',
  ].join("\n");
  const v = validateTaskLines(text, dir, { backend });
  assert.deepEqual(v.issues, []);
  assert.equal(v.valid, true);
  assert.deepEqual(
    v.tasks.map((t) => [t.id, t.line, t.kind, t.file, t.runtime, t.timeoutMs]),
    [
      ["a", 1, "recipe", join(dir, "ok.json"), { wp: "6.5", php: "8.2", clock: "2030-01-01T00:00:00Z", seed: 7 }, 90_000],
      ["b.2", 4, "episode", join(dir, "ep.json"), {}, 5000],
      ["c", 5, "recipe", join(dir, "ok.json"), { wp: "latest", clock: "real" }, undefined],
    ],
  );
});

test("a matrix recipe is one task per cell, ids <line id>.wp-X-php-Y; an override replaces its axis", () => {
  const v = validateTaskLines(['{"id": "m", "recipe": "matrix.json", "runtime": {"seed": 3}}', '{"id": "n", "recipe": "matrix.json", "runtime": {"php": "8.1"}}'].join("\n"), dir, { backend });
  assert.deepEqual(v.issues, []);
  assert.deepEqual(
    v.tasks.map((t) => [t.id, t.line, t.runtime, t.matrix]),
    [
      ["m.wp-6.4-php-8.2", 1, { seed: 3, wp: "6.4", php: "8.2" }, { task: "m", wp: "6.4", php: "8.2" }],
      ["m.wp-6.4-php-8.3", 1, { seed: 3, wp: "6.4", php: "8.3" }, { task: "m", wp: "6.4", php: "8.3" }],
      ["m.wp-6.5-php-8.2", 1, { seed: 3, wp: "6.5", php: "8.2" }, { task: "m", wp: "6.5", php: "8.2" }],
      ["m.wp-6.5-php-8.3", 1, { seed: 3, wp: "6.5", php: "8.3" }, { task: "m", wp: "6.5", php: "8.3" }],
      ["n.wp-6.4-php-8.1", 2, { php: "8.1", wp: "6.4" }, { task: "n", wp: "6.4", php: "8.1" }],
      ["n.wp-6.5-php-8.1", 2, { php: "8.1", wp: "6.5" }, { task: "n", wp: "6.5", php: "8.1" }],
    ],
  );
  // A cell is an ordinary recipe run: the overrides leave no matrix behind.
  const cellDoc = applyRuntimeOverrides({ runtime: { matrix: { wp: ["6.4", "6.5"], php: ["8.2"] }, clock: "real" } }, "recipe", v.tasks[0]!.runtime);
  assert.deepEqual(cellDoc, { runtime: { wp: "6.4", php: "8.2", clock: "real", seed: 3 } });
  // A cell id that collides with another line's id is an error of the later line.
  const clash = validateTaskLines(['{"id": "m.wp-6.4-php-8.2", "recipe": "ok.json"}', '{"id": "m", "recipe": "matrix.json"}'].join("\n"), dir, { backend });
  assert.equal(clash.valid, false);
  assert.deepEqual(clash.issues.map((i) => [i.line, i.pointer]), [[2, "/id"]]);
  assert.match(clash.issues[0]!.message, /matrix cell id m\.wp-6\.4-php-8\.2 is also the id of line 1/);
});

test("validation lists every problem of the whole file with its line and JSON pointer", () => {
  const text = [
    '{"id": "1", "recipe": "ok.json"}', // 1: integer id
    '{"id": "a", "recipe": "ok.json", "runtime": {"php": "9.9", "clock": "tomorrow", "extra": 1}, "timeout": "soon"}', // 2
    "not json", // 3
    '{"id": "a", "recipe": "ok.json", "episode": "ep.json"}', // 4: both, duplicate id
    '{"id": "c", "recipe": "missing.json"}', // 5
    '{"id": "d", "recipe": "bad.json"}', // 6
    '{"id": "e", "episode": "ep-bad.json"}', // 7
    '{"id": "f", "recipe": "ok.json", "runtime": {"wp": "4.0"}, "color": "red"}', // 8
    "[1, 2]", // 9
    '{"recipe": "ok.json"}', // 10
    '{"id": "g", "episode": "ep.json", "runtime": {"php": "5.6", "seed": -1}}', // 11
    '{"id": "h", "episode": "ep-net.json", "runtime": {"seed": 5}}', // 12: seeded with outbound network
    '{"id": "i", "recipe": "ok.json", "runtime": {"clock": "2030-01-01"}}', // 13: no timezone
'{"id": "j", "recipe": "ok.json", "timeout": true}', // 14: neither text nor a number
  ].join("\n");
  const v = validateTaskLines(text, dir, { backend });
  assert.equal(v.valid, false);
  assert.deepEqual(v.tasks, []);
  const got = v.issues.map((i) => `${i.line} ${i.pointer}`);
  for (const expected of [
    "1 /id",
    "2 /runtime/php",
    "2 /runtime/clock",
    "2 /runtime/extra",
    "2 /timeout",
    "3 ",
    "4 ",
    "4 /id",
    "5 /recipe",
    "6 /recipe",
    "7 /episode",
    "8 /runtime/wp",
    "8 /color",
    "9 ",
    "10 /id",
    "11 /runtime/seed",
    "12 /runtime/seed",
    "13 /runtime/clock",
    "14 /timeout",
  ]) {
    assert.ok(got.includes(expected), `expected an issue at line ${expected}; got ${JSON.stringify(v.issues, null, 1)}`);
  }
  const byKey = (k: string) => v.issues.find((i) => `${i.line} ${i.pointer}` === k)!.message;
  assert.match(byKey("2 /runtime/php"), /php-version-unavailable: PHP 9\.9 is not available\. Choose one of: 7\.4, 8\.0/);
  assert.equal(byKey("14 /timeout"), 'must be a duration such as "90s" or a positive number of ms');
  assert.match(byKey("2 /timeout"), /^Invalid duration "soon": use a non-negative number of milliseconds/);
  assert.match(byKey("4 /id"), /duplicates the id of line 2/);
  assert.match(byKey("5 /recipe"), /missing\.json does not exist/);
  assert.match(byKey("6 /recipe"), /bad\.json#\/steps\/0\/command: unknown command "nope"/);
  assert.match(byKey("7 /episode"), /ep-bad\.json#\/steps: must have at least one step/);
  assert.match(byKey("8 /runtime/wp"), /wordpress-version-unavailable: WordPress 4\.0 is not available/);
  assert.match(byKey("12 /runtime/seed"), /seed-with-network/);
  assert.match(byKey("13 /runtime/clock"), /ISO-8601 instant with a timezone/);
  assert.match(byKey("1 /id"), /not be all digits/);
});

test("an empty task file is an error", () => {
  const v = validateTaskLines("\n// nothing\n", dir);
  assert.equal(v.valid, false);
  assert.match(v.issues[0]!.message, /no tasks/);
});

const results: BatchTaskResult[] = [
  { id: "b", kind: "episode", status: "failed", exitCode: 70, durationMs: 10, bundle: null, error: { code: "sandbox-crashed", message: 'killed <by> "test" & \u0001control' } },
  { id: "a", kind: "recipe", status: "passed", exitCode: 0, durationMs: 1500, bundle: { id: "artifact-bundle-sha256-aa", digest: "aa" }, resumed: true },
  { id: "c", kind: "recipe", status: "failed", exitCode: 1, durationMs: 2500, bundle: { id: "artifact-bundle-sha256-cc", digest: "cc" }, error: { code: "expectation-failed", message: "stdout does not contain x" } },
  { id: "b", kind: "episode", status: "passed", exitCode: 0, durationMs: 20, bundle: { id: "artifact-bundle-sha256-bb", digest: "bb" }, attempts: 2 },
];
const context = { tasksFile: "/x/tasks.jsonl", artifactsDir: "/x/out", mode: "local" as const, concurrency: 2, startedAt: new Date("2030-01-01T00:00:00Z"), finishedAt: new Date("2030-01-01T00:00:05Z") };

test("the report keeps task-file order, one entry per id (the last result wins), and matches its schema", () => {
  const report = buildReport(["a", "b", "c"], results, context);
  assert.deepEqual(report.tasks.map((t) => [t.id, t.status]), [["a", "passed"], ["b", "passed"], ["c", "failed"]]);
  assert.deepEqual(report.counts, { total: 3, passed: 2, failed: 1, resumed: 1 });
  assert.equal(report.durationMs, 5000);
  assert.deepEqual(validateAgainstSchema(BATCH_REPORT_SCHEMA, JSON.parse(JSON.stringify(report))), []);
  assert.throws(() => buildReport(["a", "zzz"], results, context), /No result for task zzz/);
});

test("JUnit XML: failures with a bundle, errors without, escaped text, bundle in system-out", () => {
  const report = buildReport(["a", "b", "c"], [results[0]!, results[1]!, results[2]!], context);
  const xml = renderJUnit(report);
  assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="wp-codebox batch" tests="3" failures="1" errors="1" time="5.000">/);
  assert.match(xml, /<testsuite name="tasks.jsonl" tests="3" failures="1" errors="1"/);
  assert.match(xml, /<testcase classname="recipe" name="a" time="1.500">\n {6}<system-out>bundle: \/x\/out\/a\nid: artifact-bundle-sha256-aa\ndigest: aa\nresumed: kept from an earlier run<\/system-out>/);
  assert.match(xml, /<error type="sandbox-crashed" message="killed &lt;by&gt; &quot;test&quot; &amp; \uFFFDcontrol">/);
  assert.match(xml, /<failure type="expectation-failed" message="stdout does not contain x">/);
  assert.doesNotMatch(xml, /\u0001/);
  assert.equal(xmlEscape("a<b>&'\""), "a&lt;b&gt;&amp;&apos;&quot;");
});

test("queue URLs: host, port, db, password hidden in display; other schemes refused", () => {
  assert.deepEqual(parseQueueUrl("redis://127.0.0.1:6390/2"), { host: "127.0.0.1", port: 6390, db: 2, tls: false, display: "redis://127.0.0.1:6390/2" });
  const withPassword = parseQueueUrl("redis://user:s3cret@redis.internal");
  assert.equal(withPassword.port, 6379);
  assert.equal(withPassword.password, "s3cret");
  assert.equal(withPassword.display, "redis://user:***@redis.internal");
  assert.throws(() => parseQueueUrl("http://x"), /redis:\/\/HOST:PORT/);
  assert.throws(() => parseQueueUrl("redis://x/abc"), /database number/);
  assert.throws(() => parseQueueUrl("nonsense"), /not a URL/);
});

test("concurrency: one per core by default, capped by available memory", () => {
  const gib = 2 ** 30;
  const none = {};
  assert.equal(decideConcurrency(undefined, { cores: 2, availableBytes: 16 * gib, cgroup: none }).concurrency, 2);
  assert.equal(decideConcurrency(8, { cores: 2, availableBytes: 16 * gib, cgroup: none }).concurrency, 8);
  const low = decideConcurrency(8, { cores: 8, availableBytes: 2 * gib, cgroup: none });
  assert.equal(low.concurrency, 2);
  assert.equal(low.lowered?.requested, 8);
  assert.equal(decideConcurrency(undefined, { cores: 4, availableBytes: 0.5 * gib, cgroup: none }).concurrency, 1);
});

test("concurrency: a cgroup's CPU quota and memory limit lower the host's numbers", () => {
  const gib = 2 ** 30;
  const rows: { name: string; cgroup: { cpus?: number; memoryAvailableBytes?: number }; requested?: number; concurrency: number; cores: number; availableBytes: number }[] = [
    { name: "no limits: the host's numbers", cgroup: {}, concurrency: 8, cores: 8, availableBytes: 32 * gib },
    { name: "CPU quota of 2", cgroup: { cpus: 2 }, concurrency: 2, cores: 2, availableBytes: 32 * gib },
    { name: "memory limit leaves 3 GiB: (3 - 1) / 0.5 = 4 slots", cgroup: { memoryAvailableBytes: 3 * gib }, concurrency: 4, cores: 8, availableBytes: 3 * gib },
    { name: "both: the tighter wins", cgroup: { cpus: 6, memoryAvailableBytes: 2 * gib }, concurrency: 2, cores: 6, availableBytes: 2 * gib },
    { name: "a cgroup limit above the host's numbers changes nothing", cgroup: { cpus: 64, memoryAvailableBytes: 256 * gib }, concurrency: 8, cores: 8, availableBytes: 32 * gib },
    { name: "a requested value is capped by the cgroup's memory", cgroup: { memoryAvailableBytes: 2 * gib }, requested: 8, concurrency: 2, cores: 8, availableBytes: 2 * gib },
    { name: "nothing left: still one", cgroup: { memoryAvailableBytes: 0 }, concurrency: 1, cores: 8, availableBytes: 0 },
  ];
  for (const row of rows) {
    const d = decideConcurrency(row.requested, { cores: 8, availableBytes: 32 * gib, cgroup: row.cgroup });
    assert.deepEqual({ concurrency: d.concurrency, cores: d.cores, availableBytes: d.availableBytes }, { concurrency: row.concurrency, cores: row.cores, availableBytes: row.availableBytes }, row.name);
  }
  assert.match(decideConcurrency(8, { cores: 8, availableBytes: 32 * gib, cgroup: { memoryAvailableBytes: 2 * gib } }).lowered?.reason ?? "", /2048 MiB available \(the cgroup memory limit less its usage\) holds 2 sandbox/);
});

test("readCgroupLimits: v1 and v2 files, read from a fake cgroup tree", () => {
  const gib = 2 ** 30;
  const scratch = scratchDir("wp-codebox-cgroup-");
  try {
    const rows: { name: string; files: Record<string, string>; self?: string; expected: { memoryAvailableBytes?: number; cpus?: number; version?: 1 | 2 } }[] = [
      { name: "no cgroup filesystem", files: {}, expected: {} },
      { name: "v2, nothing limited", files: { "cgroup.controllers": "cpu memory", "memory.max": "max\n", "memory.current": "1000\n", "cpu.max": "max 100000\n" }, expected: { version: 2 } },
      {
        name: "v2 limits: 4 GiB less 1 GiB used, quota 150000/100000 → 2 CPUs",
        files: { "cgroup.controllers": "cpu memory", "memory.max": `${4 * gib}\n`, "memory.current": `${gib}\n`, "cpu.max": "150000 100000\n" },
        expected: { version: 2, memoryAvailableBytes: 3 * gib, cpus: 2 },
      },
      { name: "v2, quota below one CPU rounds up to 1", files: { "cgroup.controllers": "cpu", "cpu.max": "50000 100000" }, expected: { version: 2, cpus: 1 } },
      { name: "v2, usage above the limit: nothing left", files: { "cgroup.controllers": "memory", "memory.max": "100", "memory.current": "150" }, expected: { version: 2, memoryAvailableBytes: 0 } },
      {
        name: "v2, the process's own cgroup is tighter than the root",
        files: { "cgroup.controllers": "cpu memory", "memory.max": `${8 * gib}`, "app/job/memory.max": `${2 * gib}`, "app/job/memory.current": `${gib / 2}`, "app/cpu.max": "300000 100000", "self": "0::/app/job\n" },
        self: "self",
        expected: { version: 2, memoryAvailableBytes: 1.5 * gib, cpus: 3 },
      },
      {
        name: "v2, own cgroup not under root (inside a container): the root's limits",
        files: { "cgroup.controllers": "memory", "memory.max": `${2 * gib}`, "memory.current": "0", "self": "0::/elsewhere\n" },
        self: "self",
        expected: { version: 2, memoryAvailableBytes: 2 * gib },
      },
      { name: "v2, unreadable garbage is no limit", files: { "cgroup.controllers": "", "memory.max": "lots", "cpu.max": "x y" }, expected: { version: 2 } },
      {
        name: "v1 limits: memory/ and cpu/",
        files: { "memory/memory.limit_in_bytes": `${6 * gib}`, "memory/memory.usage_in_bytes": `${2 * gib}`, "cpu/cpu.cfs_quota_us": "200000", "cpu/cpu.cfs_period_us": "100000" },
        expected: { version: 1, memoryAvailableBytes: 4 * gib, cpus: 2 },
      },
      { name: "v1 without a quota (-1) and the 'unlimited' memory value", files: { "memory/memory.limit_in_bytes": "9223372036854771712", "memory/memory.usage_in_bytes": "0", "cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000" }, expected: { version: 1, memoryAvailableBytes: 9223372036854771712 } },
      { name: "v1 with cpu,cpuacct", files: { "cpu,cpuacct/cpu.cfs_quota_us": "400000", "cpu,cpuacct/cpu.cfs_period_us": "100000" }, expected: { version: 1, cpus: 4 } },
      {
        name: "v1, the memory cgroup named in /proc/self/cgroup",
        files: { "memory/memory.limit_in_bytes": "9223372036854771712", "memory/box/memory.limit_in_bytes": `${3 * gib}`, "memory/box/memory.usage_in_bytes": `${gib}`, "self": "4:memory:/box\n1:cpu:/\n0::/\n" },
        self: "self",
        expected: { version: 1, memoryAvailableBytes: 2 * gib },
      },
    ];
    rows.forEach((row, i) => {
      const root = join(scratch, String(i));
      mkdirSync(root, { recursive: true });
      for (const [path, content] of Object.entries(row.files)) {
        mkdirSync(join(root, path, ".."), { recursive: true });
        writeFileSync(join(root, path), content);
      }
      const limits = readCgroupLimits({ root, self: join(root, row.self ?? "no-such-file") });
      assert.deepEqual(limits, row.expected, row.name);
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test("progress without a terminal prints one line per task with counts and ETA", () => {
  let out = "";
  const progress = createProgress({ total: 2, stream: { write: (t: string) => (out += t), isTTY: false } });
  progress.taskDone(results[2]!);
  progress.taskDone(results[1]!);
  progress.stop();
  const lines = out.trim().split("\n");
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /^\[1\/2\] c failed in 2\.5 s — expectation-failed: stdout does not contain x · 0 passed, 1 failed · ETA/);
  assert.match(lines[1]!, /^\[2\/2\] a passed \(kept: its bundle verifies\) · 1 passed, 1 failed$/);
});
