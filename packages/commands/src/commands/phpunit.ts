/**
 * `wordpress.phpunit`: runs a plugin's PHPUnit suite inside the sandbox, from the plugin's folder,
 * and turns PHPUnit's own JUnit log into `files/phpunit/junit.xml` and
 * `files/phpunit/test-results.json` (`wp-codebox/phpunit-results/v1`).
 *
 * PHPUnit comes from `phpunit=PATH` (a host entry script: another project's `vendor/bin/phpunit`,
 * or Debian's `/usr/bin/phpunit` with its library under `/usr/share/php`, mounted read-only) or the
 * plugin's own `vendor/bin/phpunit`; with neither the command fails with `phpunit-unavailable`
 * (exit 3). Nothing is downloaded.
 *
 * With the WordPress core test library (the host's WP_TESTS_DIR, the plugin's
 * vendor/wp-phpunit/wp-phpunit, or the host's ${TMPDIR:-/tmp}/wordpress-tests-lib) the sandbox
 * writes the library's wp-tests-config.php and runs the library's install script before PHPUnit,
 * since the library would start it as a subprocess; a network when the host's WP_MULTISITE or the
 * PHPUnit configuration file's `<php>` section says so.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { phpValue } from "../php-source/php-value.js";
import { phpAsset } from "../php-source/php-assets.js";
import { PHPUNIT_RESULTS_SCHEMA_ID, WpCodeboxError, quoteValue, readInputFile, type ArtifactFile, type PhpunitFailure, type PhpunitResults, type ResolvedMount, type TestCounts } from "@wp-codebox/runtime-core";
import { text, type CommandContext, type CommandHandler, type CommandOutcome, type TestDatabase } from "./command-context.js";
import { FATAL_RECORDER, outcomeFromRun } from "./run-php.js";

const WORK = "/internal/wp-codebox/phpunit";
const JUNIT = `${WORK}/junit.xml`;
const TESTS_CONFIG = `${WORK}/wp-tests-config.php`;
const HOW_TO =
  "Add PHPUnit to the plugin (composer require --dev phpunit/phpunit, so vendor/bin/phpunit exists), or pass --arg phpunit=PATH with a PHPUnit entry script on this machine (for example /usr/bin/phpunit from Debian's phpunit package, or another project's vendor/bin/phpunit)";

/** The PHPUnit entry script to run and what must be mounted for it. */
interface PhpunitSource {
  source: "arg" | "plugin";
  /** Sandbox path the driver reads the entry script from. */
  entry: string;
  /** What __FILE__ stands for in the entry script. */
  entryFile: string;
  /** Host folders mounted read-only at the same path inside the sandbox. */
  mounts: string[];
  includePaths: string[];
  /** A host file to copy into the sandbox at `entry` first. */
  copy?: string;
  /** What the report names as the entry script. */
  label: string;
}

/** The plugin folder to run from: `plugin=NAME`, else the first mounted plugin folder. */
function pluginMountFor(ctx: CommandContext, name: string | undefined): ResolvedMount {
  const folders = ctx.mounts.filter((m) => m.kind === "directory" && /^\/wordpress\/wp-content\/plugins\/[^/]+$/.test(m.target));
  const found = name === undefined ? folders[0] : folders.find((m) => basename(m.target) === name);
  if (!found) {
    const known = folders.map((m) => basename(m.target));
    throw new WpCodeboxError(
      "invalid-argument",
      name === undefined
        ? "wordpress.phpunit runs a plugin's tests from its folder: pass the plugin with --plugin ./my-plugin (a folder, not a single file)."
        : `wordpress.phpunit: plugin=${name} is not a mounted plugin folder. Mounted: ${known.join(", ") || "(none)"}.`,
      { plugin: name ?? null, mounted: known },
    );
  }
  return found;
}

/** `<vendor>/bin/phpunit` (a Composer proxy) → `<vendor>/phpunit/phpunit/phpunit`, the real script. */
function composerVendor(path: string): string | undefined {
  const m = /^(.*\/vendor)\/(?:bin\/phpunit|phpunit\/phpunit\/phpunit)$/.exec(path);
  return m && existsSync(join(m[1]!, "phpunit", "phpunit", "phpunit")) ? m[1] : undefined;
}

