/**
 * Fan-out on BullMQ + Redis: `wp-codebox batch … --queue redis://HOST:PORT[/DB]` submits the
 * batch (job id = task id) and waits; `wp-codebox worker --queue …` on any number of machines
 * runs the jobs.
 *
 * Bundles travel through a shared directory, not through Redis: the submitter puts the absolute
 * artifacts root in each job, the worker writes `ROOT/<id>/` (staged, verified, renamed) and its
 * record, and the submitter verifies it again when the job completes. Redis holds only task
 * descriptions and small results. Secret values never enter Redis: recipes and scripts name
 * their secret variables, and each worker reads the values from its own environment.
 */
import { existsSync } from "node:fs";
import { Job, Queue, Worker, type ConnectionOptions } from "bullmq";
import { Redis } from "ioredis";
import { WpCodeboxError, isErrorCode, type BatchTaskResult, type SerializedError } from "@wp-codebox/runtime-core";
import { createExecutor, failedResult, type Isolation } from "./executor.js";
import { cleanStaging, groupByRuntime, prepareBatch, resumeBatch, type BatchCommonOptions, type BatchOutcome } from "./local-batch.js";
import { createProgress } from "./progress.js";
import { buildReport, writeReportOrKeep } from "./report.js";
import { taskFingerprint } from "./fingerprint.js";
import { findFinishedTask, taskRuntimeKey } from "./run-task.js";
import type { ResolvedTask } from "./task-file.js";

/** The queue both sides use unless told otherwise (`--queue-name`). */
export const DEFAULT_QUEUE_NAME = "wp-codebox-batch";

/** What a job carries: the task (paths, overrides, timeout), where its bundle goes, and its fingerprint. No environment values. */
export interface BatchJobData {
  task: ResolvedTask;
  root: string;
  fingerprint: string;
}

/** A parsed `redis://[user:password@]HOST:PORT[/DB]` URL; `display` has the password removed. */
export interface QueueTarget {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
  display: string;
}

/**
 * Parses a queue URL.
 * @throws WpCodeboxError `invalid-argument` (exit 2) for anything but `redis://` or `rediss://` with a host.
 */
export function parseQueueUrl(url: string): QueueTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WpCodeboxError("invalid-argument", `--queue ${url} is not a URL: use redis://HOST:PORT[/DB].`, { url });
  }
  if ((parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") || !parsed.hostname) {
    throw new WpCodeboxError("invalid-argument", `--queue must be redis://HOST:PORT[/DB], not ${parsed.protocol}//…`, { protocol: parsed.protocol });
  }
  const dbPart = parsed.pathname.replace(/^\//, "");
  if (dbPart !== "" && !/^\d{1,2}$/.test(dbPart)) throw new WpCodeboxError("invalid-argument", `--queue ${redactUrl(parsed)}: the path must be a database number (/0 … /15), not /${dbPart}.`);
  const port = parsed.port ? Number(parsed.port) : 6379;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ""),
    port,
    db: dbPart === "" ? 0 : Number(dbPart),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    tls: parsed.protocol === "rediss:",
    display: redactUrl(parsed),
  };
}

function redactUrl(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password) copy.password = "***";
  return copy.href.replace(/\/$/, "");
}

function connectionOptions(target: QueueTarget): ConnectionOptions {
  return {
    host: target.host,
    port: target.port,
    db: target.db,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    // Wait through a Redis restart instead of failing a command.
    maxRetriesPerRequest: null,
  };
}

/**
 * Connects once and pings, so an unreachable Redis is an immediate, clear failure.
 * @throws WpCodeboxError `queue-unreachable` (exit 3) naming the URL (password removed).
 */
