/**
 * `wordpress.wp-cli` on the native backend: the real wp-cli phar run by Debian's PHP command line,
 * one confined process per command (the same bubblewrap, limits and binds as the sandbox's PHP),
 * the phar bound read-only at `/opt/wp-cli.phar`. Unlike on Playground, WP-CLI may start other
 * processes inside the sandbox (`/usr` is there), but `wp db` commands still need a MySQL client
 * setup WP-CLI does not find here, so the catalog's pre-boot refusals apply unchanged.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { STABLE_SITE_ORIGIN, WpCodeboxError, parseWpCliCommand, quoteValue, wpCliArgv, type ExecutionError } from "@wp-codebox/runtime-core";
import type { Bind } from "./bubblewrap.js";
import type { CapturedStream, ProcessOutcome } from "./confined-process.js";
import { startPhp } from "./native-php.js";
import { SANDBOX_PATHS, type SiteLayout } from "./native-site.js";
import type { NativeTools } from "./native-tools.js";

/** Where the phar is inside the sandbox. */
export const SANDBOX_WP_CLI_PHAR = "/opt/wp-cli.phar";

const HOW_TO =
  "WP-CLI is not bundled: run `wp-codebox wp-cli install` once, or pass --wp-cli-phar PATH or set WP_CODEBOX_WP_CLI_PHAR=PATH to a wp-cli.phar of your own";

/**
 * The phar a create spec names without a resolver: `wpCliPhar` (relative to `cwd`), then
 * `$WP_CODEBOX_WP_CLI_PHAR`. The CLI passes the Playground package's resolver instead, which also
 * finds the phar `wp-codebox wp-cli install` cached.
 * @throws `wp-cli-unavailable` naming what was checked.
 */
export function pharFromSpec(wpCliPhar: string | undefined, cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  for (const [value, label] of [[wpCliPhar, "--wp-cli-phar"], [env.WP_CODEBOX_WP_CLI_PHAR, "WP_CODEBOX_WP_CLI_PHAR"]] as const) {
    if (!value) continue;
    const path = resolve(cwd, value);
    if (!existsSync(path) || !statSync(path).isFile()) throw new WpCodeboxError("wp-cli-unavailable", `${label} ${quoteValue(value)} does not exist or is not a file (resolved to ${path}). ${HOW_TO}.`, { checked: [path] });
    return path;
  }
  throw new WpCodeboxError("wp-cli-unavailable", `No wp-cli.phar found (checked --wp-cli-phar, WP_CODEBOX_WP_CLI_PHAR). ${HOW_TO}.`, { checked: [] });
}

/** What one WP-CLI run needs from the sandbox. */
export interface NativeWpCliRun {
  tools: NativeTools;
  layout: SiteLayout;
  treeDir: string;
  /** The caller's mounts. */
  binds: Bind[];
  env: Record<string, string>;
  /** Host path of the phar. */
  phar: string;
  /** The `command` argument (`"option get siteurl"`, a leading `wp` allowed). */
  command: string;
  capBytes: number;
  /** Deadline in ms (0 = none); passing it kills the process. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Runs WP-CLI until it ends, its deadline passes or `signal` aborts (the last two kill it).
 * @returns the process outcome (`partial` output when stopped) and why it was stopped, if it was.
 * @throws `wp-cli-unsupported` / `missing-argument` for a command refused before it runs.
 */
export async function runNativeWpCli(run: NativeWpCliRun): Promise<{ argv: string[]; process: ProcessOutcome & { partial: { stdout: CapturedStream; stderr: CapturedStream } }; stopped?: "timeout" | "interrupted" }> {
  const { argv } = parseWpCliCommand(run.command);
  // WP-CLI's own argv without the leading "wp": PHP's command line runs the phar as the script.
  const full = wpCliArgv(argv, { path: SANDBOX_PATHS.wordpress, url: STABLE_SITE_ORIGIN }).slice(1);
  const child = startPhp({
    tools: run.tools,
    layout: run.layout,
    treeDir: run.treeDir,
    extraBinds: [...run.binds, { source: run.phar, target: SANDBOX_WP_CLI_PHAR, readOnly: true }],
    script: SANDBOX_WP_CLI_PHAR,
    args: full,
    env: run.env,
    capBytes: run.capBytes,
  });
  let stopped: "timeout" | "interrupted" | undefined;
  const timer = run.timeoutMs > 0 ? setTimeout(() => { stopped ??= "timeout"; child.kill(); }, run.timeoutMs) : undefined;
  const onAbort = () => { stopped ??= "interrupted"; child.kill(); };
  if (run.signal?.aborted) onAbort();
  else run.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const done = await child.done;
    return { argv, process: { ...done, partial: child.partial() }, ...(stopped ? { stopped } : {}) };
  } finally {
    if (timer) clearTimeout(timer);
    run.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * WP-CLI's view of a finished run, as on Playground: a non-zero exit (`php-exit`) becomes
 * `wp-cli-failed` with WP-CLI's message; with `--format=json` any JSON value printed (a bare
 * string from `option get` too) is `result.json`.
 */
export function wpCliOutcome<T extends { status: string; exitCode: number; stdout: string; stderr: string; truncated?: { stdout: boolean; stderr: boolean }; json?: unknown; error?: ExecutionError }>(outcome: T, argv: readonly string[]): T {
  if (outcome.error?.code === "php-exit") {
    outcome.error = {
      code: "wp-cli-failed",
      message: `WP-CLI exited with code ${outcome.exitCode}: ${(outcome.stderr || outcome.stdout).trim().slice(0, 500) || "(no output)"}`,
      data: { exitCode: outcome.exitCode },
    };
  }
  if (outcome.status === "ok" && outcome.json === undefined && !outcome.truncated?.stdout && argv.includes("--format=json")) {
    try {
      outcome.json = JSON.parse(outcome.stdout.trim()) as unknown;
    } catch {
      // not JSON after all: stdout stays as printed
    }
  }
  return outcome;
}
