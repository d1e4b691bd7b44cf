/**
 * Batch benchmark: what a task costs in each way of running many of them, on one machine in one
 * run: sequential one-shot `wp-codebox run` (`recipe run` for a browser task), plain Playground
 * `runCLI` booting per task, `batch --fresh-sandbox` (a boot per task) and `batch` with lanes (each
 * lane keeps its sandbox and recycles it between tasks) at several concurrency levels; for small PHP
 * tasks and for browser tasks (Chromium opens the front page and checks it), one table each. Memory is sampled from /proc every
 * 200 ms over this process and all its descendants (peak total), and per sandbox process from its
 * own maxRSS. Prints a Markdown table; never passes or fails on time. Runs the built code (dist),
 * as users do. The figures are bounded by the machine: on a shared machine, say so beside them.
 *
 *   npm run bench:batch                 # small: 60 tasks per lanes level (1, 2, 4), 20 fresh, 10 one-shot, 5 runCLI
 *                                       # browser: 20 per lanes level, 20 fresh, 5 one-shot, 3 runCLI
 *   BENCH_LEVELS=1,2 BENCH_TASKS=20 BENCH_SEQ_TASKS=4 BENCH_BROWSER_TASKS=0 npm run bench:batch
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
const BROWSER_TASKS = Number(process.env.BENCH_BROWSER_TASKS ?? 20);
const BROWSER_FRESH_TASKS = Number(process.env.BENCH_BROWSER_FRESH_TASKS ?? BROWSER_TASKS);
const BROWSER_SEQ_TASKS = Number(process.env.BENCH_BROWSER_SEQ_TASKS ?? 5);
const BROWSER_RUNCLI_TASKS = Number(process.env.BENCH_BROWSER_RUNCLI_TASKS ?? 3);
const CODE = "<?php echo json_encode(['posts' => wp_count_posts()->publish, 'php' => PHP_VERSION]);";
/** A browser task: Chromium opens the front page and checks that it rendered. */
const BROWSER_STEPS = [
  { kind: "navigate", url: "/" },
  { kind: "evaluate", expression: "document.body !== null && document.title.length > 0", assert: true },
];
type TaskKind = "small" | "browser";
const RECIPES: Record<TaskKind, unknown> = {
  small: { schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: CODE } }] },
  browser: { schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.browser-actions", args: { steps: BROWSER_STEPS, as: "anonymous" }, expect: { status: "ok", assertions: "all-passed" } }] },
};
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

function writeTasks(dir: string, count: number, kind: TaskKind = "small"): string {
  writeFileSync(join(dir, `recipe-${kind}.json`), JSON.stringify(RECIPES[kind]));
  const file = join(dir, `tasks-${kind}-${count}.jsonl`);
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ id: `t${i + 1}`, recipe: `recipe-${kind}.json` })).join("\n") + "\n");
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

