/**
 * The backend contract, one table run on both backends: what `wordpress.run-php` returns for the
 * same PHP (output, JSON, fatals with file:line, deadlines that keep the output, output caps,
 * database errors, actors), what the other commands return (the shared handlers of
 * @wp-codebox/commands included: state export, inspect-mounted-inputs, phpunit), and that
 * `reset()` forgets a write. One sandbox per backend for the whole file (the phpunit-demo plugin
 * mounted), and one on WordPress 6.9.4 per backend for the Abilities API when the shared releases
 * are there. A case a backend does not support yet is skipped with the reason in its name; the
 * native backend is skipped whole, naming the packages, when its Debian packages are missing.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { scratchDir } from "./support/scratch-dir.js";
import { writeLibraryPlugin } from "./support/phpunit-library.js";
import { DEFAULT_OUTPUT_CAP_BYTES, restoreRuntime, WpCodeboxError, type ExecutionResult, type Runtime, type WordPressRuntimeSnapshot } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { createBackend } from "../packages/cli/src/commands/backends.js";
import { WORDPRESS_MIRROR_SKIP, serveWordPressMirror, sharedWordPressReleasesDir, type WordPressMirror } from "./support/wordpress-mirror.js";

type BackendName = "playground" | "native";

interface ContractCase {
  name: string;
  /** Default `wordpress.run-php`. */
  command?: string;
  /** PHP source for `code=` (run-php). */
  code?: string;
  args?: string[];
  timeoutMs?: number;
  /** PHP run (`wordpress.run-php`) before the command, e.g. to write what it must find. */
  before?: string;
  /** Backends that do not run this case yet, with the reason (shown in the test name). */
  unsupported?: Partial<Record<BackendName, string>>;
  check(result: ExecutionResult, backend: BackendName, runtime: Runtime): void | Promise<void>;
}

/** Shared by every case that must leave a working sandbox behind. */
const ALIVE = "<?php echo 'alive';";

/** The real WP-CLI phar of the shared test assets, when there. */
const SHARED_PHAR = process.env.WP_CODEBOX_TEST_SHARED ? join(process.env.WP_CODEBOX_TEST_SHARED, "wp-cli", "wp-cli-2.10.0.phar") : undefined;
const NO_PHAR = SHARED_PHAR && existsSync(SHARED_PHAR) ? undefined : "needs WP_CODEBOX_TEST_SHARED with wp-cli/wp-cli-2.10.0.phar";

/** A plugin with a PHPUnit suite (one test fails on purpose), mounted in every contract sandbox. */
const PHPUNIT_DEMO = fileURLToPath(new URL("./fixtures/plugins/phpunit-demo", import.meta.url));
/** Debian's PHPUnit (the phpunit package; .ci/run installs it). */
const PHPUNIT = "/usr/bin/phpunit";
const NO_PHPUNIT = existsSync(PHPUNIT) ? undefined : `needs Debian's phpunit at ${PHPUNIT}`;
const WITHOUT_FAILING = "filter=/^(?!.*test_slug_keeps_underscores)/";
/**
 * A plugin whose suite runs on WordPress's core test library (a stand-in with the library's
 * contract, in its vendor/wp-phpunit/wp-phpunit): the library installs its own site, in `wptests_`
 * tables of the database wp-tests-config.php names, so on native it reaches MariaDB as configured.
 */
const LIBRARY_SCRATCH = scratchDir("wp-codebox-contract-");
// Readable by the native sandbox's own uid too (mkdtemp makes the folder its owner's only).
chmodSync(LIBRARY_SCRATCH, 0o755);
const LIBRARY_DEMO = writeLibraryPlugin(LIBRARY_SCRATCH, "wp-phpunit-demo", true);
/** A plugin with known faults (a fatal admin page, a REST route answering 500), mounted but not activated: `wordpress.check` activates it. */
const CHECK_FAULTY = fileURLToPath(new URL("./fixtures/plugins/check-faulty", import.meta.url));

