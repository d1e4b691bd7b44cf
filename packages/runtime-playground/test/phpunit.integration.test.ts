/**
 * Integration: `wordpress.phpunit` runs the fixture plugin's suite inside a real sandbox with
 * Debian's PHPUnit 9.6 (`/usr/bin/phpunit`, library under `/usr/share/php`; `.ci/run` installs it),
 * in both bootstrap modes. One booted runtime serves every test.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const PLUGIN = fileURLToPath(new URL("../../../test/fixtures/plugins/phpunit-demo", import.meta.url));
const PHPUNIT = "/usr/bin/phpunit";
const WITHOUT_FAILING = "filter=/^(?!.*test_slug_keeps_underscores)/";

let runtime: PlaygroundRuntime;

before(async () => {
  assert.ok(existsSync(PHPUNIT), "Debian's phpunit package must be installed (apt-get install phpunit; .ci/run does it)");
  runtime = await createPlaygroundBackend().create({ plugins: [PLUGIN] });
});

after(async () => {
  await runtime?.dispose();
});

type Results = {
  tests: { tests: number; assertions: number; failures: number; errors: number; skipped: number; incomplete: number; passed: number };
  failures: { name: string; kind: string; message: string; file: string; line: number; location: string }[];
  bootstrap: string;
  phpunit: { version: string; source: string };
};

test("the plugin's own bootstrap: one failing test is reported with its file and line, PHPUnit's output stays on stdout", async () => {
  const result = await runtime.execute({ command: "wordpress.phpunit", args: [`phpunit=${PHPUNIT}`] });
  assert.equal(result.status, "error", result.stdout + result.stderr);
  assert.equal(result.error?.code, "tests-failed");
  assert.equal(result.exitCode, 1);
  assert.match(result.stdout, /PHPUnit 9\.6\.\d+ by Sebastian Bergmann/);
  assert.match(result.stdout, /Tests: 5, Assertions: \d+, Failures: 1\./);
  const json = result.json as Results;
  assert.equal(json.bootstrap, "plugin");
  assert.equal(json.phpunit.source, "arg");
  assert.deepEqual({ tests: json.tests.tests, failures: json.tests.failures, errors: json.tests.errors, passed: json.tests.passed }, { tests: 5, failures: 1, errors: 0, passed: 4 });
  assert.equal(json.failures.length, 1);
  const [failure] = json.failures;
  assert.equal(failure!.name, "SlugTest::test_slug_keeps_underscores");
  assert.equal(failure!.location, "tests/SlugTest.php:15");
  assert.match(failure!.message, /^underscores should survive\nFailed asserting that two strings are identical\./);

  const artifacts = await runtime.collectArtifacts();
  const junit = artifacts.files.find((f) => f.path === "files/phpunit/junit.xml");
  const results = artifacts.files.find((f) => f.path === "files/phpunit/test-results.json");
  assert.ok(junit && results);
  assert.match(String(junit.content), /<testsuites>[\s\S]*<testcase name="test_slug_keeps_underscores"[\s\S]*<failure/);
  assert.deepEqual(JSON.parse(String(results.content)).tests, json.tests);
  assert.equal(artifacts.review?.tests?.failures, 1);
});

test("the plugin's own bootstrap with the failing test filtered out: every test passes, WordPress APIs included", async () => {
  const result = await runtime.execute({ command: "wordpress.phpunit", args: [`phpunit=${PHPUNIT}`, WITHOUT_FAILING] });
  assert.equal(result.status, "ok", result.stdout + result.stderr);
  assert.equal(result.exitCode, 0);
  const json = result.json as Results;
  assert.deepEqual({ tests: json.tests.tests, passed: json.tests.passed, failures: json.tests.failures }, { tests: 4, passed: 4, failures: 0 });
  assert.deepEqual(json.failures, []);
});

test("bootstrap=wordpress: WordPress is loaded with the plugin active before the tests, the config's bootstrap is not run", async () => {
  const result = await runtime.execute({ command: "wordpress.phpunit", args: [`phpunit=${PHPUNIT}`, "bootstrap=wordpress", "testsuite=wordpress"] });
  assert.equal(result.status, "ok", result.stdout + result.stderr);
  const json = result.json as Results;
  assert.equal(json.bootstrap, "wordpress");
  assert.deepEqual({ tests: json.tests.tests, passed: json.tests.passed }, { tests: 2, passed: 2 });

  const all = await runtime.execute({ command: "wordpress.phpunit", args: [`phpunit=${PHPUNIT}`, "bootstrap=wordpress"] });
  assert.equal(all.status, "error");
  assert.deepEqual((all.json as Results).failures.map((f) => f.location), ["tests/SlugTest.php:15"]);
});

test("a PHPUnit that cannot start (a config file that does not exist) is phpunit-failed, not a test result", async () => {
  const result = await runtime.execute({ command: "wordpress.phpunit", args: [`phpunit=${PHPUNIT}`, "config=missing.xml"] });
  assert.equal(result.status, "error");
  assert.equal(result.error?.code, "phpunit-failed");
  assert.match(result.error!.message, /missing\.xml/);
});

test("no PHPUnit anywhere is phpunit-unavailable (exit 3) and says what to do", async () => {
  await assert.rejects(
    runtime.execute({ command: "wordpress.phpunit", args: [] }),
    (error: unknown) => error instanceof WpCodeboxError && error.code === "phpunit-unavailable" && error.category === "environment" && /composer require --dev phpunit\/phpunit/.test(error.message) && /\/usr\/bin\/phpunit/.test(error.message),
  );
  await assert.rejects(
    runtime.execute({ command: "wordpress.phpunit", args: ["phpunit=/nonexistent/phpunit"] }),
    (error: unknown) => error instanceof WpCodeboxError && error.code === "phpunit-unavailable",
  );
});

test("the sandbox cannot write into the mounted PHPUnit library", async () => {
  const result = await runtime.execute({
    command: "wordpress.run-php",
    args: ["bootstrap=none", "code=<?php echo json_encode(['exists' => is_file('/usr/share/php/PHPUnit/Autoload.php'), 'written' => @file_put_contents('/usr/share/php/PHPUnit/x.php', 'x') !== false]);"],
  });
  assert.deepEqual(result.json, { exists: true, written: false });
});
