/**
 * Integration through the CLI: `wordpress.phpunit` exit codes and bundle files (Debian's PHPUnit
 * 9.6 at /usr/bin/phpunit), `--wp` with an unreachable mirror, and a two-by-two matrix recipe
 * (bundled WordPress 6.4/6.5 × PHP 7.4/8.5, the oldest and newest PHP builds; the first run ever
 * installs those sites once), and the suite on PHP 8.0 (like 7.4, a build without OPcache shared memory).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { show, spawnCli } from "./spawn-cli.js";

const PLUGIN = "test/fixtures/plugins/phpunit-demo";
let tmp: string;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-cli-phpunit-"));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("wp-codebox run --command wordpress.phpunit", { timeout: 300_000 }, () => {
  it("exits 1 with the one failure (file and line) in test-results.json and PHPUnit's junit.xml in the bundle", async () => {
    const dir = join(tmp, "failing");
    const run = await spawnCli(["run", "--plugin", PLUGIN, "--command", "wordpress.phpunit", "--arg", "phpunit=/usr/bin/phpunit", "--artifacts", dir]);
    assert.equal(run.code, 1, show(run));
    assert.match(run.stdout, /FAILURES!\nTests: 5, Assertions: \d+, Failures: 1\./);
    assert.match(run.stderr, /error\[tests-failed\]: 1 of 5 tests failed; first: SlugTest::test_slug_keeps_underscores \(tests\/SlugTest\.php:15\)/);
    const results = readJson(join(dir, "files/phpunit/test-results.json"));
    assert.equal(results.schema, "wp-codebox/phpunit-results/v1");
    assert.deepEqual(results.tests, { tests: 5, assertions: results.tests.assertions, failures: 1, errors: 0, skipped: 0, incomplete: 0, warnings: 0, risky: 0, passed: 4 });
    assert.deepEqual(results.failures.map((f: { name: string; file: string; line: number }) => [f.name, f.file, f.line]), [["SlugTest::test_slug_keeps_underscores", "tests/SlugTest.php", 15]]);
    assert.match(readFileSync(join(dir, "files/phpunit/junit.xml"), "utf8"), /^<\?xml[\s\S]*<testsuites>/);
    const review = readJson(join(dir, "files/review.json"));
    assert.equal(review.status, "error");
    assert.deepEqual(review.tests, results.tests);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
  });

  it("exits 0 with the failing test filtered out (bootstrap=wordpress)", async () => {
    const dir = join(tmp, "passing");
    const run = await spawnCli([
      "run", "--plugin", PLUGIN, "--command", "wordpress.phpunit",
      "--arg", "phpunit=/usr/bin/phpunit", "--arg", "bootstrap=wordpress", "--arg", "filter=/^(?!.*test_slug_keeps_underscores)/", "--artifacts", dir,
    ]);
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /OK \(4 tests, \d+ assertions\)/);
    const results = readJson(join(dir, "files/phpunit/test-results.json"));
    assert.equal(results.tests.passed, 4);
    assert.deepEqual(results.failures, []);
  });

  it("runs on PHP 8.0 (a build without OPcache shared memory): exit 0 with the failing test filtered out", async () => {
    const dir = join(tmp, "php80");
    const run = await spawnCli([
      "run", "--php", "8.0", "--plugin", PLUGIN, "--command", "wordpress.phpunit",
      "--arg", "phpunit=/usr/bin/phpunit", "--arg", "filter=/^(?!.*test_slug_keeps_underscores)/", "--artifacts", dir,
    ]);
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /OK \(4 tests, \d+ assertions\)/);
    assert.match(run.stderr, /on PHP 8\.0/);
  });

  it("exits 3 phpunit-unavailable when the plugin has no vendor/bin/phpunit and no phpunit=PATH is given", async () => {
    const run = await spawnCli(["run", "--plugin", PLUGIN, "--command", "wordpress.phpunit", "--artifacts", join(tmp, "unavailable")]);
    assert.equal(run.code, 3, show(run));
    assert.match(run.stderr, /phpunit-unavailable/);
    assert.match(run.stderr, /--arg phpunit=PATH/);
  });
});

describe("wp-codebox run --wp beyond the bundled builds", { timeout: 120_000 }, () => {
  it("exits 3 when the release mirror cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const run = await spawnCli(["run", "--wp", "6.7.1", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", join(tmp, "unreachable")], {
      env: { WP_CODEBOX_WORDPRESS_MIRROR: `http://127.0.0.1:${port}/`, WP_CODEBOX_CACHE_DIR: join(tmp, "cache") },
    });
    assert.equal(run.code, 3, show(run));
    assert.match(run.stderr, /wordpress-download-failed/);
    assert.match(run.stderr, new RegExp(`127\\.0\\.0\\.1:${port}/wordpress-6\\.7\\.1\\.zip`));
  });

  it("exits 3 offline (WP_CODEBOX_OFFLINE=1) without asking any mirror", async () => {
    const run = await spawnCli(["run", "--wp", "6.7.1", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", join(tmp, "offline")], {
      env: { WP_CODEBOX_OFFLINE: "1", WP_CODEBOX_WORDPRESS_MIRROR: "http://127.0.0.1:9/", WP_CODEBOX_CACHE_DIR: join(tmp, "cache") },
    });
    assert.equal(run.code, 3, show(run));
    assert.match(run.stderr, /wordpress-version-unavailable[\s\S]*WP_CODEBOX_OFFLINE=1/);
  });
});

describe("wp-codebox recipe run with runtime.matrix", { timeout: 600_000 }, () => {
  it("runs the 2×2 matrix: four bundles that verify, and a summary printed and written as JSON", async () => {
    const dir = join(tmp, "matrix");
    const run = await spawnCli(["recipe", "run", "examples/recipes/phpunit-matrix/recipe.json", "--allow-path", "test/fixtures", "--allow-path", "/usr/bin", "--artifacts", dir]);
    assert.equal(run.code, 0, show(run));
    const cells = ["wp-6.4-php-7.4", "wp-6.4-php-8.5", "wp-6.5-php-7.4", "wp-6.5-php-8.5"];
    assert.deepEqual(readdirSync(dir).sort(), [...cells, "matrix-summary.json", "report.html"].sort());
    for (const cell of cells) {
      assert.match(run.stdout, new RegExp(`^${cell}\\s+\\d\\.\\d\\s+\\d\\.\\d\\s+passed\\s+4\\s+0\\s`, "m"));
      assert.deepEqual(await verifyArtifactBundle(join(dir, cell)), { valid: true, violations: [] });
      assert.ok(existsSync(join(dir, cell, "files/phpunit/test-results.json")));
    }
    const summary = readJson(join(dir, "matrix-summary.json"));
    assert.equal(summary.schema, "wp-codebox/recipe-matrix-summary/v1");
    assert.deepEqual(summary.counts, { cells: 4, passed: 4, failed: 0 });
    assert.deepEqual(
      summary.cells.map((c: { wp: string; php: string; tests: { passed: number; failed: number } }) => [c.wp, c.php, c.tests.passed, c.tests.failed]),
      [["6.4", "7.4", 4, 0], ["6.4", "8.5", 4, 0], ["6.5", "7.4", 4, 0], ["6.5", "8.5", 4, 0]],
    );
    // Each cell really ran on its own versions.
    const info = readJson(join(dir, "wp-6.4-php-7.4", "metadata.json"));
    assert.match(JSON.stringify(info), /"wordpressVersion":"6\.4\.5"[\s\S]*"phpVersion":"7\.4"|"phpVersion":"7\.4"[\s\S]*"wordpressVersion":"6\.4\.5"/);
  });
});