const CASES: ContractCase[] = [
  {
    name: "output is stdout, a JSON document is also result.json",
    code: "<?php echo json_encode(['title' => get_option('blogname'), 'permalinks' => get_option('permalink_structure'), 'sum' => 1 + 2]);",
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      assert.equal(r.exitCode, 0);
      assert.deepEqual(r.json, { title: "wp-codebox", permalinks: "/%postname%/", sum: 3 });
      assert.equal(r.stdoutBytes, Buffer.byteLength(r.stdout));
    },
  },
  {
    name: "a fatal error is php-fatal with PHP's message, the file and the line, keeping what was printed",
    code: "<?php\necho 'before';\nwp_codebox_contract_missing();\n",
    check: (r) => {
      assert.equal(r.status, "error");
      assert.equal(r.exitCode, 255);
      assert.equal(r.error?.code, "php-fatal", JSON.stringify(r.error));
      assert.equal(r.error?.data?.file, "/internal/wp-codebox/code/code.php");
      assert.equal(r.error?.data?.line, 3);
      assert.match(r.error!.message, /^PHP fatal error: Uncaught Error: Call to undefined function wp_codebox_contract_missing\(\) \(\/internal\/wp-codebox\/code\/code\.php:3\)$/);
      assert.equal(r.stdout, "before");
    },
  },
  {
    name: "an uncaught exception is php-fatal with the line it was thrown on",
    code: "<?php\n\nthrow new RuntimeException('contract boom');\n",
    check: (r) => {
      assert.equal(r.error?.code, "php-fatal", JSON.stringify(r.error));
      assert.equal(r.error?.data?.line, 3);
      assert.match(r.error!.message, /Uncaught RuntimeException: contract boom/);
    },
  },
  {
    name: "unbounded recursion is php-fatal (out of memory), not a crash",
    code: "<?php\nfunction wp_codebox_f($n){ return wp_codebox_f($n+1); }\nwp_codebox_f(0);",
    check: (r) => {
      assert.equal(r.error?.code, "php-fatal", JSON.stringify(r.error));
      assert.match(r.error!.message, /Allowed memory size of \d+ bytes exhausted/);
      assert.equal(r.error?.data?.line, 2);
    },
  },
  {
    name: "a command past its deadline is timed-out, keeping what it printed before",
    code: "<?php echo 'started'; fwrite(STDERR, 'err'); flush(); while (true) {}",
    args: ["bootstrap=none"],
    timeoutMs: 3000,
    check: (r) => {
      assert.equal(r.status, "timed-out");
      assert.equal(r.exitCode, 124);
      assert.equal(r.error?.code, "timeout");
      assert.equal(r.error?.data?.timeoutMs, 3000);
      assert.equal(r.stdout, "started");
      assert.equal(r.stdoutBytes, 7);
    },
  },
  {
    name: "the sandbox lives on after a deadline",
    code: ALIVE,
    check: (r) => assert.equal(r.stdout, "alive"),
  },
  {
    name: "output past the cap is cut and counted per stream",
    code: `<?php echo str_repeat('x', ${DEFAULT_OUTPUT_CAP_BYTES} + 4096);`,
    args: ["bootstrap=none"],
    check: (r) => {
      assert.equal(r.status, "ok");
      assert.equal(r.stdout.length, DEFAULT_OUTPUT_CAP_BYTES);
      assert.equal(r.stdoutBytes, DEFAULT_OUTPUT_CAP_BYTES + 4096);
      assert.deepEqual(r.truncated, { stdout: true, stderr: false });
    },
  },
  {
    name: "stderr is its own stream",
    code: "<?php echo 'out'; fwrite(STDERR, 'to stderr');",
    args: ["bootstrap=none"],
    check: (r) => {
      assert.equal(r.status, "ok");
      assert.equal(r.stdout, "out");
      assert.equal(r.stderr, "to stderr");
    },
  },
  {
    name: "a database error is listed in result.dbErrors with its query, and the run goes on",
    code: "<?php global $wpdb; $wpdb->query('SELECT wp_codebox_missing FROM wp_codebox_nowhere'); echo 'carried on';",
    check: (r) => {
      assert.equal(r.status, "ok");
      assert.equal(r.stdout, "carried on");
      assert.deepEqual(r.dbErrors?.map((e) => e.query), ["SELECT wp_codebox_missing FROM wp_codebox_nowhere"]);
    },
  },
  {
    name: "MySQL-only SQL (GROUP_CONCAT … SEPARATOR, + INTERVAL, ON DUPLICATE KEY UPDATE, information_schema) runs on MySQL, and is a listed database error where the database is SQLite",
    code: `<?php global $wpdb;
      $wpdb->query("INSERT INTO {$wpdb->options} (option_name, option_value) VALUES ('wp_codebox_dup', '1') ON DUPLICATE KEY UPDATE option_value = '2'");
      echo json_encode([
        'concat' => $wpdb->get_var("SELECT GROUP_CONCAT(x ORDER BY x SEPARATOR '|') FROM (SELECT 'a' AS x UNION SELECT 'b') t"),
        'interval' => $wpdb->get_var("SELECT DATE(DATE('2024-02-28') + INTERVAL 2 DAY)"),
        'tables' => (int) $wpdb->get_var("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{$wpdb->options}'"),
      ]);`,
    check: (r, backend) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      if (backend === "native") {
        assert.deepEqual(r.json, { concat: "a|b", interval: "2024-03-01", tables: 1 });
        assert.equal(r.dbErrors, undefined);
      } else {
        assert.ok((r.dbErrors ?? []).some((e) => /SEPARATOR/.test(e.query)), JSON.stringify(r.dbErrors));
      }
    },
  },
  {
    name: "as=anonymous runs logged out",
    code: "<?php echo json_encode([get_current_user_id(), current_user_can('manage_options')]);",
    args: ["as=anonymous"],
    check: (r) => assert.deepEqual(r.json, [0, false]),
  },
  {
    name: "the default actor is the administrator",
    code: "<?php echo json_encode([get_current_user_id() > 0, current_user_can('manage_options')]);",
    check: (r) => assert.deepEqual(r.json, [true, true]),
  },
  {
    name: "an HTTP request to the front page is served by the site",
    command: "wordpress.http-request",
    args: ["path=/"],
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      assert.equal((r.json as { status: number }).status, 200);
    },
  },
  {
    name: "an HTTP request returns every header the page sent (wp-login.php's test cookie, its content-type)",
    command: "wordpress.http-request",
    args: ["path=/wp-login.php", "as=anonymous"],
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      const json = r.json as { status: number; headers: Record<string, string> };
      assert.equal(json.status, 200);
      assert.match(json.headers["set-cookie"] ?? "", /wordpress_test_cookie=WP%20Cookie%20check/);
      assert.match(json.headers["content-type"] ?? "", /^text\/html/);
    },
  },
  {
    name: "a REST request runs in process",
    command: "wordpress.rest-request",
    args: ["route=/wp/v2/types/post"],
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      assert.match(r.stdout, /"slug":"post"/);
    },
  },
  {
    name: "WP-CLI with --format=json gives result.json",
    command: "wordpress.wp-cli",
    args: ["command=option get blogname --format=json"],
    ...(NO_PHAR ? { unsupported: { playground: NO_PHAR, native: NO_PHAR } } : {}),
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
      assert.equal(r.json, "wp-codebox");
    },
  },
  {
    name: "the state export lists the mounted plugin and an option a run-php wrote, sections as bundle files",
    command: "wordpress.state-export",
    before: "<?php update_option('wp_codebox_contract_state', 'exported');",
    args: ["sections=summary,options", "option-names=wp_codebox_contract_state"],
    check: async (r, _backend, runtime) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      const json = r.json as { schema: string; sections: { summary: { activePlugins: string[] }; options: unknown } };
      assert.equal(json.schema, "wp-codebox/wordpress-state-export/v1");
      assert.ok(json.sections.summary.activePlugins.includes("phpunit-demo/phpunit-demo.php"), JSON.stringify(json.sections.summary));
      assert.deepEqual(json.sections.options, { keys: ["wp_codebox_contract_state"] });
      assert.deepEqual(r.artifactRefs?.map((a) => a.path.replace(/-\d{4}\//, "-N/")), ["files/observations/state-export-N/summary.json", "files/observations/state-export-N/options.json"]);
      const files = (await runtime.collectArtifacts({ executions: [r.id] })).files;
      const options = files.find((f) => f.path.endsWith("/options.json"));
      assert.match(String(options?.content), /"wp_codebox_contract_state":\s*"exported"/);
    },
  },
  {
    name: "inspect-mounted-inputs lists the mounted plugin folder",
    command: "inspect-mounted-inputs",
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      const mounts = (r.json as { mounts: { source: string; target: string; mode: string; kind: string }[] }).mounts;
      const byTarget = (a: string[], b: string[]) => a[1]!.localeCompare(b[1]!);
      assert.deepEqual(mounts.map((m) => [m.source, m.target, m.mode, m.kind]).sort(byTarget), [
        [CHECK_FAULTY, "/wordpress/wp-content/plugins/check-faulty", "readonly", "directory"],
        [PHPUNIT_DEMO, "/wordpress/wp-content/plugins/phpunit-demo", "readonly", "directory"],
        [LIBRARY_DEMO, "/wordpress/wp-content/plugins/wp-phpunit-demo", "readonly", "directory"],
      ]);
    },
  },
  {
    name: "a passing PHPUnit suite is ok with its counts and JUnit log",
    command: "wordpress.phpunit",
    args: [`phpunit=${PHPUNIT}`, "plugin=phpunit-demo", WITHOUT_FAILING],
    ...(NO_PHPUNIT ? { unsupported: { playground: NO_PHPUNIT, native: NO_PHPUNIT } } : {}),
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      const results = r.json as { tests: { tests: number; passed: number; failures: number }; phpunit: { version: string } };
      assert.deepEqual([results.tests.tests, results.tests.passed, results.tests.failures], [4, 4, 0]);
      assert.match(results.phpunit.version, /^9\./);
      assert.deepEqual(r.artifactRefs?.map((a) => a.path), ["files/phpunit/junit.xml", "files/phpunit/test-results.json"]);
    },
  },
  {
    name: "a failing PHPUnit test is tests-failed, naming the test and its line",
    command: "wordpress.phpunit",
    args: [`phpunit=${PHPUNIT}`, "plugin=phpunit-demo"],
    ...(NO_PHPUNIT ? { unsupported: { playground: NO_PHPUNIT, native: NO_PHPUNIT } } : {}),
    check: (r) => {
      assert.equal(r.status, "error");
      assert.equal(r.error?.code, "tests-failed", JSON.stringify(r.error));
      assert.match(r.error!.message, /^1 of 5 tests failed; first: SlugTest::test_slug_keeps_underscores \(tests\/SlugTest\.php:15\)/);
    },
  },
  {
    name: "phpunit on the core test library: wp-tests-config.php names this backend's database, the library installs its wptests_ site there, the tests pass, the site is untouched",
    command: "wordpress.phpunit",
    args: [`phpunit=${PHPUNIT}`, "plugin=wp-phpunit-demo"],
    ...(NO_PHPUNIT ? { unsupported: { playground: NO_PHPUNIT, native: NO_PHPUNIT } } : {}),
    check: async (r, _backend, runtime) => {
      assert.equal(r.status, "ok", `${JSON.stringify(r.error)}\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /^Installing\.\.\.\n[\s\S]*OK \(3 tests, \d+ assertions\)/);
      const json = r.json as { testsLibrary: { from: string; installed: boolean } };
      assert.deepEqual([json.testsLibrary.from, json.testsLibrary.installed], ["vendor", true]);
      const site = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo json_encode([$GLOBALS['table_prefix'], get_option('blogname')]);"] });
      assert.deepEqual(site.json, ["wp_", "wp-codebox"]);
    },
  },
  {
    name: "a browser probe of the front page loads it in Chromium (HTTP 200) and keeps a screenshot",
    command: "wordpress.browser-probe",
    args: ["url=/"],
    check: (r) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      const json = r.json as { httpStatus: number; title: string; pageErrors: string[] };
      assert.deepEqual([json.httpStatus, json.title, json.pageErrors], [200, "wp-codebox", []]);
      assert.ok(r.artifactRefs?.some((a) => a.kind === "browser-screenshot"), JSON.stringify(r.artifactRefs));
    },
  },
  {
    name: "browser actions as admin fill and submit wp-admin's settings form, and an expect step is a passed assertion",
    command: "wordpress.browser-actions",
    args: [
      `steps-json=${JSON.stringify([
        { kind: "navigate", url: "/wp-admin/options-general.php" },
        { kind: "fill", selector: "#blogdescription", value: "Set by a browser" },
        { kind: "click", selector: "#submit" },
        { kind: "expect", selector: "#setting-error-settings_updated", state: "visible" },
      ])}`,
      "step-timeout=60s",
    ],
    check: async (r, _backend, runtime) => {
      assert.equal(r.status, "ok", JSON.stringify(r.error));
      assert.deepEqual((r.json as { assertions: { total: number; passed: number } }).assertions, { ...(r.json as { assertions: object }).assertions, total: 1, passed: 1 });
      const read = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogdescription');"] });
      assert.equal(read.stdout, "Set by a browser");
      const review = (await runtime.collectArtifacts({ executions: [r.id] })).review;
      assert.deepEqual([review?.assertions?.total, review?.assertions?.passed], [1, 1]);
    },
  },
  {
    name: "wordpress.check finds the faulty plugin's fatal admin page and its REST route's 500",
    command: "wordpress.check",
    args: ["plugin=check-faulty"],
    timeoutMs: 240_000,
    check: (r) => {
      assert.equal(r.status, "error");
      assert.equal(r.error?.code, "check-failed", JSON.stringify(r.error));
      const findings = (r.json as { findings: { severity: string; kind: string; surface: string }[] }).findings;
      const errors = findings.filter((f) => f.severity === "error").map((f) => `${f.kind} ${f.surface}`);
      assert.deepEqual(errors, ["php-fatal admin-page:/wp-admin/tools.php?page=check-faulty-fatal", "http-error rest-route:/check-faulty/v1/status"]);
      assert.ok(r.artifactRefs?.some((a) => a.path === "files/check/report.json"), JSON.stringify(r.artifactRefs));
    },
  },
  {
    name: "a shared command past its deadline is timed-out, and the sandbox lives on",
    command: "wordpress.state-export",
    args: ["sections=summary,posts,options", "option-names=blogname"],
    timeoutMs: 1,
    check: async (r, _backend, runtime) => {
      assert.equal(r.status, "timed-out", JSON.stringify(r.error));
      assert.equal(r.exitCode, 124);
      assert.equal(r.error?.code, "timeout");
      const alive = await runtime.execute({ command: "wordpress.run-php", args: [`code=${ALIVE}`] });
      assert.equal(alive.stdout, "alive");
    },
  },
  {
    name: "a failing WP-CLI command is wp-cli-failed",
    command: "wordpress.wp-cli",
    args: ["command=option get wp_codebox_contract_missing"],
    ...(NO_PHAR ? { unsupported: { playground: NO_PHAR, native: NO_PHAR } } : {}),
    check: (r) => {
      assert.equal(r.status, "error");
      assert.equal(r.error?.code, "wp-cli-failed", JSON.stringify(r.error));
    },
  },
];

const nativeStatus = nativeToolsStatus();
const BACKENDS: { name: BackendName; skip: string | false }[] = [
  { name: "playground", skip: false },
  {
    name: "native",
    skip: nativeStatus.ok ? false : `the native backend's Debian packages are missing (${nativeStatus.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`,
  },
];

for (const backend of BACKENDS) {
  describe(`the backend contract on ${backend.name}`, { skip: backend.skip, timeout: 300_000 }, () => {
    let runtime: Runtime;
    const factory = createBackend(backend.name, { cwd: process.cwd() });
    before(async () => {
      runtime = await factory.create({ plugins: [PHPUNIT_DEMO, LIBRARY_DEMO], mounts: [{ source: CHECK_FAULTY, target: "/wordpress/wp-content/plugins/check-faulty", mode: "readonly" }], ...(NO_PHAR ? {} : { wpCliPhar: SHARED_PHAR! }) });
    });
    after(async () => runtime?.dispose());

    for (const c of CASES) {
      const reason = c.unsupported?.[backend.name];
      it(reason ? `${c.name} (skipped: ${reason})` : c.name, { skip: reason ?? false }, async () => {
        if (c.before !== undefined) {
          const before = await runtime.execute({ command: "wordpress.run-php", args: [`code=${c.before}`] });
          assert.equal(before.status, "ok", JSON.stringify(before.error));
        }
        const args = [...(c.code !== undefined ? [`code=${c.code}`] : []), ...(c.args ?? [])];
        const result = await runtime.execute({ command: c.command ?? "wordpress.run-php", args, ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}) });
        await c.check(result, backend.name, runtime);
      });
    }

    it("as=user:<id> runs as that user, and a user that does not exist is invalid-argument, never a run as anonymous", async () => {
      const made = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo wp_insert_user(['user_login' => 'contract_actor', 'user_pass' => wp_generate_password(), 'role' => 'editor']);"] });
      assert.equal(made.status, "ok", JSON.stringify(made.error));
      const who = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo wp_get_current_user()->user_login;", `as=user:${made.stdout}`] });
      assert.equal(who.stdout, "contract_actor", JSON.stringify(who.error));
      await assert.rejects(
        runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_current_user_id();", "as=user:987654"] }),
        (error: unknown) => error instanceof WpCodeboxError && error.code === "invalid-argument" && /no such WordPress user/.test(error.message),
      );
      const alive = await runtime.execute({ command: "wordpress.run-php", args: [`code=${ALIVE}`] });
      assert.equal(alive.stdout, "alive");
    });

    it("snapshot() then restoreRuntime into a fresh sandbox brings back a database write and a wp-content file", async () => {
      const php = (rt: Runtime, code: string) => rt.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
      await php(runtime, "<?php update_option('wp_codebox_contract_snap', 'kept'); file_put_contents(WP_CONTENT_DIR . '/contract-snap.txt', 'kept');");
      const snapshot = (await runtime.snapshot!()) as WordPressRuntimeSnapshot;
      assert.equal(snapshot.database.engine, backend.name === "native" ? "mariadb" : "sqlite");
      await php(runtime, "<?php update_option('wp_codebox_contract_snap', 'later');");
      const restored = await restoreRuntime(snapshot, factory);
      try {
        const read = await php(restored, "<?php echo json_encode([get_option('wp_codebox_contract_snap'), @file_get_contents(WP_CONTENT_DIR . '/contract-snap.txt')]);");
        assert.deepEqual(read.json, ["kept", "kept"]);
      } finally {
        await restored.dispose();
      }
    });

    // One observer for both backends (observeRuntime): each type answers the same shape.
    const OBSERVATIONS: { spec: { type: string } & Record<string, unknown>; check(data: any): void }[] = [
      { spec: { type: "runtime-info" }, check: (d) => assert.deepEqual([d.backend, d.siteUrl, d.mounts.length], [backend.name, runtime.info().siteUrl, 3]) },
      { spec: { type: "http-response", path: "/wp-json/wp/v2/types/post" }, check: (d) => assert.deepEqual([d.status, d.body?.slug], [200, "post"]) },
      { spec: { type: "http-response", path: "/wp-admin/", as: "anonymous" }, check: (d) => assert.deepEqual([d.status, /wp-login\.php/.test(String(d.headers?.location))], [302, true]) },
      { spec: { type: "command-result" }, check: (d) => assert.equal(d.command, "wordpress.run-php") },
      { spec: { type: "runtime-logs" }, check: (d) => assert.ok(Array.isArray(d.entries)) },
      // Before WordPress 6.9 (the suite's bundled build) no Abilities API: an empty list, not an error.
      { spec: { type: "abilities" }, check: (d) => assert.deepEqual(d.available ? "6.9+" : d, runtime.info().wordpressVersion >= "6.9" ? "6.9+" : { available: false, abilities: [] }) },
    ];
    for (const o of OBSERVATIONS) {
      it(`the ${o.spec.type} observation (${JSON.stringify(o.spec)}) answers as on every backend`, async () => {
        await runtime.execute({ command: "wordpress.run-php", args: [`code=${ALIVE}`] });
        const observed = (await runtime.observe!(o.spec)) as { type: string; data: unknown };
        assert.equal(observed.type, o.spec.type);
        o.check(observed.data);
      });
    }

    it("the wordpress-state observation reads an option a run-php wrote, its sections kept as bundle files", async () => {
      await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php update_option('wp_codebox_contract_observed', 'seen');"] });
      const observed = (await runtime.observe!({ type: "wordpress-state", sections: ["options"], optionNames: ["wp_codebox_contract_observed"] })) as { data: { sections: { options: unknown } }; artifactRefs: { path: string }[] };
      assert.deepEqual(observed.data.sections.options, { keys: ["wp_codebox_contract_observed"] });
      const collected = await runtime.collectArtifacts();
      const file = collected.files.find((f) => f.path === observed.artifactRefs[0]?.path);
      assert.match(String(file?.content), /"wp_codebox_contract_observed":\s*"seen"/);
    });

    it("reset() forgets a database write and a wp-content file", async () => {
      const php = (code: string) => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
      const written = await php("<?php update_option('wp_codebox_contract', 'written'); file_put_contents(WP_CONTENT_DIR . '/contract.txt', 'x'); echo get_option('wp_codebox_contract');");
      assert.equal(written.stdout, "written");
      await runtime.reset!();
      const read = await php("<?php echo json_encode([get_option('wp_codebox_contract'), file_exists(WP_CONTENT_DIR . '/contract.txt'), get_option('blogname')]);");
      assert.deepEqual(read.json, [false, false, "wp-codebox"]);
    });
  });
}

