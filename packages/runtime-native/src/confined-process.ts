/**
 * Running one confined process to its end, with its output captured up to a cap, and killing it
 * (with everything it started: bubblewrap's PID namespace dies with it) when asked.
 */
import { spawn, type ChildProcess } from "node:child_process";
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

/**
 * Starts a `confinedCommand` with stdin closed.
 * @param capBytes - bytes kept per stream; the rest is counted, not kept.
 */
export function startConfined(command: ConfinedCommand, capBytes: number): ConfinedProcess {
  const [file, ...args] = command.argv;
  const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe"], env: command.env });
  const out = capture(capBytes);
  const err = capture(capBytes);
  child.stdout!.on("data", (c: Buffer) => out.push(c));
  child.stderr!.on("data", (c: Buffer) => err.push(c));
  const done = new Promise<ProcessOutcome>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ exitCode: code ?? (signal ? 128 : 1), signal, stdout: out.value(), stderr: err.value() }));
  });
  return {
    child,
    done,
    partial: () => ({ stdout: out.value(), stderr: err.value() }),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
