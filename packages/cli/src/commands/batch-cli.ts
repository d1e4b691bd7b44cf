/**
 * Registers `wp-codebox batch` and `wp-codebox worker` (the logic is in `@wp-codebox/batch`,
 * imported lazily so other commands do not load BullMQ).
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { CliExitError, EXIT_CODES } from "../cli-exit-error.js";
import { addHostAccessOptions, hostAccessGrants, type HostAccessFlags } from "../host-access-flags.js";

/** What the batch commands need from the CLI invocation. */
export interface BatchCliContext {
  io: CliIo;
  printJson: (value: unknown) => void;
  /** Installs SIGINT/SIGTERM handlers and returns their remover. */
  installSignalHandlers: (onSignal: (signal: NodeJS.Signals) => void) => () => void;
}

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a whole number ≥ 1.");
  return n;
}

type Isolation = "process" | "in-process";

function isolation(value: string): Isolation {
  if (value !== "process" && value !== "in-process") throw new InvalidArgumentError('must be "process" or "in-process".');
  return value;
}

/** Adds `batch` and `worker` to `program`. */
export function registerBatchCommands(program: Command, ctx: BatchCliContext): void {
  const { io } = ctx;
  addHostAccessOptions(program
    .command("batch"), "the task file and its recipes and scripts")
    .description("Run every task of a task file (tasks.jsonl: recipes and episodes), N sandboxes at once or on a BullMQ queue; one bundle per task, report.json and junit.xml.")
    .argument("<tasks>", 'task file: one JSON object a line, {"id": "t1", "recipe": "recipe.json"} or {"id": "t2", "episode": "script.json"} (wp-codebox schema batch-task)')
    .requiredOption("--artifacts <dir>", "where DIR/<id>/ bundles, report.json and junit.xml go; re-running skips tasks whose bundle verifies")
    .option("--concurrency <n>", "sandboxes at once (default: one per core, capped so the memory available holds them)", positiveInt)
    .option("--isolation <mode>", "process (default): one child process per sandbox slot, so a crash fails only its task; in-process: every sandbox in this process, sharing compiled PHP (less memory, faster, but a process crash ends every running task)", isolation)
    .option("--fresh-sandbox", "boot a new sandbox for every task (default: each of the --concurrency lanes keeps its sandbox and resets it between tasks of the same runtime, far cheaper)")
    .option("--queue <redis-url>", "submit to BullMQ at redis://HOST:PORT[/DB] and wait for `wp-codebox worker` processes instead of running locally")
    .option("--queue-name <name>", "BullMQ queue name (default wp-codebox-batch; workers must use the same)")
    .option("--attempts <n>", "queue mode: tries per task when a worker leaves no bundle (crash, timeout); default 2", positiveInt)
    .option("--json", "print report.json on stdout too")
    .addHelpText(
      "after",
      "\nThe whole task file is validated first (every problem with its line and JSON pointer; nothing runs)." +
        "\nExit codes: 0 every task passed; 1 a task failed (it is in report.json and junit.xml, the others still ran); 2 invalid task file; 3 queue unreachable." +
        examples([
          "wp-codebox batch tasks.jsonl --artifacts out",
          "wp-codebox batch tasks.jsonl --artifacts /shared/out --concurrency 4",
          "wp-codebox batch tasks.jsonl --artifacts /shared/out --queue redis://10.0.0.5:6379/0",
        ]),
    )
    .action(async (tasksFile: string, opts: { artifacts: string; concurrency?: number; isolation?: Isolation; freshSandbox?: boolean; queue?: string; queueName?: string; attempts?: number; json?: boolean } & HostAccessFlags) => {
      const batch = await import("@wp-codebox/batch");
      const common = { tasksFile, artifactsDir: opts.artifacts, cwd: io.cwd, env: io.env, log: (m: string) => io.stderr(`${m}\n`), ...hostAccessGrants(opts) };
      if (opts.queue !== undefined && (opts.concurrency !== undefined || opts.isolation !== undefined || opts.freshSandbox)) io.stderr("wp-codebox: --concurrency, --isolation and --fresh-sandbox are set on each worker in queue mode; ignored here\n");
      const outcome = opts.queue
        ? await batch.submitQueueBatch({ ...common, queueUrl: opts.queue, ...(opts.queueName ? { queueName: opts.queueName } : {}), ...(opts.attempts ? { attempts: opts.attempts } : {}) })
        : await batch.runLocalBatch({ ...common, ...(opts.concurrency ? { concurrency: opts.concurrency } : {}), ...(opts.isolation ? { isolation: opts.isolation } : {}), ...(opts.freshSandbox ? { freshSandbox: true } : {}) });
      if (opts.json) ctx.printJson(outcome.report);
      io.stderr(batch.formatReportSummary(outcome.report, outcome.files));
      if (outcome.reportError) throw new CliExitError(outcome.reportError.code, outcome.reportError.message, EXIT_CODES.environment, outcome.reportError.data ?? {});
      if (outcome.exitCode !== 0) {
        throw new CliExitError("batch-failed", `${outcome.report.counts.failed} of ${outcome.report.counts.total} task(s) failed; see ${outcome.files.reportFile}.`, EXIT_CODES.sandboxFailed, {
          failed: outcome.report.tasks.filter((t) => t.status === "failed").map((t) => t.id),
        });
      }
    });

  program
    .command("worker")
    .description("Take batch tasks from a BullMQ queue and run them until stopped (SIGINT/SIGTERM lets running tasks finish).")
    .requiredOption("--queue <redis-url>", "redis://HOST:PORT[/DB] the batch was submitted to")
    .option("--queue-name <name>", "BullMQ queue name (default wp-codebox-batch)")
    .option("--concurrency <n>", "sandboxes at once on this machine (default: one per core, capped by memory)", positiveInt)
    .option("--isolation <mode>", "process (default) or in-process, as for batch", isolation)
    .option("--fresh-sandbox", "boot a new sandbox for every job (default: each lane keeps its sandbox across jobs of the same runtime)")
    .option("--lock-duration <ms>", "BullMQ lock duration: a task whose worker died is taken over after about this long (default 30000)", positiveInt)
    .option("--stalled-interval <ms>", "BullMQ stalled-job check interval (default 30000)", positiveInt)
    .addHelpText(
      "after",
      "\nThe artifacts folder named by the submitter must be reachable at the same path (a shared directory). Secret values are read from this worker's environment; only their names are in the recipes." +
        "\nExit codes: 0 stopped by a signal after running tasks finished; 2 bad --queue; 3 queue unreachable." +
        examples(["wp-codebox worker --queue redis://10.0.0.5:6379/0", "API_TOKEN=... wp-codebox worker --queue redis://127.0.0.1:6379 --concurrency 2"]),
    )
    .action(async (opts: { queue: string; queueName?: string; concurrency?: number; isolation?: Isolation; freshSandbox?: boolean; lockDuration?: number; stalledInterval?: number }) => {
      const batch = await import("@wp-codebox/batch");
      const decision = batch.decideConcurrency(opts.concurrency);
      if (decision.lowered) io.stderr(`wp-codebox worker: concurrency lowered from ${decision.lowered.requested} to ${decision.concurrency}: ${decision.lowered.reason}\n`);
      const worker = await batch.startQueueWorker({
        queueUrl: opts.queue,
        concurrency: decision.concurrency,
        env: io.env,
        log: (m) => io.stderr(`${m}\n`),
        ...(opts.queueName ? { queueName: opts.queueName } : {}),
        ...(opts.isolation ? { isolation: opts.isolation } : {}),
        ...(opts.freshSandbox ? { freshSandbox: true } : {}),
        ...(opts.lockDuration ? { lockDurationMs: opts.lockDuration } : {}),
        ...(opts.stalledInterval ? { stalledIntervalMs: opts.stalledInterval } : {}),
      });
      await new Promise<void>((resolve) => {
        // The handler stays while the worker closes: with none, a second signal would kill the
        // process by default and skip the exit handlers that remove sandbox folders.
        let stopping = false;
        const remove = ctx.installSignalHandlers((signal) => {
          if (stopping) {
            io.stderr(`wp-codebox worker: second ${signal}: quitting at once; running tasks go back to the queue when their lock expires\n`);
            process.exit(signal === "SIGTERM" ? EXIT_CODES.sigterm : EXIT_CODES.sigint);
          }
          stopping = true;
          io.stderr(`wp-codebox worker: ${signal}: finishing running tasks, then stopping (send it again to quit at once)\n`);
          worker.close().finally(() => {
            remove();
            resolve();
          });
        });
      });
    });
}
