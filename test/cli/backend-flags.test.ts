/**
 * Unit (nothing boots): `--backend` on every command that takes it, `runtime.backend` in recipes
 * and episode scripts, and `runtime.backend` in batch tasks. An unknown backend is invalid input
 * (exit 2) everywhere; what the native backend cannot run is refused before boot with
 * `backend-unsupported` (exit 2), naming the backend and what is missing. The rows that need the
 * native backend's preflight (its Debian packages) are skipped without them. What native does run
 * is tested on real parts in native-mcp, native-snapshots and native-backend integration tests.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NATIVE_SUPPORT, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { SandboxLane, validateTaskLines } from "@wp-codebox/batch";
import { COMMAND_DEFINITIONS, OBSERVATION_TYPES, type Runtime, type RuntimeBackend } from "@wp-codebox/runtime-core";
import { runCli, type CliIo } from "../../packages/cli/src/cli.js";

const nativeReady = nativeToolsStatus().ok;
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-backend-flags-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const write = (name: string, value: unknown) => {
  const path = join(scratch, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
};
const RECIPE_OK = write("recipe-state-default.json", { schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.state-export", args: {} }] });
const EPISODE_HTTP = write("episode-http.json", { schema: "wp-codebox/episode-script/v1", runtime: { backend: "native" }, steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }, { observe: { type: "http-response", path: "/" } }] });
const PLUGIN = join(scratch, "plugin.php");
writeFileSync(PLUGIN, "<?php\n/* Plugin Name: Flags */\n");

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: { ...process.env, WP_CODEBOX_OFFLINE: "1" }, cwd: scratch };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr };
}

interface Row {
  name: string;
  argv: string[];
  code: string;
  message: RegExp;
  needsNative?: boolean;
}

const ROWS: Row[] = [
  // An unknown backend name, on every command with --backend.
  ...[
    ["run", ["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;"]],
    ["serve", ["serve"]],
    ["check", ["check", PLUGIN]],
    ["mcp", ["mcp"]],
    ["recipe run", ["recipe", "run", RECIPE_OK]],
    ["episode run", ["episode", "run", EPISODE_HTTP]],
  ].map(([name, argv]): Row => ({ name: `${name} --backend docker`, argv: [...(argv as string[]), "--backend", "docker"], code: "invalid-argument", message: /--backend "docker" is not a backend: use playground or native/ })),
];

describe("--backend refusals before boot (exit 2)", () => {
  for (const row of ROWS) {
    it(row.name, { skip: row.needsNative && !nativeReady ? "the native backend's Debian packages are missing" : false }, async () => {
      // mcp has no --json (stdout is the protocol): its error is the stderr line.
      const json = row.argv[0] !== "mcp";
      const run = await cli(json ? [...row.argv, "--json"] : row.argv);
      assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
      if (!json) {
        assert.match(run.stderr, new RegExp(`error\\[${row.code}\\]: ${row.message.source}`));
        return;
      }
      const error = (JSON.parse(run.stdout) as { error: { code: string; message: string; data: Record<string, unknown> } }).error;
      assert.equal(error.code, row.code, error.message);
      assert.match(error.message, row.message);
      if (row.code === "backend-unsupported") assert.equal(error.data.backend, "native");
    });
  }
});

describe("runtime.backend in batch tasks", () => {
  const tasks = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join("\n");
  const RECIPE_PLAIN = write("recipe-plain.json", { schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] });

  it("a task's runtime.backend, else the file's, is the task's backend; an unknown one is a line issue", () => {
    const valid = validateTaskLines(tasks([{ id: "a", recipe: RECIPE_PLAIN, runtime: { backend: "native" } }, { id: "b", recipe: RECIPE_PLAIN }, { id: "c", episode: EPISODE_HTTP }, { id: "d", episode: EPISODE_HTTP, runtime: { backend: "playground" } }]), scratch);
    assert.deepEqual(valid.issues, []);
    assert.deepEqual(valid.tasks.map((t) => [t.id, t.backend ?? "playground"]), [["a", "native"], ["b", "playground"], ["c", "native"], ["d", "playground"]]);
    const invalid = validateTaskLines(tasks([{ id: "x", recipe: RECIPE_PLAIN, runtime: { backend: "docker" } }]), scratch);
    assert.equal(invalid.valid, false);
    assert.equal(invalid.issues[0]!.pointer, "/runtime/backend");
  });

  it("a lane never hands one backend's sandbox to another backend's task with the same spec", async () => {
    const made: string[] = [];
    const fake = (kind: string): RuntimeBackend => ({
      kind,
      create: async () => {
        made.push(kind);
        return { recycle: async () => undefined, dispose: async () => undefined } as unknown as Runtime;
      },
    });
    const lane = new SandboxLane();
    const spec = { php: "8.2" };
    assert.equal(((await lane.acquire(fake("playground"), spec)) as { reused: boolean }).reused, false);
    assert.equal(((await lane.acquire(fake("playground"), spec)) as { reused: boolean }).reused, true);
    assert.equal(((await lane.acquire(fake("native"), spec)) as { reused: boolean }).reused, false);
    assert.deepEqual(made, ["playground", "native"]);
    await lane.discard();
  });

  it("the native backend declares what it runs", () => {
    // Every runnable catalog command and every observation: the shared handlers run on both backends.
    const runnable = COMMAND_DEFINITIONS.filter((d) => d.runnable).map((d) => d.id);
    assert.deepEqual([...NATIVE_SUPPORT.commands].sort(), [...runnable].sort());
    assert.deepEqual([...NATIVE_SUPPORT.observations], [...OBSERVATION_TYPES]);
  });
});
