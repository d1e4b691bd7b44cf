import { randomUUID } from "node:crypto";
import type { ExecutionResult } from "./runtime.js";
import type { ErrorCode } from "./errors.js";

/**
 * The `ExecutionResult` recorded for a command that could not run (the sandbox did not boot, the
 * policy refused it, the run was interrupted): `status: "error"`, `exitCode: -1` (it has none of its
 * own, as in episode traces), empty output, the error as data, so the bundle still says what
 * happened to that command.
 * @param startedMs - when the attempt began (ms since the epoch); default now, giving 0 ms.
 */
export function failedExecutionResult(
  command: { command: string; args: string[] },
  error: { code: ErrorCode; message: string; data?: Record<string, unknown> },
  startedMs: number = Date.now(),
): ExecutionResult {
  const finishedMs = Math.max(Date.now(), startedMs);
  return {
    id: `exec-${randomUUID()}`,
    command: command.command,
    args: command.args,
    status: "error",
    exitCode: -1,
    stdout: "",
    stderr: "",
    error: { code: error.code, message: error.message, ...(error.data && Object.keys(error.data).length ? { data: error.data } : {}) },
    startedAt: new Date(startedMs).toISOString(),
    finishedAt: new Date(finishedMs).toISOString(),
    durationMs: finishedMs - startedMs,
  };
}
