/**
 * runSession with a fake backend (no WordPress): every path (command, recipe, episode) writes a
 * bundle that verifies and disposes what it booted, also when boot fails, a command cannot run,
 * or the run is interrupted; an attached runtime is used and left running.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle } from "../src/artifact-bundle/verify-artifact-bundle.js";
import { PolicyDeniedError, WpCodeboxError } from "../src/errors.js";
import { planRun, type RunRequest } from "../src/session/run-plan.js";
import { runSession } from "../src/session/run-session.js";
import type { ExecutionResult, ExecutionSpec, Runtime, RuntimeArtifacts, RuntimeBackend, RuntimeInfo } from "../src/runtime.js";

const dir = mkdtempSync(join(tmpdir(), "wp-codebox-session-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const out = () => join(dir, `bundle-${++n}`);

interface Counters {
  created: number;
  disposed: number;
}

/** A runtime whose run-php echoes the code's argument; `execute` can be replaced. */
function fakeRuntime(counters: Counters, execute?: (spec: ExecutionSpec) => Promise<ExecutionResult>): Runtime {
  const results: ExecutionResult[] = [];
  const info: RuntimeInfo = {
    id: "rt-fake",
    backend: "fake",
    wordpressVersion: "6.5.5",
    phpVersion: "8.3",
    siteUrl: "http://127.0.0.1:1",
    bootMode: "cached",
    bootDurationMs: 1,
    mounts: [],
    policy: { commands: ["wordpress.run-php"], network: "deny", filesystem: "readwrite-mounts", secrets: "none" },
    plugins: [],
    themes: [],
  };
  return {
    info: () => info,
    async execute(spec) {
      if (execute) return execute(spec);
      const now = new Date().toISOString();
      const code = spec.args.find((a) => a.startsWith("code="))?.slice(5) ?? "";
      const result: ExecutionResult = { id: `exec-${results.length + 1}`, command: spec.command, args: spec.args, status: "ok", exitCode: 0, stdout: code.replace("<?php echo ", "").replace(";", ""), stderr: "", startedAt: now, finishedAt: now, durationMs: 1 };
      results.push(result);
      return result;
    },
    async collectArtifacts(): Promise<RuntimeArtifacts> {
      return { info, results: [...results], events: [{ at: new Date().toISOString(), type: "runtime-booted" }], files: [], secrets: [] };
    },
    async dispose() {
      counters.disposed += 1;
    },
  };
}

function backendOf(counters: Counters, create: () => Promise<Runtime>): RuntimeBackend {
  return {
    kind: "fake",
    async create() {
      counters.created += 1;
      return create();
    },
  };
}

const bootFails = (counters: Counters) => backendOf(counters, async () => Promise.reject(new WpCodeboxError("boot-failed", "Could not activate: fatal-on-activate (PHP Fatal error)")));

const REQUESTS: Record<string, RunRequest> = {
  command: { kind: "command", command: "wordpress.run-php", args: ["code=<?php echo 1;"] },
  recipe: (() => {
    const file = join(dir, "recipe.json");
    writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" }, expect: { stdoutContains: "1" } }] }));
    return { kind: "recipe", file };
  })(),
  episode: { kind: "episode", baseDir: dir, script: { schema: "wp-codebox/episode-script/v1", steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }] } },
};

