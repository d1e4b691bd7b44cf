/**
 * The executable starts a PHP worker thread before it loads the rest of the CLI when the command
 * line boots a sandbox (packages/cli/src/prestart.ts, php-worker-thread.ts): which command lines
 * do, and that the built CLI really boots on that thread (its runtime-booted event says so).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { bootsLocalSandbox, phpVersionArg } from "../../packages/cli/src/prestart.js";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-prestart-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("bootsLocalSandbox", () => {
  const cases: Array<[string, boolean]> = [
    ["run --command wordpress.run-php --arg code=x", true],
    ["run --json --command wordpress.run-php", true],
    ["serve --pool 2 --json", true],
    ["check ./my-plugin", true],
    ["mcp", true],
    ["episode run script.json", true],
    ["episode replay out", true],
    ["recipe run recipe.json", true],
    ["--json run --command wordpress.run-php", true],
    ["run --attach http://127.0.0.1:1 --token t --command wordpress.run-php", false],
    ["run --attach=http://127.0.0.1:1 --command wordpress.run-php", false],
    ["episode run script.json --attach http://127.0.0.1:1", false],
    ["mcp --attach http://127.0.0.1:1", false],
    ["mcp --lazy-boot", false],
    ["run --help", false],
    ["serve -h", false],
    ["collect --attach http://127.0.0.1:1 --artifacts out", false],
    ["recipe validate recipe.json", false],
    ["recipe plan recipe.json", false],
    ["commands --json", false],
    ["artifacts verify out", false],
    ["doctor", false],
    ["--version", false],
    ["", false],
  ];
  for (const [line, boots] of cases) {
    it(`${line || "(nothing)"} → ${boots}`, () => {
      assert.equal(bootsLocalSandbox(line.split(" ").filter(Boolean)), boots);
    });
  }
});

describe("phpVersionArg", () => {
  const cases: Array<[string, string | undefined]> = [
    ["run --php 8.2 --command x", "8.2"],
    ["run --php=7.4 --command x", "7.4"],
    ["serve --pool 2", undefined],
    ["run --command wordpress.run-php --arg code=--php", undefined],
  ];
  for (const [line, version] of cases) {
    it(`${line} → ${version}`, () => assert.equal(phpVersionArg(line.split(" ")), version));
  }
});

const BIN = join(REPO_ROOT, "bin/wp-codebox.js");
const built = existsSync(join(REPO_ROOT, "packages/cli/dist/main.js"));

describe("the built CLI", { skip: !built && "packages/cli is not built" }, () => {
  it("boots a one-shot run on the thread it started first, and the run and its bundle are whole", { timeout: 120_000 }, async () => {
    const out = join(scratch, "run");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo get_bloginfo('version');", "--artifacts", out, "--json"], { entry: [BIN] });
    assert.equal(run.code, 0, show(run));
    assert.equal(JSON.parse(run.stdout).result.stdout, "6.5.5");
    const events = readFileSync(join(out, "files/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
    assert.equal(events.find((e) => e.type === "runtime-booted")?.data?.workerPrestarted, true);
    assert.equal((await verifyArtifactBundle(out)).valid, true);
  });

  it("a run of a version that needs another native stack size boots on a thread of its own, and works", { timeout: 180_000 }, async () => {
    const out = join(scratch, "run-82");
    const run = await spawnCli(["run", "--php", "8.2", "--php-extension", "none", "--command", "wordpress.run-php", "--arg", "code=<?php echo PHP_MAJOR_VERSION, '.', PHP_MINOR_VERSION;", "--artifacts", out, "--json"], { entry: [BIN] });
    assert.equal(run.code, 0, show(run));
    assert.equal(JSON.parse(run.stdout).result.stdout, "8.2");
    const events = readFileSync(join(out, "files/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
    assert.equal(events.find((e) => e.type === "runtime-booted")?.data?.workerPrestarted, true, "--php 8.2 on the command line: the thread was started for 8.2");
  });

  it("a run refused before boot exits with its own code; the idle thread keeps nothing alive", { timeout: 60_000 }, async () => {
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--timeout", "soon"], { entry: [BIN] });
    assert.equal(run.code, 2, show(run));
    assert.match(run.stderr, /error\[invalid-duration\]/);
  });
});
