/**
 * The bundle folder is checked before any work (a refused name, a read-only or a full filesystem
 * is `artifacts-dir-unwritable`, exit 3), and a bundle that cannot be written after the work ran
 * keeps the result: `bundle.written: false` with the cause, exit 3, for every run kind.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleWriteError, probeArtifactsDir, probeHostDir } from "../src/artifacts-dir-probe.js";
import { WpCodeboxError, exitCodeForCategory } from "../src/errors.js";
import { planRun, type RunRequest } from "../src/session/run-plan.js";
import { runSession } from "../src/session/run-session.js";
import type { ExecutionResult, Runtime, RuntimeArtifacts, RuntimeBackend, RuntimeInfo } from "../src/runtime.js";

const dir = mkdtempSync(join(tmpdir(), "wp-codebox-probe-"));
const mounts: string[] = [];
after(() => {
  for (const m of mounts) spawnSync("umount", [m]);
  rmSync(dir, { recursive: true, force: true });
});

/** A tmpfs mounted at a fresh folder, or a reason it cannot be (not root, no mount permission). */
function tmpfs(options: string): string | { skip: string } {
  const target = mkdtempSync(join(dir, "mnt-"));
  const run = spawnSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", target], { encoding: "utf8" });
  if (run.status !== 0) return { skip: `cannot mount a tmpfs here (${(run.stderr || run.error?.message || "").trim()}); needs root or CAP_SYS_ADMIN` };
  mounts.push(target);
  return target;
}

function unwritableCause(fn: () => void): { cause: unknown; data: Record<string, unknown>; exit: number } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof WpCodeboxError, String(error));
    assert.equal(error.code, "artifacts-dir-unwritable");
    assert.match(error.message, /Pass --artifacts/);
    return { cause: error.data.cause, data: error.data, exit: exitCodeForCategory(error.category) };
  }
  assert.fail("the probe accepted the folder");
}

describe("probeArtifactsDir", () => {
  it("accepts a writable folder with room: creates it, leaves it empty", () => {
    const target = join(dir, "ok", "nested");
    probeArtifactsDir(target);
    assert.deepEqual(readdirSync(target), []);
  });

  const file = join(dir, "a-file");
  writeFileSync(file, "x");
  const rows: Array<[string, () => string | { skip: string }, string, number?]> = [
    ["a 300-character folder name", () => join(dir, "d".repeat(300)), "ENAMETOOLONG"],
    ["a folder under a regular file", () => join(file, "bundle"), "ENOTDIR"],
    ["a read-only filesystem", () => { const m = tmpfs("ro,size=64m"); return typeof m === "string" ? join(m, "bundle") : m; }, "EROFS"],
    ["a filesystem with less free space than the floor", () => { const m = tmpfs("size=1m"); return typeof m === "string" ? join(m, "bundle") : m; }, "ENOSPC", 64 * 1024 * 1024],
  ];
  for (const [name, target, cause, floor] of rows) {
    it(`refuses ${name} with ${cause} (exit 3)`, (t) => {
      const path = target();
      if (typeof path !== "string") return t.skip(path.skip);
      const got = unwritableCause(() => probeArtifactsDir(path, floor));
      assert.equal(got.cause, cause);
      assert.equal(got.exit, 3);
      if (floor !== undefined) {
        assert.equal(got.data.requiredBytes, floor);
        assert.ok(typeof got.data.freeBytes === "number" && got.data.freeBytes < floor);
      }
    });
  }

  it("bundleWriteError maps filesystem failures, and only those", () => {
    const sys = (code: string) => Object.assign(new Error(`${code}: failed`), { code, syscall: "open" });
    for (const code of ["EROFS", "ENOSPC", "ENAMETOOLONG", "EACCES", "EIO"]) assert.equal(bundleWriteError(sys(code), dir)?.data?.cause, code);
    assert.equal(bundleWriteError(new Error("a bug"), dir), undefined);
    assert.equal(bundleWriteError(new WpCodeboxError("bundle-invalid", "bad"), dir), undefined);
  });
});