/**
 * Where PHPUnit comes from: `phpunit=PATH` on the host, else the plugin's own vendor/bin/phpunit.
 * @throws WpCodeboxError `phpunit-unavailable` saying how to provide PHPUnit.
 */
export function resolvePhpunit(arg: string | undefined, cwd: string, plugin: ResolvedMount): PhpunitSource {
  if (arg !== undefined) {
    const path = resolve(cwd, arg);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new WpCodeboxError("phpunit-unavailable", `phpunit=${quoteValue(arg)} does not exist or is not a file (resolved to ${path}). ${HOW_TO}.`, { checked: [path] });
    }
    const real = realpathSync(path);
    const vendor = composerVendor(real);
    if (vendor) {
      const entry = join(vendor, "phpunit", "phpunit", "phpunit");
      return { source: "arg", entry, entryFile: entry, mounts: [vendor], includePaths: [], label: path };
    }
    // A system-wide install (Debian: /usr/bin/phpunit loads PHPUnit/Autoload.php from the include path).
    const includePaths = ["/usr/share/php"].filter((d) => existsSync(d));
    return { source: "arg", entry: `${WORK}/entry/${basename(real)}`, entryFile: real, mounts: includePaths, includePaths, copy: real, label: path };
  }
  const own = join(plugin.source, "vendor", "bin", "phpunit");
  if (existsSync(own)) {
    const inSandbox = (hostPath: string) => `${plugin.target}/${hostPath.slice(plugin.source.length + 1)}`;
    const vendor = composerVendor(own);
    const entry = inSandbox(vendor ? join(vendor, "phpunit", "phpunit", "phpunit") : own);
    return { source: "plugin", entry, entryFile: entry, mounts: [], includePaths: [], label: "vendor/bin/phpunit" };
  }
  throw new WpCodeboxError("phpunit-unavailable", `No PHPUnit found: the plugin has no vendor/bin/phpunit and no phpunit=PATH was given. ${HOW_TO}.`, {
    checked: [own],
  });
}

/**
 * Where PHP puts temporary files inside the sandbox: php-wasm's `sys_get_temp_dir()`. It has no
 * `sys_temp_dir` setting and no `TMPDIR` in the sandbox's environment, so it is PHP's built-in
 * `/tmp` (the integration test checks this).
 */
export const SANDBOX_TEMP_DIR = "/tmp";

/** The WordPress core test library the plugin's bootstrap may load. */
export interface TestsLibrary {
  /** Where the library sits in the sandbox. */
  dir: string;
  /** A host folder to mount read-only at `dir` (a library found on the host). */
  mount?: string;
  /**
   * Where it was found: `env` the host's `WP_TESTS_DIR`; `vendor` the plugin's
   * `vendor/wp-phpunit/wp-phpunit`; `tmp` the host's `${TMPDIR:-/tmp}/wordpress-tests-lib`.
   */
  from: "env" | "vendor" | "tmp";
  /**
   * Whether `WP_TESTS_DIR` is set to `dir` for the plugin's bootstrap. Not for `tmp`: on the host
   * that library is found with `WP_TESTS_DIR` unset, and a bootstrap that does something else
   * when it is set must do the same in the sandbox.
   */
  setsEnv: boolean;
}

/**
 * The core test library, first match wins:
 * 1. the host's `WP_TESTS_DIR` (as `install-wp-tests.sh` and `wp scaffold plugin-tests` set it up)
 *    when it names a folder, mounted read-only at the same path. One that names no folder is
 *    passed on unchanged, so the plugin's bootstrap reports it as it would outside the sandbox;
 * 2. the plugin's own `vendor/wp-phpunit/wp-phpunit` (Composer), a version the plugin pinned;
 * 3. the host's `${TMPDIR:-/tmp}/wordpress-tests-lib` (where `install-wp-tests.sh` puts it when
 *    `WP_TESTS_DIR` is not exported) when it is a folder, mounted read-only at
 *    `<sandboxTempDir>/wordpress-tests-lib`, the path a scaffolded bootstrap computes from
 *    `sys_get_temp_dir()` inside the sandbox;
 * else none.
 * @param env - the host's environment (`WP_TESTS_DIR`, `TMPDIR`).
 * @param sandboxTempDir - `sys_get_temp_dir()` inside the sandbox.
 */