export async function assertQueueReachable(target: QueueTarget, timeoutMs = 5000): Promise<void> {
  const client = new Redis({
    host: target.host,
    port: target.port,
    db: target.db,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let cause: Error | undefined;
  client.on("error", (error: Error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const reason = (cause ?? (error as Error)).message.replace(/\.$/, "");
    throw new WpCodeboxError("queue-unreachable", `Cannot reach the queue at ${target.display} (${reason}). Start Redis there (redis-server) or fix --queue.`, { url: target.display });
  } finally {
    client.disconnect();
  }
}

/** Options of `submitQueueBatch`. */
export interface QueueBatchOptions extends BatchCommonOptions {
  queueUrl: string;
  queueName?: string;
  /** Tries per task when a worker fails without a bundle (crash, timeout, unreadable input); default 2. */
  attempts?: number;
  /** How often the submitter looks at its jobs; default 500 ms. */
  pollMs?: number;
}

function errorOfFailedJob(job: Job): SerializedError {
  const reason = job.failedReason ?? "the job failed";
  const m = /^([a-z][a-z0-9-]*): ([\s\S]*)$/.exec(reason);
  return m && isErrorCode(m[1]) ? { code: m[1], message: m[2]! } : { code: "internal-error", message: reason };
}

/**
 * Submits a batch to BullMQ and waits until every task is done, then writes the same
 * `report.json` and `junit.xml` as a local batch. Tasks whose bundle already verifies are not
 * submitted; a job that already exists for the same task (a resubmission) is waited on, not
 * added again; one that failed earlier is retried.
 * @throws `invalid-batch` (exit 2, nothing submitted), `queue-unreachable` (exit 3).
 */
export async function submitQueueBatch(options: QueueBatchOptions): Promise<BatchOutcome> {
  const log = options.log ?? ((m: string) => void process.stderr.write(`${m}\n`));
  const startedAt = new Date();
  const target = parseQueueUrl(options.queueUrl);
  const prepared = prepareBatch(options);
  await assertQueueReachable(target);
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const { finished, pending } = await resumeBatch(prepared);
  const progress = options.progress ?? createProgress({ total: prepared.tasks.length });
  const results = new Map<string, BatchTaskResult>(finished.map((r) => [r.id, r]));
  for (const r of finished) progress.taskDone(r);
  const queue = new Queue<BatchJobData, BatchTaskResult>(queueName, { connection: connectionOptions(target) });
  queue.on("error", () => undefined);
  const attempts = Math.max(1, options.attempts ?? 2);
  const fingerprints = new Map(pending.map((t) => [t.id, taskFingerprint(t)]));
  const jobFor = (task: ResolvedTask) => ({
    name: task.kind,
    data: { task, root: prepared.root, fingerprint: fingerprints.get(task.id)! },
    opts: { jobId: task.id, attempts, removeOnComplete: false, removeOnFail: false },
  });
  try {
    let added = 0;
    let reused = 0;
    const toAdd: ResolvedTask[] = [];
    for (const task of pending) {
      const existing = await Job.fromId<BatchJobData, BatchTaskResult>(queue, task.id);
      if (!existing) {
        toAdd.push(task);
        continue;
      }
      const state = await existing.getState();
      const same = existing.data?.fingerprint === fingerprints.get(task.id) && existing.data?.root === prepared.root;
      if (same && state !== "completed" && state !== "failed") {
        reused++; // already queued or running for this very task: wait for it
      } else if (state === "active") {
        throw new WpCodeboxError("invalid-batch", `Task id ${task.id} is running in queue ${queueName} for a different task or artifacts folder. Wait for it, or use another --queue-name.`, { id: task.id });
      } else {
        // Finished earlier (its bundle is gone or the task changed), or waiting for a different task: replace it.
        await existing.remove();
        toAdd.push(task);
      }
    }
    if (toAdd.length) {
      // Jobs of one runtime side by side: a worker's lanes then keep their sandboxes between them.
      await queue.addBulk((await groupByRuntime(toAdd, options.env ?? process.env)).map(({ task }) => jobFor(task)));
      added = toAdd.length;
    }
    log(`wp-codebox: ${prepared.tasks.length} task(s) on queue ${queueName} at ${target.display}: ${finished.length} kept from an earlier run, ${added} submitted, ${reused} already queued; waiting for workers (wp-codebox worker --queue ${target.display})`);

    const waiting = new Set(pending.map((t) => t.id));
    const byId = new Map(pending.map((t) => [t.id, t]));
    let redisDown = false;
    while (waiting.size > 0) {
      try {
        for (const id of [...waiting]) {
          const task = byId.get(id)!;
          const job = await Job.fromId<BatchJobData, BatchTaskResult>(queue, id);
          if (!job) {
            // Lost from Redis (restarted without persistence): the disk may still have the result.
            const done = await findFinishedTask(prepared.root, task, fingerprints.get(id));
            if (done) {
              const { resumed: _r, ...result } = done;
              finish(result);
            } else await queue.add(jobFor(task).name, jobFor(task).data, jobFor(task).opts);
            continue;
          }
          const state = await job.getState();
          if (state === "completed") {
            const done = await findFinishedTask(prepared.root, task, job.data?.fingerprint ?? fingerprints.get(id), { includeRetryable: true });
            if (done) {
              const { resumed: _r, ...result } = done;
              finish({ ...result, attempts: Math.max(1, job.attemptsStarted) });
            } else {
              finish({
                ...failedResult(task, { code: "bundle-invalid", message: `A worker finished task ${id}, but ${prepared.root}/${id} is missing or does not verify here. Workers must write to the same artifacts folder (a shared directory) at the same path.` }, job.returnvalue?.durationMs ?? 0),
                attempts: Math.max(1, job.attemptsStarted),
              });
            }
          } else if (state === "failed") {
            const duration = job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : 0;
            finish({ ...failedResult(task, errorOfFailedJob(job), duration), attempts: Math.max(1, job.attemptsStarted) });
          }
        }
        if (redisDown) {
          redisDown = false;
          progress.note(`wp-codebox: the queue at ${target.display} is reachable again`);
        }
      } catch (error) {
        if (error instanceof WpCodeboxError) throw error;
        if (!redisDown) progress.note(`wp-codebox: lost the queue at ${target.display} (${(error as Error).message}); waiting for it to come back`);
        redisDown = true;
      }
      if (waiting.size > 0) await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
    }

    function finish(result: BatchTaskResult): void {
      if (!waiting.delete(result.id)) return;
      results.set(result.id, result);
      progress.taskDone(result);
    }
  } finally {
    progress.stop();
    await queue.close().catch(() => undefined);
  }
  cleanStaging(prepared.root);
  const report = buildReport(
    prepared.tasks.map((t) => t.id),
    results.values(),
    { tasksFile: prepared.tasksFile, artifactsDir: prepared.root, mode: "queue", queue: `${target.display} ${queueName}`, startedAt, finishedAt: new Date() },
  );
  const { files, error: reportError } = writeReportOrKeep(prepared.root, report);
  if (reportError) return { report, files, reportError, exitCode: 3 };
  return { report, files, exitCode: report.counts.failed > 0 ? 1 : 0 };
}

/** Options of `startQueueWorker`. */
export interface QueueWorkerOptions {
  queueUrl: string;
  queueName?: string;
  /** Sandboxes at once on this worker. */
  concurrency: number;
  isolation?: Isolation;
  /** `--fresh-sandbox`: boot a sandbox for every job (default: each lane keeps a sandbox across jobs of one runtime). */
  freshSandbox?: boolean;
  /** Environment the sandboxes read secret values from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** BullMQ lock duration (ms): a job whose worker stops renewing it is stalled after this; default 30 000. */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval (ms); default 30 000. */
  stalledIntervalMs?: number;
  log?: (message: string) => void;
}

/** A running worker. */
export interface QueueWorker {
  /** Stops taking jobs, lets running tasks finish, stops the sandboxes. */
  close(): Promise<void>;
}

/**
 * Starts taking jobs from the queue. A job whose task leaves no bundle (crash, timeout,
 * unreadable input, a secret not set on this machine) throws, so BullMQ retries it up to the
 * submitter's `attempts`; a task that ran (passed or failed) completes with its result.
 * @throws WpCodeboxError `queue-unreachable` (exit 3).
 */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  const log = options.log ?? ((m: string) => void process.stderr.write(`${m}\n`));
  const target = parseQueueUrl(options.queueUrl);
  await assertQueueReachable(target);
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const executor = createExecutor({ concurrency: options.concurrency, isolation: options.isolation ?? "process", ...(options.env ? { env: options.env } : {}), ...(options.freshSandbox ? { freshSandbox: true } : {}) });
  const worker = new Worker<BatchJobData, BatchTaskResult>(
    queueName,
    async (job) => {
      const { task, root, fingerprint } = job.data;
      if (!existsSync(root)) {
        throw new Error(`artifacts-dir-invalid: ${root} does not exist on this worker; the artifacts folder must be a directory shared by the submitter and every worker, at the same path.`);
      }
      // A previous attempt may have written the bundle and died before reporting it.
      const done = await findFinishedTask(root, task, fingerprint);
      if (done) {
        const { resumed: _r, ...result } = done;
        log(`wp-codebox worker: ${task.id} already has a verified bundle (an earlier attempt); reporting it`);
        return result;
      }
      log(`wp-codebox worker: ${task.id} started (attempt ${job.attemptsStarted})`);
      const result = await executor.run(task, root, undefined, await taskRuntimeKey(task, options.env ?? process.env));
      log(`wp-codebox worker: ${task.id} ${result.status} in ${(result.durationMs / 1000).toFixed(1)} s${result.error ? ` (${result.error.code})` : ""}`);
      if (!result.bundle) throw new Error(`${result.error?.code ?? "internal-error"}: ${result.error?.message ?? "no bundle"}`);
      return result;
    },
    {
      connection: connectionOptions(target),
      concurrency: options.concurrency,
      ...(options.lockDurationMs !== undefined ? { lockDuration: options.lockDurationMs } : {}),
      ...(options.stalledIntervalMs !== undefined ? { stalledInterval: options.stalledIntervalMs } : {}),
      maxStalledCount: 2,
    },
  );
  let lastError = "";
  worker.on("error", (error) => {
    if (error.message !== lastError) log(`wp-codebox worker: queue error: ${error.message}`);
    lastError = error.message;
  });
  await worker.waitUntilReady();
  log(`wp-codebox worker: taking tasks from ${queueName} at ${target.display}, ${options.concurrency} sandbox(es) at once`);
  return {
    async close() {
      await worker.close();
      await executor.close();
    },
  };
}