// The cache and the sandboxes' scratch folder, checked before boot: the same faults as a bundle
// folder, as host-dir-unusable naming the variable that chooses the folder.
describe("probeHostDir", () => {
  it("accepts a writable folder: creates it, leaves it empty", () => {
    const target = join(dir, "host-ok", "cache");
    probeHostDir(target, "the cache", "WP_CODEBOX_CACHE_DIR");
    assert.deepEqual(readdirSync(target), []);
  });
  const file = join(dir, "host-file");
  writeFileSync(file, "x");
  const rows: Array<[string, () => string | { skip: string }, string]> = [
    ["a regular file where the folder should be", () => file, "EEXIST"],
    ["a folder under a regular file", () => join(file, "cache"), "ENOTDIR"],
    ["a 300-character folder name", () => join(dir, "h".repeat(300)), "ENAMETOOLONG"],
    ["a read-only filesystem", () => { const m = tmpfs("ro,size=1m"); return typeof m === "string" ? join(m, "cache") : m; }, "EROFS"],
  ];
  for (const [name, target, cause] of rows) {
    it(`refuses ${name} with ${cause} (exit 3), naming the variable`, (t) => {
      const path = target();
      if (typeof path !== "string") return t.skip(path.skip);
      try {
        probeHostDir(path, "the sandboxes' scratch folder", "WP_CODEBOX_TMPDIR");
        assert.fail("the probe accepted the folder");
      } catch (error) {
        assert.ok(error instanceof WpCodeboxError, String(error));
        assert.equal(error.code, "host-dir-unusable");
        assert.equal(error.data.cause, cause);
        assert.equal(exitCodeForCategory(error.category), 3);
        assert.match(error.message, /^The sandboxes' scratch folder \(.*\) cannot be used: .*Point WP_CODEBOX_TMPDIR at a folder you can write in\.$/);
      }
    });
  }
});

// --- a bundle lost after the work ran -----------------------------------------------------------

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

/** A backend whose run-php prints "1" and, while it runs, breaks the bundle folder with `sabotage`. */
function sabotagingBackend(sabotage: () => void): RuntimeBackend {
  return {
    kind: "fake",
    async create(): Promise<Runtime> {
      const results: ExecutionResult[] = [];
      return {
        info: () => info,
        async execute(spec) {
          sabotage();
          const now = new Date().toISOString();
          const result: ExecutionResult = { id: `exec-${results.length + 1}`, command: spec.command, args: spec.args, status: "ok", exitCode: 0, stdout: "1", stderr: "", startedAt: now, finishedAt: now, durationMs: 1 };
          results.push(result);
          return result;
        },
        async collectArtifacts(): Promise<RuntimeArtifacts> {
          return { info, results: [...results], events: [], files: [], secrets: [] };
        },
        async dispose() {},
      };
    },
  };
}

const recipeFile = join(dir, "recipe.json");
writeFileSync(recipeFile, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" }, expect: { stdoutContains: "1" } }] }));
const REQUESTS: Record<string, RunRequest> = {
  command: { kind: "command", command: "wordpress.run-php", args: ["code=<?php echo 1;"] },
  recipe: { kind: "recipe", file: recipeFile },
  episode: { kind: "episode", baseDir: dir, script: { schema: "wp-codebox/episode-script/v1", steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }] } },
};

describe("runSession: a bundle that cannot be written keeps the result", () => {
  for (const [kind, request] of Object.entries(REQUESTS)) {
    it(`${kind}: the folder's parent turned into a file during the run → bundle.written false (ENOTDIR), exit 3`, async () => {
      const parent = mkdtempSync(join(dir, `lost-${kind}-`));
      const target = join(parent, "bundle");
      const plan = planRun(request, { cwd: dir, artifactsDir: target });
      const outcome = await runSession(plan, {
        backend: sabotagingBackend(() => {
          rmSync(parent, { recursive: true, force: true });
          writeFileSync(parent, "not a folder any more");
        }),
      });
      assert.equal(outcome.exitCode, 3);
      assert.equal(outcome.bundle.written, false);
      assert.equal(outcome.bundle.error?.code, "artifacts-dir-unwritable");
      assert.equal(outcome.bundle.error?.data?.cause, "ENOTDIR");
      assert.equal(outcome.status, "ok", "the work's own status is kept");
      if (kind === "command") assert.equal(outcome.command?.result.stdout, "1");
      if (kind === "recipe") assert.equal(outcome.recipe?.report.outcome, "passed");
      if (kind === "episode") assert.equal(outcome.episode?.allOk, true);
    });
  }

  it("a filesystem remounted read-only during the run → EROFS, exit 3", async (t) => {
    const m = tmpfs("size=64m");
    if (typeof m !== "string") return t.skip(m.skip);
    const plan = planRun(REQUESTS.command!, { cwd: dir, artifactsDir: join(m, "bundle") });
    const outcome = await runSession(plan, {
      backend: sabotagingBackend(() => {
        const remount = spawnSync("mount", ["-o", "remount,ro", m], { encoding: "utf8" });
        assert.equal(remount.status, 0, remount.stderr);
      }),
    });
    assert.equal(outcome.exitCode, 3);
    assert.equal(outcome.bundle.written, false);
    assert.equal(outcome.bundle.error?.data?.cause, "EROFS");
    assert.equal(outcome.command?.result.stdout, "1");
  });

  it("the probe runs before boot: nothing is created when the folder is refused", async () => {
    let created = 0;
    const backend: RuntimeBackend = { kind: "fake", create: async () => { created += 1; throw new Error("must not boot"); } };
    const plan = planRun(REQUESTS.command!, { cwd: dir, artifactsDir: join(dir, "e".repeat(300)) });
    await assert.rejects(runSession(plan, { backend }), (error: unknown) => error instanceof WpCodeboxError && error.code === "artifacts-dir-unwritable" && error.data.cause === "ENAMETOOLONG");
    assert.equal(created, 0);
    assert.equal(existsSync(join(dir, "e".repeat(300))), false);
  });
});


