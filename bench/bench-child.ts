/**
 * Runs one measurement of a bench script in a child process of its own (so boots and memory do not
 * mix between measurements): the script is started again with BENCH_CHILD=1 and `args`, and prints
 * its figures as the last JSON line on stdout. The child loads wp-codebox as the parent does: from
 * its TypeScript sources when the parent runs with `--conditions=source`, else from the build.
 * @returns the parsed figures, or `{ error }` with the last lines of the child's output; also
 *   `{ error }` when the child was still running after `timeoutMs` (killed), even if it had printed
 *   its figures: something it left open kept it alive.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export function runBenchChild<Figures>(scriptUrl: string, args: string[], timeoutMs = 600_000): Figures | { error: string } {
  const source = process.execArgv.includes("--conditions=source") ? ["--conditions=source"] : [];
  const r = spawnSync(process.execPath, [...source, "--import", "tsx", fileURLToPath(scriptUrl), ...args], {
    encoding: "utf8",
    timeout: timeoutMs,
    env: { ...process.env, BENCH_CHILD: "1" },
  });
  if (r.signal !== null) return { error: `killed (${r.signal}) after ${timeoutMs} ms: the child did not end on its own` };
  try {
    return JSON.parse(r.stdout.trim().split("\n").pop() ?? "") as Figures;
  } catch {
    return { error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split("\n").slice(-3).join(" | ") };
  }
}
