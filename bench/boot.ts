/**
 * Boot benchmark: wp-codebox vs plain `@wp-playground/cli` `runCLI`, same WordPress and
 * PHP, each scenario in a fresh Node process. Prints figures; never passes or fails on time.
 *
 *   npm run bench:boot            # default: 15 run-php samples per scenario
 *   BENCH_SAMPLES=30 npm run bench:boot
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { runBenchChild } from "./bench-child.js";
import { startPlainRunCli } from "./plain-playground.js";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 15);
const WP_CODE = "<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');";
const BARE_CODE = "<?php echo 1;";

type Figures = { firstResultMs: number; bootMs: number; runWpMedianMs: number; runBareMedianMs: number; rssMb: number; output: string };

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function sample(run: (code: string) => Promise<unknown>, code: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await run(code);
    times.push(performance.now() - t);
  }
  return median(times);
}

/** Child: wp-codebox boot → first WordPress-loading result, then per-command medians. */
async function childCodebox(cacheDir: string): Promise<Figures> {
  const t0 = performance.now();
  const { createPlaygroundBackend } = await import("@wp-codebox/runtime-playground");
  const runtime = await createPlaygroundBackend({ cacheDir }).create({});
  const bootMs = performance.now() - t0;
  const first = await runtime.execute({ command: "wordpress.run-php", args: [`code=${WP_CODE}`, "bootstrap=none"] });
  const firstResultMs = performance.now() - t0;
  const runWpMedianMs = await sample((c) => runtime.execute({ command: "wordpress.run-php", args: [`code=${c}`, "bootstrap=none"] }), WP_CODE);
  const runBareMedianMs = await sample((c) => runtime.execute({ command: "wordpress.run-php", args: [`code=${c}`, "bootstrap=none"] }), BARE_CODE);
  const rssMb = process.memoryUsage().rss / 1e6;
  await runtime.dispose();
  return { firstResultMs, bootMs, runWpMedianMs, runBareMedianMs, rssMb, output: first.stdout };
}

/** Child: plain runCLI serving the same WordPress tree from a host mount. */
async function childRunCli(siteDir: string, installMode: string): Promise<Figures> {
  const t0 = performance.now();
  const cli = await startPlainRunCli(siteDir, installMode);
  const bootMs = performance.now() - t0;
  const first = await cli.playground.run({ code: WP_CODE });
  const firstResultMs = performance.now() - t0;
  const runWpMedianMs = await sample((c) => cli.playground.run({ code: c }), WP_CODE);
  const runBareMedianMs = await sample((c) => cli.playground.run({ code: c }), BARE_CODE);
  const rssMb = process.memoryUsage().rss / 1e6;
  await cli[Symbol.asyncDispose]();
  return { firstResultMs, bootMs, runWpMedianMs, runBareMedianMs, rssMb, output: first.text };
}

function runChild(args: string[]): Figures | { error: string } {
  return runBenchChild<Figures>(import.meta.url, args);
}

async function main(): Promise<void> {
  if (process.env.BENCH_CHILD) {
    const [kind, a, b] = process.argv.slice(2);
    const figures = kind === "codebox" ? await childCodebox(a!) : await childRunCli(a!, b!);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    process.exit(0);
  }
  const { findWordPressBuild, resolveCacheDir } = await import("@wp-codebox/runtime-playground");
  const build = findWordPressBuild();
  const work = mkdtempSync(join(tmpdir(), "wp-codebox-bench-"));
  console.error(`bench: WordPress ${build.release}, PHP 8.3, ${SAMPLES} samples per median, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB`);
  try {
    const coldCache = join(work, "cache");
    console.error("bench: wp-codebox cold (installs into an empty cache) …");
    const codeboxCold = runChild(["codebox", coldCache]);
    console.error("bench: wp-codebox warm (installed-site cache) …");
    const codeboxWarm = runChild(["codebox", coldCache]);
    // runCLI on the same complete tree: a fresh copy installs; the installed copy skips it.
    const tree = join(coldCache, "wordpress", build.release);
    const site = join(work, "runcli-site");
    cpSync(tree, site, { recursive: true });
    console.error("bench: runCLI cold (install-from-existing-files) …");
    const runCliCold = runChild(["runcli", site, "install-from-existing-files"]);
    console.error("bench: runCLI warm (do-not-attempt-installing on the installed copy) …");
    const runCliWarm = runChild(["runcli", site, "do-not-attempt-installing"]);
    const rows: [string, Figures | { error: string }][] = [
      ["wp-codebox cold", codeboxCold],
      ["wp-codebox warm", codeboxWarm],
      ["runCLI cold", runCliCold],
      ["runCLI warm", runCliWarm],
    ];
    const fmt = (n: number) => n.toFixed(0).padStart(8);
    console.log("scenario           boot→ready  boot→1st WP result  run-php WP (median)  run-php bare (median)  RSS MB");
    for (const [name, f] of rows) {
      if ("error" in f) console.log(`${name.padEnd(18)} failed: ${f.error}`);
      else console.log(`${name.padEnd(18)} ${fmt(f.bootMs)} ms ${fmt(f.firstResultMs)} ms        ${fmt(f.runWpMedianMs)} ms          ${fmt(f.runBareMedianMs)} ms       ${fmt(f.rssMb)}`);
    }
    void resolveCacheDir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
