/** Spawns the CLI (from source through tsx, or the built entry under `npm test`: test/support/cli-entry.ts). */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CLI_ENTRY } from "../support/cli-entry.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/**
 * Runs `wp-codebox <argv>` from source and collects its output.
 * @param options.closeStdout - close the reading end of stdout at once, as `| head -0` would: the
 *   CLI's writes then fail with EPIPE; `stdout` stays "".
 * @param options.onStderr - called with all of stderr so far after each chunk, and the child (to
 *   send it a signal when a line shows up).
 */
export function spawnCli(
  argv: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; entry?: string[]; closeStdout?: boolean; onStderr?: (stderr: string, child: ChildProcess) => void } = {},
): Promise<CliRun> {
  const started = Date.now();
  const entry = options.entry ?? [...CLI_ENTRY];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entry, ...argv], {
      cwd: options.cwd ?? REPO_ROOT,
      // An `undefined` value removes the variable (e.g. WP_CODEBOX_CACHE_DIR, to use the default cache).
      env: Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter(([, v]) => v !== undefined)),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      options.onStderr?.(stderr, child);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, durationMs: Date.now() - started }));
  });
}

/** Short failure context for assertion messages. */
export function show(run: CliRun): string {
  return `exit ${run.code}\n--- stdout ---\n${run.stdout.slice(0, 3000)}\n--- stderr ---\n${run.stderr.slice(0, 3000)}`;
}