export function resolveTestsLibrary(plugin: ResolvedMount, env: Record<string, string | undefined>, sandboxTempDir: string = SANDBOX_TEMP_DIR): TestsLibrary | undefined {
  const fromEnv = env.WP_TESTS_DIR;
  if (fromEnv) {
    const dir = resolve(fromEnv);
    return isDirectory(dir) ? { dir, mount: realpathSync(dir), from: "env", setsEnv: true } : { dir: fromEnv, from: "env", setsEnv: true };
  }
  if (existsSync(join(plugin.source, "vendor", "wp-phpunit", "wp-phpunit"))) return { dir: `${plugin.target}/vendor/wp-phpunit/wp-phpunit`, from: "vendor", setsEnv: true };
  // The shell's ${TMPDIR:-/tmp}: an empty TMPDIR counts as unset. resolve() drops trailing slashes,
  // as the scaffolded bootstrap's rtrim() does.
  const hostTmp = join(resolve(env.TMPDIR || "/tmp"), "wordpress-tests-lib");
  if (isDirectory(hostTmp)) return { dir: `${sandboxTempDir.replace(/\/+$/, "")}/wordpress-tests-lib`, mount: realpathSync(hostTmp), from: "tmp", setsEnv: false };
  return undefined;
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/** The last `lines` lines PHP printed (stdout, then stderr) on one line, for an error message. */
function outputTail(outcome: { stdout: string; stderr: string }, lines: number): string {
  return (outcome.stdout + outcome.stderr).trim().split("\n").slice(-lines).join(" | ");
}

/** The `wp-tests-config.php` the WordPress core test library reads: this sandbox's database and site. */
export function wpTestsConfig(siteUrl: string, database: TestDatabase): string {
  const host = new URL(siteUrl).host;
  const constants: [string, unknown][] = [
    ["ABSPATH", "/wordpress/"],
    ["WP_DEFAULT_THEME", "default"],
    ["WP_DEBUG", true],
    // The backend's own database (on Playground SQLite through wp-content/db.php, which ignores the names).
    ["DB_NAME", database.name],
    ["DB_USER", database.user],
    ["DB_PASSWORD", database.password],
    ["DB_HOST", database.host],
    ["DB_CHARSET", database.charset],
    ["DB_COLLATE", ""],
    ["WP_TESTS_DOMAIN", host],
    ["WP_TESTS_EMAIL", "admin@example.org"],
    ["WP_TESTS_TITLE", "Test Blog"],
    ["WP_PHP_BINARY", "php"],
    ["WPLANG", ""],
  ];
  const lines = ["<?php", "// Written by wp-codebox for the WordPress core test library: this sandbox's own database and site."];
  for (const [name, value] of constants) lines.push(`if (!defined(${phpValue(name)})) { define(${phpValue(name)}, ${phpValue(value)}); }`);
  lines.push(`$table_prefix = ${phpValue("wptests_")};`, "");
  return lines.join("\n");
}

/** PHPUnit's argv for the run (argv[0] included). */
export function phpunitArgv(args: Record<string, string>, pluginDir: string, bootstrapFile: string | undefined): string[] {
  const argv = ["phpunit", "--log-junit", JUNIT, "--do-not-cache-result"];
  if (args.config !== undefined) argv.push("--configuration", args.config.startsWith("/") ? args.config : `${pluginDir}/${args.config}`);
  if (bootstrapFile !== undefined) argv.push("--bootstrap", bootstrapFile);
  if (args.filter !== undefined) argv.push("--filter", args.filter);
  if (args.testsuite !== undefined) argv.push("--testsuite", args.testsuite);
  return argv;
}

/** Counts PHPUnit prints in its summary ("Tests: 3, Assertions: 4, Failures: 1, Incomplete: 1."). */
export function summaryCounts(stdout: string): Partial<Record<"tests" | "assertions" | "errors" | "failures" | "warnings" | "skipped" | "incomplete" | "risky", number>> {
  const line = [...stdout.matchAll(/^(?:OK \((\d+) tests?, (\d+) assertions?\)|Tests: \d+, Assertions: \d+.*)$/gm)].at(-1);
  if (!line) return {};
  if (line[1] !== undefined) return { tests: Number(line[1]), assertions: Number(line[2]) };
  const out: Record<string, number> = {};
  for (const m of line[0].matchAll(/(Tests|Assertions|Errors|Failures|Warnings|Skipped|Incomplete|Risky): (\d+)/g)) out[m[1]!.toLowerCase()] = Number(m[2]);
  return out;
}

type JunitReport =
  | { found: false }
  | {
      found: true;
      totals: { tests: number; assertions: number; failures: number; errors: number; skipped: number; warnings: number };
      failing: { name: string; kind: "failure" | "error"; type: string; message: string; file: string; line: number }[];
    };

/** Builds the results from the JUnit totals and PHPUnit's summary line (the only place incomplete tests are counted apart). */
export function buildCounts(totals: Extract<JunitReport, { found: true }>["totals"], stdout: string): TestCounts {
  const summary = summaryCounts(stdout);
  const incomplete = summary.incomplete ?? 0;
  // JUnit logs incomplete tests as skipped.
  const skipped = summary.skipped ?? Math.max(0, totals.skipped - incomplete);
  const counts = {
    tests: totals.tests,
    assertions: totals.assertions,
    failures: totals.failures,
    errors: totals.errors,
    skipped,
    incomplete,
    warnings: summary.warnings ?? totals.warnings,
    risky: summary.risky ?? 0,
  };
  return { ...counts, passed: Math.max(0, counts.tests - counts.failures - counts.errors - counts.skipped - counts.incomplete) };
}

function relativeTo(pluginDir: string, file: string): string {
  return file.startsWith(`${pluginDir}/`) ? file.slice(pluginDir.length + 1) : file;
}

export const phpunit: CommandHandler = async (ctx, args) => {
  const plugin = pluginMountFor(ctx, args.plugin);
  const source = resolvePhpunit(args.phpunit, ctx.cwd, plugin);
  const pluginDir = plugin.target;
  const bootstrap = args.bootstrap === "wordpress" ? "wordpress" : "plugin";
  for (const dir of source.mounts) await ctx.mountReadOnly(dir, dir);
  if (source.copy) await ctx.writeSandboxFile(source.entry, await readInputFile(source.copy, "phpunit-entry"));
  await ctx.writeSandboxFile(TESTS_CONFIG, wpTestsConfig(ctx.siteUrl, ctx.testDatabase));
  await ctx.writeSandboxFile(`${WORK}/driver.php`, phpAsset("phpunit/driver.php"));
  await ctx.writeSandboxFile(`${WORK}/results.php`, phpAsset("phpunit/results.php"));
  // bootstrap=wordpress: WordPress is loaded by the driver; PHPUnit's own bootstrap is then only the
  // plugin's Composer autoloader (or nothing), so the config's WordPress loader does not run twice.
  let bootstrapFile: string | undefined;
  if (bootstrap === "wordpress") {
    bootstrapFile = existsSync(join(plugin.source, "vendor", "autoload.php")) ? `${pluginDir}/vendor/autoload.php` : `${WORK}/no-bootstrap.php`;
    await ctx.writeSandboxFile(`${WORK}/no-bootstrap.php`, "<?php\n// bootstrap=wordpress: WordPress is already loaded.\n");
  }
  const env: Record<string, string> = { WP_PHPUNIT__TESTS_CONFIG: TESTS_CONFIG, WP_CODEBOX_PHPUNIT: "1" };
  const library = resolveTestsLibrary(plugin, process.env);
  if (library) {
    if (library.setsEnv) env.WP_TESTS_DIR = library.dir;
    if (library.mount) await ctx.mountReadOnly(library.mount, library.dir);
  }
  // The scaffolded bootstrap forwards this to the library, which loads the PHPUnit Polyfills from it.
  const polyfills = process.env.WP_TESTS_PHPUNIT_POLYFILLS_PATH;
  if (polyfills) {
    env.WP_TESTS_PHPUNIT_POLYFILLS_PATH = resolve(polyfills);
    if (existsSync(polyfills) && statSync(polyfills).isDirectory()) await ctx.mountReadOnly(realpathSync(polyfills), resolve(polyfills));
  }
  let installOutput = "";
  let installRan = false;
  const installScript = library ? `${library.dir}/includes/install.php` : undefined;
  // Loaded here, not with the catalog: its XML parser would cost every command's start ~20 ms.
  const { MULTISITE_ENV, multisiteFromConfig, readPhpunitConfig } = await import("./phpunit-config.js");
  // The host's WP_MULTISITE goes in as it is (any value, even empty), so that PHPUnit, applying the
  // configuration's <env> inside the sandbox, keeps or overrides it as it would on the host.
  const hostMultisite = process.env[MULTISITE_ENV];
  if (library && hostMultisite !== undefined) env[MULTISITE_ENV] = hostMultisite;
  let multisite = false;
  if (bootstrap === "plugin" && installScript && (await ctx.readSandboxFile(installScript)) !== null) {
    // The library's bootstrap would run its install.php as a `php` subprocess, which php-wasm cannot
    // start (system() fails, and the bootstrap exits without a word): run it here, in a request of
    // its own, and tell the bootstrap it is done. Always: the host's WP_TESTS_SKIP_INSTALL is for a
    // database that outlives the run, and the sandbox's never does.
    await ctx.writeSandboxFile(`${WORK}/install-tests.php`, phpAsset("phpunit/install-tests.php"));
    // Network or not, as the bootstrap will decide once PHPUnit has applied the configuration file;
    // the subprocess would inherit WP_MULTISITE as PHPUnit left it.
    const decision = multisiteFromConfig(await readPhpunitConfig((path) => ctx.readSandboxFile(path), args.config, pluginDir), hostMultisite);
    multisite = decision.multisite;
    const installEnv = decision.env === undefined ? env : { ...env, [MULTISITE_ENV]: decision.env };
    const install = { script: installScript, config: TESTS_CONFIG, multisite, pluginDir, env: installEnv };
    const installed = outcomeFromRun(
      await ctx.runPhp(`<?php\n${FATAL_RECORDER}\n$wp_codebox_install = ${phpValue(install)};\nrequire ${phpValue(`${WORK}/install-tests.php`)};\n`, { env: installEnv }),
    );
    if (installed.status !== "ok") {
      return {
        ...installed,
        status: "error",
        exitCode: installed.exitCode || 1,
        error: {
          code: "phpunit-failed",
          message: `The WordPress core test library (${library!.dir}${library!.from === "tmp" ? `, from ${library!.mount} on this machine, where install-wp-tests.sh puts it` : ""}) could not install WordPress for the tests: ${(installed.error?.message ?? "") + " " + outputTail(installed, 4)}`.slice(0, 900),
          data: { testsDir: library!.dir, exitCode: installed.exitCode },
        },
      };
    }
    installOutput = installed.stdout;
    installRan = true;
    env.WP_TESTS_SKIP_INSTALL = "1";
  }
  const actor = bootstrap === "wordpress" ? await ctx.resolveActor(args.as) : { userId: 0, label: "anonymous" };
  const argv = phpunitArgv(args, pluginDir, bootstrapFile);
  const config = {
    pluginDir,
    entry: source.entry,
    entryFile: source.entryFile,
    runFile: `${WORK}/run/${basename(source.entryFile)}.php`,
    argv,
    includePaths: source.includePaths,
    bootstrap,
    userId: actor.userId,
    env,
    testsConfig: TESTS_CONFIG,
  };
  // A stale log from an earlier run in this sandbox must never be reported as this run's.
  await ctx.writeSandboxFile(JUNIT, "");
  // The environment goes in through the driver's putenv() only, not as the request's environment:
  // getenv() reads the latter first, so PHPUnit's <env force="true"> (a putenv()) could not replace it.
  const run = await ctx.runPhp(`<?php\n${FATAL_RECORDER}\n$wp_codebox_phpunit = ${phpValue(config)};\nrequire ${phpValue(`${WORK}/driver.php`)};\n`);
  const ran = outcomeFromRun(run);
  // The library's install output comes first, where its bootstrap would have printed it.
  const base = installOutput ? { ...ran, stdout: installOutput + ran.stdout } : ran;
  const junit = text((await ctx.readSandboxFile(JUNIT)) ?? new Uint8Array());
  const parsed = junit.trim()
    ? (outcomeFromRun(await ctx.runPhp(`<?php\n$wp_codebox_junit = ${phpValue(JUNIT)};\nrequire ${phpValue(`${WORK}/results.php`)};\n`)).json as JunitReport | undefined)
    : undefined;
  const version = /PHPUnit (\d+\.\d+\.\d+)/.exec(base.stdout)?.[1] ?? null;
  if (!parsed || !parsed.found) {
    // PHPUnit did not get as far as running tests: a fatal error, a bad config, a missing bootstrap.
    if (base.error?.code === "php-fatal") return base;
    return {
      ...base,
      status: "error",
      exitCode: base.exitCode || 2,
      error: {
        code: "phpunit-failed",
        message: `PHPUnit ${version ?? ""} exited with code ${base.exitCode} without running tests: ${outputTail(base, 6).slice(0, 800) || "(no output)"}`.replace("  ", " "),
        data: { exitCode: base.exitCode, phpunit: source.label, bootstrap },
      },
    };
  }
  const counts = buildCounts(parsed.totals, base.stdout);
  const failures: PhpunitFailure[] = parsed.failing.map((f) => {
    const file = relativeTo(pluginDir, f.file);
    return { ...f, file, location: `${file}:${f.line}`, sandboxFile: f.file };
  });
  const results: PhpunitResults = {
    schema: PHPUNIT_RESULTS_SCHEMA_ID,
    plugin: basename(pluginDir),
    phpunit: { version, source: source.source, entry: source.label },
    bootstrap,
    testsLibrary: library ? { dir: library.dir, from: library.from, installed: installRan, multisite } : null,
    config: args.config ?? null,
    filter: args.filter ?? null,
    testsuite: args.testsuite ?? null,
    exitCode: base.exitCode,
    tests: counts,
    failures,
  };
  const files: ArtifactFile[] = [
    { path: "files/phpunit/junit.xml", kind: "phpunit-junit", contentType: "application/xml", content: junit },
    { path: "files/phpunit/test-results.json", kind: "phpunit-results", contentType: "application/json", content: `${JSON.stringify(results, null, 2)}\n` },
  ];
  const outcome: CommandOutcome = { ...base, json: results, files, tests: counts };
  const broken = counts.failures + counts.errors;
  if (base.error?.code === "php-fatal") return { ...outcome, status: "error" };
  if (broken > 0) {
    const first = failures[0];
    return {
      ...outcome,
      status: "error",
      error: {
        code: "tests-failed",
        message: `${broken} of ${counts.tests} tests failed${first ? `; first: ${first.name} (${first.location}): ${first.message.split("\n")[0]}` : ""}. See files/phpunit/test-results.json.`,
        data: { ...counts, failures: failures.map((f) => ({ name: f.name, location: f.location })) },
      },
    };
  }
  if (base.exitCode !== 0) {
    return {
      ...outcome,
      status: "error",
      error: { code: "phpunit-failed", message: `PHPUnit exited with code ${base.exitCode} although no test failed (warnings or a configuration problem: see stdout).`, data: { exitCode: base.exitCode } },
    };
  }
  return { ...outcome, status: "ok", exitCode: 0 };
};

