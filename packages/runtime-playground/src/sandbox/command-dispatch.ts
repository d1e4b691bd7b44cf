/**
 * Running one command in a sandbox: the handler for its id, the policy check, the wall-clock
 * deadline (the catalog's default unless the caller gives one; `0` = none), and the
 * `ExecutionResult` it becomes. A deadline that passes kills the primary PHP worker (PHP cannot be
 * interrupted from inside) and keeps what the run had printed as evidence.
 */
import { randomUUID } from "node:crypto";
import {
  MAX_DURATION_MS,
  WpCodeboxError,
  abortReasonText,
  assertCapability,
  getCommandDefinition,
  parseCommandArgs,
  serializeError,
  type ExecutionResult,
  type ExecutionSpec,
  type RuntimePolicy,
} from "@wp-codebox/runtime-core";
import { wpCli } from "../commands/wp-cli.js";
import { applyBackgroundErrors, type BackgroundErrorsMode } from "../evidence/background-errors.js";
import type { EvidenceLedger } from "../evidence/evidence-ledger.js";
import { WorkerGoneError, type PhpWorkerHost } from "../worker/php-worker-host.js";
import { COMMAND_HANDLERS, type CommandContext, type CommandHandler, type CommandOutcome } from "@wp-codebox/commands";

/** Handlers by command id: the shared ones and Playground's wp-cli; a catalog command without one reports so. */
const HANDLERS: Record<string, CommandHandler> = { ...COMMAND_HANDLERS, "wordpress.wp-cli": wpCli };

/** What dispatching a command uses of its runtime. */
export interface DispatchHost {
  policy: RuntimePolicy;
  ledger: EvidenceLedger;
  /** The handler's view of the runtime for one execution. */
  context(executionId: string): CommandContext;
  /** The worker whose printed output is kept when a deadline passes. */
  primary(): PhpWorkerHost;
  /** Kills the primary worker and boots a replacement on the same files. */
  replaceWorker(reason: string): Promise<void>;
  /**
   * Resolves once the requests the command's PHP made to its own site have finished (WP-Cron
   * spawned by a page load): the command ends, within its deadline, only then.
   */
  selfCallsSettled?(): Promise<void>;
  /** True once the runtime is disposed (its workers are gone): a command it stopped is not a timeout. */
  disposed?(): boolean;
}

type PartialOutput = ReturnType<PhpWorkerHost["partialOutput"]>;

/**
 * Runs one command and records it in the ledger (`command-started`, the result with the database
 * errors its PHP runs and requests reported, its files, `command-finished`). Failures come back as results: `status: "error"`, or `"timed-out"` with
 * exit code 124, error `timeout` and the output printed before the deadline.
 * @throws `unknown-command`, `policy-denied`, `invalid-argument`, `missing-argument` (contract
 *   misuse; nothing ran), and a handler's own WpCodeboxError.
 */
