/**
 * The shape `run` prints for one command, shared by local runs and `run --attach` (which must not
 * load the Playground backend, so this lives apart from run.ts).
 */
import type { ExecutionResult, RunSessionOutcome, RuntimeInfo, SessionBundle } from "@wp-codebox/runtime-core";
import { CliExitError } from "../cli-exit-error.js";

/** What a run produced, in the shape the CLI prints. `error` is set when the command could not run. */
export interface RunOutcome {
  runId: string;
  /** The command's result; a synthetic `status: "error"` result when it could not run or boot failed. */
  result: ExecutionResult;
  bundle: SessionBundle;
  /** Why the command could not run (boot failure, policy denial, interrupt), with the exit code to end with. */
  error?: CliExitError;
  runtimeInfo?: RuntimeInfo;
  /** The CLI exit code of this run. */
  exitCode: number;
}

/** The session outcome of a single command in the shape `run` prints. */
export function toRunOutcome(session: RunSessionOutcome): RunOutcome {
  const error = session.error
    ? new CliExitError(session.error.code, session.error.message, session.exitCode, session.error.data ?? {})
    : undefined;
  return {
    runId: session.runId,
    result: session.command!.result,
    bundle: session.bundle,
    ...(error ? { error } : {}),
    ...(session.runtimeInfo ? { runtimeInfo: session.runtimeInfo } : {}),
    exitCode: session.exitCode,
  };
}
