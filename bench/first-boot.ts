/**
 * First boot of a WordPress release on an empty cache (what a new user's first `run` costs once
 * the release is downloaded) and the warm boot after it, beside plain `@wp-playground/cli`
 * `runCLI` on the same release, in the same run. The release comes from a loopback mirror over
 * `$WP_CODEBOX_TEST_SHARED/wordpress-releases` (BENCH_WP, default the newest there); the download
 * is done before timing starts. Each scenario runs in a fresh Node process; prints figures and
 * ratios, never passes or fails on time. `npm run bench:first-boot` builds first and measures the
 * build, as users run it; started with `--conditions=source` it measures the sources, where every
 * PHP worker thread compiles the TypeScript again (two workers on a first boot, one warm).
 *
 *   WP_CODEBOX_TEST_SHARED=/path/to/shared npm run bench:first-boot
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { runBenchChild } from "./bench-child.js";
import { startPlainRunCli } from "./plain-playground.js";

const WP_CODE = "<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');";

type Figures = { readyMs: number; firstResultMs: number; output: string; stages?: [string, number][] };

/** Child: wp-codebox from nothing in memory to the first WordPress-loading result, with the stages it reported. */
async function childCodebox(cacheDir: string, version: string): Promise<Figures> {
  const t0 = performance.now();
  const stages: [string, number][] = [];
  const { createPlaygroundBackend } = await import("@wp-codebox/runtime-playground");
  const runtime = await createPlaygroundBackend({ cacheDir, offline: true }).create({
    wordpress: { version },
    onProgress: (message) => stages.push([message.slice(0, 60), Math.round(performance.now() - t0)]),
  });
  const readyMs = performance.now() - t0;
  const first = await runtime.execute({ command: "wordpress.run-php", args: [`code=${WP_CODE}`, "bootstrap=none"] });
  const firstResultMs = performance.now() - t0;
  await runtime.dispose();
  return { readyMs, firstResultMs, output: first.stdout, stages };
}

/** Child: plain runCLI on an unpacked copy of the release (`install-from-existing-files`: it installs; then the installed copy). */
async function childRunCli(siteDir: string, installMode: string): Promise<Figures> {
  const t0 = performance.now();
  const cli = await startPlainRunCli(siteDir, installMode);
  const readyMs = performance.now() - t0;
  const first = await cli.playground.run({ code: WP_CODE });
  const firstResultMs = performance.now() - t0;
  await cli[Symbol.asyncDispose]();
  return { readyMs, firstResultMs, output: first.text };
}

function runChild(args: string[]): Figures | { error: string } {
  return runBenchChild<Figures>(import.meta.url, args);
}

async function main(): Promise<void> {
  if (process.env.BENCH_CHILD) {
    const [kind, a, b] = process.argv.slice(2);
    const figures = kind === "codebox" ? await childCodebox(a!, b!) : await childRunCli(a!, b!);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    process.exit(0);
  }
  const { serveWordPressMirror } = await import("../test/support/wordpress-mirror.js");
  const { ensureWordPressRelease } = await import("@wp-codebox/runtime-playground");
  const { extractZip } = await import("../packages/runtime-playground/src/site/zip.js");
  const mirror = await serveWordPressMirror();
  const version = process.env.BENCH_WP ?? mirror.latest;
  const work = mkdtempSync(join(tmpdir(), "wp-codebox-bench-first-"));
  console.error(
    `bench: WordPress ${version} (loopback mirror), PHP 8.3, wp-codebox from its ${process.execArgv.includes("--conditions=source") ? "TypeScript sources (each PHP worker compiles them: not what users run)" : "build"}, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  try {
    const cache = join(work, "cache");
    // The download is not part of the figure: fetched and verified into the empty cache first.
    const release = await ensureWordPressRelease(version, { cacheDir: cache, mirror: mirror.url, offline: false });
    await mirror.close();
    console.error("bench: wp-codebox first boot (release downloaded, nothing unpacked or installed) …");
    const first = runChild(["codebox", cache, version]);
    console.error("bench: wp-codebox warm boot …");
    const warm = runChild(["codebox", cache, version]);
    const site = join(work, "runcli-site");
    extractZip(release.zipPath, site);
    const siteRoot = join(site, "wordpress");
    console.error("bench: runCLI first boot (install-from-existing-files on the unpacked release) …");
    const runCliFirst = runChild(["runcli", siteRoot, "install-from-existing-files"]);
    console.error("bench: runCLI warm boot (do-not-attempt-installing on the installed copy) …");
    const runCliWarm = runChild(["runcli", siteRoot, "do-not-attempt-installing"]);
    const fmt = (n: number) => `${n.toFixed(0).padStart(7)} ms`;
    const rows: [string, Figures | { error: string }][] = [
      ["wp-codebox first", first],
      ["wp-codebox warm", warm],
      ["runCLI first", runCliFirst],
      ["runCLI warm", runCliWarm],
    ];
    console.log("scenario           ready        1st WP result  output");
    for (const [name, f] of rows) {
      if ("error" in f) console.log(`${name.padEnd(18)} failed: ${f.error}`);
      else console.log(`${name.padEnd(18)} ${fmt(f.readyMs)}  ${fmt(f.firstResultMs)}     ${f.output}`);
    }
    const ratio = (a: Figures | { error: string }, b: Figures | { error: string }) => ("error" in a || "error" in b ? "n/a" : (a.firstResultMs / b.firstResultMs).toFixed(2));
    console.log(`ratios (1st WP result): wp-codebox first / runCLI first ${ratio(first, runCliFirst)}; wp-codebox warm / runCLI warm ${ratio(warm, runCliWarm)}; wp-codebox first / wp-codebox warm ${ratio(first, warm)}`);
    if (!("error" in first) && first.stages) console.log(`wp-codebox first boot stages (ms since start): ${first.stages.map(([m, t]) => `${t} ${m}`).join(" | ")}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
