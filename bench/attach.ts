/**
 * Live-sandbox benchmark (`npm run bench:attach`; run `npm run build` first: the CLI is timed from
 * its compiled build, as users run it). Side by side, in one run, for a WordPress-loading run-php:
 *
 * 1. `wp-codebox run --attach` against a pooled `serve` sandbox: whole CLI process (start → exit,
 *    bundle written and verified) and start → result on stdout.
 * 2. Today's one-shot `wp-codebox run` (boot, run, bundle, dispose): whole process.
 * 3. Plain `@wp-playground/cli` `runCLI` on the same installed site: process start → first result.
 * 4. Through the attach client (in this process): episode `reset()` median (after 20 inserts each),
 *    a WordPress-loading run-php median, and a bare run-php median (`bootstrap=none`: the call
 *    without WordPress, so the difference is WordPress's own load).
 * 5. Floors, in the same run: `node -e ""` (Node start) and `wp-codebox --version` (Node start plus
 *    the CLI entry), and the one-shot run with `--php-extension none` (what loading intl, on by
 *    default as in Playground's CLI, costs the one-shot path).
 *
 * Beside wall times it prints CPU time: of each child process (all threads, from
 * bench/cpu-preload.cjs) and of the serve process per call (from /proc, Linux only). On a shared
 * machine wall times stretch with everyone else's load; CPU times barely move, so they say what
 * the work itself costs. Prints figures; never passes or fails on time. BENCH_SAMPLES (default 7)
 * sets the process counts.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
const ONE_SHOT_SAMPLES = Math.max(1, Math.min(SAMPLES, 5));
const BIN = fileURLToPath(new URL("../bin/wp-codebox.js", import.meta.url));
const WP_CODE = "<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');";
const MUTATE = "<?php update_option('blogname', 'bench'); for ($i = 0; $i < 20; $i++) wp_insert_post(['post_title' => \"p$i\", 'post_status' => 'publish']);";

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Timed {
  exitMs: number;
  firstStdoutMs: number;
  /** CPU time of the whole process (user + system, every thread), ms. */
  cpuMs: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

const CPU_PRELOAD = fileURLToPath(new URL("./cpu-preload.cjs", import.meta.url));
let cpuFiles = 0;
let workDir = "";

/** Spawns a process and times it from just before spawn to its result on stdout (first byte, or `resultMarker`) and to its exit. */
function timed(args: string[], env: NodeJS.ProcessEnv = {}, resultMarker?: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const cpuFile = join(workDir, `cpu-${cpuFiles++}.json`);
    const t0 = performance.now();
    let firstStdoutMs = -1;
    let stdout = "";
    let stderr = "";
    const child = spawn(process.execPath, ["--require", CPU_PRELOAD, ...args], { env: { ...process.env, ...env, WP_CODEBOX_BENCH_CPU_FILE: cpuFile }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (firstStdoutMs < 0 && (!resultMarker || stdout.includes(resultMarker))) firstStdoutMs = performance.now() - t0;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const exitMs = performance.now() - t0;
      const cpuMs = existsSync(cpuFile) ? (JSON.parse(readFileSync(cpuFile, "utf8")) as { cpuMs: number }).cpuMs : NaN;
      resolve({ exitMs, firstStdoutMs, cpuMs, code, stdout, stderr });
    });
  });
}