/** WordPress 6.9.4 (the first with the Abilities API) from the shared releases, served by a loopback mirror. */
const ABILITIES_SKIP = sharedWordPressReleasesDir() ? false : WORDPRESS_MIRROR_SKIP;

for (const backend of BACKENDS) {
  describe(`the Abilities API on ${backend.name} (WordPress 6.9.4)`, { skip: backend.skip || ABILITIES_SKIP, timeout: 600_000 }, () => {
    let runtime: Runtime;
    let mirror: WordPressMirror;
    const mirrorBefore = process.env.WP_CODEBOX_WORDPRESS_MIRROR;
    before(async () => {
      mirror = await serveWordPressMirror();
      process.env.WP_CODEBOX_WORDPRESS_MIRROR = mirror.url;
      runtime = await createBackend(backend.name, { cwd: process.cwd() }).create({ wordpress: { version: "6.9.4" } });
    });
    after(async () => {
      await runtime?.dispose();
      await mirror?.close();
      if (mirrorBefore === undefined) delete process.env.WP_CODEBOX_WORDPRESS_MIRROR;
      else process.env.WP_CODEBOX_WORDPRESS_MIRROR = mirrorBefore;
    });

    it("wordpress.ability runs core/get-site-info and returns the site's name and URL", async () => {
      assert.equal(runtime.info().wordpressVersion, "6.9.4");
      const r = await runtime.execute({ command: "wordpress.ability", args: ["name=core/get-site-info"] });
      assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
      assert.match(JSON.stringify(r.json), /"name":"wp-codebox"/);
      assert.equal((r.json as { url?: string }).url, runtime.info().siteUrl);
    });

    it("the abilities observation lists core/get-site-info with its schemas", async () => {
      const observed = (await runtime.observe!({ type: "abilities" })) as { data: { available: boolean; abilities: { name: string; inputSchema: unknown; outputSchema: unknown }[] } };
      assert.equal(observed.data.available, true);
      const info = observed.data.abilities.find((a) => a.name === "core/get-site-info");
      assert.ok(info, JSON.stringify(observed.data.abilities.map((a) => a.name)));
      assert.equal(typeof info.outputSchema, "object");
    });

    it("an ability that does not exist is refused, naming it", async () => {
      const r = await runtime.execute({ command: "wordpress.ability", args: ["name=wp-codebox/no-such-ability"] });
      assert.equal(r.status, "error");
      assert.match(JSON.stringify(r.error), /no-such-ability/);
    });
  });
}
