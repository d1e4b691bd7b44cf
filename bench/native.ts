/**
 * Native vs Playground, side by side: each backend is measured in a child process of its own (so
 * one's memory does not count for the other), with an empty cache of its own (BENCH_KEEP_CACHE=1:
 * the usual one). Boot first (`firstBootMs`: installs WordPress into the cache; with a kept cache,
 * only the process's first boot) and from the cache, a WordPress-loading run-php back to back and
 * after a pause (`wpRunIdleMs`: a caller that reads each result before the next command; native has
 * WordPress loaded for it by then), a bare run-php, `reset()` with nothing to undo and after a
 * command that wrote an option, a post and a wp-content file; the site's pages through
 * `wordpress.http-request` (native: its web server, php-cgi over FastCGI): the first page of a
 * sandbox (`firstPageMs`: on native it starts php-cgi), the front page as anonymous and
 * `/wp-admin/` as admin back to back; a block-editor publish through `wordpress.browser-actions`
 * (examples/browser/block-editor-publish.json as admin; the whole command: Chromium's start, the
 * admin's login cookies, the editor; `editorStepsMs` is the script's steps alone; checked
 * afterwards that the post is published with its paragraph, then `reset()`); and the sandbox's peak
 * memory while all that runs (`peakMemMB`; see `MemoryMeter`). Prints figures (medians over
 * BENCH_SAMPLES, the run-php figures over at least 25, the publish over at most 3; memory is not
 * sampled while run-php is timed, only once after) and the machine's load average; never passes or fails
 * on time. Needs the native backend's Debian packages (`wp-codebox doctor`) and Chromium.
 *
 *   npm run bench:native
 *   BENCH_SAMPLES=20 npm run bench:native
 *   BENCH_KEEP_CACHE=1 npm run bench:native   # boots from the usual cache (~/.cache/wp-codebox)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Runtime, RuntimeBackend } from "@wp-codebox/runtime-core";
import { createBackend } from "../packages/cli/src/commands/backends.js";
import { runBenchChild } from "./bench-child.js";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
/** Samples of each run-php figure: runs take ms and vary run to run, so more of them than of the rest. */
const RUN_SAMPLES = Math.max(SAMPLES, 25);
const PUBLISH_SAMPLES = Math.min(SAMPLES, 3);
const WP_CODE = "code=<?php echo get_bloginfo('version');";
const BARE_CODE = "code=<?php echo 1;";
const WRITE_CODE = "code=<?php update_option('bench_probe', 'x'); wp_insert_post(['post_title' => 'bench', 'post_status' => 'publish']); file_put_contents(WP_CONTENT_DIR . '/bench.txt', 'x');";
const EDITOR_STEPS = readFileSync(new URL("../examples/browser/block-editor-publish.json", import.meta.url), "utf8");
// The post the editor script publishes, with the paragraph it types.
const PUBLISHED_CODE = "code=<?php $p = get_posts(['title' => 'Hello from wp-codebox', 'post_status' => 'publish']); echo $p && str_contains($p[0]->post_content, 'A paragraph typed in the editor.') ? 'published' : 'missing';";
/** The pause before each `wpRunIdleMs` sample (ms). */
const IDLE_MS = 300;
/** How often the native sandbox's processes are sampled for memory (ms). */
const MEMORY_SAMPLE_MS = 100;
const MB = 1024 * 1024;

type Figures = Record<string, number | string>;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)]!);
}

/** Median of `samples` timings of `work`, each after `pauseMs` of idle time (not counted). */
async function timed(work: () => Promise<unknown>, samples = SAMPLES, pauseMs = 0): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    const t = performance.now();
    await work();
    times.push(performance.now() - t);
  }
  return median(times);
}

