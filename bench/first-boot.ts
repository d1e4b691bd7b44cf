/**
 * First boot of a WordPress release on an empty cache (what a new user's first `run` costs once
 * the release is downloaded) and the warm boot after it, beside plain `@wp-playground/cli`
 * `runCLI` on the same release, in the same run. The release comes from a loopback mirror over
 * `$WP_CODEBOX_TEST_SHARED/wordpress-releases` (BENCH_WP, default the newest there); the download
 * is done before timing starts. Each scenario runs in a fresh Node process; prints figures and
 * ratios, never passes or fails on time. `npm run bench:first-boot` builds first and measures the
 * build, as users run it: each scenario is `first-boot-child.mjs`, a plain ES module, with no
 * TypeScript loader in its process. Started with `--conditions=source` it measures the sources,
 * where every PHP worker thread compiles the TypeScript again (two workers on a first boot). It also
 * times the CLI itself, `wp-codebox run` from process start to exit, first and warm. Unpacking
 * creates 4,400 files: on an ext4 file system without a journal, file creation skips over inodes
 * freed in the last minutes, so run it a few minutes after anything deleted thousands of files
 * (its own previous run included), or the unpack is up to ~1 s slower.
 *
 *   WP_CODEBOX_TEST_SHARED=/path/to/shared npm run bench:first-boot
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";

const WP_CODE = "<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');";

type Figures = { readyMs: number; firstResultMs: number; output: string; stages?: [string, number][] };

const CHILD = fileURLToPath(new URL("./first-boot-child.mjs", import.meta.url));
const FROM_SOURCE = process.execArgv.includes("--conditions=source");

/**
 * Runs one scenario of first-boot-child.mjs in a fresh Node process: with no flags when measuring
 * the build (as users run it: no TypeScript loader), from the sources with tsx.
 * @returns its figures, or `{ error }` with the end of its output.
 */
function runChild(args: string[]): Figures | { error: string } {
  const r = spawnSync(process.execPath, [...(FROM_SOURCE ? ["--conditions=source", "--import", "tsx"] : []), CHILD, ...args], { encoding: "utf8", timeout: 600_000 });
  if (r.signal !== null) return { error: `killed (${r.signal}): the child did not end on its own` };
  try {
    return JSON.parse(r.stdout.trim().split("\n").pop() ?? "") as Figures;
  } catch {
    return { error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split("\n").slice(-3).join(" | ") };
  }
}

/**
 * `wp-codebox run` as a user starts it (the built CLI, `--wp version`, offline with the release in
 * `cacheDir`): ms from spawning the process to its exit, a WordPress-loading run-php and its
 * verified bundle included; or `{ error }` with the end of its output.
 */
function timeCliRun(cacheDir: string, version: string, artifacts: string): { ms: number } | { error: string } {
  const cli = fileURLToPath(new URL("../bin/wp-codebox.js", import.meta.url));
  const started = performance.now();
  const r = spawnSync(process.execPath, [cli, "run", "--wp", version, "--command", "wordpress.run-php", "--arg", `code=${WP_CODE}`, "--arg", "bootstrap=none", "--artifacts", artifacts], {
    encoding: "utf8",
    timeout: 600_000,
    env: { ...process.env, WP_CODEBOX_CACHE_DIR: cacheDir, WP_CODEBOX_OFFLINE: "1" },
  });
  const ms = performance.now() - started;
  return r.status === 0 ? { ms } : { error: `exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}` };
}

async function main(): Promise<void> {
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
    // The CLI, end to end, on a cache of its own holding only the downloaded release.
    const cliCache = join(work, "cli-cache");
    // Timestamps kept: a zip whose mtime changed is hashed again before it is trusted (~50 ms).
    cpSync(join(cache, "releases"), join(cliCache, "releases"), { recursive: true, preserveTimestamps: true });
    console.error("bench: wp-codebox run (CLI) first, then warm …");
    const cliFirst = timeCliRun(cliCache, version, join(work, "cli-first"));
    const cliWarm = timeCliRun(cliCache, version, join(work, "cli-warm"));
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
    const cli = (f: { ms: number } | { error: string }) => ("error" in f ? `failed: ${f.error}` : `${f.ms.toFixed(0)} ms`);
    console.log(`wp-codebox run (the CLI, process start to exit, bundle written and verified): first ${cli(cliFirst)}, warm ${cli(cliWarm)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
