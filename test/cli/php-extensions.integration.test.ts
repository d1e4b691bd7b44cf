/**
 * Integration: PHP extensions. `run --php-extension intl` sorts with `Collator`
 * in real WordPress; a recipe's `runtime.extensions: []` runs without intl and the fatal says how
 * to turn it on; unknown names, and `none` beside other names, are exit 2 before anything boots
 * (run, recipe); `doctor`
 * lists what each PHP version can load. In-process through `runCli`; two boots.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@wp-codebox/cli";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-php-ext-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: process.env, cwd: ROOT };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 4000)}\n--- stderr ---\n${stderr.slice(-4000)}` };
}

// Swedish collation puts å, ä, ö after z; byte order and the root collation do not.
const SORT = "<?php $words = ['ö', 'z', 'å', 'a', 'ä']; (new Collator('sv_SE'))->sort($words); echo implode(',', $words);";

test("run --php-extension intl sorts with Collator, and the bundle records the extensions", async () => {
  const out = join(scratch, "intl");
  const run = await cli(["run", "--php-extension", "intl", "--command", "wordpress.run-php", "--arg", `code=${SORT}`, "--artifacts", out]);
  assert.equal(run.code, 0, run.show());
  assert.equal(run.stdout, "a,z,å,ä,ö");
  const metadata = JSON.parse(readFileSync(join(out, "metadata.json"), "utf8")) as { runtime: { phpExtensions: string[] } };
  assert.deepEqual(metadata.runtime.phpExtensions, ["intl"]);
});

test("a recipe with runtime.extensions [] runs without intl, and the fatal says how to load it", async () => {
  const file = join(scratch, "no-intl.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      runtime: { extensions: [] },
      steps: [{ command: "wordpress.run-php", args: { code: SORT }, expect: { status: "error", errorCode: "php-fatal" } }],
    }),
  );
  const out = join(scratch, "no-intl");
  const run = await cli(["recipe", "run", file, "--artifacts", out, "--json"]);
  assert.equal(run.code, 0, run.show());
  const commands = readFileSync(join(out, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { error?: { message: string } });
  assert.match(commands[0]!.error!.message, /Class "Collator" not found.*The intl extension is not loaded: run with --php-extension intl/);
  const metadata = JSON.parse(readFileSync(join(out, "metadata.json"), "utf8")) as { runtime: { phpExtensions: string[] } };
  assert.deepEqual(metadata.runtime.phpExtensions, []);
});

test("an extension the PHP build does not ship is exit 2 with the list, before boot (run and recipe)", async () => {
  const run = await cli(["run", "--php-extension", "intl", "--php-extension", "imagick", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", join(scratch, "never")]);
  assert.equal(run.code, 2, run.show());
  assert.match(run.stderr, /error\[php-extension-unavailable\]: PHP extension imagick is not available for PHP 8\.3 here\. Available: intl/);
  assert.doesNotMatch(run.stderr, /Booted WordPress/);

  const file = join(scratch, "bad-ext.json");
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", runtime: { extensions: ["imagick"] }, steps: [{ command: "wordpress.run-php", args: { code: "1" } }] }));
  const validate = await cli(["recipe", "validate", file]);
  assert.equal(validate.code, 2, validate.show());
  assert.match(validate.stderr, /\/runtime\/extensions: php-extension-unavailable: PHP extension imagick is not available .*Available: intl/);
});

test('--php-extension none beside another name is exit 2 invalid-argument saying none cannot be combined, before boot (run and recipe)', async () => {
  const run = await cli(["run", "--php-extension", "none", "--php-extension", "intl", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", join(scratch, "never-none")]);
  assert.equal(run.code, 2, run.show());
  assert.match(run.stderr, /^error\[invalid-argument\]: PHP extension "none" \(load no extension\) cannot be combined with other extensions \(intl\)/m);
  assert.doesNotMatch(run.stderr, /not available|Booted WordPress/);

  const file = join(scratch, "none-and-intl.json");
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", runtime: { extensions: ["none", "intl"] }, steps: [{ command: "wordpress.run-php", args: { code: "1" } }] }));
  const validate = await cli(["recipe", "validate", file]);
  assert.equal(validate.code, 2, validate.show());
  assert.match(validate.stderr, /\/runtime\/extensions: invalid-argument: PHP extension "none" \(load no extension\) cannot be combined/);
});

test("doctor lists the extensions each PHP version can load and the default", async () => {
  const run = await cli(["doctor", "--json"]);
  const report = JSON.parse(run.stdout) as { checks: { id: string; status: string; data?: { available: Record<string, string[]>; default: string[] } }[] };
  const check = report.checks.find((c) => c.id === "php-extensions")!;
  assert.equal(check.status, "ok");
  assert.ok(check.data!.available["8.3"]!.includes("intl"));
  assert.deepEqual(check.data!.default, ["intl"]);
  const human = await cli(["doctor"]);
  assert.match(human.stdout, /^ok +php-extensions +intl for every PHP version.*--php-extension NAME; loaded by default: intl/m);
});