/** A field of /proc/<pid>/status or smaps_rollup in kB, as bytes (0 when the process is gone). */
function procKb(pid: number | "self", file: "status" | "smaps_rollup", field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/${file}`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * The peak memory of one sandbox while it works, in bytes.
 * - native: the sandbox's processes are the subtrees under this process's bubblewrap children (the
 *   warm PHP server and the run it forked, php-cgi and its children, mariadbd; not Chromium, not
 *   this Node process). Every `MEMORY_SAMPLE_MS` their PSS (/proc/<pid>/smaps_rollup: pages shared
 *   between them, such as OPcache's and the libraries', counted once overall) is summed; the peak is
 *   the largest sum sampled, so a spike shorter than the interval can be missed. Their RSS sum (the
 *   shared pages counted once per process) is kept too.
 * - playground: the sandbox lives in this process (its PHP worker thread and WebAssembly memory),
 *   so its figure is the growth of this process's peak RSS: the kernel's VmHWM, reset when the
 *   meter starts (/proc/self/clear_refs), minus the RSS at that moment. Chromium is another process.
 */
class MemoryMeter {
  private timer: NodeJS.Timeout | undefined;
  private readonly baseRss: number;
  private peakPss = 0;
  private peakRss = 0;

  constructor(private readonly backend: string) {
    if (backend === "native") {
      this.baseRss = 0;
      this.timer = setInterval(() => this.sample(), MEMORY_SAMPLE_MS);
    } else {
      writeFileSync("/proc/self/clear_refs", "5");
      this.baseRss = procKb("self", "status", "VmRSS");
    }
  }

  private sample(): void {
    const pids: number[] = [];
    const walk = (pid: number) => {
      pids.push(pid);
      for (const c of childPids(pid)) walk(c);
    };
    for (const c of childPids(process.pid)) if (comm(c) === "bwrap") walk(c);
    let pss = 0;
    let rss = 0;
    for (const pid of pids) {
      pss += procKb(pid, "smaps_rollup", "Pss");
      rss += procKb(pid, "status", "VmRSS");
    }
    this.peakPss = Math.max(this.peakPss, pss);
    this.peakRss = Math.max(this.peakRss, rss);
  }

  /**
   * Runs `work` without sampling (reading a process's smaps_rollup walks its page tables and holds
   * its memory map's lock, which would slow the few-ms runs being timed), then samples once.
   */
  async quiet<T>(work: () => Promise<T>): Promise<T> {
    if (this.timer === undefined) return work();
    clearInterval(this.timer);
    try {
      return await work();
    } finally {
      this.sample();
      this.timer = setInterval(() => this.sample(), MEMORY_SAMPLE_MS);
    }
  }

  /** Stops sampling. @returns the peak (MB) and, on native, the peak of the RSS sum (MB). */
  stop(): { peakMemMB: number; rssSumMB?: number } {
    if (this.backend !== "native") return { peakMemMB: Math.round((procKb("self", "status", "VmHWM") - this.baseRss) / MB) };
    this.sample();
    clearInterval(this.timer);
    return { peakMemMB: Math.round(this.peakPss / MB), rssSumMB: Math.round(this.peakRss / MB) };
  }
}

async function measure(name: string, backend: RuntimeBackend): Promise<Figures> {
  // The first create fills the cache (installs WordPress); the second boots from it.
  const t0 = performance.now();
  await (await backend.create({})).dispose();
  const firstBootMs = Math.round(performance.now() - t0);
  const meter = new MemoryMeter(name);
  const t1 = performance.now();
  const runtime: Runtime = await backend.create({});
  const cachedBootMs = Math.round(performance.now() - t1);
  try {
    const execute = async (command: string, args: string[]) => {
      const r = await runtime.execute({ command, args });
      if (r.status !== "ok") throw new Error(`${name}: ${command}: ${r.error?.message ?? r.status}`);
      return r;
    };
    const run = (code: string) => () => execute("wordpress.run-php", [code, ...(code === BARE_CODE ? ["bootstrap=none"] : [])]);
    const page = (...args: string[]) => () => execute("wordpress.http-request", args);
    const t2 = performance.now();
    await page("path=/", "as=anonymous")();
    const firstPageMs = Math.round(performance.now() - t2);
    const frontPageMs = await timed(page("path=/", "as=anonymous"));
    const adminPageMs = await timed(page("path=/wp-admin/"));
    await run(WP_CODE)(); // warm: the first run compiles WordPress
    const wpRunMs = await meter.quiet(() => timed(run(WP_CODE), RUN_SAMPLES));
    const wpRunIdleMs = await meter.quiet(() => timed(run(WP_CODE), RUN_SAMPLES, IDLE_MS));
    const bareRunMs = await meter.quiet(() => timed(run(BARE_CODE), RUN_SAMPLES));
    const resetMs = await timed(() => runtime.reset!(), Math.min(SAMPLES, 3));
    // reset() after a command that wrote an option, a post and a wp-content file (only reset() timed).
    const dirtyResets: number[] = [];
    for (let i = 0; i < Math.min(SAMPLES, 3); i++) {
      await run(WRITE_CODE)();
      const t = performance.now();
      await runtime.reset!();
      dirtyResets.push(performance.now() - t);
    }
    const resetAfterWriteMs = median(dirtyResets);
    // The block editor publishes a post; each sample checks it is there, then resets (not timed).
    const publishes: number[] = [];
    const editorSteps: number[] = [];
    for (let i = 0; i < PUBLISH_SAMPLES; i++) {
      const t = performance.now();
      const r = await execute("wordpress.browser-actions", [`steps-json=${EDITOR_STEPS}`, "timeout=300s", "step-timeout=60s"]);
      publishes.push(performance.now() - t);
      editorSteps.push((JSON.parse(r.stdout) as { steps: { durationMs: number }[] }).steps.reduce((n, s) => n + s.durationMs, 0));
      const check = await run(PUBLISHED_CODE)();
      if (check.stdout.trim() !== "published") throw new Error(`${name}: the block editor's post is ${check.stdout.trim() || "not there"} after the publish`);
      await runtime.reset!();
    }
    const editorPublishMs = median(publishes);
    const editorStepsMs = median(editorSteps);
    return { backend: name, firstBootMs, cachedBootMs, wpRunMs, wpRunIdleMs, bareRunMs, resetMs, resetAfterWriteMs, firstPageMs, frontPageMs, adminPageMs, editorPublishMs, editorStepsMs, ...meter.stop() };
  } finally {
    await runtime.dispose();
  }
}

