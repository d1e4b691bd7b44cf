/**
 * planRun: every invalid input is refused before boot, with a stable code, on each path (a single
 * command, a recipe, an episode script). The fake backend counts `create` calls, so each case also
 * proves nothing booted.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WpCodeboxError } from "../src/errors.js";
import { planRun, type RunRequest } from "../src/session/run-plan.js";
import type { RuntimeBackend, RuntimeCreateSpec } from "../src/runtime.js";

const dir = mkdtempSync(join(tmpdir(), "wp-codebox-plan-"));
after(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "my-plugin"));
writeFileSync(join(dir, "my-plugin", "my-plugin.php"), "<?php /* Plugin Name: Mine */");
writeFileSync(join(dir, "probe.php"), "<?php echo 1;");
writeFileSync(join(dir, "flow.json"), JSON.stringify([{ kind: "navigate", url: "/" }]));
writeFileSync(join(dir, "bad-flow.json"), JSON.stringify([{ kind: "click" }]));
mkdirSync(join(dir, "full"));
writeFileSync(join(dir, "full", "x"), "x");

/** A backend that knows PHP 8.3/8.2 and WordPress 6.5, and counts boots. */
function fakeBackend(): RuntimeBackend & { created: number } {
  const backend = {
    kind: "fake",
    created: 0,
    async create(): Promise<never> {
      backend.created += 1;
      throw new Error("planRun must not boot");
    },
    preflight(spec: RuntimeCreateSpec) {
      const php = spec.php ?? "8.3";
      if (!["8.3", "8.2"].includes(php)) throw new WpCodeboxError("php-version-unavailable", `PHP ${php} is not available.`, { requested: php });
      const unknown = (spec.extensions ?? []).filter((e) => e !== "intl");
      if (unknown.length) throw new WpCodeboxError("php-extension-unavailable", `PHP extension ${unknown.join(", ")} is not available. Available: intl.`);
      if (spec.wordpress?.version !== undefined && spec.wordpress.version !== "6.5") throw new WpCodeboxError("wordpress-version-unavailable", `WordPress ${spec.wordpress.version} is not available.`);
      return { wordpressVersion: "6.5.5", phpVersion: php };
    },
  };
  return backend;
}

