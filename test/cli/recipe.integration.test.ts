/**
 * Integration: `wp-codebox recipe validate|plan|run` end to end, in-process through `runCli`.
 * Every cookbook recipe in examples/recipes/ runs here against real WordPress (and Chromium).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@wp-codebox/cli";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { scratchDir } from "../support/scratch-dir.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = scratchDir("wp-codebox-recipes-");

async function cli(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env, cwd: ROOT };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 4000)}\n--- stderr ---\n${stderr.slice(-4000)}` };
}

function bundleFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
}

for (const name of ["plugin-smoke", "admin-browser", "seeded-content", "bug-fatal-on-activate"]) {
  test(`cookbook: examples/recipes/${name} runs with every expectation met`, async () => {
    const out = join(scratch, name);
    const run = await cli(["recipe", "run", `examples/recipes/${name}/recipe.json`, "--allow-path", "test/fixtures", "--allow-path", "examples/browser", "--artifacts", out, "--json"]);
    assert.equal(run.code, 0, run.show());
    const { report, bundle } = JSON.parse(run.stdout) as { report: { outcome: string; counts: { failed: number; skipped: number } }; bundle: { valid: boolean } };
    assert.equal(report.outcome, "passed");
    assert.equal(bundle.valid, true);
    assert.equal((await verifyArtifactBundle(out)).valid, true);
    const review = JSON.parse(readFileSync(join(out, "files/review.json"), "utf8")) as { recipe: { outcome: string }; evidence: Record<string, unknown> };
    assert.equal(review.recipe.outcome, "passed");
    assert.equal(review.evidence.recipeReport, "files/recipe-report.json");
  });
}

test("recipe plan shows the auto-granted evaluate capability without booting", async () => {
  const run = await cli(["recipe", "plan", "examples/recipes/admin-browser/recipe.json", "--allow-path", "test/fixtures", "--allow-path", "examples/browser"]);
  assert.equal(run.code, 0, run.show());
  assert.match(run.stdout, /\(auto-granted\) wordpress\.browser-actions\.evaluate: auto-granted: the browser script of \/steps\/1 has an evaluate step/);
  const json = await cli(["recipe", "plan", "examples/recipes/admin-browser/recipe.json", "--allow-path", "test/fixtures", "--allow-path", "examples/browser", "--json"]);
  const plan = JSON.parse(json.stdout) as { capabilities: { capability: string; autoGranted: boolean }[] };
  assert.deepEqual(plan.capabilities.filter((c) => c.autoGranted).map((c) => c.capability), ["wordpress.browser-actions.evaluate"]);
});

test("an invalid recipe exits 2 and points at every bad field", async () => {
  const file = join(scratch, "invalid.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      runtime: { wp: "4.0" },
      inputs: { mounts: [{ source: "./nope", target: "/etc" }] },
      steps: [{ command: "wordpress.run-php", args: { code: "1", nope: "x" } }, { command: "wordpress.browser-actions", args: { steps: [{ kind: "click" }] } }, { command: "wordpress.fly" }],
      extra: 1,
    }),
  );
  // Offline, a WordPress that is not bundled cannot be fetched from the release mirror.
  const offline = { ...process.env, WP_CODEBOX_OFFLINE: "1" };
  const run = await cli(["recipe", "validate", file], offline);
  assert.equal(run.code, 2, run.show());
  for (const pointer of ["/extra: unknown field", "/runtime/wp: wordpress-version-unavailable: WordPress 4.0 is not available", "/inputs/mounts/0: mount-", "/steps/0/args/nope", "/steps/1/args/steps/0/selector: is required", "/steps/2/command: unknown command"]) {
    assert.ok(run.stderr.includes(pointer), `missing "${pointer}" in\n${run.stderr}`);
  }
  assert.match(run.stderr, /error\[invalid-recipe\]/);
  const json = await cli(["recipe", "validate", file, "--json"], offline);
  assert.equal(json.code, 2);
  assert.ok((JSON.parse(json.stdout) as { issues: unknown[] }).issues.length >= 6);
  const runInvalid = await cli(["recipe", "run", file], offline);
  assert.equal(runInvalid.code, 2, "run refuses an invalid recipe before booting");
});

test("a failed expectation exits 1; the bundle names it with expected and actual; later steps are skipped", async () => {
  const file = join(scratch, "failing.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      steps: [
        { name: "count", command: "wordpress.run-php", args: { code: "<?php echo json_encode(['count' => 2]);" }, expect: { json: { path: "$.count", equals: 3 } } },
        { name: "never runs", command: "wordpress.run-php", args: { code: "<?php echo 1;" } },
      ],
    }),
  );
  const out = join(scratch, "failing-out");
  const run = await cli(["recipe", "run", file, "--artifacts", out]);
  assert.equal(run.code, 1, run.show());
  assert.match(run.stderr, /error\[expectation-failed\]/);
  assert.equal((await verifyArtifactBundle(out)).valid, true);
  const report = JSON.parse(readFileSync(join(out, "files/recipe-report.json"), "utf8")) as {
    outcome: string;
    failure: { pointer: string; expectation: string; expected: unknown; actual: unknown };
    steps: { status: string }[];
  };
  assert.equal(report.outcome, "failed");
  assert.equal(report.failure.pointer, "/steps/0");
  assert.equal(report.failure.expectation, "json");
  assert.deepEqual(report.failure.expected, { path: "$.count", equals: 3 });
  assert.deepEqual(report.failure.actual, { path: "$.count", value: 2 });
  assert.deepEqual(report.steps.map((s) => s.status), ["failed", "skipped"]);
  const review = JSON.parse(readFileSync(join(out, "files/review.json"), "utf8")) as { status: string; recipe: { failure: { expectation: string } } };
  assert.equal(review.status, "error");
  assert.equal(review.recipe.failure.expectation, "json");
});

test("a browser + PHP recipe meets its expectations and its secret never appears in any bundle byte", async () => {
  const secret = `wpcb-secret-${Math.random().toString(36).slice(2)}-value`;
  const file = join(scratch, "secret.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      inputs: { plugins: [join(ROOT, "test/fixtures/plugins/rest-echo")], secretEnv: ["WPCB_RECIPE_SECRET"] },
      setup: [{ command: "wordpress.run-php", args: { code: "<?php update_option('blogdescription', getenv('WPCB_RECIPE_SECRET'));" } }],
      steps: [
        { name: "PHP prints it", command: "wordpress.run-php", args: { code: "<?php echo 'token=' . getenv('WPCB_RECIPE_SECRET'); error_log('log: ' . getenv('WPCB_RECIPE_SECRET'));" }, expect: { stdoutMatches: "^token=wpcb-secret-" } },
        { name: "sent in an HTTP request", command: "wordpress.http-request", args: { path: `/wp-json/corpus/v1/echo?msg=${secret}` }, expect: { json: { path: "$.status", equals: 200 } } },
        { name: "state export", command: "wordpress.state-export", args: { sections: "summary,options", "option-names": "blogdescription", redaction: "none" } },
        {
          name: "typed into a browser field",
          command: "wordpress.browser-actions",
          args: {
            steps: [
              { kind: "navigate", url: "/wp-admin/options-general.php" },
              { kind: "fill", selector: "#blogname", value: secret },
              { kind: "fill", selector: "#blogdescription", value: "" },
              { kind: "type", selector: "#blogdescription", value: secret },
              { kind: "click", selector: "#submit" },
              { kind: "expect", selector: "#blogname", state: "visible" },
              { kind: "capture", what: "all" },
            ],
            capture: "all",
          },
          expect: { status: "ok", assertions: "all-passed" },
        },
      ],
    }),
  );
  const out = join(scratch, "secret-out");
  const run = await cli(["recipe", "run", file, "--allow-path", "test/fixtures", "--artifacts", out, "--json"], { ...process.env, WPCB_RECIPE_SECRET: secret });
  assert.equal(run.code, 0, run.show());
  assert.equal((await verifyArtifactBundle(out)).valid, true);
  const files = bundleFiles(out);
  assert.ok(files.some((f) => f.endsWith(".html")), "the page HTML was captured");
  for (const f of files) {
    if (!statSync(f).isFile()) continue;
    assert.ok(!readFileSync(f).includes(Buffer.from(secret)), `secret found in ${f}`);
  }
  const review = JSON.parse(readFileSync(join(out, "files/review.json"), "utf8")) as { redaction: { applied: boolean; count: number } };
  assert.equal(review.redaction.applied, true);
  assert.ok(review.redaction.count >= 4);
  assert.ok(!run.stdout.includes(secret), "the --json output is redacted too");
});

test("wordpress.wp-cli without a phar exits 3 with wp-cli-unavailable", async () => {
  const file = join(scratch, "wp-cli.json");
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.wp-cli", args: { command: "plugin list --format=json" } }] }));
  const run = await cli(["recipe", "run", file, "--artifacts", join(scratch, "wp-cli-out"), "--wp-cli-phar", join(scratch, "no-such.phar")]);
  assert.equal(run.code, 3, run.show());
  assert.match(run.stderr, /error\[wp-cli-unavailable\].*--wp-cli-phar/s);
  const direct = await cli(["run", "--command", "wordpress.wp-cli", "--arg", "command=plugin list", "--wp-cli-phar", join(scratch, "no-such.phar"), "--artifacts", join(scratch, "wp-cli-run")]);
  assert.equal(direct.code, 3, direct.show());
  assert.match(direct.stderr, /wp-cli-unavailable/);
});
