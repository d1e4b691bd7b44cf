/**
 * Fast CLI paths (no WordPress boot): argv → exit code and output, table-driven, through a real
 * process. Plus the run handler's bundle-on-failure paths with a fake backend (in-process).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  COMMAND_CATALOG_SCHEMA,
  PolicyDeniedError,
  validateAgainstSchema,
  verifyArtifactBundle,
  writeArtifactBundle,
  type Runtime,
  type RuntimeArtifacts,
  type RuntimeBackend,
} from "@wp-codebox/runtime-core";
import { executePreparedRun, prepareRun } from "@wp-codebox/cli";
import { REPO_ROOT, show, spawnCli, type CliRun } from "./spawn-cli.js";

function fakeArtifacts(): RuntimeArtifacts {
  const now = new Date().toISOString();
  return {
    info: {
      id: "rt-test",
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
    },
    results: [
      { id: "exec-1", command: "wordpress.run-php", args: ["code=<?php echo 1;"], status: "ok", exitCode: 0, stdout: "1", stderr: "", startedAt: now, finishedAt: now, durationMs: 1 },
    ],
    events: [{ at: now, type: "runtime-booted" }],
    files: [{ path: "files/out.txt", kind: "text", contentType: "text/plain", content: "hello bundle\n" }],
    secrets: [],
  };
}

let tmp: string;
let goodBundle: string;
let badBundle: string;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-cli-test-"));
  goodBundle = (await writeArtifactBundle(join(tmp, "good"), fakeArtifacts())).directory;
  badBundle = (await writeArtifactBundle(join(tmp, "bad"), fakeArtifacts())).directory;
  const target = join(badBundle, "files/out.txt");
  const bytes = readFileSync(target);
  bytes[0] = bytes[0]! ^ 0x01; // change one byte
  writeFileSync(target, bytes);
  writeFileSync(join(tmp, "not-empty.txt"), "x");
});

after(() => rmSync(tmp, { recursive: true, force: true }));

interface Case {
  name: string;
  argv: () => string[];
  /** Extra environment for the CLI process. */
  env?: NodeJS.ProcessEnv;
  exit: number;
  check?: (run: CliRun) => void;
}

const json = (run: CliRun): any => JSON.parse(run.stdout);