const run = (extra: Partial<Extract<RunRequest, { kind: "command" }>>): RunRequest => ({ kind: "command", command: "wordpress.run-php", args: ["code=<?php echo 1;"], ...extra });
const recipe = (doc: Record<string, unknown>): RunRequest => {
  const file = join(dir, `recipe-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", ...doc }));
  return { kind: "recipe", file };
};
const episode = (doc: Record<string, unknown>): RunRequest => ({ kind: "episode", script: { schema: "wp-codebox/episode-script/v1", ...doc }, baseDir: dir });
const php = (code = "<?php echo 1;") => ({ command: "wordpress.run-php", args: { code } });

interface Case {
  name: string;
  request: RunRequest;
  code: string;
  /** For recipe and script errors: an issue path that must be listed. */
  path?: string;
  env?: NodeJS.ProcessEnv;
  artifactsDir?: string;
  /** A value the error (message and data) must never contain: a secret the input carried. */
  hides?: string;
}

const CASES: Case[] = [
  // A single command (wp-codebox run).
  { name: "unknown command", request: run({ command: "wordpress.fly", args: [] }), code: "unknown-command" },
  { name: "policy-only capability as a command", request: run({ command: "wordpress.browser-actions.evaluate", args: [] }), code: "unknown-command" },
  { name: "unknown arg", request: run({ args: ["code=1", "colour=red"] }), code: "invalid-argument" },
  { name: "missing required arg group", request: run({ args: [] }), code: "missing-argument" },
  { name: "bad enum value", request: run({ args: ["code=1", "bootstrap=maybe"] }), code: "invalid-argument" },
  { name: "code-file that does not exist", request: run({ args: ["code-file=./nope.php"] }), code: "invalid-argument" },
  { name: "env value with NUL", request: run({ env: ["NOTE=a\0b"] }), code: "invalid-argument" },
  { name: "env value with a lone surrogate", request: run({ env: { NOTE: "a\ud800" } }), code: "invalid-argument" },
  { name: "secret value with NUL", request: run({ secretEnv: ["WP_CODEBOX_TEST_NUL"] }), code: "invalid-argument", env: { WP_CODEBOX_TEST_NUL: "a\0b" } },
  { name: "invalid inline JSON arg", request: run({ command: "wordpress.rest-request", args: ["route=/", "params-json={nope"] }), code: "invalid-json-arg" },
  { name: "missing @file JSON arg", request: run({ command: "wordpress.rest-request", args: ["route=/", "params-json=@missing.json"] }), code: "invalid-json-arg" },
  { name: "invalid browser script", request: run({ command: "wordpress.browser-actions", args: ["steps-json=@bad-flow.json"] }), code: "invalid-steps-json" },
  {
    name: "identity user fields under redaction safe",
    request: run({ command: "wordpress.state-export", args: ["sections=users", "user-fields=user_email"] }),
    code: "invalid-state-request",
  },
  { name: "unknown state section", request: run({ command: "wordpress.state-export", args: ["sections=secrets"] }), code: "invalid-state-request" },
  { name: "bad timeout", request: run({ timeout: "soon" }), code: "invalid-duration" },
  { name: "invalid policy", request: run({ policy: '{"network":"sometimes"}' }), code: "invalid-policy" },
  { name: "mount escaping with ..", request: run({ mounts: ["./my-plugin:/wordpress/wp-content/../wp-config.php"] }), code: "mount-escape" },
  { name: "mount outside the sandbox roots", request: run({ mounts: ["./my-plugin:/etc/x"] }), code: "mount-target-outside-sandbox" },
  { name: "mount source missing", request: run({ mounts: ["./nope:/workspace/nope"] }), code: "mount-source-missing" },
  { name: "plugin missing", request: run({ plugins: ["./no-plugin"] }), code: "mount-source-missing" },
  { name: "bad mount mode", request: run({ mounts: ["./my-plugin:/workspace/p:rx"] }), code: "invalid-mount" },
  { name: "both --wp and --wordpress", request: run({ wp: "6.5", wordpressPath: "./my-plugin" }), code: "invalid-argument" },
  { name: "own WordPress that does not exist", request: run({ wordpressPath: "./no-wordpress.zip" }), code: "wordpress-source-invalid" },
  { name: "PHP version the backend lacks", request: run({ php: "5.6" }), code: "php-version-unavailable" },
  { name: "WordPress version the backend lacks", request: run({ wp: "4.0" }), code: "wordpress-version-unavailable" },
  { name: "PHP extension the backend lacks", request: run({ extensions: ["intl", "imagick"] }), code: "php-extension-unavailable" },
  { name: "bad env name", request: run({ env: ["1BAD=x"] }), code: "invalid-argument" },
  { name: "secret given as NAME=value", request: run({ secretEnv: ["API_TOKEN=Zq7-s3cret/Token+42"] }), code: "invalid-argument", hides: "Zq7-s3cret" },
  { name: "secret given as NAME=value with a bad name", request: run({ secretEnv: ["BAD NAME=Zq7-s3cret/Token+42"] }), code: "invalid-argument", hides: "Zq7-s3cret" },
  { name: "unset secret env", request: run({ secretEnv: ["WP_CODEBOX_TEST_UNSET"] }), code: "invalid-argument", env: {} },
  { name: "secret value too short to redact", request: run({ secretEnv: ["WP_CODEBOX_TEST_SHORT"] }), code: "secret-unsafe", env: { WP_CODEBOX_TEST_SHORT: "1" } },
  { name: "secret value the bundle spells", request: run({ secretEnv: ["WP_CODEBOX_TEST_WORD"] }), code: "secret-unsafe", env: { WP_CODEBOX_TEST_WORD: "wp-codebox/artifact" } },
  { name: "bundle directory not empty", request: run({}), code: "artifacts-dir-not-empty", artifactsDir: join(dir, "full") },
  { name: "bundle directory under /proc", request: run({}), code: "artifacts-dir-invalid", artifactsDir: "/proc/self/x" },

  // A recipe: every problem listed, each with a pointer.
  { name: "recipe: unknown command", request: recipe({ steps: [{ command: "wordpress.fly" }] }), code: "invalid-recipe", path: "/steps/0/command" },
  {
    name: "recipe: identity user fields under redaction safe",
    request: recipe({ steps: [{ command: "wordpress.state-export", args: { sections: "users", "user-fields": "user_email" } }] }),
    code: "invalid-recipe",
    path: "/steps/0/args",
  },
  { name: "recipe: @file browser script with an invalid step", request: recipe({ steps: [{ command: "wordpress.browser-actions", args: { steps: "@bad-flow.json" } }] }), code: "invalid-recipe", path: "/steps/0/args/steps/0/selector" },
  { name: "recipe: a number for PHP source", request: recipe({ steps: [{ command: "wordpress.run-php", args: { code: 1 } }] }), code: "invalid-recipe", path: "/steps/0/args/code" },
  { name: "recipe: an array for a list's item with a comma", request: recipe({ steps: [{ command: "wordpress.state-export", args: { sections: ["options,users"] } }] }), code: "invalid-recipe", path: "/steps/0/args/sections" },
  { name: "recipe: WordPress the backend lacks", request: recipe({ runtime: { wp: "4.0" }, steps: [php()] }), code: "invalid-recipe", path: "/runtime/wp" },
  { name: "recipe: PHP extension the backend lacks", request: recipe({ runtime: { extensions: ["imagick"] }, steps: [php()] }), code: "invalid-recipe", path: "/runtime/extensions" },
  { name: "recipe: missing plugin", request: recipe({ inputs: { plugins: ["./no-plugin"] }, steps: [php()] }), code: "invalid-recipe", path: "/inputs/plugins/0" },
  { name: "recipe: env value with NUL", request: recipe({ inputs: { runtimeEnv: { NOTE: "a\0b" } }, steps: [php()] }), code: "invalid-recipe", path: "/inputs/runtimeEnv/NOTE" },
  { name: "recipe: secret value with NUL", request: recipe({ inputs: { secretEnv: ["WP_CODEBOX_TEST_NUL"] }, steps: [php()] }), code: "invalid-recipe", path: "/inputs/secretEnv/0", env: { WP_CODEBOX_TEST_NUL: "a\0b" } },
  { name: "recipe: secret given as NAME=value", request: recipe({ inputs: { secretEnv: ["API_TOKEN=Zq7-s3cret/Token+42"] }, steps: [php()] }), code: "invalid-recipe", path: "/inputs/secretEnv/0", hides: "Zq7-s3cret" },
  { name: "recipe: unset secret", request: recipe({ inputs: { secretEnv: ["WP_CODEBOX_TEST_UNSET"] }, steps: [php()] }), code: "invalid-recipe", path: "/inputs/secretEnv/0", env: {} },
  { name: "recipe: secret value too short to redact", request: recipe({ inputs: { secretEnv: ["WP_CODEBOX_TEST_SHORT"] }, steps: [php()] }), code: "invalid-recipe", path: "/inputs/secretEnv/0", env: { WP_CODEBOX_TEST_SHORT: "v1" } },

  // An episode script.
  { name: "episode: schema violation", request: episode({ steps: [] }), code: "invalid-episode-script", path: "/steps" },
  { name: "episode: unknown command", request: episode({ steps: [{ action: { command: "wordpress.fly" } }] }), code: "invalid-episode-script", path: "/steps/0/action/command" },
  { name: "episode: bad args", request: episode({ steps: [{ action: { command: "wordpress.run-php", args: { colour: "red" } } }] }), code: "invalid-episode-script", path: "/steps/0/action/args/colour" },
  {
    name: "episode: identity user fields in an observation under redaction safe",
    request: episode({ steps: [{ action: php(), observe: { type: "wordpress-state", sections: ["users"], userFields: ["user_email"] } }] }),
    code: "invalid-episode-script",
    path: "/steps/0/observe",
  },
  { name: "episode: a number for PHP source", request: episode({ steps: [{ action: { command: "wordpress.run-php", args: { code: 1 } } }] }), code: "invalid-episode-script", path: "/steps/0/action/args/code" },
  { name: "episode: an array for PHP source", request: episode({ steps: [{ action: { command: "wordpress.run-php", args: { code: ["<?php"] } } }] }), code: "invalid-episode-script", path: "/steps/0/action/args/code" },
  { name: "episode: a string for an integer that is not one", request: episode({ steps: [{ action: { command: "wordpress.http-request", args: { path: "/", "expect-status": "ok" } } }] }), code: "invalid-episode-script", path: "/steps/0/action/args/expect-status" },
  { name: "episode: unknown observation type", request: episode({ steps: [{ observe: { type: "mind-reading" } }] }), code: "invalid-episode-script", path: "/steps/0/observe" },
  { name: "episode: http-response without a path", request: episode({ steps: [{ observe: { type: "http-response" } }] }), code: "invalid-episode-script", path: "/steps/0/observe" },
  { name: "episode: bad reset observation", request: episode({ resetObservations: [{ type: "wordpress-state", sections: ["nope"] }], steps: [php()].map((a) => ({ action: a })) }), code: "invalid-episode-script", path: "/resetObservations/0" },
  { name: "episode: missing plugin", request: episode({ plugins: ["./no-plugin"], steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/plugins/0" },
  { name: "episode: escaping mount", request: episode({ mounts: [{ source: "./my-plugin", target: "/etc/x" }], steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/mounts/0" },
  { name: "episode: env value with a lone surrogate", request: episode({ env: { NOTE: "a\udc00" }, steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/env/NOTE" },
  { name: "episode: env name that is not one", request: episode({ env: { "1X": "a" }, steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/env/1X" },
  { name: "episode: unset secret", request: episode({ secretEnv: ["WP_CODEBOX_TEST_UNSET"], steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/secretEnv/0", env: {} },
  { name: "episode: secret given as NAME=value", request: episode({ secretEnv: ["API_TOKEN=Zq7-s3cret/Token+42"], steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/secretEnv/0", hides: "Zq7-s3cret" },
  { name: "episode: secret value the bundle spells", request: episode({ secretEnv: ["WP_CODEBOX_TEST_WORD"], steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/secretEnv/0", env: { WP_CODEBOX_TEST_WORD: "Timed-Out" } },
  { name: "episode: PHP the backend lacks", request: episode({ runtime: { php: "5.6" }, steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/runtime/php" },
  { name: "episode: PHP extension the backend lacks", request: episode({ runtime: { extensions: ["imagick"] }, steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/runtime/extensions" },
  { name: "episode: invalid policy", request: episode({ policy: { network: "sometimes" }, steps: [{ action: php() }] }), code: "invalid-episode-script", path: "/policy/network" },
];

describe("planRun refuses invalid input before boot", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const backend = fakeBackend();
      const artifactsDir = c.artifactsDir ?? join(dir, "out", c.name.replace(/\W+/g, "-"));
      assert.throws(
        () => planRun(c.request, { cwd: dir, backend, artifactsDir, processEnv: c.env ?? process.env }),
        (error: unknown) => {
          assert.ok(error instanceof WpCodeboxError, String(error));
          assert.equal(error.code, c.code, error.message);
          if (c.hides) assert.ok(!`${error.message}${JSON.stringify(error.data)}`.includes(c.hides), `the error repeats the secret: ${error.message}`);
          if (c.path) {
            const paths = ((error.data.issues as { path: string }[] | undefined) ?? []).map((i) => i.path);
            assert.ok(paths.includes(c.path), `${c.path} not in ${JSON.stringify(paths)}: ${error.message}`);
          }
          return true;
        },
      );
      assert.equal(backend.created, 0);
    });
  }
});

describe("planRun names every problem of a command run's flags at once", () => {
  it("the first problem's code, every problem in the message and in data.problems, nothing booted", () => {
    const backend = fakeBackend();
    const request = run({
      args: ["code=<?php echo 1;", "colour=red"],
      timeout: "soon",
      php: "5.6",
      clock: "yesterday",
      mounts: ["./nowhere:/wordpress/wp-content/plugins/nowhere"],
      env: ["1X=2"],
      secretEnv: ["WP_CODEBOX_TEST_UNSET"],
    });
    assert.throws(
      () => planRun(request, { cwd: dir, backend, artifactsDir: join(dir, "out", "flags"), processEnv: {} }),
      (error: unknown) => {
        assert.ok(error instanceof WpCodeboxError);
        assert.equal(error.code, "invalid-argument");
        const problems = error.data.problems as { code: string; message: string }[];
        assert.deepEqual(problems.map((p) => p.code), ["invalid-argument", "invalid-duration", "mount-source-missing", "invalid-argument", "invalid-argument", "invalid-clock", "php-version-unavailable"]);
        assert.match(error.message, /^wordpress\.run-php: unknown argument "colour"\..*\nAlso 6 more problems:\n  error\[invalid-duration\]: --timeout "soon": /s);
        for (const p of problems) assert.ok(error.message.includes(p.message), p.message);
        return true;
      },
    );
    assert.equal(backend.created, 0);
  });

  it("one problem alone is thrown as it is", () => {
    assert.throws(() => planRun(run({ php: "5.6" }), { cwd: dir, backend: fakeBackend(), artifactsDir: join(dir, "out", "one") }), (error: unknown) => {
      assert.ok(error instanceof WpCodeboxError);
      assert.equal(error.code, "php-version-unavailable");
      assert.equal(error.data.problems, undefined);
      assert.equal(error.message, "PHP 5.6 is not available.");
      return true;
    });
  });
});

describe("a recipe step and an episode action refuse the same args with the same issue at the same place", () => {
  const BAD_ARGS: [string, string, Record<string, unknown>][] = [
    ["bad enum", "wordpress.run-php", { code: "<?php echo 1;", bootstrap: "foo" }],
    ["unknown key with / and ~", "wordpress.run-php", { code: "<?php echo 1;", "a/b~c": 1 }],
    ["a key with =", "wordpress.run-php", { "code=<?php echo 7*6;//": 5 }],
    ["wrong type", "wordpress.run-php", { code: 1 }],
    ["null is not given", "wordpress.run-php", { code: null }],
    ["name and base name", "wordpress.browser-actions", { steps: [], "steps-json": "[]" }],
    ["inline browser script", "wordpress.browser-actions", { steps: { steps: [{ kind: "click" }] } }],
    ["huge integer", "wordpress.http-request", { path: "/", "expect-status": 1e21 }],
  ];
  const issuesOf = (request: RunRequest, base: string) => {
    try {
      planRun(request, { cwd: dir, backend: fakeBackend(), artifactsDir: join(dir, "out", "parity"), processEnv: {} });
    } catch (error) {
      return ((error as WpCodeboxError).data.issues as { path: string; message: string }[]).map((i) => ({ ...i, path: i.path.replace(base, "<args>") }));
    }
    return [];
  };
  for (const [name, command, args] of BAD_ARGS) {
    it(name, () => {
      const fromRecipe = issuesOf(recipe({ steps: [{ command, args }] }), "/steps/0/args");
      const fromEpisode = issuesOf(episode({ steps: [{ action: { command, args } }] }), "/steps/0/action/args");
      assert.ok(fromRecipe.length > 0, "refused");
      assert.ok(fromRecipe.every((i) => i.path.startsWith("<args>")), JSON.stringify(fromRecipe));
      assert.deepEqual(fromEpisode, fromRecipe);
    });
  }
});

describe("planRun lists every problem of an episode script at once", () => {
  it("schema issues, semantic checks and the backend's checks together, each at its pointer", () => {
    const backend = fakeBackend();
    const request = episode({
      colour: "red",
      runtime: { php: "5.6", clock: "yesterday", seed: -1 },
      plugins: ["./no-plugin"],
      steps: [
        { action: { command: "wordpress.run-php", args: { code: 1 } } },
        { action: php(), observe: { type: "mind-reading" } },
        { snapshot: "yes" },
      ],
    });
    assert.throws(
      () => planRun(request, { cwd: dir, backend, artifactsDir: join(dir, "out", "all-at-once"), processEnv: {} }),
      (error: unknown) => {
        assert.ok(error instanceof WpCodeboxError);
        const paths = ((error.data.issues as { path: string }[]) ?? []).map((i) => i.path).sort();
        assert.deepEqual(paths, ["/colour", "/plugins/0", "/runtime/clock", "/runtime/php", "/runtime/seed", "/steps/0/action/args/code", "/steps/1/observe", "/steps/2/snapshot"]);
        assert.match(error.message, /^Invalid episode script \(8 issues\):/);
        return true;
      },
    );
    assert.equal(backend.created, 0);
  });
});

describe("planRun resolves a valid run", () => {
  it("a command: file references absolute, the default policy grants exactly the command, preflight facts kept", () => {
    const plan = planRun(
      { kind: "command", command: "wordpress.run-php", args: ["code-file=probe.php"], plugins: ["my-plugin"], env: ["A=1"], secretEnv: ["TOKEN"], timeout: "2s" },
      { cwd: dir, backend: fakeBackend(), artifactsDir: "out/ok", processEnv: { TOKEN: "s3cret-token-42" } },
    );
    assert.equal(plan.kind, "command");
    assert.deepEqual(plan.command.args, [`code-file=${join(dir, "probe.php")}`]);
    assert.equal(plan.command.timeoutMs, 2000);
    assert.deepEqual(plan.policy.commands, ["wordpress.run-php"]);
    assert.equal(plan.mounts[0]!.target, "/wordpress/wp-content/plugins/my-plugin");
    assert.deepEqual(plan.createSpec.secretEnv, { TOKEN: "s3cret-token-42" });
    assert.deepEqual(plan.secrets, ["s3cret-token-42"]);
    assert.deepEqual(plan.preflight, { wordpressVersion: "6.5.5", phpVersion: "8.3" });
    assert.equal(plan.artifactsDir, join(dir, "out/ok"));
  });

  it("PHP extensions reach the create spec on every path (command, recipe, episode script)", () => {
    const opts = (name: string) => ({ cwd: dir, backend: fakeBackend(), artifactsDir: `out/ext-${name}` });
    assert.deepEqual(planRun(run({ extensions: ["intl"] }), opts("command")).createSpec.extensions, ["intl"]);
    assert.deepEqual(planRun(recipe({ runtime: { extensions: [] }, steps: [php()] }), opts("recipe")).createSpec.extensions, []);
    assert.deepEqual(planRun(episode({ runtime: { extensions: ["intl"] }, steps: [{ action: php() }] }), opts("episode")).createSpec.extensions, ["intl"]);
    assert.equal(planRun(run({}), opts("default")).createSpec.extensions, undefined, "no request: the backend's default");
  });

  it("an explicit policy replaces the default", () => {
    const plan = planRun({ kind: "command", command: "wordpress.rest-request", args: ["route=/"], policy: '{"commands":["wordpress.run-php","wordpress.rest-request"]}' }, { cwd: dir, artifactsDir: "out/policy" });
    assert.deepEqual(plan.policy.commands, ["wordpress.run-php", "wordpress.rest-request"]);
  });

  // planRun grants or refuses exactly what the runtime would on execute; a policy without
  // "commands" grants the command, as no policy does.
  const evaluateSteps = 'steps-json=[{"kind":"evaluate","expression":"1"}]';
  const policyCases: { name: string; command: string; args: string[]; policy?: string | object; commands?: string[]; refused?: string }[] = [
    { name: "no policy", command: "wordpress.run-php", args: ["code=1"], commands: ["wordpress.run-php"] },
    { name: "network only (inline)", command: "wordpress.run-php", args: ["code=1"], policy: '{"network":"deny"}', commands: ["wordpress.run-php"] },
    { name: "network only (object)", command: "wordpress.rest-request", args: ["route=/"], policy: { network: "allow" }, commands: ["wordpress.rest-request"] },
    { name: "commands without the command", command: "wordpress.run-php", args: ["code=1"], policy: '{"commands":["wordpress.rest-request"]}', refused: "wordpress.run-php" },
    { name: "empty commands", command: "wordpress.run-php", args: ["code=1"], policy: { commands: [] }, refused: "wordpress.run-php" },
    { name: "evaluate step, no policy", command: "wordpress.browser-actions", args: [evaluateSteps], refused: "wordpress.browser-actions.evaluate" },
    { name: "evaluate step, granted", command: "wordpress.browser-actions", args: [evaluateSteps], policy: { commands: ["wordpress.browser-actions", "wordpress.browser-actions.evaluate"] }, commands: ["wordpress.browser-actions", "wordpress.browser-actions.evaluate"] },
  ];
  for (const c of policyCases) {
    it(`policy check before boot: ${c.name} → ${c.refused ? `invalid-policy (${c.refused})` : "granted"}`, () => {
      const request = { kind: "command" as const, command: c.command, args: c.args, ...(c.policy !== undefined ? { policy: c.policy as never } : {}) };
      const plan = () => planRun(request, { cwd: dir, artifactsDir: `out/policy-${c.name.replace(/\W+/g, "-")}` });
      if (c.refused) {
        assert.throws(plan, (e: any) => e.code === "invalid-policy" && e.data.capability === c.refused && e.message.includes(c.refused!));
        return;
      }
      assert.deepEqual(plan().policy.commands, c.commands);
    });
  }

  it("an episode step the script's policy does not grant is an issue at the step; a policy without commands grants every runnable command", () => {
    assert.throws(
      () => planRun(episode({ policy: { commands: ["wordpress.rest-request"] }, steps: [{ action: php() }] }), { cwd: dir, artifactsDir: "out/ep-denied" }),
      (e: any) => e.code === "invalid-episode-script" && e.data.issues.some((i: any) => i.path === "/steps/0/action" && /wordpress\.run-php/.test(i.message)),
    );
    const plan = planRun(episode({ policy: { network: "deny" }, steps: [{ action: php() }] }), { cwd: dir, artifactsDir: "out/ep-network-only" });
    assert.ok(plan.policy.commands.includes("wordpress.run-php"));
  });

  it('a recipe may name a JSON argument by its base name: "steps": "@flow.json" is steps-json', () => {
    const plan = planRun(recipe({ steps: [{ command: "wordpress.browser-actions", args: { steps: "@flow.json" } }] }), { cwd: dir, backend: fakeBackend(), artifactsDir: "out/recipe" });
    assert.equal(plan.kind, "recipe");
    assert.deepEqual(plan.actions[0]!.args, [`steps-json=@${join(dir, "flow.json")}`]);
  });

  it("an episode script: steps planned in order, args flattened and resolved, the default policy", () => {
    const plan = planRun(
      episode({ steps: [{ action: { command: "wordpress.browser-actions", args: { steps: "@flow.json" } } }, { snapshot: true }, { observe: { type: "wordpress-state", sections: ["users"], userFields: ["user_email"], redaction: "none" } }] }),
      { cwd: dir, backend: fakeBackend(), artifactsDir: "out/episode" },
    );
    assert.equal(plan.kind, "episode");
    assert.deepEqual(plan.episode.steps.map((s) => s.kind), ["action", "snapshot", "observe"]);
    assert.deepEqual(plan.actions[0]!.args, [`steps-json=@${join(dir, "flow.json")}`]);
    assert.ok(plan.policy.commands.includes("wordpress.run-php"));
    assert.ok(!plan.policy.commands.includes("wordpress.browser-actions.evaluate"));
  });
});

describe("an episode script on a backend without a virtual clock (runtime.backend: native)", () => {
  const hostClock = (): RuntimeBackend & { created: number } => ({ ...fakeBackend(), deterministic: false });

  it("the episode defaults (virtual clock, seed 0) apply only where the backend has them", () => {
    const steps = [{ action: php() }];
    const deterministic = planRun(episode({ steps }), { cwd: dir, backend: fakeBackend(), artifactsDir: "out/det" });
    assert.ok(deterministic.createSpec.clock !== undefined && deterministic.createSpec.clock !== "real");
    assert.equal(deterministic.createSpec.seed, 0);
    const real = planRun(episode({ runtime: { backend: "native" }, steps }), { cwd: dir, backend: hostClock(), artifactsDir: "out/real" });
    assert.equal(real.createSpec.clock, undefined);
    assert.equal(real.createSpec.seed, undefined);
  });

  it("a backend the schema does not name is an issue at /runtime/backend, nothing booted", () => {
    for (const name of ["docker", "", 3, null]) {
      const backend = fakeBackend();
      assert.throws(() => planRun(episode({ runtime: { backend: name }, steps: [{ action: php() }] }), { cwd: dir, backend }), (error: WpCodeboxError) => {
        assert.equal(error.code, "invalid-episode-script");
        assert.equal(error.category, "input");
        assert.ok((error.data.issues as { path: string }[]).some((i) => i.path === "/runtime/backend"), JSON.stringify(error.data.issues));
        return true;
      });
      assert.equal(backend.created, 0);
    }
  });

  it("a backend this host cannot run is native-backend-unavailable (environment), not a script issue", () => {
    const missing = { ...hostClock(), preflight: () => { throw new WpCodeboxError("native-backend-unavailable", "not installed: bubblewrap"); } };
    assert.throws(() => planRun(episode({ runtime: { backend: "native" }, steps: [{ action: php() }] }), { cwd: dir, backend: missing }), (error: WpCodeboxError) => {
      assert.equal(error.code, "native-backend-unavailable");
      assert.equal(error.category, "environment");
      return true;
    });
  });
});
