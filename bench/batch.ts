/**
 * Batch benchmark: what a small task costs in each way of running many of them, on one machine in
 * one run: sequential one-shot `wp-codebox run`, plain Playground `runCLI` booting per task,
 * `batch --fresh-sandbox` (a boot per task) and `batch` with lanes (each lane keeps its sandbox and
 * recycles it between tasks) at several concurrency levels. Memory is sampled from /proc every
 * 200 ms over this process and all its descendants (peak total), and per sandbox process from its
 * own maxRSS. Prints a Markdown table; never passes or fails on time. Runs the built code (dist),
 * as users do. The figures are bounded by the machine: on a shared machine, say so beside them.
 *
 *   npm run bench:batch                 # 60 tasks per lanes level (1, 2, 4), 20 fresh, 10 one-shot, 5 runCLI
 *   BENCH_LEVELS=1,2 BENCH_TASKS=20 BENCH_SEQ_TASKS=4 npm run bench:batch
 *   BENCH_IN_PROCESS=2 npm run bench:batch   # also lanes at 2 with in-process isolation
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, freemem, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runLocalBatch, type BatchProgress, type Isolation } from "@wp-codebox/batch";
import { startPlainRunCli } from "./plain-playground.js";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const LEVELS = (process.env.BENCH_LEVELS ?? "1,2,4").split(",").map(Number);
const LANE_TASKS = Number(process.env.BENCH_TASKS ?? 60);
const FRESH_TASKS = Number(process.env.BENCH_FRESH_TASKS ?? 20);
const SEQ_TASKS = Number(process.env.BENCH_SEQ_TASKS ?? 10);
const RUNCLI_TASKS = Number(process.env.BENCH_RUNCLI_TASKS ?? 5);
const IN_PROCESS = (process.env.BENCH_IN_PROCESS ?? "").split(",").filter(Boolean).map(Number);
const CODE = "<?php echo json_encode(['posts' => wp_count_posts()->publish, 'php' => PHP_VERSION]);";
const MiB = 2 ** 20;


/** RSS (bytes) of `root` and every descendant, from /proc. */
function treeRss(root: number): number {
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(name), Number(fields[1]));
      rss.set(Number(name), Number(fields[21]) * 4096);
    } catch {
      // the process ended while we looked
    }
  }
  let total = 0;
  for (const [pid, bytes] of rss) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        total += bytes;
        break;
      }
    }
  }
  return total;
}

function sampler(root: number) {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(root))), 200);
  return { stop: () => (clearInterval(timer), Math.max(peak, treeRss(root))) };
}

function writeTasks(dir: string, count: number): string {
  writeFileSync(join(dir, "recipe.json"), JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: CODE } }] }));
  const file = join(dir, `tasks-${count}.jsonl`);
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ id: `t${i + 1}`, recipe: "recipe.json" })).join("\n") + "\n");
  return file;
}

interface Row {
  label: string;
  tasks: number;
  wallS: number;
  perTaskS: number;
  tasksPerMin: number;
  peakPerSandboxMiB: number;
  peakTotalMiB: number;
  failed: number;
}

const quiet: BatchProgress = { taskDone() {}, note() {}, stop() {} };

async function batchRow(dir: string, level: number, isolation: Isolation, count: number, freshSandbox = false): Promise<Row> {
  const file = writeTasks(dir, count);
  const out = join(dir, `out-${isolation}-${level}-${freshSandbox ? "fresh" : "lanes"}`);
  const s = sampler(process.pid);
  const t = performance.now();
  const outcome = await runLocalBatch({ tasksFile: file, artifactsDir: out, concurrency: level, isolation, freshSandbox, log: () => undefined, progress: quiet });
  const wall = (performance.now() - t) / 1000;
  const peakTotal = s.stop();
  const perSandbox = isolation === "process" ? Math.max(...(outcome.peakRssBytes ?? [0])) : (peakTotal - baseline) / level;
  rmSync(out, { recursive: true, force: true });
  return {
    label: `batch${freshSandbox ? " --fresh-sandbox" : " (lanes)"} --concurrency ${level}${isolation === "in-process" ? " (in-process)" : ""}${outcome.concurrency?.lowered ? ` (lowered to ${outcome.concurrency.concurrency})` : ""}`,
    tasks: count,
    wallS: wall,
    perTaskS: wall / count,
    tasksPerMin: (count / wall) * 60,
    peakPerSandboxMiB: perSandbox / MiB,
    peakTotalMiB: peakTotal / MiB,
    failed: outcome.report.counts.failed,
  };
}

