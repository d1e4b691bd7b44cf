/**
 * Running one confined process to its end, with its output captured up to a cap, and killing it
 * (with everything it started: bubblewrap's PID namespace dies with it) when asked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { ConfinedCommand } from "./bubblewrap.js";

/** What one stream printed: the first `capBytes` bytes, how many there were, and whether it was cut. */
export interface CapturedStream {
  data: Buffer;
  bytes: number;
  truncated: boolean;
}

/** How a confined process ended. `signal` is set when it was killed (`SIGKILL` by `kill()`, `SIGXFSZ`…). */
export interface ProcessOutcome {
  exitCode: number;
  signal: NodeJS.Signals | null;
  stdout: CapturedStream;
  stderr: CapturedStream;
}

/** A running confined process. */
export interface ConfinedProcess {
  readonly child: ChildProcess;
  /** Resolves when the process has exited and its streams are closed. */
  readonly done: Promise<ProcessOutcome>;
  /** What it printed so far. */
  partial(): { stdout: CapturedStream; stderr: CapturedStream };
  /** SIGKILL; idempotent. */
  kill(): void;
}

function capture(capBytes: number): { push(chunk: Buffer): void; value(): CapturedStream } {
  const parts: Buffer[] = [];
  let kept = 0;
  let bytes = 0;
  return {
    push(chunk) {
      bytes += chunk.byteLength;
      if (kept >= capBytes) return;
      const part = chunk.byteLength > capBytes - kept ? chunk.subarray(0, capBytes - kept) : chunk;
      parts.push(part);
      kept += part.byteLength;
    },
    value: () => ({ data: Buffer.concat(parts), bytes, truncated: bytes > kept }),
  };
}

/** The pids a process has started (all its threads'), from /proc; none when it is gone. */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** Whether a process has stopped (or is gone) after a SIGSTOP: field 3 of /proc/<pid>/stat. */
function stoppedOrGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^[TtZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return true;
  }
}

/**
 * Kills a spawned `confinedCommand` (bubblewrap) with everything it started; does nothing when it
 * has exited. SIGKILL to bubblewrap alone is not enough: the process it cloned as PID 1 of the
 * sandbox's PID namespace survives it when killed early (it still waits for bubblewrap's go-ahead,
 * before `--die-with-parent` is set up), orphaned for good and holding the streams Node reads, so
 * the caller's process never exits. So bubblewrap is stopped first (it clones nothing more), the
 * processes it started are killed (killing a namespace's PID 1 kills the whole namespace), then
 * bubblewrap itself.
 */
export function killConfined(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(pid, "SIGSTOP");
    // The stop takes effect asynchronously; a clone under way finishes first.
    for (let i = 0; i < 10_000 && !stoppedOrGone(pid); i++);
    for (const inner of childPids(pid)) {
      try {
        process.kill(inner, "SIGKILL");
      } catch {
        // gone already
      }
    }
  } catch {
    // gone already
  }
  child.kill("SIGKILL");
}

/**
 * Deadline of the host's own steps that run inside a sandbox (saving or restoring the clean
 * database, snapshot facts, installing the cached site), in ms: the sandbox's PHP can leave a FIFO
 * where such a step reads a file, which would otherwise hang `reset()` or a snapshot for good.
 */
export const HOST_STEP_DEADLINE_MS = 120_000;
/** Deadline of a database dump or load (ms): they take as long as the database is big. */
export const DB_TOOL_DEADLINE_MS = 600_000;

/**
 * Starts a `confinedCommand` with stdin closed.
 * @param capBytes - bytes kept per stream; the rest is counted, not kept.
 * @param deadlineMs - killed (SIGKILL) when still running after this many ms; 0 = never.
 */
export function startConfined(command: ConfinedCommand, capBytes: number, deadlineMs = 0): ConfinedProcess {
  const [file, ...args] = command.argv;
  const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe"], env: command.env });
  const out = capture(capBytes);
  const err = capture(capBytes);
  child.stdout!.on("data", (c: Buffer) => out.push(c));
  child.stderr!.on("data", (c: Buffer) => err.push(c));
  const timer = deadlineMs > 0 ? setTimeout(() => killConfined(child), deadlineMs) : undefined;
  const done = new Promise<ProcessOutcome>((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? (signal ? 128 : 1), signal, stdout: out.value(), stderr: err.value() });
    });
  });
  return {
    child,
    done,
    partial: () => ({ stdout: out.value(), stderr: err.value() }),
    kill: () => killConfined(child),
  };
}
