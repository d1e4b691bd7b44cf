/**
 * Episode reset benchmark (target: reset() ≤ 1 s): an episode `reset()` on a warm runtime
 * (restore the clean wp-content, no boot) against a full re-boot (dispose + create) and a plain
 * `@wp-playground/cli` `runCLI` boot on the same installed WordPress and PHP. Prints figures;
 * never passes or fails on time.
 *
 *   node --conditions=source --import tsx bench/episode.ts      # BENCH_SAMPLES=10 by default
 */
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { createRuntimeEpisode } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, resolveCacheDir } from "@wp-codebox/runtime-playground";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);
const REBOOT_SAMPLES = Math.max(1, Math.min(SAMPLES, 3));
const MUTATE = "code=<?php update_option('blogname', 'bench'); for ($i = 0; $i < 20; $i++) wp_insert_post(['post_title' => \"p$i\", 'post_status' => 'publish']);";

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const backend = createPlaygroundBackend();
  // 1. Episode reset on a warm runtime, after changing the site each time.
  const episode = createRuntimeEpisode({}, backend);
  await episode.reset();
  const resets: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    await episode.step({ command: "wordpress.run-php", args: [MUTATE] });
    const t = performance.now();
    await episode.reset();
    resets.push(performance.now() - t);
  }
  await episode.close();

  // 2. Full re-boot: dispose + create (what reset() would cost without the fast path).
  const reboots: number[] = [];
  let runtime = await backend.create({});
  for (let i = 0; i < REBOOT_SAMPLES; i++) {
    const t = performance.now();
    await runtime.dispose();
    runtime = await backend.create({});
    await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo 1;", "bootstrap=none"] });
    reboots.push(performance.now() - t);
  }
  await runtime.dispose();

  // 3. Plain runCLI boot on a copy of the same installed site, mounted from the host (plain
  // Playground writes to the tree it mounts; the cache must stay as installed).
  const sites = join(resolveCacheDir(), "sites");
  const site = readdirSync(sites).find((d) => d.includes("php-8.3") && existsSync(join(sites, d, ".wp-codebox-site.json")));
  const runCliBoots: number[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-bench-episode-"));
  const copy = join(scratch, "site");
  if (site) {
    cpSync(join(sites, site), copy, { recursive: true, preserveTimestamps: true });
    const { runCLI } = await import("@wp-playground/cli");
    for (let i = 0; i < REBOOT_SAMPLES; i++) {
      const t = performance.now();
      const cli = (await runCLI({
        command: "server",
        php: "8.3",
        port: 0,
        quiet: true,
        skipBrowser: true,
        "mount-before-install": [{ hostPath: copy, vfsPath: "/wordpress" }],
        mountBeforeInstall: [{ hostPath: copy, vfsPath: "/wordpress" }],
        wordpressInstallMode: "do-not-attempt-installing",
      } as never)) as unknown as { playground: { run(o: { code: string }): Promise<unknown> }; [Symbol.asyncDispose](): Promise<void> };
      await cli.playground.run({ code: "<?php echo 1;" });
      runCliBoots.push(performance.now() - t);
      await cli[Symbol.asyncDispose]();
    }
  }
  const fmt = (ms: number) => `${Math.round(ms)} ms`;
  console.log(`machine: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
  console.log(`episode reset() (warm runtime, after 20 inserts), median of ${SAMPLES}: ${fmt(median(resets))}  (min ${fmt(Math.min(...resets))}, max ${fmt(Math.max(...resets))})`);
  console.log(`full re-boot (dispose + create + first PHP result), median of ${REBOOT_SAMPLES}: ${fmt(median(reboots))}`);
  console.log(runCliBoots.length ? `plain runCLI boot to first PHP result (same installed site), median of ${REBOOT_SAMPLES}: ${fmt(median(runCliBoots))}` : "plain runCLI: no installed PHP 8.3 site in the cache (run wp-codebox once first)");
  rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
}

void main();
