/**
 * Where the first boot's WordPress install spends its time: installs the newest release in
 * `$WP_CODEBOX_TEST_SHARED/wordpress-releases` (BENCH_WP to pick another) with the installer's
 * must-use plugin plus profiling hooks (bench/install-phases.php), each install in a fresh Node
 * process, and prints per phase the wall time and the SQL queries sent (php-wasm's getrusage()
 * reports no CPU time); beside it,
 * the process's CPU time per installer step (worker start, install request, post-install setup,
 * OPcache warm-up, seed export). Several plugin sources (paths) given as arguments are measured in
 * alternating pairs (BENCH_RUNS rounds, default 3), to compare installer changes on a shared machine.
 * The installer skips the warm-up and seed export, as on a first boot (the sandbox makes the seed);
 * BENCH_SEED=1 installs as with a virtual clock, where the installer makes it.
 *
 *   WP_CODEBOX_TEST_SHARED=/path/to/shared node --conditions=source --import tsx bench/install-phases.ts [plugin.php ...]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBenchChild } from "./bench-child.js";

type Phase = { name: string; wallMs: number; cpuMs: number | null; queries: number; inTransaction?: boolean | null };
type Figures = { t0Ms: number; bootMarks: [string, number][]; steps: { step: string; wallMs: number; cpuMs: number }[]; phases: Phase[] };

const PROFILER = fileURLToPath(new URL("./install-phases.php", import.meta.url));
const DEFAULT_PLUGIN = fileURLToPath(new URL("../packages/runtime-playground/assets/site/installer-mu-plugin.php", import.meta.url));

const PRELOAD_MARK = `<?php if (!isset($GLOBALS['wp_codebox_early'])) $GLOBALS['wp_codebox_early'] = [['preloads run', microtime(true) * 1000]];`;

/**
 * Marks put into the (bench's own, scratch) tree's wp-settings.php with BENCH_SETTINGS_MARKS=1: the
 * stretch from the preloads to the must-use plugins, split. [line it goes before, its name]
 */