async function sequentialRow(dir: string, count: number): Promise<Row> {
  let peakTotal = 0;
  let peakOne = 0;
  let failed = 0;
  const t = performance.now();
  for (let i = 0; i < count; i++) {
    const out = join(dir, `run-${i}`);
    const child = spawn(process.execPath, [join(REPO, "bin/wp-codebox.js"), "run", "--command", "wordpress.run-php", "--arg", `code=${CODE}`, "--artifacts", out], { stdio: "ignore" });
    const s = sampler(child.pid!);
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const peak = s.stop();
    peakOne = Math.max(peakOne, peak);
    peakTotal = Math.max(peakTotal, peak);
    if (code !== 0) failed++;
    rmSync(out, { recursive: true, force: true });
  }
  const wall = (performance.now() - t) / 1000;
  return { label: "sequential one-shot `run`", tasks: count, wallS: wall, perTaskS: wall / count, tasksPerMin: (count / wall) * 60, peakPerSandboxMiB: peakOne / MiB, peakTotalMiB: peakTotal / MiB, failed };
}

/** Plain Playground: `runCLI` boots the installed WordPress copy, runs the code, stops; per task. */
async function runCliRow(dir: string, count: number): Promise<Row> {
  const { findWordPressBuild, resolveCacheDir } = await import("@wp-codebox/runtime-playground");
  const build = findWordPressBuild();
  const site = join(dir, "runcli-site");
  cpSync(join(resolveCacheDir(), "wordpress", build.release), site, { recursive: true });
  // The first start installs into the copy (not counted), as wp-codebox's warm cache did.
  await (await startPlainRunCli(site, "install-from-existing-files"))[Symbol.asyncDispose]();
  const s = sampler(process.pid);
  let failed = 0;
  const t = performance.now();
  for (let i = 0; i < count; i++) {
    const cli = await startPlainRunCli(site, "do-not-attempt-installing");
    const result = await cli.playground.run({ code: CODE.replace("<?php ", "<?php require_once '/wordpress/wp-load.php'; ") });
    if (!result.text.includes("posts")) failed++;
    await cli[Symbol.asyncDispose]();
  }
  const wall = (performance.now() - t) / 1000;
  const peak = s.stop();
  return { label: "plain Playground `runCLI`, a boot per task", tasks: count, wallS: wall, perTaskS: wall / count, tasksPerMin: (count / wall) * 60, peakPerSandboxMiB: (peak - baseline) / MiB, peakTotalMiB: peak / MiB, failed };
}

let baseline = 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(REPO, ".bench-batch-"));
  try {
    console.error(`bench:batch on ${availableParallelism()} core(s), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} GiB available), load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; lanes at ${LEVELS.join(", ")}`);
    // Warm the installed-site cache so no row pays the first boot.
    await runLocalBatch({ tasksFile: writeTasks(dir, 1), artifactsDir: join(dir, "warm"), concurrency: 1, log: () => undefined, progress: quiet });
    baseline = treeRss(process.pid);
    const rows: Row[] = [];
    const add = (row: Row) => {
      rows.push(row);
      console.error(`  ${row.label}: ${row.tasks} tasks, ${(row.perTaskS * 1000).toFixed(0)} ms a task, ${row.tasksPerMin.toFixed(1)} tasks/min, peak ${row.peakTotalMiB.toFixed(0)} MiB${row.failed ? `, ${row.failed} failed` : ""}`);
    };
    const seq = await sequentialRow(dir, SEQ_TASKS);
    add(seq);
    if (RUNCLI_TASKS > 0) add(await runCliRow(dir, RUNCLI_TASKS));
    if (FRESH_TASKS > 0) add(await batchRow(dir, 2, "process", FRESH_TASKS, true));
    for (const level of LEVELS) add(await batchRow(dir, level, "process", LANE_TASKS));
    for (const level of IN_PROCESS) add(await batchRow(dir, level, "in-process", LANE_TASKS));
    const lines = [
      `load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${availableParallelism()} core(s)`,
      "",
      "| mode | tasks | wall (s) | ms per task | tasks/min | cheaper per task than one-shot `run` | peak RSS per sandbox (MiB) | peak RSS total (MiB) | failed |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...rows.map(
        (r) =>
          `| ${r.label} | ${r.tasks} | ${r.wallS.toFixed(1)} | ${(r.perTaskS * 1000).toFixed(0)} | ${r.tasksPerMin.toFixed(1)} | ${(seq.perTaskS / r.perTaskS).toFixed(1)}× | ${r.peakPerSandboxMiB.toFixed(0)} | ${r.peakTotalMiB.toFixed(0)} | ${r.failed} |`,
      ),
    ];
    console.log(lines.join("\n"));
    writeFileSync(join(REPO, "bench-batch-results.json"), `${JSON.stringify({ at: new Date().toISOString(), cores: availableParallelism(), loadavg: loadavg(), totalMemBytes: totalmem(), rows }, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