/** CPU time (user + system) a live process has used so far, ms; NaN where /proc is not there. */
function processCpuMs(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** `durationMs` of the (only) command in a bundle: the time the sandbox spent on it. */
function commandMs(bundleDir: string): number {
  const line = readFileSync(join(bundleDir, "files/commands.jsonl"), "utf8").trim().split("\n")[0]!;
  return (JSON.parse(line) as { durationMs: number }).durationMs;
}

/** Plain runCLI from process start to the first result (a plain ES module, no tsx in its start-up). */
const RUNCLI_CHILD = fileURLToPath(new URL("./runcli-first-result.mjs", import.meta.url));

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "wp-codebox-bench-attach-"));
  workDir = work;
  const { resolveCacheDir } = await import("@wp-codebox/runtime-playground");
  console.error(`bench: ${SAMPLES} attach runs, ${ONE_SHOT_SAMPLES} one-shot and runCLI runs; node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  try {
    // Warm the installed-site cache (first ever run installs).
    const warm = await timed([BIN, "run", "--command", "wordpress.run-php", "--arg", `code=${WP_CODE}`, "--artifacts", join(work, "warm")]);
    if (warm.code !== 0) throw new Error(`warm-up run failed: ${warm.stderr}`);

    // 5. Floors.
    const nodeStart: Timed[] = [];
    const cliStart: Timed[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      nodeStart.push(await timed(["-e", ""]));
      cliStart.push(await timed([BIN, "--version"]));
    }

    // 1. serve --pool 1, then run --attach from fresh CLI processes.
    const serve = spawn(process.execPath, [BIN, "serve", "--pool", "1", "--json", "--ttl", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let serveErr = "";
    serve.stderr.setEncoding("utf8").on("data", (d: string) => (serveErr += d));
    const address = await new Promise<{ control: string; token: string; url: string }>((resolve, reject) => {
      let out = "";
      serve.stdout.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        if (out.includes("\n")) resolve(JSON.parse(out.slice(0, out.indexOf("\n"))));
      });
      serve.on("close", (code) => reject(new Error(`serve exited ${code}: ${serveErr}`)));
    });
    const attachRuns: Timed[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const run = await timed([BIN, "run", "--attach", address.control, "--command", "wordpress.run-php", "--arg", `code=${WP_CODE}`, "--artifacts", join(work, `attach-${i}`)], { WP_CODEBOX_TOKEN: address.token });
      if (run.code !== 0) throw new Error(`run --attach failed: ${run.stderr}`);
      attachRuns.push(run);
    }

    // 4. Through the attach client: reset and run-php medians.
    const { attachRuntime } = await import("@wp-codebox/live");
    const runtime = await attachRuntime({ control: address.control, token: address.token });
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) await runtime.execute({ command: "wordpress.run-php", args: [`code=${WP_CODE}`] });
    const serveCpuBeforeRuns = processCpuMs(serve.pid!);
    for (let i = 0; i < SAMPLES * 3; i++) {
      const t = performance.now();
      const r = await runtime.execute({ command: "wordpress.run-php", args: [`code=${WP_CODE}`] });
      runs.push(performance.now() - t);
      if (r.status !== "ok") throw new Error(`run-php failed: ${r.stderr}`);
    }
    const serveCpuPerRun = (processCpuMs(serve.pid!) - serveCpuBeforeRuns) / (SAMPLES * 3);
    const bareRuns: number[] = [];
    for (let i = 0; i < SAMPLES * 3; i++) {
      const t = performance.now();
      const r = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo 1;", "bootstrap=none"] });
      bareRuns.push(performance.now() - t);
      if (r.status !== "ok") throw new Error(`bare run-php failed: ${r.stderr}`);
    }
    const resets: number[] = [];
    let serveCpuInResets = 0;
    for (let i = 0; i < SAMPLES + 3; i++) {
      await runtime.execute({ command: "wordpress.run-php", args: [`code=${MUTATE}`] });
      const cpu0 = processCpuMs(serve.pid!);
      const t = performance.now();
      await runtime.reset();
      resets.push(performance.now() - t);
      serveCpuInResets += processCpuMs(serve.pid!) - cpu0;
    }
    // The sandbox's own reset time (no HTTP, no queue): its runtime-reset events.
    const observed = (await runtime.observe({ type: "runtime-events" })) as { data: { events: Array<{ type: string; data?: { durationMs?: number } }> } };
    const events = observed.data.events;
    const innerResets = events.filter((e) => e.type === "runtime-reset" && typeof e.data?.durationMs === "number").map((e) => e.data!.durationMs!).slice(-resets.length);
    await runtime.dispose();
    serve.kill("SIGTERM");
    await new Promise((r) => serve.on("close", r));

    // 2. One-shot run.
    const oneShot: Timed[] = [];
    for (let i = 0; i < ONE_SHOT_SAMPLES; i++) {
      const run = await timed([BIN, "run", "--command", "wordpress.run-php", "--arg", `code=${WP_CODE}`, "--artifacts", join(work, `one-shot-${i}`)]);
      if (run.code !== 0) throw new Error(`one-shot run failed: ${run.stderr}`);
      oneShot.push(run);
    }
    const oneShotNoIntl: Timed[] = [];
    for (let i = 0; i < ONE_SHOT_SAMPLES; i++) {
      const run = await timed([BIN, "run", "--php-extension", "none", "--command", "wordpress.run-php", "--arg", `code=${WP_CODE}`, "--artifacts", join(work, `one-shot-none-${i}`)]);
      if (run.code !== 0) throw new Error(`one-shot run without intl failed: ${run.stderr}`);
      oneShotNoIntl.push(run);
    }

    // 3. Plain runCLI on the installed site.
    const sites = join(resolveCacheDir(), "sites");
    const site = readdirSync(sites).find((d) => d.includes("php-8.3") && existsSync(join(sites, d, ".wp-codebox-site.json")));
    const runCli: Timed[] = [];
    if (site) {
      // A copy: plain Playground writes to the tree it mounts, and the cache must stay as installed.
      const copy = join(work, "runcli-site");
      cpSync(join(sites, site), copy, { recursive: true, preserveTimestamps: true });
      for (let i = 0; i < ONE_SHOT_SAMPLES; i++) {
        const run = await timed([RUNCLI_CHILD, copy, WP_CODE], {}, "RESULT 6.");
        if (run.code !== 0) throw new Error(`runCLI child failed: ${run.stderr}`);
        runCli.push(run);
      }
    }

    const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : "n/a");
    const med = (runs: Timed[], pick: (r: Timed) => number) => median(runs.map(pick));
    const attachExit = med(attachRuns, (r) => r.exitMs);
    const oneShotExit = med(oneShot, (r) => r.exitMs);
    const runCliFirst = runCli.length ? med(runCli, (r) => r.firstStdoutMs) : NaN;
    const bootMs = median(oneShot.map((r) => Number(/Booted WordPress .* in (\d+) ms/.exec(r.stderr)?.[1] ?? NaN)));
    console.log(`WordPress-loading run-php, from process start (wall medians; load average now ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores):`);
    console.log(`  run --attach (pooled serve sandbox), start → exit:   ${ms(attachExit)}   (→ result on stdout ${ms(med(attachRuns, (r) => r.firstStdoutMs))}; min ${ms(Math.min(...attachRuns.map((r) => r.exitMs)))}; CPU ${ms(med(attachRuns, (r) => r.cpuMs))}; command in the sandbox ${ms(median(attachRuns.map((_, i) => commandMs(join(work, `attach-${i}`)))))}; n=${attachRuns.length})`);
    console.log(`  one-shot run (boot, run, bundle, dispose), start → exit: ${ms(oneShotExit)}   (min ${ms(Math.min(...oneShot.map((r) => r.exitMs)))}; CPU ${ms(med(oneShot, (r) => r.cpuMs))}; boot ${ms(bootMs)}; command ${ms(median(oneShot.map((_, i) => commandMs(join(work, `one-shot-${i}`)))))}; n=${oneShot.length})`);
    console.log(`  one-shot run without intl (--php-extension none):    ${ms(med(oneShotNoIntl, (r) => r.exitMs))}   (min ${ms(Math.min(...oneShotNoIntl.map((r) => r.exitMs)))}; CPU ${ms(med(oneShotNoIntl, (r) => r.cpuMs))}; n=${oneShotNoIntl.length})`);
    console.log(runCli.length ? `  plain runCLI, start → first result:                  ${ms(runCliFirst)}   (min ${ms(Math.min(...runCli.map((r) => r.firstStdoutMs)))}; CPU to exit ${ms(med(runCli, (r) => r.cpuMs))}; n=${runCli.length})` : "  plain runCLI: no installed PHP 8.3 site in the cache");
    console.log(`  floors: node -e "" ${ms(med(nodeStart, (r) => r.exitMs))} (CPU ${ms(med(nodeStart, (r) => r.cpuMs))}); wp-codebox --version ${ms(med(cliStart, (r) => r.exitMs))} (CPU ${ms(med(cliStart, (r) => r.cpuMs))})`);
    console.log(`  ratios (wall): one-shot / attach ${(oneShotExit / attachExit).toFixed(1)}x, runCLI / attach ${(runCliFirst / attachExit).toFixed(1)}x, runCLI / one-shot ${(runCliFirst / oneShotExit).toFixed(2)}x`);
    console.log(`  ratios (CPU):  one-shot / attach ${(med(oneShot, (r) => r.cpuMs) / med(attachRuns, (r) => r.cpuMs)).toFixed(1)}x, runCLI / attach ${(med(runCli, (r) => r.cpuMs) / med(attachRuns, (r) => r.cpuMs)).toFixed(1)}x`);
    console.log(`Through the attach client (HTTP round trip included):`);
    console.log(`  WordPress-loading run-php median of ${runs.length}: ${ms(median(runs))}   (min ${ms(Math.min(...runs))}; serve CPU per call ${ms(serveCpuPerRun)})`);
    console.log(`  bare run-php (bootstrap=none, no WordPress) median of ${bareRuns.length}: ${ms(median(bareRuns))}   (min ${ms(Math.min(...bareRuns))})`);
    console.log(`  episode reset() after 20 inserts, median of ${resets.length}: ${ms(median(resets))}   (min ${ms(Math.min(...resets))}; inside the sandbox ${ms(innerResets.length ? median(innerResets) : NaN)}; serve CPU per reset ${ms(serveCpuInResets / resets.length)})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
}

await main();