if (process.env.BENCH_CHILD) {
  // No process.exit(): a child that does not end on its own (a server, a process or a timer left
  // open) is reported by the parent as one that hung.
  const name = process.argv[2]!;
  const figures = await measure(name, createBackend(name as "native" | "playground", { cwd: process.cwd() }));
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} else {
  const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");
  const loadBefore = load();
  console.error(`bench: ${cpus().length} cores, load ${loadBefore}; native, then Playground, each in a child process …`);
  const rows = (["native", "playground"] as const).map((name) => {
    // An empty cache of its own unless BENCH_KEEP_CACHE: the first boot then installs WordPress.
    const cache = process.env.BENCH_KEEP_CACHE ? undefined : mkdtempSync(join(tmpdir(), "wp-codebox-bench-cache-"));
    if (cache) process.env.WP_CODEBOX_CACHE_DIR = cache;
    try {
      const r = runBenchChild<Figures>(import.meta.url, [name], 900_000);
      return "error" in r && typeof r.error === "string" ? { backend: name, error: r.error } : r;
    } finally {
      if (cache) rmSync(cache, { recursive: true, force: true });
    }
  });
  console.log(`cores ${cpus().length}, load average ${loadBefore} before, ${load()} after; ${SAMPLES} samples (run-php ${RUN_SAMPLES}), ${PUBLISH_SAMPLES} publishes (medians, ms; memory MB)`);
  console.table(rows);
  const [native, playground] = rows as [Record<string, number>, Record<string, number>];
  const ratio = (key: string) => (native[key] && playground[key] ? `${(playground[key] / native[key]).toFixed(2)}x` : "n/a");
  console.log(`WordPress-loading run-php: native is ${ratio("wpRunMs")} Playground's speed back to back, ${ratio("wpRunIdleMs")} after a ${IDLE_MS} ms pause`);
  console.log(`Front page over HTTP: ${ratio("frontPageMs")}; /wp-admin/ as admin ${ratio("adminPageMs")}; block-editor publish ${ratio("editorPublishMs")} (its steps alone ${ratio("editorStepsMs")}); cached boot ${ratio("cachedBootMs")}`);
  console.log(`Peak memory per sandbox: native ${native.peakMemMB ?? "n/a"} MB (PSS summed over its processes, sampled every ${MEMORY_SAMPLE_MS} ms; RSS summed ${native.rssSumMB ?? "n/a"} MB), Playground ${playground.peakMemMB ?? "n/a"} MB (growth of the process's peak RSS)`);
}