export async function dispatchCommand(host: DispatchHost, spec: ExecutionSpec): Promise<ExecutionResult> {
  const definition = getCommandDefinition(spec.command);
  if (!definition.runnable) {
    throw new WpCodeboxError("unknown-command", `${spec.command} is a policy capability, not a runnable command.`);
  }
  assertCapability(host.policy, definition.capability);
  const args = parseCommandArgs(spec.command, spec.args);
  // Past 2^31 - 1 ms a Node timer fires at once: the command would "time out" as it starts.
  if (spec.timeoutMs !== undefined && !(Number.isInteger(spec.timeoutMs) && spec.timeoutMs >= 0 && spec.timeoutMs <= MAX_DURATION_MS)) {
    throw new WpCodeboxError("invalid-argument", `${spec.command}: timeoutMs must be a whole number of milliseconds from 0 (no limit) to ${MAX_DURATION_MS} (got ${String(spec.timeoutMs)}).`, {
      command: spec.command,
      timeoutMs: spec.timeoutMs,
    });
  }
  const handler = HANDLERS[spec.command];
  const id = `exec-${randomUUID()}`;
  const startedAt = new Date().toISOString();
  const started = Date.now();
  const timeoutMs = spec.timeoutMs ?? definition.defaultTimeoutMs;
  host.ledger.event("command-started", { id, command: spec.command });
  const dbErrors = host.ledger.openDbErrors(id);
  host.ledger.background.open(id);
  let outcome: CommandOutcome | "timed-out";
  let timedOutOutput: PartialOutput | undefined;
  /** Stopped through `spec.signal` (a Ctrl-C, a cancelled MCP call) rather than by its deadline. */
  let aborted = false;
  if (!handler) {
    outcome = {
      status: "error",
      exitCode: 1,
      stdout: "",
      stderr: "",
      error: { code: "not-implemented", message: `${spec.command} is in the catalog but this backend does not run it yet.` },
    };
  } else {
    const ran = await runWithDeadline(host, handler, args, timeoutMs, spec.signal, id);
    outcome = ran.outcome;
    timedOutOutput = ran.partialOutput;
    aborted = ran.aborted === true;
  }
  const finished = Date.now();
  const result: ExecutionResult =
    outcome === "timed-out"
      ? {
          id,
          command: spec.command,
          args: spec.args,
          status: "timed-out",
          exitCode: 124,
          stdout: timedOutOutput?.stdout ?? "",
          stderr: timedOutOutput?.stderr ?? "",
          stdoutBytes: timedOutOutput?.stdoutBytes ?? 0,
          stderrBytes: timedOutOutput?.stderrBytes ?? 0,
          error: aborted
            ? {
                code: "interrupted",
                message: `${spec.command}: stopped by the caller before it finished (${abortReasonText(spec.signal)}). The PHP worker was stopped and replaced.`,
                data: { reason: abortReasonText(spec.signal) },
              }
            : {
                code: "timeout",
                message: `${spec.command}: Timeout ${timeoutMs}ms exceeded. The PHP worker was stopped and replaced; raise --timeout if the work needs longer.`,
                data: { timeoutMs },
              },
          startedAt,
          finishedAt: new Date().toISOString(),
          durationMs: finished - started,
        }
      : {
          id,
          command: spec.command,
          args: spec.args,
          status: outcome.status,
          exitCode: outcome.exitCode,
          stdout: outcome.stdout,
          stderr: outcome.stderr,
          ...(outcome.stdoutBytes !== undefined ? { stdoutBytes: outcome.stdoutBytes, stderrBytes: outcome.stderrBytes ?? 0 } : {}),
          ...(outcome.truncated ? { truncated: outcome.truncated } : {}),
          ...(outcome.json !== undefined ? { json: outcome.json } : {}),
          ...(outcome.error ? { error: outcome.error } : {}),
          startedAt,
          finishedAt: new Date().toISOString(),
          durationMs: finished - started,
          ...(outcome.files?.length ? { artifactRefs: outcome.files.map((f) => ({ path: f.path, kind: f.kind })) } : {}),
        };
  host.ledger.closeDbErrors(id);
  if (dbErrors.length) result.dbErrors = dbErrors;
  // A command without the arg (wordpress.check reports its own findings) only lists them.
  const backgroundMode = args["background-errors"] ?? (definition.args.some((a) => a.name === "background-errors") ? "fail" : "record");
  applyBackgroundErrors(result, host.ledger.background.close(id), backgroundMode as BackgroundErrorsMode);
  host.ledger.recordCommand(result, outcome);
  host.ledger.event("command-finished", { id, command: spec.command, status: result.status, durationMs: result.durationMs });
  return result;
}

/**
 * What a command that `dispose()` stopped gives: `error` with code `runtime-disposed` and the
 * output printed until then (it used to say it had timed out after its whole deadline).
 */
function disposedOutcome(host: DispatchHost): CommandOutcome {
  let printed: PartialOutput | undefined;
  try {
    printed = host.primary().partialOutput();
  } catch {
    printed = undefined;
  }
  return {
    status: "error",
    exitCode: 1,
    stdout: printed?.stdout ?? "",
    stderr: printed?.stderr ?? "",
    ...(printed ? { stdoutBytes: printed.stdoutBytes, stderrBytes: printed.stderrBytes } : {}),
    error: { code: "runtime-disposed", message: "The runtime was disposed while this command ran: it was stopped before it finished." },
  };
}

/**
 * Runs a handler against its deadline and the caller's abort signal (either one ends it as
 * `"timed-out"`). A worker that dies under the handler also counts as timed out; an error that is
 * not a WpCodeboxError becomes an error outcome.
 */
async function runWithDeadline(
  host: DispatchHost,
  handler: CommandHandler,
  args: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  executionId: string,
): Promise<{ outcome: CommandOutcome | "timed-out"; partialOutput?: PartialOutput; aborted?: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let aborted = false;
  const deadline = new Promise<"timed-out">((resolve) => {
    if (timeoutMs > 0) timer = setTimeout(() => resolve("timed-out"), timeoutMs);
    if (signal) {
      onAbort = () => {
        aborted = true;
        resolve("timed-out");
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  const work = handler(host.context(executionId), args)
    .then(async (outcome) => {
      await host.selfCallsSettled?.();
      return outcome;
    })
    .catch((error: unknown) => {
    if (error instanceof WorkerGoneError) return host.disposed?.() ? disposedOutcome(host) : ("timed-out" as const);
    if (error instanceof WpCodeboxError) throw error;
    const serialized = serializeError(error);
    return { status: "error", exitCode: 1, stdout: "", stderr: "", error: { code: serialized.code, message: serialized.message } } satisfies CommandOutcome;
  });
  try {
    const winner = await Promise.race([work, deadline]);
    let partialOutput: PartialOutput | undefined;
    if (winner === "timed-out") {
      // Keep what the run printed before its deadline: it is the evidence of a hang.
      try {
        partialOutput = host.primary().partialOutput();
      } catch {
        partialOutput = undefined; // never let evidence-gathering block the replacement
      }
      // PHP cannot be interrupted from inside: kill the thread, boot a replacement on the same files.
      await host.replaceWorker("timeout");
    }
    return { outcome: winner, ...(partialOutput ? { partialOutput } : {}), ...(winner === "timed-out" && aborted ? { aborted } : {}) };
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