const CASES: Case[] = [
  {
    name: "--help lists every command with examples",
    argv: () => ["--help"],
    exit: 0,
    check: (r) => {
      for (const cmd of ["run", "commands", "schema", "artifacts", "doctor"]) assert.match(r.stdout, new RegExp(`\\b${cmd}\\b`));
      assert.match(r.stdout, /Examples:/);
    },
  },
  ...["run", "commands", "schema", "artifacts", "artifacts verify", "report", "doctor", "wp-cli install"].map(
    (cmd): Case => ({
      name: `${cmd} --help has examples`,
      argv: () => [...cmd.split(" "), "--help"],
      exit: 0,
      check: (r) => assert.match(r.stdout, /Examples:\n {2}\$ wp-codebox/),
    }),
  ),
  {
    name: "commands --json validates against the catalog schema",
    argv: () => ["commands", "--json"],
    exit: 0,
    check: (r) => {
      const catalog = json(r);
      assert.deepEqual(validateAgainstSchema(COMMAND_CATALOG_SCHEMA, catalog), []);
      assert.ok(catalog.commands.some((c: { id: string }) => c.id === "wordpress.run-php"));
    },
  },
  { name: "commands (human) prints ids, summaries and args", argv: () => ["commands"], exit: 0, check: (r) => assert.match(r.stdout, /wordpress\.run-php +Run PHP code[\s\S]*args: \[code=<text>\]/) },
  {
    name: "unknown CLI command → 2",
    argv: () => ["frobnicate"],
    exit: 2,
    check: (r) => assert.match(r.stderr, /^error\[invalid-usage\]: unknown command 'frobnicate'/m),
  },
  {
    name: "unknown option → 2",
    argv: () => ["commands", "--bogus"],
    exit: 2,
    check: (r) => assert.match(r.stderr, /^error\[invalid-usage\]: unknown option '--bogus'/m),
  },
  // A word without its flag (here the value of a forgotten --arg) is refused before boot, on every command.
  ...([
    [["run", "code=<?php echo 1;", "--command", "wordpress.run-php", "--artifacts", join(tmp, "never-stray")], "run", "0 arguments but got 1", "run"],
    [["check", "a", "b"], "check", "1 argument but got 2", "check"],
    [["artifacts", "verify", "a", "b"], "verify", "1 argument but got 2", "artifacts verify"],
    [["episode", "run", "a.json", "extra"], "run", "1 argument but got 2", "episode run"],
    [["recipe", "validate", "a.json", "extra"], "validate", "1 argument but got 2", "recipe validate"],
    [["doctor", "now"], "doctor", "0 arguments but got 1", "doctor"],
    [["wp-cli", "install", "2.10.0", "now"], "install", "1 argument but got 2", "wp-cli install"],
  ] as const).map(([argv, name, expected, help]) => ({
    name: `${argv.slice(0, 2).join(" ")} with a stray argument → 2`,
    argv: () => [...argv],
    exit: 2,
    check: (r: { stderr: string }) => {
      assert.match(r.stderr, new RegExp(`^error\\[invalid-usage\\]: too many arguments for '${name}'\\. Expected ${expected}\\. Run "wp-codebox ${help} --help" for usage\\.$`, "m"));
      assert.equal(existsSync(join(tmp, "never-stray")), false);
    },
  })),
  { name: "run without --command → 2", argv: () => ["run"], exit: 2, check: (r) => assert.match(r.stderr, /^error\[invalid-usage\]: required option '--command <id>'/m) },
  {
    name: "run with an unknown command id → 2 (before boot)",
    argv: () => ["run", "--command", "wordpress.nope", "--artifacts", join(tmp, "never-1")],
    exit: 2,
    check: (r) => {
      assert.match(r.stderr, /^error\[unknown-command\]: Unknown command "wordpress\.nope"/m);
      assert.equal(existsSync(join(tmp, "never-1")), false, "no bundle for input errors");
      assert.doesNotMatch(r.stderr, /Booting/);
    },
  },
  {
    name: "run --json with an unknown command → 2 and a JSON error on stdout",
    argv: () => ["run", "--command", "wordpress.nope", "--json"],
    exit: 2,
    check: (r) => assert.equal(json(r).error.code, "unknown-command"),
  },
  {
    name: "run with a bad arg → 2",
    argv: () => ["run", "--command", "wordpress.run-php", "--arg", "colour=blue"],
    exit: 2,
    check: (r) => assert.match(r.stderr, /^error\[invalid-argument\]: wordpress\.run-php: unknown argument "colour"/m),
  },
  { name: "run with a missing required arg → 2", argv: () => ["run", "--command", "wordpress.run-php"], exit: 2, check: (r) => assert.match(r.stderr, /^error\[missing-argument\]/m) },
  { name: "run with bad enum value → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--arg", "bootstrap=maybe"], exit: 2 },
  { name: "run with invalid *-json arg → 2", argv: () => ["run", "--command", "wordpress.rest-request", "--arg", "route=/", "--arg", "params-json={nope"], exit: 2, check: (r) => assert.match(r.stderr, /^error\[invalid-json-arg\]/m) },
  { name: "run with a bad --timeout → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--timeout", "soon"], exit: 2, check: (r) => assert.match(r.stderr, /^error\[invalid-duration\]/m) },
  { name: "run with an invalid --policy → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--policy", '{"commands":["rm-rf"]}'], exit: 2, check: (r) => assert.match(r.stderr, /^error\[invalid-policy\]/m) },
  { name: "run with a missing --secret-env → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--secret-env", "WP_CODEBOX_TEST_UNSET_SECRET"], exit: 2, check: (r) => assert.match(r.stderr, /WP_CODEBOX_TEST_UNSET_SECRET is not set/) },
  { name: "run with a bad --env → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--env", "1BAD"], exit: 2 },
  // A secret value too short, or one the bundle spells itself, would have its redaction rewrite the bundle: refused before boot.
  ...[
    ["1", /shorter than 8 characters/],
    ["v1", /shorter than 8 characters/],
    ["codebox", /shorter than 8 characters/],
    ["timed-out", /the bundle's own structure/],
    ["Artifacts", /the bundle's own structure/],
  ].map(
    ([value, reason]): Case => ({
      name: `run with --secret-env whose value is ${value as string} → 2 secret-unsafe, before boot`,
      argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--secret-env", "WPCB_UNSAFE_SECRET", "--json", "--artifacts", join(tmp, "never-unsafe")],
      env: { WPCB_UNSAFE_SECRET: value as string },
      exit: 2,
      check: (r) => {
        const error = json(r).error;
        assert.equal(error.code, "secret-unsafe");
        assert.match(error.message, /^--secret-env WPCB_UNSAFE_SECRET: /);
        assert.match(error.message, reason as RegExp);
        assert.equal(error.data.name, "WPCB_UNSAFE_SECRET");
        assert.doesNotMatch(r.stderr, /Booting/);
        assert.equal(existsSync(join(tmp, "never-unsafe")), false, "no bundle for input errors");
      },
    }),
  ),
  {
    name: "recipe validate flags a secretEnv value that is unsafe to redact → 2",
    argv: () => {
      const file = join(tmp, "unsafe-secret.recipe.json");
      writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", inputs: { secretEnv: ["WPCB_UNSAFE_SECRET"] }, steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] }));
      return ["recipe", "validate", file];
    },
    env: { WPCB_UNSAFE_SECRET: "1" },
    exit: 2,
    check: (r) => assert.match(r.stderr, /\/inputs\/secretEnv\/0: secret-unsafe: the value of WPCB_UNSAFE_SECRET: the value is shorter than 8 characters/),
  },
  { name: "run with an unavailable PHP → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--php", "5.6"], exit: 2, check: (r) => assert.match(r.stderr, /^error\[php-version-unavailable\]/m) },
  // 4.0 is not bundled and, offline, cannot be fetched from the release mirror (nothing here reaches the internet).
  { name: "run with an unavailable WordPress → 3", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--wp", "4.0"], env: { WP_CODEBOX_OFFLINE: "1", WP_CODEBOX_WORDPRESS_MIRROR: "http://127.0.0.1:9/" }, exit: 3, check: (r) => assert.match(r.stderr, /^error\[wordpress-version-unavailable\][\s\S]*WP_CODEBOX_OFFLINE=1/m) },
  { name: "run with a missing plugin folder → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--plugin", "./no-such-plugin"], exit: 2, check: (r) => assert.match(r.stderr, /^error\[mount-source-missing\]/m) },
  { name: "run into a non-empty artifacts dir → 2", argv: () => ["run", "--command", "wordpress.run-php", "--arg", "code=<?php", "--artifacts", tmp], exit: 2, check: (r) => assert.match(r.stderr, /^error\[artifacts-dir-not-empty\]/m) },
  {
    name: "schema policy prints a JSON Schema",
    argv: () => ["schema", "policy"],
    exit: 0,
    check: (r) => {
      const schema = json(r);
      assert.equal(schema.$id, "wp-codebox/runtime-policy/v1");
      assert.equal(schema.type, "object");
      assert.ok(schema.properties.commands);
    },
  },
  ...["command-catalog", "browser-script", "episode-trace", "episode-script", "recipe", "artifact-manifest", "reference-manifest", "phpunit-results", "recipe-matrix-summary"].map(
    (name): Case => ({ name: `schema ${name} prints JSON with $id`, argv: () => ["schema", name], exit: 0, check: (r) => assert.match(json(r).$id, /^wp-codebox\//) }),
  ),
  {
    name: "schema with an unknown name → 2 listing names",
    argv: () => ["schema", "nope"],
    exit: 2,
    check: (r) => assert.match(r.stderr, /^error\[invalid-argument\]: Unknown schema "nope"\. Known schemas: policy, command-catalog/m),
  },
  { name: "artifacts verify on a fresh bundle → 0", argv: () => ["artifacts", "verify", goodBundle], exit: 0, check: (r) => assert.match(r.stderr, /^valid: /m) },
  {
    name: "artifacts verify --json on a fresh bundle → 0",
    argv: () => ["artifacts", "verify", goodBundle, "--json"],
    exit: 0,
    check: (r) => {
      const report = json(r);
      assert.equal(report.valid, true);
      assert.deepEqual(report.violations, []);
      assert.match(report.id, /^artifact-bundle-sha256-/);
    },
  },
  {
    name: "artifacts verify after one changed byte → 1 naming the file",
    argv: () => ["artifacts", "verify", badBundle],
    exit: 1,
    check: (r) => {
      assert.match(r.stdout, /^digest-mismatch files\/out\.txt: /m);
      assert.match(r.stderr, /^error\[bundle-invalid\]/m);
    },
  },
  {
    name: "artifacts verify --json on a tampered bundle → 1 with one JSON document",
    argv: () => ["artifacts", "verify", badBundle, "--json"],
    exit: 1,
    check: (r) => {
      const report = json(r);
      assert.equal(report.valid, false);
      assert.ok(report.violations.some((v: { path: string }) => v.path === "files/out.txt"));
    },
  },
  { name: "artifacts verify on a missing directory → 2", argv: () => ["artifacts", "verify", join(tmp, "missing")], exit: 2 },
  {
    name: "report on a fresh bundle → 0, the page beside it, the bundle still valid; the summary ends with the page",
    argv: () => ["report", goodBundle, "--out", join(tmp, "good-page.html"), "--json"],
    exit: 0,
    check: (r) => {
      assert.equal(json(r).out, join(tmp, "good-page.html"));
      assert.match(readFileSync(join(tmp, "good-page.html"), "utf8"), /<a href="good\/files\/commands\.jsonl">/);
      assert.match(r.stderr, /report: +\S+good-page\.html\n$/);
    },
  },
  {
    name: "report on a tampered bundle → 1, the page lists the violation",
    argv: () => ["report", badBundle, "--out", join(tmp, "bad-page.html")],
    exit: 1,
    check: (r) => {
      assert.match(r.stderr, /^error\[bundle-invalid\]/m);
      assert.match(readFileSync(join(tmp, "bad-page.html"), "utf8"), /digest-mismatch files\/out\.txt/);
    },
  },
  { name: "report --out inside the bundle → 2, nothing written there", argv: () => ["report", goodBundle, "--out", join(goodBundle, "files", "page.html")], exit: 2, check: (r) => assert.match(r.stderr, /inside the bundle/) },
  { name: "report on a folder that is not a bundle → 2", argv: () => ["report", tmp], exit: 2, check: (r) => assert.match(r.stderr, /no manifest\.json/) },
  {
    name: "doctor --json reports every check",
    argv: () => ["doctor", "--json"],
    exit: 0,
    check: (r) => {
      const report = json(r);
      assert.equal(report.schema, "wp-codebox/doctor-report/v1");
      assert.equal(report.ok, true);
      const ids = report.checks.map((c: { id: string }) => c.id);
      for (const id of ["node", "wordpress-builds", "cache-dir", "installed-site", "chromium", "native-backend"]) assert.ok(ids.includes(id), `missing check ${id}`);
      assert.equal(report.checks.find((c: { id: string }) => c.id === "native-backend").required, false);
      const chromium = report.checks.find((c: { id: string }) => c.id === "chromium");
      assert.equal(chromium.required, false);
      if (chromium.status === "ok") assert.ok(existsSync(chromium.path));
    },
  },
  {
    name: "doctor: a missing Chromium is reported, not fatal",
    argv: () => ["doctor", "--json"],
    exit: 0,
    check: () => undefined,
  },
];

describe("wp-codebox argv → outcome (no boot)", { concurrency: 2 }, () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const env = c.name.startsWith("doctor: a missing Chromium") ? { WP_CODEBOX_CHROMIUM: join(tmpdir(), "no-such-chromium") } : (c.env ?? {});
      const run = await spawnCli(c.argv(), { env });
      assert.equal(run.code, c.exit, show(run));
      c.check?.(run);
      if (c.exit !== 0) assert.match(run.stderr, /^error\[[a-z0-9-]+\]: /m, show(run));
      if (c.name.startsWith("doctor: a missing Chromium")) {
        const chromium = json(run).checks.find((x: { id: string }) => x.id === "chromium");
        assert.equal(chromium.status, "missing");
        assert.match(chromium.detail, /WP_CODEBOX_CHROMIUM/);
      }
    });
  }

  it("bin/wp-codebox.js runs the compiled CLI", { skip: !existsSync(join(REPO_ROOT, "packages/cli/dist/main.js")) && "packages/cli is not built" }, async () => {
    const run = await spawnCli(["--version"], { entry: [join(REPO_ROOT, "bin/wp-codebox.js")] });
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /^\d+\.\d+\.\d+/);
  });
});

