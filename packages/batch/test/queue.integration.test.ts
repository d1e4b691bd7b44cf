/**
 * `wp-codebox batch --queue` and `wp-codebox worker` on a private redis-server (random loopback
 * port, append-only file in a temp dir): the 6-task batch through two workers with one SIGKILLed
 * mid-task; a resubmitted batch that does not duplicate work while Redis restarts; secret values
 * never reach Redis; an unreachable Redis is exit 3.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { startTestRedis, type TestRedis } from "./redis-server.js";
import { FIXTURES, readVerifiedReport, startCli, stopCli, type CliProcess } from "./spawn.js";

let redis: TestRedis;
const work = mkdtempSync(join(tmpdir(), "wp-codebox-batch-queue-"));
const processes: CliProcess[] = [];
// Short BullMQ timings so a killed worker's task is taken over within seconds.
const workerArgs = (queueName: string) => ["worker", "--queue", redis.url, "--queue-name", queueName, "--concurrency", "1", "--lock-duration", "5000", "--stalled-interval", "2000"];
const SECRET = "batch-secret-value-42"; // 21 characters, checked by secret.recipe.json

function cli(argv: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const p = startCli(argv, env);
  processes.push(p);
  return p;
}
const startedCount = (output: string, id: string) => output.split("\n").filter((l) => l.includes(`worker: ${id} started`)).length;

before(async () => {
  redis = await startTestRedis();
});
after(async () => {
  await Promise.all(processes.map(stopCli));
  await redis?.stop();
  rmSync(work, { recursive: true, force: true });
});

test("the 6-task batch through two workers, one SIGKILLed mid-task: every task reported once, bundles verified, same report as local", { timeout: 900_000 }, async () => {
  const out = join(work, "two-workers");
  const queue = "q-two";
  const w1 = cli(workerArgs(queue));
  const w2 = cli(workerArgs(queue));
  await Promise.all([w1.waitFor(/taking tasks/), w2.waitFor(/taking tasks/)]);
  const submitter = cli(["batch", join(FIXTURES, "tasks.jsonl"), "--artifacts", out, "--queue", redis.url, "--queue-name", queue]);
  const [, killedId] = await w1.waitFor(/worker: (\S+) started/);
  await new Promise((r) => setTimeout(r, 500));
  w1.child.kill("SIGKILL");
  await w1.exited;
  // A second worker again, as a fleet would replace the dead machine.
  const w3 = cli(workerArgs(queue));
  const { code } = await submitter.exited;
  assert.equal(code, 1, submitter.output());
  const report = await readVerifiedReport(out);
  assert.equal(report.mode, "queue");
  assert.deepEqual(
    report.tasks.map((t) => [t.id, t.status, t.exitCode]),
    [
      ["recipe-pass", "passed", 0],
      ["recipe-fail", "failed", 1],
      ["episode-pass", "passed", 0],
      ["recipe-wp65", "passed", 0],
      ["episode-php83", "passed", 0],
      ["recipe-again", "passed", 0],
    ],
  );
  const killed = report.tasks.find((t) => t.id === killedId)!;
  assert.ok(killed.attempts! >= 2, `the killed task ${killedId} ran again: ${JSON.stringify(killed)}`);
  const logs = w1.output() + w2.output() + w3.output();
  for (const t of report.tasks) {
    if (t.id === killedId) assert.equal(startedCount(logs, t.id), 2, logs);
    else assert.equal(startedCount(logs, t.id), 1, `${t.id} ran once:\n${logs}`);
  }
  assert.match(submitter.output(), /\[6\/6\]/);
});

test("a resubmitted batch waits for the queued jobs instead of adding new ones; a task failing every attempt is failed with the last error; Redis restarting keeps finished results; no secret value in Redis", { timeout: 600_000 }, async () => {
  const out = join(work, "resubmit");
  const queue = "q-resubmit";
  const env = { WP_CODEBOX_BATCH_TEST_SECRET: SECRET };
  const args = ["batch", join(FIXTURES, "resubmit.jsonl"), "--artifacts", out, "--queue", redis.url, "--queue-name", queue];
  // First submission with no worker running: the jobs wait; the submitter is stopped.
  const first = cli(args, env);
  await first.waitFor(/3 submitted/);
  await stopCli(first);
  // Resubmission: the same jobs are found, nothing is added.
  const second = cli(args, env);
  await second.waitFor(/0 submitted, 3 already queued/);
  const worker = cli(workerArgs(queue), env);
  await worker.waitFor(/worker: r1 passed/);
  await redis.restart();
  const { code } = await second.exited;
  assert.equal(code, 1, `${second.output()}\n--- worker ---\n${worker.output()}`);
  const report = await readVerifiedReport(out);
  assert.deepEqual(report.tasks.map((t) => [t.id, t.status]), [["r1", "passed"], ["r2", "passed"], ["r3", "failed"]]);
  // r3's 1 ms timeout stops its sandbox on every attempt: two attempts, then failed with the last error.
  const r3 = report.tasks[2]!;
  assert.equal(r3.attempts, 2, JSON.stringify(r3));
  assert.equal(r3.bundle, null);
  assert.equal(r3.error?.code, "timeout");
  assert.match(r3.error!.message, /Task r3 exceeded its timeout of 1 ms/);
  assert.equal(startedCount(worker.output(), "r3"), 2, worker.output());
  assert.equal(startedCount(worker.output(), "r1"), 1, worker.output());
  assert.equal(startedCount(worker.output(), "r2"), 1, worker.output());

  // Redis kept the jobs across the restart, and holds no secret value anywhere.
  const q = new Queue(queue, { connection: { host: "127.0.0.1", port: redis.port } });
  assert.deepEqual(await q.getJobCounts("completed", "failed", "waiting", "active"), { completed: 2, failed: 1, waiting: 0, active: 0 });
  await q.close();
  const client = new Redis({ host: "127.0.0.1", port: redis.port });
  const keys = await client.keys("*");
  let dump = "";
  for (const key of keys) {
    const type = await client.type(key);
    if (type === "hash") dump += JSON.stringify(await client.hgetall(key));
    else if (type === "string") dump += await client.get(key);
    else if (type === "list") dump += (await client.lrange(key, 0, -1)).join(" ");
    else if (type === "zset") dump += (await client.zrange(key, 0, -1)).join(" ");
    else if (type === "stream") dump += JSON.stringify(await client.xrange(key, "-", "+"));
  }
  client.disconnect();
  assert.ok(dump.includes("WP_CODEBOX_BATCH_TEST_SECRET") || dump.includes("secret.recipe.json"), "the dump covers the job data");
  assert.ok(!dump.includes(SECRET), "the secret value is not stored in Redis");
  await stopCli(worker);
});

test("--queue to an unreachable Redis is exit 3 naming the URL", { timeout: 60_000 }, async () => {
  const url = "redis://127.0.0.1:1/3";
  const submit = cli(["batch", join(FIXTURES, "tasks.jsonl"), "--artifacts", join(work, "unreachable"), "--queue", url]);
  const worker = cli(["worker", "--queue", url]);
  const [s, w] = await Promise.all([submit.exited, worker.exited]);
  assert.equal(s.code, 3, submit.output());
  assert.equal(w.code, 3, worker.output());
  assert.match(submit.output(), /error\[queue-unreachable\]: Cannot reach the queue at redis:\/\/127\.0\.0\.1:1\/3/);
});
