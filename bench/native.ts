/**
 * Native vs Playground, side by side in one process: boot from the cache, a WordPress-loading
 * run-php, a bare run-php, `reset()`. Prints figures (medians over BENCH_SAMPLES); never passes or
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

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)]!);
}

async function timed(work: () => Promise<unknown>, samples = SAMPLES): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
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
    await run(WP_CODE)(); // warm: the first run compiles WordPress
    const wpRunMs = await timed(run(WP_CODE));
    const bareRunMs = await timed(run(BARE_CODE));
    const resetMs = await timed(() => runtime.reset!(), Math.min(SAMPLES, 3));
    return { backend: name, firstBootMs, cachedBootMs, wpRunMs, bareRunMs, resetMs };
  } finally {
    await runtime.dispose();
  }
}

const rows = [await measure("native", createBackend("native", { cwd: process.cwd() })), await measure("playground", createBackend("playground", { cwd: process.cwd() }))];
console.log(`cores ${cpus().length}, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}, ${SAMPLES} samples (medians, ms)`);
console.table(rows);
const [native, playground] = rows as [Record<string, number>, Record<string, number>];
console.log(`WordPress-loading run-php: native is ${(playground.wpRunMs! / native.wpRunMs!).toFixed(2)}x Playground's speed`);