describe("a reader that closes stdout early (wp-codebox … | head)", { concurrency: 1 }, () => {
  // The read end is closed before the CLI writes anything, so every write fails with EPIPE.
  for (const argv of [["run", "--help"], ["schema", "recipe"], ["commands", "--json"]]) {
    it(`${argv.join(" ")}: exit 0, nothing on stderr`, async () => {
      const run = await spawnCli(argv, { closeStdout: true });
      assert.equal(run.signal, null, show(run));
      assert.equal(run.stderr, "", show(run));
      assert.equal(run.code, 0, show(run));
    });
  }

  it("a failing command keeps its own exit code and error line", async () => {
    const run = await spawnCli(["schema", "nope", "--json"], { closeStdout: true });
    assert.equal(run.code, 2, show(run));
    assert.match(run.stderr, /^error\[invalid-argument\]: Unknown schema "nope"/m);
    assert.doesNotMatch(run.stderr, /EPIPE|at .*\(/, show(run));
  });
});

describe("run always writes the bundle (fake backend, no boot)", () => {
  const fakeRuntime = (execute: Runtime["execute"], disposed: { count: number }): Runtime => {
    const artifacts = fakeArtifacts();
    return {
      info: () => artifacts.info,
      execute,
      collectArtifacts: async () => ({ ...artifacts, results: [] }),
      dispose: async () => void disposed.count++,
    };
  };

  it("records a policy denial thrown by execute as a synthetic result", async () => {
    const disposed = { count: 0 };
    const backend: RuntimeBackend = {
      kind: "fake",
      create: async () =>
        fakeRuntime(async () => {
          throw new PolicyDeniedError("wordpress.run-php");
        }, disposed),
    };
    const dir = join(tmp, "denied");
    const prepared = prepareRun({ command: "wordpress.run-php", args: ["code=<?php echo 1;"], artifactsDir: dir, cwd: tmp });
    const outcome = await executePreparedRun(prepared, { backend });
    assert.equal(outcome.error?.code, "policy-denied");
    assert.equal(outcome.result.status, "error");
    assert.equal(outcome.result.error?.code, "policy-denied");
    assert.equal(outcome.bundle.valid, true);
    assert.equal(disposed.count, 1);
    const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8"));
    assert.equal(review.status, "error");
    assert.match(review.summary, /policy-denied/);
    assert.equal((await verifyArtifactBundle(dir)).valid, true);
  });

  it("writes a bundle when boot fails, and maps an unexpected error to internal-error", async () => {
    const backend: RuntimeBackend = {
      kind: "fake",
      create: async () => {
        throw new Error("kaboom");
      },
    };
    const dir = join(tmp, "boot-failed");
    const prepared = prepareRun({ command: "wordpress.run-php", args: ["code=<?php echo 1;"], artifactsDir: dir, cwd: tmp });
    const outcome = await executePreparedRun(prepared, { backend });
    assert.equal(outcome.error?.code, "internal-error");
    assert.equal(outcome.bundle.valid, true);
    assert.equal((await verifyArtifactBundle(dir)).valid, true);
  });

  it("an interrupt during execute disposes the runtime and records `interrupted`", async () => {
    const disposed = { count: 0 };
    const backend: RuntimeBackend = { kind: "fake", create: async () => fakeRuntime(() => new Promise(() => undefined), disposed) };
    const controller = new AbortController();
    const dir = join(tmp, "interrupted");
    const prepared = prepareRun({ command: "wordpress.run-php", args: ["code=<?php echo 1;"], artifactsDir: dir, cwd: tmp });
    setTimeout(() => controller.abort("SIGTERM"), 50);
    const outcome = await executePreparedRun(prepared, { backend, interrupt: controller.signal });
    assert.equal(outcome.error?.code, "interrupted");
    assert.equal((outcome.error as { exitCode?: number }).exitCode, 143);
    assert.equal(disposed.count, 1);
    assert.equal(outcome.bundle.valid, true);
  });

  it("--site-request-timeout becomes the create spec's siteRequestTimeoutMs; text that is not a duration is refused before boot", () => {
    const dir = join(tmp, "unused");
    assert.equal(prepareRun({ command: "wordpress.run-php", args: ["code=1"], artifactsDir: dir, siteRequestTimeout: "2m" }).createSpec.siteRequestTimeoutMs, 120_000);
    assert.equal(prepareRun({ command: "wordpress.run-php", args: ["code=1"], artifactsDir: dir, siteRequestTimeout: "0" }).createSpec.siteRequestTimeoutMs, 0);
    assert.equal(prepareRun({ command: "wordpress.run-php", args: ["code=1"], artifactsDir: dir }).createSpec.siteRequestTimeoutMs, undefined);
    assert.throws(
      () => prepareRun({ command: "wordpress.run-php", args: ["code=1"], artifactsDir: dir, siteRequestTimeout: "soon" }),
      (error: unknown) => (error as { code?: string }).code === "invalid-argument" && /^--site-request-timeout "soon": Invalid duration/.test((error as Error).message),
    );
  });

  it("the default policy grants exactly the command asked for; --policy replaces it, and one that does not grant the command is refused before boot", () => {
    const dir = join(tmp, "unused");
    assert.deepEqual(prepareRun({ command: "wordpress.rest-request", args: ["route=/"], artifactsDir: dir }).policy.commands, ["wordpress.rest-request"]);
    const replaced = prepareRun({ command: "wordpress.rest-request", args: ["route=/"], artifactsDir: dir, policy: '{"commands":["wordpress.rest-request","wordpress.run-php"]}' });
    assert.deepEqual(replaced.policy.commands, ["wordpress.rest-request", "wordpress.run-php"]);
    assert.throws(
      () => prepareRun({ command: "wordpress.rest-request", args: ["route=/"], artifactsDir: dir, policy: '{"commands":["wordpress.run-php"]}' }),
      (error: unknown) => (error as { code?: string }).code === "invalid-policy",
    );
  });
});