async function batchRow(dir: string, level: number, isolation: Isolation, count: number, freshSandbox = false, kind: TaskKind = "small"): Promise<Row> {
  const file = writeTasks(dir, count, kind);
  const out = join(dir, `out-${kind}-${isolation}-${level}-${freshSandbox ? "fresh" : "lanes"}`);
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

async function sequentialRow(dir: string, count: number, kind: TaskKind = "small"): Promise<Row> {
  let peakTotal = 0;
  let peakOne = 0;
  let failed = 0;
  const recipe = join(dir, `recipe-${kind}.json`);
  writeFileSync(recipe, JSON.stringify(RECIPES[kind]));
  const t = performance.now();
  for (let i = 0; i < count; i++) {
    const out = join(dir, `run-${kind}-${i}`);
    const argv = kind === "small" ? ["run", "--command", "wordpress.run-php", "--arg", `code=${CODE}`] : ["recipe", "run", recipe];
    const child = spawn(process.execPath, [join(REPO, "bin/wp-codebox.js"), ...argv, "--artifacts", out], { stdio: "ignore" });
    const s = sampler(child.pid!);
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const peak = s.stop();
    peakOne = Math.max(peakOne, peak);
    peakTotal = Math.max(peakTotal, peak);
    if (code !== 0) failed++;
    rmSync(out, { recursive: true, force: true });
  }
  const wall = (performance.now() - t) / 1000;
  return { label: kind === "small" ? "sequential one-shot `run`" : "sequential one-shot `recipe run`", tasks: count, wallS: wall, perTaskS: wall / count, tasksPerMin: (count / wall) * 60, peakPerSandboxMiB: peakOne / MiB, peakTotalMiB: peakTotal / MiB, failed };
}

/**
 * Plain Playground: `runCLI` boots the installed WordPress copy, runs the code (or Chromium opens
 * its front page and checks it, as the browser task does), stops; per task.
 */
async function runCliRow(dir: string, count: number, kind: TaskKind = "small"): Promise<Row> {
  const { findWordPressBuild, resolveCacheDir } = await import("@wp-codebox/runtime-playground");
  const build = findWordPressBuild();
  const site = join(dir, `runcli-site-${kind}`);
  cpSync(join(resolveCacheDir(), "wordpress", build.release), site, { recursive: true });
  // The first start installs into the copy (not counted), as wp-codebox's warm cache did.
  await (await startPlainRunCli(site, "install-from-existing-files"))[Symbol.asyncDispose]();
  const { launchBrowser } = await import("@wp-codebox/runtime-playground");
  const s = sampler(process.pid);
  let failed = 0;
  const t = performance.now();
  for (let i = 0; i < count; i++) {
    const cli = await startPlainRunCli(site, "do-not-attempt-installing", kind === "browser" ? { WP_HTTP_BLOCK_EXTERNAL: "true" } : undefined);
    try {
      if (kind === "small") {
        const result = await cli.playground.run({ code: CODE.replace("<?php ", "<?php require_once '/wordpress/wp-load.php'; ") });
        if (!result.text.includes("posts")) failed++;
      } else {
        const browser = await launchBrowser();
        try {
          const page = await browser.newPage();
          await page.goto(`${cli.serverUrl}/`, { waitUntil: "load" });
          if (!(await page.evaluate(BROWSER_STEPS[1]!.expression as string))) failed++;
        } finally {
          await browser.close();
        }
      }
    } finally {
      await cli[Symbol.asyncDispose]();
    }
  }
  const wall = (performance.now() - t) / 1000;
  const peak = s.stop();
  return { label: `plain Playground \`runCLI\`, a boot${kind === "browser" ? " and a Chromium" : ""} per task`, tasks: count, wallS: wall, perTaskS: wall / count, tasksPerMin: (count / wall) * 60, peakPerSandboxMiB: (peak - baseline) / MiB, peakTotalMiB: peak / MiB, failed };
}

let baseline = 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(REPO, ".bench-batch-"));
  try {
    console.error(`bench:batch on ${availableParallelism()} core(s), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} GiB available), load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; lanes at ${LEVELS.join(", ")}`);
    // Warm the installed-site cache so no row pays the first boot.
    await runLocalBatch({ tasksFile: writeTasks(dir, 1), artifactsDir: join(dir, "warm"), concurrency: 1, log: () => undefined, progress: quiet });
    baseline = treeRss(process.pid);
    const tables: { kind: TaskKind; rows: Row[] }[] = [];
    const add = (rows: Row[], row: Row) => {
      rows.push(row);
      console.error(`  ${row.label}: ${row.tasks} tasks, ${(row.perTaskS * 1000).toFixed(0)} ms a task, ${row.tasksPerMin.toFixed(1)} tasks/min, peak ${row.peakTotalMiB.toFixed(0)} MiB${row.failed ? `, ${row.failed} failed` : ""}`);
    };
    const plan: { kind: TaskKind; seq: number; runCli: number; fresh: number; lanes: number }[] = [
      { kind: "small", seq: SEQ_TASKS, runCli: RUNCLI_TASKS, fresh: FRESH_TASKS, lanes: LANE_TASKS },
      { kind: "browser", seq: BROWSER_SEQ_TASKS, runCli: BROWSER_RUNCLI_TASKS, fresh: BROWSER_FRESH_TASKS, lanes: BROWSER_TASKS },
    ];
    for (const { kind, seq, runCli, fresh, lanes } of plan) {
      if (seq <= 0 || lanes <= 0) continue;
      console.error(`${kind} tasks:`);
      const rows: Row[] = [];
      add(rows, await sequentialRow(dir, seq, kind));
      if (runCli > 0) add(rows, await runCliRow(dir, runCli, kind));
      if (fresh > 0) add(rows, await batchRow(dir, 2, "process", fresh, true, kind));
      for (const level of LEVELS) add(rows, await batchRow(dir, level, "process", lanes, false, kind));
      for (const level of IN_PROCESS) add(rows, await batchRow(dir, level, "in-process", lanes, false, kind));
      tables.push({ kind, rows });
    }
    const lines = [
      `load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${availableParallelism()} core(s)`,
      ...tables.flatMap(({ kind, rows }) => [
        "",
        kind === "small" ? "Small tasks (one WordPress-loading `run-php`):" : "Browser tasks (Chromium opens the front page and checks it):",
        "",
        "| mode | tasks | wall (s) | ms per task | tasks/min | cheaper per task than one-shot | peak RSS per sandbox (MiB) | peak RSS total (MiB) | failed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...rows.map(
          (r) =>
            `| ${r.label} | ${r.tasks} | ${r.wallS.toFixed(1)} | ${(r.perTaskS * 1000).toFixed(0)} | ${r.tasksPerMin.toFixed(1)} | ${(rows[0]!.perTaskS / r.perTaskS).toFixed(1)}× | ${r.peakPerSandboxMiB.toFixed(0)} | ${r.peakTotalMiB.toFixed(0)} | ${r.failed} |`,
        ),
      ]),
    ];
    console.log(lines.join("\n"));
    writeFileSync(join(REPO, "bench-batch-results.json"), `${JSON.stringify({ at: new Date().toISOString(), cores: availableParallelism(), loadavg: loadavg(), totalMemBytes: totalmem(), tables }, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
