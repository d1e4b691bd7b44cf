/**
 * Native vs Playground, side by side in one process: boot from the cache, a WordPress-loading
 * run-php back to back and after a pause (`wpRunIdleMs`: a caller that reads each result before
 * the next command; native has WordPress loaded for it by then), a bare run-php, `reset()` with
 * nothing to undo and after a command that wrote an option, a post and a wp-content file; the
 * site's pages through `wordpress.http-request` (native: its web server, php-cgi over FastCGI):
 * the first page of a sandbox (`firstPageMs`: on native it starts php-cgi), the front page as
 * anonymous and `/wp-admin/` as admin back to back. Prints figures (medians over BENCH_SAMPLES); never passes or
 * fails on time. Needs the native backend's Debian packages (`wp-codebox doctor`).
 *
 *   npm run bench:native
 *   BENCH_SAMPLES=20 npm run bench:native
 */
import { cpus, loadavg } from "node:os";
import type { Runtime, RuntimeBackend } from "@wp-codebox/runtime-core";
import { createBackend } from "../packages/cli/src/commands/backends.js";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
const WP_CODE = "code=<?php echo get_bloginfo('version');";
const BARE_CODE = "code=<?php echo 1;";
const WRITE_CODE = "code=<?php update_option('bench_probe', 'x'); wp_insert_post(['post_title' => 'bench', 'post_status' => 'publish']); file_put_contents(WP_CONTENT_DIR . '/bench.txt', 'x');";
/** The pause before each `wpRunIdleMs` sample (ms). */
const IDLE_MS = 300;

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

async function measure(name: string, backend: RuntimeBackend): Promise<Record<string, number | string>> {
  // The first create fills the cache (installs WordPress); the second boots from it.
  const t0 = performance.now();
  await (await backend.create({})).dispose();
  const firstBootMs = Math.round(performance.now() - t0);
  const t1 = performance.now();
  const runtime: Runtime = await backend.create({});
  const cachedBootMs = Math.round(performance.now() - t1);
  try {
    const run = (code: string) => async () => {
      const r = await runtime.execute({ command: "wordpress.run-php", args: [code, ...(code === BARE_CODE ? ["bootstrap=none"] : [])] });
      if (r.status !== "ok") throw new Error(`${name}: ${r.error?.message}`);
    };
    const page = (...args: string[]) => async () => {
      const r = await runtime.execute({ command: "wordpress.http-request", args });
      if (r.status !== "ok") throw new Error(`${name}: ${r.error?.message}`);
    };
    const t2 = performance.now();
    await page("path=/", "as=anonymous")();
    const firstPageMs = Math.round(performance.now() - t2);
    const frontPageMs = await timed(page("path=/", "as=anonymous"));
    const adminPageMs = await timed(page("path=/wp-admin/"));
    await run(WP_CODE)(); // warm: the first run compiles WordPress
    const wpRunMs = await timed(run(WP_CODE));
    const wpRunIdleMs = await timed(run(WP_CODE), SAMPLES, IDLE_MS);
    const bareRunMs = await timed(run(BARE_CODE));
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
    return { backend: name, firstBootMs, cachedBootMs, wpRunMs, wpRunIdleMs, bareRunMs, resetMs, resetAfterWriteMs, firstPageMs, frontPageMs, adminPageMs };
  } finally {
    await runtime.dispose();
  }
}

const rows = [await measure("native", createBackend("native", { cwd: process.cwd() })), await measure("playground", createBackend("playground", { cwd: process.cwd() }))];
console.log(`cores ${cpus().length}, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}, ${SAMPLES} samples (medians, ms)`);
console.table(rows);
const [native, playground] = rows as [Record<string, number>, Record<string, number>];
console.log(`Front page over HTTP: native is ${(playground.frontPageMs! / native.frontPageMs!).toFixed(2)}x Playground's speed; /wp-admin/ as admin ${(playground.adminPageMs! / native.adminPageMs!).toFixed(2)}x`);
console.log(`WordPress-loading run-php: native is ${(playground.wpRunMs! / native.wpRunMs!).toFixed(2)}x Playground's speed back to back, ${(playground.wpRunIdleMs! / native.wpRunIdleMs!).toFixed(2)}x after a ${IDLE_MS} ms pause`);
