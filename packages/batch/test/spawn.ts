/** Test helper: the CLI from source as a long-running process whose output can be awaited. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyArtifactBundle, type BatchReport } from "@wp-codebox/runtime-core";
import { CLI_ENTRY } from "../../../test/support/cli-entry.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the combined output matches `pattern` (rejects after `timeoutMs` or on exit). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `wp-codebox <argv>` (from source, or built under `npm test`: see test/support/cli-entry.ts). */
export function startCli(argv: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = spawn(process.execPath, [...CLI_ENTRY, ...argv], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const listeners = new Set<() => void>();
  const onData = (d: string) => {
    out += d;
    for (const l of listeners) l();
  };
  child.stdout!.setEncoding("utf8").on("data", onData);
  child.stderr!.setEncoding("utf8").on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 300_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}; output:\n${out.slice(-3000)}`));
        }, timeoutMs);
        void exited.then(() => setTimeout(() => {
          if (!out.match(pattern)) {
            cleanup();
            reject(new Error(`process exited before ${pattern}; output:\n${out.slice(-3000)}`));
          }
        }, 50));
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Stops a CLI process (SIGTERM, then SIGKILL after 20 s). */
export async function stopCli(p: CliProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const kill = setTimeout(() => p.child.kill("SIGKILL"), 20_000);
  p.child.kill("SIGTERM");
  await p.exited;
  clearTimeout(kill);
}

/** Reads DIR/report.json and verifies every bundle it names. */
export async function readVerifiedReport(dir: string): Promise<BatchReport> {
  const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as BatchReport;
  for (const t of report.tasks) {
    if (!t.bundle) continue;
    const v = await verifyArtifactBundle(join(dir, t.id));
    if (!v.valid) throw new Error(`bundle ${t.id} does not verify: ${JSON.stringify(v.violations)}`);
    const manifest = JSON.parse(readFileSync(join(dir, t.id, "manifest.json"), "utf8")) as { bundle: { id: string; digest: string } };
    if (manifest.bundle.id !== t.bundle.id || manifest.bundle.digest !== t.bundle.digest) throw new Error(`bundle ${t.id} is not the one in the report`);
  }
  return report;
}