describe("runSession: every path writes a verifying bundle", () => {
  for (const [kind, request] of Object.entries(REQUESTS)) {
    it(`${kind}: a sandbox that does not boot still leaves a bundle (boot-failed, exit 1)`, async () => {
      const counters = { created: 0, disposed: 0 };
      const backend = bootFails(counters);
      const plan = planRun(request, { cwd: dir, artifactsDir: out() });
      const outcome = await runSession(plan, { backend });
      assert.equal(counters.created, 1);
      assert.equal(outcome.kind, kind);
      assert.equal(outcome.status, "error");
      assert.equal(outcome.exitCode, 1);
      assert.equal(outcome.error?.code, "boot-failed");
      assert.equal(outcome.bundle.valid, true);
      assert.deepEqual(await verifyArtifactBundle(outcome.bundle.directory), { valid: true, violations: [] });
      const review = JSON.parse(readFileSync(join(outcome.bundle.directory, "files/review.json"), "utf8"));
      assert.equal(review.status, "error");
      const events = readFileSync(join(outcome.bundle.directory, "files/events.jsonl"), "utf8");
      assert.match(events, /"type":"boot-failed"/);
      const metadata = JSON.parse(readFileSync(join(outcome.bundle.directory, "metadata.json"), "utf8"));
      assert.equal(metadata.runId, plan.runId);
      if (kind === "recipe") assert.equal(outcome.recipe?.report.failure?.phase, "boot");
      if (kind === "command") assert.equal(outcome.command?.result.error?.code, "boot-failed");
      if (kind === "episode") assert.equal(outcome.episode?.trace, undefined);
    });

    it(`${kind}: a booted run executes, writes, verifies and disposes (exit 0)`, async () => {
      const counters = { created: 0, disposed: 0 };
      const backend = backendOf(counters, async () => fakeRuntime(counters));
      const outcome = await runSession(planRun(request, { cwd: dir, artifactsDir: out() }), { backend });
      assert.equal(outcome.exitCode, 0, JSON.stringify(outcome.error ?? outcome.summary));
      assert.equal(outcome.status, "ok");
      assert.equal(outcome.bundle.valid, true);
      assert.equal(counters.disposed, 1);
      assert.equal(outcome.runtimeInfo?.backend, "fake");
      if (kind === "episode") {
        assert.equal(outcome.episode?.allOk, true);
        assert.ok(existsSync(join(outcome.bundle.directory, "files/runtime-episode-trace.json")));
      }
      if (kind === "recipe") assert.equal(outcome.recipe?.report.outcome, "passed");
    });

    it(`${kind}: an attached runtime is used and left running`, async () => {
      const counters = { created: 0, disposed: 0 };
      const runtime = fakeRuntime(counters);
      const outcome = await runSession(planRun(request, { cwd: dir, artifactsDir: out() }), { runtime });
      assert.equal(outcome.exitCode, 0, JSON.stringify(outcome.error ?? outcome.summary));
      assert.equal(outcome.bundle.valid, true);
      assert.equal(counters.disposed, 0);
    });
  }

  it("a policy denial thrown by execute becomes a synthetic error result (exit 1)", async () => {
    const counters = { created: 0, disposed: 0 };
    const backend = backendOf(counters, async () =>
      fakeRuntime(counters, async () => {
        throw new PolicyDeniedError("wordpress.run-php");
      }),
    );
    const outcome = await runSession(planRun(REQUESTS.command!, { cwd: dir, artifactsDir: out() }), { backend });
    assert.equal(outcome.error?.code, "policy-denied");
    assert.equal(outcome.exitCode, 1);
    assert.equal(outcome.command?.result.status, "error");
    assert.equal(outcome.command?.result.error?.code, "policy-denied");
    assert.equal(outcome.bundle.valid, true);
    assert.equal(counters.disposed, 1);
    const review = JSON.parse(readFileSync(join(outcome.bundle.directory, "files/review.json"), "utf8"));
    assert.match(review.summary, /policy-denied/);
  });

  it("an unexpected boot error is internal-error (exit 70), still with a bundle", async () => {
    const counters = { created: 0, disposed: 0 };
    const backend = backendOf(counters, async () => Promise.reject(new Error("kaboom")));
    const outcome = await runSession(planRun(REQUESTS.command!, { cwd: dir, artifactsDir: out() }), { backend });
    assert.equal(outcome.error?.code, "internal-error");
    assert.equal(outcome.exitCode, 70);
    assert.equal(outcome.bundle.valid, true);
  });

  it("an interrupt during execute records `interrupted`, exits 143 and disposes", async () => {
    const counters = { created: 0, disposed: 0 };
    const backend = backendOf(counters, async () => fakeRuntime(counters, () => new Promise(() => undefined)));
    const controller = new AbortController();
    setTimeout(() => controller.abort("SIGTERM"), 50);
    // This runtime ignores the signal: the session waits only its grace for the command's result.
    const outcome = await runSession(planRun(REQUESTS.command!, { cwd: dir, artifactsDir: out() }), { backend, signal: controller.signal, interruptedCommandGraceMs: 10 });
    assert.equal(outcome.error?.code, "interrupted");
    assert.equal(outcome.exitCode, 143);
    assert.equal(counters.disposed, 1);
    assert.equal(outcome.bundle.valid, true);
  });

  it("an interrupt during execute keeps the result the stopped command hands back (what PHP printed)", async () => {
    const counters = { created: 0, disposed: 0 };
    const backend = backendOf(counters, async () =>
      fakeRuntime(counters, (spec) => {
        assert.ok(spec.signal, "the owned runtime's command gets the signal");
        return new Promise((resolve) =>
          spec.signal!.addEventListener("abort", () => {
            const now = new Date().toISOString();
            resolve({ id: "exec-stopped", command: spec.command, args: spec.args, status: "timed-out", exitCode: 124, stdout: "printed before", stderr: "", error: { code: "interrupted", message: "stopped" }, startedAt: now, finishedAt: now, durationMs: 1 });
          }),
        );
      }),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort("SIGINT"), 50);
    const outcome = await runSession(planRun(REQUESTS.command!, { cwd: dir, artifactsDir: out() }), { backend, signal: controller.signal });
    assert.equal(outcome.error?.code, "interrupted");
    assert.equal(outcome.exitCode, 130);
    assert.equal(outcome.command?.result.stdout, "printed before");
    assert.equal(outcome.bundle.valid, true);
  });

  it("an interrupt during boot: progress says so without claiming a bundle before it is written", async () => {
    const counters = { created: 0, disposed: 0 };
    const controller = new AbortController();
    // The boot is interrupted, then fails a little later (the session waits for it, to dispose what it booted).
    const backend = backendOf(counters, () => {
      queueMicrotask(() => controller.abort("SIGINT"));
      return new Promise<never>((_, reject) => setTimeout(() => reject(new WpCodeboxError("boot-failed", "stopped")), 20));
    });
    const lines: string[] = [];
    const outcome = await runSession(planRun(REQUESTS.command!, { cwd: dir, artifactsDir: out() }), { backend, signal: controller.signal, onProgress: (m) => lines.push(m) });
    assert.equal(outcome.error?.code, "interrupted");
    assert.equal(outcome.exitCode, 130);
    const failed = lines.indexOf("The sandbox did not boot: interrupted by SIGINT");
    const writing = lines.findIndex((l) => l.startsWith("Writing the artifact bundle"));
    assert.ok(failed >= 0 && writing > failed, lines.join("\n"));
    assert.ok(lines.slice(0, writing).every((l) => !/bundle written/.test(l)), lines.join("\n"));
    assert.match(outcome.error?.message ?? "", /^Interrupted by SIGINT while the sandbox was booting: the boot was stopped/);
    assert.equal(outcome.bundle.valid, true);
  });

  it("secret values never reach the outcome the caller prints", async () => {
    const counters = { created: 0, disposed: 0 };
    const backend = backendOf(counters, async () => fakeRuntime(counters));
    const plan = planRun({ kind: "command", command: "wordpress.run-php", args: ["code=<?php echo s3cret-value;"], secretEnv: ["TOKEN"] }, { cwd: dir, artifactsDir: out(), processEnv: { TOKEN: "s3cret-value" } });
    const outcome = await runSession(plan, { backend });
    assert.doesNotMatch(JSON.stringify(outcome), /s3cret-value/);
    assert.doesNotMatch(readFileSync(join(outcome.bundle.directory, "files/commands.jsonl"), "utf8"), /s3cret-value/);
  });

  it("needs a backend or a runtime", async () => {
    await assert.rejects(runSession(planRun(REQUESTS.command!, { cwd: dir, artifactsDir: out() }), {}), /needs a backend/);
  });
});