const SETTINGS_MARKS: [RegExp, string][] = [
  [/^require_wp_db\(\);/m, "core files to functions.php"],
  [/^wp_set_wpdb_vars\(\);/m, "require_wp_db (db.php: SQLite integration)"],
  [/^wp_start_object_cache\(\);/m, "wp_set_wpdb_vars"],
  [/^require ABSPATH \. WPINC \. '\/default-filters\.php';/m, "wp_start_object_cache"],
  [/^wp_not_installed\(\);/m, "default filters, multisite check"],
  [/^require ABSPATH \. WPINC \. '\/class-wp-query\.php';/m, "wp_not_installed (is it installed?)"],
  [/^foreach \( wp_get_mu_plugins\(\) as \$mu_plugin \) \{/m, "the other core files"],
];

function markSettings(treeDir: string): void {
  const path = join(treeDir, "wp-settings.php");
  let text = readFileSync(path, "utf8");
  for (const [at, name] of SETTINGS_MARKS) {
    text = text.replace(at, (line) => `$GLOBALS['wp_codebox_early'][] = [${JSON.stringify(name)}, microtime(true) * 1000];\n${line}`);
  }
  writeFileSync(path, text);
}

/** Child: one install of the tree with the plugin at `pluginPath` plus the profiler. */
async function child(treeDir: string, pluginPath: string, scratch: string): Promise<Figures> {
  const { installInto } = await import("../packages/runtime-playground/src/sandbox/installed-site.js");
  const plugin = `${readFileSync(pluginPath, "utf8")}\n${readFileSync(PROFILER, "utf8").replace(/^<\?php/, "")}`;
  const staging = mkdtempSync(join(scratch, "site-"));
  const t0Ms = Date.now();
  const w0 = performance.now();
  const c0 = process.cpuUsage();
  const steps: Figures["steps"] = [];
  let bootMarks: [string, number][] = [];
  await installInto(join(staging, "s"), { dir: treeDir }, "8.3", {
    installerPlugin: plugin,
    // As a first boot installs (its sandbox saves the seed); BENCH_SEED=1: as with a virtual clock.
    seed: process.env.BENCH_SEED === "1",
    onStep: async (step, host) => {
      // A preload (before wp-load.php) that marks when the install request's PHP code starts.
      if (step === "worker-ready") bootMarks = host.bootMarks;
      if (step === "worker-ready") await host.call({ op: "write-file", path: "/internal/shared/preload/zz-wp-codebox-phases.php", data: new TextEncoder().encode(PRELOAD_MARK) });
      const c = process.cpuUsage(c0);
      steps.push({ step, wallMs: Math.round(performance.now() - w0), cpuMs: Math.round((c.user + c.system) / 1000) });
    },
  });
  const phases = JSON.parse(readFileSync(join(staging, "s", "wp-content", "wp-codebox-phases.json"), "utf8")) as Phase[];
  rmSync(staging, { recursive: true, force: true });
  return { t0Ms, bootMarks, steps, phases };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};

async function main(): Promise<void> {
  if (process.env.BENCH_CHILD) {
    const [treeDir, pluginPath, scratch] = process.argv.slice(2);
    process.stdout.write(`${JSON.stringify(await child(treeDir!, pluginPath!, scratch!))}\n`);
    process.exit(0);
  }
  const shared = process.env.WP_CODEBOX_TEST_SHARED;
  if (!shared) throw new Error("Set WP_CODEBOX_TEST_SHARED (its wordpress-releases folder holds the release zips).");
  const releases = join(shared, "wordpress-releases");
  const zip = process.env.BENCH_WP
    ? `wordpress-${process.env.BENCH_WP}.zip`
    : readdirSync(releases).filter((f) => /^wordpress-\d+\.\d+(?:\.\d+)?\.zip$/.test(f)).sort((a, b) => a.localeCompare(b, "en", { numeric: true })).pop()!;
  const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-install-phases-"));
  try {
    const { ensureCustomWordPressTree } = await import("../packages/runtime-playground/src/site/wordpress-builds.js");
    const tree = (await ensureCustomWordPressTree(join(releases, zip), join(scratch, "cache"))).dir;
    if (process.env.BENCH_SETTINGS_MARKS) markSettings(tree);
    const plugins = process.argv.slice(2).length ? process.argv.slice(2) : [DEFAULT_PLUGIN];
    const runs = Number(process.env.BENCH_RUNS ?? 3);
    const results = new Map<string, Figures[]>(plugins.map((p) => [p, []]));
    console.log(`${zip}, PHP 8.3, ${runs} rounds; load average before: ${loadavg().map((x) => x.toFixed(1)).join(" ")}`);
    for (let round = 0; round < runs; round++) {
      for (const plugin of round % 2 ? [...plugins].reverse() : plugins) {
        const r = runBenchChild<Figures>(import.meta.url, [tree, plugin, scratch]);
        if ("error" in r) throw new Error(r.error);
        results.get(plugin)!.push(r);
      }
    }
    for (const [plugin, figures] of results) {
      console.log(`\n${plugin} (medians of ${figures.length}; load average now ${loadavg()[0]!.toFixed(1)})`);
      console.log("installer step (cumulative)   wall ms   process CPU ms");
      const install = figures.map((f) => f.steps.find((s) => s.step === "install")!.cpuMs - f.steps.find((s) => s.step === "worker-ready")!.cpuMs);
      console.log(`install request, process CPU ms per run: ${install.join(", ")}`);
      for (const [i, s] of figures[0]!.steps.entries()) {
        console.log(`  ${s.step.padEnd(28)}${String(median(figures.map((f) => f.steps[i]!.wallMs))).padStart(7)}${String(median(figures.map((f) => f.steps[i]!.cpuMs))).padStart(16)}`);
      }
      console.log("worker boot step (ends at)     ms after the previous (the first: after the install began)");
      for (const [i, [name]] of figures[0]!.bootMarks.entries()) {
        const d = median(figures.map((f) => f.bootMarks[i]![1] - (i ? f.bootMarks[i - 1]![1] : f.t0Ms)));
        console.log(`  ${name.padEnd(48)}${String(d).padStart(6)}`);
      }
      // PHP's getrusage() reports 0 in php-wasm: the phases have wall time only (cpuMs is kept in the JSON).
      console.log("install request phase (ends at)  wall ms  queries  in transaction at its end");
      const names = figures[0]!.phases.map((p) => p.name);
      for (const [i, name] of names.entries()) {
        const d = (f: Figures, key: "wallMs" | "cpuMs"): number => {
          const at = f.phases[i]!;
          if (i === 0) return key === "wallMs" ? at.wallMs - f.t0Ms : NaN;
          const prev = f.phases[i - 1]!;
          return at[key] !== null && prev[key] !== null ? at[key]! - prev[key]! : NaN;
        };
        const q = median(figures.map((f) => f.phases[i]!.queries - (i ? f.phases[i - 1]!.queries : 0)));
        console.log(`  ${name.padEnd(36)}${median(figures.map((f) => d(f, "wallMs"))).toFixed(0).padStart(6)}${String(q).padStart(9)}  ${figures[0]!.phases[i]!.inTransaction ?? ""}`);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
