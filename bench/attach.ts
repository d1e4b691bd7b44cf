/**
 * Live-sandbox benchmark (`npm run bench:attach`; run `npm run build` first: the CLI is timed from
 * its compiled build, as users run it). Side by side, in one run, for a WordPress-loading run-php:
 *
 * 1. `wp-codebox run --attach` against a pooled `serve` sandbox: whole CLI process (start → exit,
 *    bundle written and verified) and start → result on stdout.
 * 2. Today's one-shot `wp-codebox run` (boot, run, bundle, dispose): whole process.
 * 3. Plain `@wp-playground/cli` `runCLI` on the same installed site: process start → first result.
 * 4. Through the attach client (in this process): episode `reset()` median (after 20 inserts each)
 *    and a WordPress-loading run-php median.
 *
 * Prints figures; never passes or fails on time. BENCH_SAMPLES (default 7) sets the process counts.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
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
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawns a process and times it from just before spawn to its result on stdout (first byte, or `resultMarker`) and to its exit. */
function timed(args: string[], env: NodeJS.ProcessEnv = {}, resultMarker?: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstStdoutMs = -1;
    let stdout = "";
    let stderr = "";
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (firstStdoutMs < 0 && (!resultMarker || stdout.includes(resultMarker))) firstStdoutMs = performance.now() - t0;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ exitMs: performance.now() - t0, firstStdoutMs, code, stdout, stderr }));
  });
}

/** Plain runCLI from process start to the first result (a plain ES module, no tsx in its start-up). */
const RUNCLI_CHILD = fileURLToPath(new URL("./runcli-first-result.mjs", import.meta.url));

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "wp-codebox-bench-attach-"));
  const { resolveCacheDir } = await import("@wp-codebox/runtime-playground");
  console.error(`bench: ${SAMPLES} attach runs, ${ONE_SHOT_SAMPLES} one-shot and runCLI runs; node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  try {
    // Warm the installed-site cache (first ever run installs).
    const warm = await timed([BIN, "run", "--command", "wordpress.run-php", "--arg", `code=${WP_CODE}`, "--artifacts", join(work, "warm")]);
    if (warm.code !== 0) throw new Error(`warm-up run failed: ${warm.stderr}`);

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
    for (let i = 0; i < SAMPLES * 3; i++) {
      const t = performance.now();
      const r = await runtime.execute({ command: "wordpress.run-php", args: [`code=${WP_CODE}`] });
      runs.push(performance.now() - t);
      if (r.status !== "ok") throw new Error(`run-php failed: ${r.stderr}`);
    }
    const resets: number[] = [];
    for (let i = 0; i < SAMPLES + 3; i++) {
      await runtime.execute({ command: "wordpress.run-php", args: [`code=${MUTATE}`] });
      const t = performance.now();
      await runtime.reset();
      resets.push(performance.now() - t);
    }
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

    // 3. Plain runCLI on the installed site.
    const sites = join(resolveCacheDir(), "sites");
    const site = readdirSync(sites).find((d) => d.includes("php-8.3") && !d.endsWith(".opcache") && !d.includes(".staging"));
    const runCli: Timed[] = [];
    if (site) {
      for (let i = 0; i < ONE_SHOT_SAMPLES; i++) {
        const run = await timed([RUNCLI_CHILD, join(sites, site), WP_CODE], {}, "RESULT 6.");
        if (run.code !== 0) throw new Error(`runCLI child failed: ${run.stderr}`);
        runCli.push(run);
      }
    }

    const ms = (n: number) => `${Math.round(n)} ms`;
    const attachExit = median(attachRuns.map((r) => r.exitMs));
    const oneShotExit = median(oneShot.map((r) => r.exitMs));
    const runCliFirst = runCli.length ? median(runCli.map((r) => r.firstStdoutMs)) : NaN;
    console.log(`WordPress-loading run-php, from process start (medians; load average now ${loadavg()[0]!.toFixed(1)}):`);
    console.log(`  run --attach (pooled serve sandbox), process start → exit:    ${ms(attachExit)}   (→ result on stdout ${ms(median(attachRuns.map((r) => r.firstStdoutMs)))}; min ${ms(Math.min(...attachRuns.map((r) => r.exitMs)))}, n=${attachRuns.length})`);
    console.log(`  one-shot run (boot, run, bundle, dispose), start → exit:     ${ms(oneShotExit)}   (min ${ms(Math.min(...oneShot.map((r) => r.exitMs)))}, n=${oneShot.length})`);
    console.log(runCli.length ? `  plain runCLI, process start → first result:                  ${ms(runCliFirst)}   (min ${ms(Math.min(...runCli.map((r) => r.firstStdoutMs)))}, n=${runCli.length})` : "  plain runCLI: no installed PHP 8.3 site in the cache");
    console.log(`  ratios: one-shot / attach ${(oneShotExit / attachExit).toFixed(1)}x, runCLI / attach ${(runCliFirst / attachExit).toFixed(1)}x, runCLI / one-shot ${(runCliFirst / oneShotExit).toFixed(2)}x`);
    console.log(`Through the attach client (HTTP round trip included):`);
    console.log(`  WordPress-loading run-php median of ${runs.length}: ${ms(median(runs))}   (min ${ms(Math.min(...runs))})`);
    console.log(`  episode reset() after 20 inserts, median of ${resets.length}: ${ms(median(resets))}   (min ${ms(Math.min(...resets))})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
}

await main();
