/**
 * Browser benchmark: per-step overhead of `wordpress.browser-actions` and the time to
 * publish a post through the block editor, side by side with plain `@wp-playground/cli` `runCLI`
 * driven by the same Playwright executor on the same WordPress/PHP. Prints figures only.
 *
 *   npm run bench:browser                 # wp-codebox with 1 and 2 PHP workers, and runCLI
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBenchChild } from "./bench-child.js";
import { startPlainRunCli } from "./plain-playground.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const editorScript = JSON.parse(readFileSync(join(root, "examples/browser/block-editor-publish.json"), "utf8")) as unknown[];
const login = [
  { kind: "navigate", url: "/wp-login.php" },
  { kind: "fill", selector: "#user_login", value: "admin" },
  { kind: "fill", selector: "#user_pass", value: "password" },
  { kind: "click", selector: "#wp-submit" },
  { kind: "waitFor", url: "**/wp-admin/**" },
];
// 20 fills on an already loaded page: the step's own work is nil, so its time is our overhead.
const overhead = [{ kind: "navigate", url: "/wp-login.php" }, ...Array.from({ length: 20 }, (_, i) => ({ kind: "fill", selector: "#user_login", value: `u${i}` }))];

type Outcome = { steps: { kind: string; durationMs: number; status: string }[]; durationMs: number; status: string; error?: unknown };
type Figures = { fillMedianMs: number; loginMs: number; editorPublishMs: number; editorStatus: string; error?: unknown };

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function measure(baseUrl: string): Promise<Figures> {
  const { launchBrowser, runBrowserInteractionScript } = await import("@wp-codebox/runtime-playground");
  const browser = await launchBrowser();
  try {
    const run = (steps: unknown[]) =>
      runBrowserInteractionScript(browser, { baseUrl, steps: steps as never, allowEvaluate: false, executionId: "bench", timeoutMs: 600_000, stepTimeoutMs: 120_000 }) as Promise<Outcome>;
    const o = await run(overhead);
    const fillMedianMs = median(o.steps.filter((s) => s.kind === "fill").map((s) => s.durationMs));
    const e = await run([...login, ...editorScript]);
    const loginMs = e.steps.slice(0, login.length).reduce((n, s) => n + s.durationMs, 0);
    const editorPublishMs = e.steps.slice(login.length).reduce((n, s) => n + s.durationMs, 0);
    return { fillMedianMs, loginMs, editorPublishMs, editorStatus: e.status, ...(e.error ? { error: e.error } : {}) };
  } finally {
    await browser.close();
  }
}

async function childCodebox(workers: number): Promise<Figures> {
  const { createPlaygroundBackend } = await import("@wp-codebox/runtime-playground");
  const runtime = await createPlaygroundBackend({ workers }).create({});
  try {
    if (workers > 1) {
      // Extra workers boot on the first loopback request; let them join before measuring.
      await fetch(`${runtime.siteUrl}/wp-login.php`);
      await new Promise((r) => setTimeout(r, 4000));
    }
    return await measure(runtime.siteUrl);
  } finally {
    await runtime.dispose();
  }
}

async function childRunCli(siteDir: string): Promise<Figures> {
  const cli = await startPlainRunCli(siteDir, "do-not-attempt-installing", { WP_HTTP_BLOCK_EXTERNAL: "true" });
  try {
    return await measure(cli.serverUrl);
  } finally {
    await cli[Symbol.asyncDispose]();
  }
}

function runChild(args: string[]): Figures | { error: string } {
  return runBenchChild<Figures>(import.meta.url, args, 900_000);
}

if (process.env.BENCH_CHILD) {
  const [kind, arg] = process.argv.slice(2);
  const figures = kind === "codebox" ? await childCodebox(Number(arg)) : await childRunCli(arg!);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
} else {
  const { findWordPressBuild, ensureWordPressTree, ensureInstalledSite, resolveCacheDir } = await import("@wp-codebox/runtime-playground");
  // runCLI gets its own copy of the same installed site the sandboxes boot from.
  const build = findWordPressBuild();
  const cacheDir = resolveCacheDir();
  const installed = await ensureInstalledSite({ dir: await ensureWordPressTree(build, cacheDir), release: build.release }, "8.3", cacheDir);
  const work = mkdtempSync(join(tmpdir(), "wp-codebox-bench-browser-"));
  const site = join(work, "site");
  cpSync(installed.dir, site, { recursive: true });
  console.error(`bench: node ${process.version}, ${cpus().length} cores; block editor script ${editorScript.length} steps (examples/browser/block-editor-publish.json)`);
  const rows: [string, Figures | { error: string }][] = [];
  try {
    for (const workers of [1, 2]) {
      console.error(`bench: wp-codebox, ${workers} PHP worker(s) …`);
      rows.push([`wp-codebox (${workers} worker${workers > 1 ? "s" : ""})`, runChild(["codebox", String(workers)])]);
    }
    console.error("bench: plain runCLI + the same Playwright executor …");
    rows.push(["plain runCLI", runChild(["runcli", site])]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log("server                     fill step (median, overhead)   login (5 steps)   block-editor publish   result");
  for (const [name, f] of rows) {
    if ("fillMedianMs" in f) {
      console.log(`${name.padEnd(26)} ${f.fillMedianMs.toFixed(0).padStart(8)} ms ${f.loginMs.toFixed(0).padStart(20)} ms ${f.editorPublishMs.toFixed(0).padStart(16)} ms   ${f.editorStatus}${f.error ? ` ${JSON.stringify(f.error).slice(0, 120)}` : ""}`);
    } else console.log(`${name.padEnd(26)} failed: ${f.error}`);
  }
}
