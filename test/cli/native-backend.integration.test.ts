/**
 * The native backend (Debian's PHP, a private MariaDB per sandbox, bubblewrap) on real parts: three
 * CLI runs (`run --backend native`: a MariaDB server, MySQL-only SQL, a verifying bundle;
 * `recipe run --backend native`; `episode run` of a script with `runtime.backend: "native"`), then one
 * shared sandbox for what is the native backend's own (escapes, resource limits, output framing,
 * `reset()` of tables). Fatals, deadlines and database errors are in the contract suite
 * (`test/backend-contract.integration.test.ts`), run on both backends. Skipped, saying which
 * packages to install, when the Debian packages are missing.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_OUTPUT_CAP_BYTES, WpCodeboxError, type ExecutionResult, type Runtime } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { verifyArtifacts } from "../../packages/cli/src/commands/artifacts-verify.js";
import { createBackend } from "../../packages/cli/src/commands/backends.js";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;
// The default cache, shared with the other integration tests (the native site is installed once).
const env = { WP_CODEBOX_CACHE_DIR: undefined } as unknown as NodeJS.ProcessEnv;

/** MySQL-only SQL that the SQLite translation cannot run, and the answers MariaDB gives. */
const MYSQL_PROBE = `global $wpdb;
echo json_encode([
  'version' => $wpdb->get_var('SELECT VERSION()'),
  'concat' => $wpdb->get_var("SELECT GROUP_CONCAT(x ORDER BY x SEPARATOR '|') FROM (SELECT 'a' AS x UNION SELECT 'b' UNION SELECT 'c') t"),
  'interval' => $wpdb->get_var("SELECT DATE(d + INTERVAL 2 DAY) FROM (SELECT DATE('2024-02-28') AS d) t"),
  'sqlMode' => $wpdb->get_row("SHOW VARIABLES LIKE 'sql_mode'", ARRAY_A)['Variable_name'] ?? null,
  'pluginActive' => is_plugin_active('check-clean/check-clean.php'),
  'activationOption' => get_option('check_clean_settings'),
  'env' => getenv('NATIVE_GREETING'),
  'secretLength' => strlen((string) getenv('NATIVE_TEST_SECRET')),
]);`;
const SECRET = "native-secret-value-4821";

describe("wp-codebox run --backend native", { skip, timeout: 300_000 }, () => {
  let tmp: string;
  before(() => (tmp = mkdtempSync(join(tmpdir(), "wp-codebox-native-cli-"))));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("reports a MariaDB server, runs GROUP_CONCAT … SEPARATOR and + INTERVAL, activates a --plugin, passes --env and a redacted --secret-env, and writes a verifying bundle", async () => {
    const plugin = join(REPO_ROOT, "test/fixtures/plugins/check-clean");
    const argv = ["run", "--backend", "native", "--command", "wordpress.run-php", "--arg", `code=<?php ${MYSQL_PROBE}`, "--plugin", plugin, "--env", "NATIVE_GREETING=hi", "--secret-env", "NATIVE_TEST_SECRET"];
    const run = await spawnCli([...argv, "--artifacts", join(tmp, "bundle"), "--json"], { env: { ...env, NATIVE_TEST_SECRET: SECRET } });
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout) as { result: ExecutionResult; bundle: { valid: boolean } };
    const probe = out.result.json as Record<string, string>;
    assert.match(probe.version!, /MariaDB/);
    assert.equal(probe.concat, "a|b|c");
    assert.equal(probe.interval, "2024-03-01");
    assert.equal(probe.sqlMode, "sql_mode");
    assert.equal(probe.pluginActive, true);
    assert.deepEqual(probe.activationOption, { greeting: "hello" });
    assert.equal(probe.env, "hi");
    assert.equal(probe.secretLength, SECRET.length);
    assert.equal(out.result.dbErrors, undefined);
    assert.equal(out.bundle.valid, true);
    for (const file of readdirSync(join(tmp, "bundle"), { recursive: true, encoding: "utf8" })) {
      const path = join(tmp, "bundle", file);
      if (statSync(path).isFile()) assert.ok(!readFileSync(path, "utf8").includes(SECRET), `${file} holds the secret`);
    }
  });

  it("recipe run --backend native checks a step's expectation on MariaDB", async () => {
    const recipe = join(tmp, "recipe.json");
    writeFileSync(recipe, JSON.stringify({
      schema: "wp-codebox/workspace-recipe/v1",
      steps: [{ name: "GROUP_CONCAT on MariaDB", command: "wordpress.run-php", args: { code: `<?php global $wpdb; echo json_encode(['v' => $wpdb->get_var("SELECT GROUP_CONCAT(x SEPARATOR '-') FROM (SELECT 1 AS x UNION SELECT 2) t")]);` }, expect: { json: { path: "$.v", equals: "1-2" } } }],
    }));
    const run = await spawnCli(["recipe", "run", recipe, "--backend", "native", "--artifacts", join(tmp, "recipe-bundle"), "--json"], { env });
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout) as { report: { outcome: string }; bundle: { valid: boolean } };
    assert.equal(out.report.outcome, "passed");
    assert.equal(out.bundle.valid, true);
  });

  it("episode run with runtime.backend native: steps share MariaDB, the host's clock, a bundle artifacts verify accepts (an unknown runtime.backend: run-plan.test.ts)", async () => {
    const script = join(tmp, "episode.json");
    const steps = [
      { name: "write", action: { command: "wordpress.run-php", args: { code: `<?php update_option('wp_codebox_episode', 'kept'); global $wpdb; echo $wpdb->get_var("SELECT GROUP_CONCAT(x SEPARATOR '|') FROM (SELECT 1 AS x UNION SELECT 2) t");` } } },
      { name: "read", action: { command: "wordpress.run-php", args: { code: "<?php echo json_encode([get_option('wp_codebox_episode'), $GLOBALS['wpdb']->get_var('SELECT VERSION()')]);" } } },
    ];
    writeFileSync(script, JSON.stringify({ schema: "wp-codebox/episode-script/v1", runtime: { backend: "native" }, steps }));
    const run = await spawnCli(["episode", "run", script, "--artifacts", join(tmp, "episode-bundle"), "--json"], { env });
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout) as { steps: { status: string }[]; bundle: { valid: boolean } };
    assert.deepEqual(out.steps.map((s) => s.status), ["ok", "ok"]);
    assert.equal(out.bundle.valid, true);
    const metadata = JSON.parse(readFileSync(join(tmp, "episode-bundle", "metadata.json"), "utf8")) as { runtime: { backend: string; determinism?: { clock: string } } };
    assert.equal(metadata.runtime.backend, "native");
    const results = readFileSync(join(tmp, "episode-bundle", "files", "commands.jsonl"), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as ExecutionResult);
    assert.equal(results[0]!.stdout, "1|2");
    const [kept, version] = results[1]!.json as [string, string];
    assert.equal(kept, "kept");
    assert.match(version, /MariaDB/);
    // What `artifacts verify` runs, in process (a CLI start costs seconds on a busy machine).
    const verified = await verifyArtifacts(join(tmp, "episode-bundle"));
    assert.equal(verified.valid, true, JSON.stringify(verified));
  });

  it("an unknown backend name is invalid input (exit 2), refused before anything boots", () => {
    assert.throws(() => createBackend("docker", { cwd: process.cwd() }), (error: WpCodeboxError) => {
      assert.equal(error.code, "invalid-argument");
      assert.equal(error.category, "input");
      assert.match(error.message, /--backend "docker" is not a backend: use playground or native/);
      return true;
    });
  });
});

describe("a native sandbox (one shared runtime)", { skip, timeout: 300_000 }, () => {
  let runtime: Runtime;
  const php = (code: string, extra: string[] = [], timeoutMs?: number): Promise<ExecutionResult> =>
    runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, ...extra], ...(timeoutMs !== undefined ? { timeoutMs } : {}) });

  before(async () => {
    runtime = await createBackend("native", { cwd: process.cwd() }).create({});
  });
  after(async () => runtime?.dispose());

  it("says it is native, on Debian's PHP", () => {
    const info = runtime.info();
    assert.equal(info.backend, "native");
    assert.equal(info.phpVersion, status.phpVersion);
  });

  // A run ends when its own process says it ended; a process it forked inherits what says so.
  const forkCases: { name: string; code: string; extra: string[]; stdout: string; exitCode: number }[] = [
    { name: "a forked process that ends first does not end the run", code: "$p = pcntl_fork(); if ($p === 0) { exit(0); } pcntl_waitpid($p, $s); usleep(200000); echo 'parent done';", extra: ["bootstrap=none"], stdout: "parent done", exitCode: 0 },
    { name: "the same with WordPress loaded", code: "$p = pcntl_fork(); if ($p === 0) { exit(0); } pcntl_waitpid($p, $s); usleep(200000); echo get_option('blogname') ? 'parent done' : 'no option';", extra: [], stdout: "parent done", exitCode: 0 },
  ];
  for (const c of forkCases) {
    it(c.name, async () => {
      const r = await php(`<?php ${c.code}`, c.extra);
      assert.equal(r.stdout, c.stdout, JSON.stringify(r.error) + r.stderr);
      assert.equal(r.exitCode, c.exitCode, JSON.stringify(r.error));
    });
  }

  it("PHP cannot read /etc/shadow, list the host's folders or reach an outside address", async () => {
    const r = await php(
      `<?php
      $s = @fsockopen('1.1.1.1', 80, $errno, $errstr, 5);
      echo json_encode([
        'shadow' => @file_get_contents('/etc/shadow'),
        'work' => @scandir('/work'),
        'root' => @scandir('/root'),
        'home' => @scandir('/home'),
        'socket' => $s !== false,
        'errno' => $errno,
        'uid' => posix_getuid(),
      ]);`,
      ["bootstrap=none"],
    );
    assert.equal(r.status, "ok", JSON.stringify(r.error) + r.stderr);
    const seen = r.json as Record<string, unknown>;
    assert.equal(seen.shadow, false);
    assert.equal(seen.work, false);
    assert.equal(seen.root, false);
    assert.equal(seen.home, false);
    assert.equal(seen.socket, false);
    // ENETUNREACH: the sandbox's network namespace has no route at all (no wait for a timeout).
    assert.equal(seen.errno, 101);
    // Run by root, each sandbox has an unprivileged uid of its own (the process limit is counted per uid).
    if (process.getuid?.() === 0) assert.ok((seen.uid as number) >= 40_000 && (seen.uid as number) < 60_000, String(seen.uid));
  });

  it("a fork bomb holding one sandbox's process limit does not stop another sandbox from booting MariaDB and running", async () => {
    // Sandbox A forks up to its limit, says so in a mounted folder, and holds its processes until
    // told to let go; meanwhile sandbox B boots (MariaDB needs threads) and runs.
    const shared = mkdtempSync(join(tmpdir(), "wp-codebox-native-bomb-"));
    chmodSync(shared, 0o777); // the sandbox's own uid writes the signal file
    const a = await createBackend("native", { cwd: REPO_ROOT }).create({ mounts: [{ source: shared, target: "/workspace/signal", mode: "readwrite", kind: "directory" }] });
    try {
      const bomb = a.execute({
        command: "wordpress.run-php",
        args: [
          `code=<?php
          for ($i = 0; $i < 2000; $i++) {
            $pid = pcntl_fork();
            if ($pid === 0) { while (!file_exists('/workspace/signal/done')) usleep(50000); exit(0); }
            if ($pid < 0) { break; }
          }
          file_put_contents('/workspace/signal/forked', (string) $i);
          while (!file_exists('/workspace/signal/done')) usleep(50000);
          echo "held $i";`,
          "bootstrap=none",
        ],
        timeoutMs: 120_000,
      });
      let settled = false;
      void bomb.finally(() => (settled = true));
      while (!readdirSync(shared).includes("forked")) {
        if (settled) assert.fail(`the fork bomb ended before it forked: ${JSON.stringify(await bomb)}`);
        await sleep(50);
      }
      const other = await createBackend("native", { cwd: REPO_ROOT }).create({});
      try {
        const r = await other.execute({ command: "wordpress.run-php", args: ["code=<?php global $wpdb; echo $wpdb->get_var('SELECT 40 + 2');"] });
        assert.equal(r.status, "ok", JSON.stringify(r.error) + r.stderr);
        assert.equal(r.stdout, "42");
      } finally {
        writeFileSync(join(shared, "done"), "");
        await other.dispose();
      }
      const held = await bomb;
      assert.match(held.stdout, /^held \d+$/, JSON.stringify(held.error));
      assert.ok(Number(held.stdout.slice(5)) <= 256, held.stdout);
    } finally {
      writeFileSync(join(shared, "done"), "");
      await a.dispose();
      rmSync(shared, { recursive: true, force: true });
    }
  });

  it("a fork bomb stops at the process limit and a 2 GB string at the memory limit", async () => {
    const forks = await php(
      `<?php
      for ($i = 0; $i < 2000; $i++) {
        $pid = pcntl_fork();
        if ($pid === 0) { sleep(30); exit(0); }
        if ($pid < 0) { echo "stopped at $i"; break; }
      }`,
      ["bootstrap=none"],
      60_000,
    );
    assert.equal(forks.status, "ok", JSON.stringify(forks.error));
    const at = Number(/stopped at (\d+)/.exec(forks.stdout)?.[1]);
    assert.ok(at > 0 && at <= 256, forks.stdout);
    const big = await php("<?php ini_set('memory_limit', '-1'); $s = str_repeat('x', 2 * 1024 * 1024 * 1024); echo strlen($s);", ["bootstrap=none"], 60_000);
    assert.equal(big.status, "error");
    assert.equal(big.error?.code, "php-fatal");
    assert.match(big.error!.message, /memory/i);
  });

  // What a run leaves at its code file's path (its own file, or the code folder) is replaced by the
  // next run's code, never written through.
  const plantedCases: { name: string; plant: string }[] = [
    { name: "a link to a wp-content file", plant: "unlink(__FILE__); symlink('/wordpress/wp-content/victim.txt', __FILE__);" },
    { name: "a folder holding a file", plant: "unlink(__FILE__); mkdir(__FILE__); file_put_contents(__FILE__ . '/inner.php', 'x');" },
    { name: "the code folder swapped for a link to wp-content", plant: "rename(dirname(__FILE__), dirname(__FILE__) . '-old'); symlink('/wordpress/wp-content', dirname(__FILE__));" },
    { name: "a FIFO (opening it would block)", plant: "unlink(__FILE__); posix_mkfifo(__FILE__, 0644);" },
  ];
  for (const c of plantedCases) {
    it(`the next run's code replaces ${c.name} left at its path`, async () => {
      const planted = await php(`<?php file_put_contents('/wordpress/wp-content/victim.txt', 'intact'); @unlink('/wordpress/wp-content/code.php'); ${c.plant} echo 'planted';`, ["bootstrap=none"]);
      assert.equal(planted.stdout, "planted", planted.stderr);
      const next = await php("<?php echo json_encode([file_get_contents('/wordpress/wp-content/victim.txt'), file_exists('/wordpress/wp-content/code.php'), __FILE__]);", ["bootstrap=none"]);
      assert.equal(next.status, "ok", JSON.stringify(next.error) + next.stderr);
      assert.deepEqual(next.json, ["intact", false, "/internal/wp-codebox/code/code.php"]);
    });
  }

  it("output past the cap is cut and counted, and the next command's output is its own", async () => {
    const big = await php(`<?php echo str_repeat('x', ${DEFAULT_OUTPUT_CAP_BYTES} + 4096); fwrite(STDERR, 'to stderr');`, ["bootstrap=none"]);
    assert.equal(big.status, "ok");
    assert.equal(big.stdout.length, DEFAULT_OUTPUT_CAP_BYTES);
    assert.equal(big.stdoutBytes, DEFAULT_OUTPUT_CAP_BYTES + 4096);
    assert.deepEqual(big.truncated, { stdout: true, stderr: false });
    assert.equal(big.stderr, "to stderr");
    const next = await php("<?php echo 'next';", ["bootstrap=none"]);
    assert.equal(next.stdout, "next");
    assert.equal(next.stderr, "");
  });

  it("reset() forgets a database write, a new table and a wp-content file, without restarting MariaDB", async () => {
    const write = await php("<?php global $wpdb; update_option('wp_codebox_probe', 'written'); $wpdb->query('CREATE TABLE wp_codebox_extra (id INT)'); file_put_contents(WP_CONTENT_DIR . '/probe.txt', 'x'); echo get_option('wp_codebox_probe');");
    assert.equal(write.stdout, "written");
    await runtime.reset!();
    const read = await php("<?php global $wpdb; echo json_encode([get_option('wp_codebox_probe'), $wpdb->get_var(\"SHOW TABLES LIKE 'wp_codebox_extra'\"), file_exists(WP_CONTENT_DIR . '/probe.txt'), get_option('blogname')]);");
    assert.deepEqual(read.json, [false, null, false, "wp-codebox"]);
    const resets = (await runtime.collectArtifacts()).events.filter((e) => e.type === "runtime-reset");
    assert.equal(resets.at(-1)?.data?.how, "tables");
  });

  it("reset() puts back only what changed, the next AUTO_INCREMENT included: a post written after each reset gets the same id", async () => {
    const insert = "<?php echo wp_insert_post(['post_title' => 'probe', 'post_status' => 'publish']);";
    await runtime.reset!();
    const first = await php(insert);
    await runtime.reset!();
    const second = await php(insert);
    assert.ok(Number(first.stdout) > 0, first.stdout + first.stderr);
    assert.equal(second.stdout, first.stdout);
    const resets = (await runtime.collectArtifacts()).events.filter((e) => e.type === "runtime-reset").map((e) => e.data!);
    assert.ok((resets.at(-1)!.tablesRestored as number) >= 1, JSON.stringify(resets.at(-1)));
    await runtime.reset!();
    await runtime.reset!();
    // Nothing written since the last reset(): nothing to put back.
    const idle = (await runtime.collectArtifacts()).events.filter((e) => e.type === "runtime-reset").at(-1)!.data!;
    assert.deepEqual([idle.tablesRestored, idle.tablesDropped, idle.filesCopied, idle.filesRemoved], [0, 0, 0, 0]);
  });
});

describe("a native sandbox's preloaded WordPress", { skip, timeout: 300_000 }, () => {
  let runtime: Runtime;
  let tmp: string;
  const plugin = () => join(tmp, "probe.php");
  const php = (code: string): Promise<ExecutionResult> => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  const PROBE = "<?php echo json_encode([wp_codebox_probe(), $GLOBALS['wp_codebox_probe_loaded'], get_current_user_id()]);";
  const writeProbe = (version: string) => writeFileSync(plugin(), `<?php $GLOBALS['wp_codebox_probe_loaded'] = microtime(true); function wp_codebox_probe() { return '${version}'; }`);

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "wp-codebox-native-preload-"));
    writeProbe("v1");
    // An old mtime: a file changed in the last seconds is never trusted to a preloaded WordPress.
    utimesSync(plugin(), 1_600_000_000, 1_600_000_000);
    runtime = await createBackend("native", { cwd: process.cwd() }).create({ mounts: [{ source: plugin(), target: "/wordpress/wp-content/mu-plugins/probe.php", mode: "readwrite" }] });
  });
  after(async () => {
    await runtime?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("serves a run from WordPress loaded before it was asked for, and a mounted file edited on the host since is loaded again", async () => {
    // Boot made the mount point (mu-plugins changed): a preload in the next two seconds would not
    // trust it.
    await php("<?php echo 1;");
    await sleep(2500);
    const first = await php(PROBE);
    assert.equal(first.status, "ok", JSON.stringify(first.error) + first.stderr);
    await sleep(1500); // room for the server to load WordPress for the next run
    const asked = Date.now() / 1000;
    const second = await php(PROBE);
    const [version, loadedAt, user] = second.json as [string, number, number];
    assert.equal(version, "v1");
    assert.ok(loadedAt < asked, `WordPress was loaded for this run before it was asked for (${loadedAt} < ${asked})`);
    assert.ok(user > 0, "the actor is set when the request comes, not at preload");
    await sleep(1500);
    writeProbe("v2");
    const third = await php(PROBE);
    assert.equal((third.json as [string])[0], "v2", third.stdout + third.stderr);
  });

  it("a mounted file edited on the host while the next run's WordPress loads is loaded again (runs back to back)", async () => {
    // Each edit lands right after a run, while the server loads WordPress for the next one, which
    // is asked for at once: the request arrives before (or while) the preload looks at its files.
    for (const version of ["b1", "b2", "b3", "b4"]) {
      writeProbe(version);
      const got = await php(PROBE);
      assert.equal((got.json as [string])[0], version, got.stdout + got.stderr);
    }
  });

  it("a run past its deadline is killed and the next one runs in the same warm server", async () => {
    const slow = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo 'started'; while (true) {}"], timeoutMs: 1500 });
    assert.equal(slow.status, "timed-out");
    assert.equal(slow.stdout, "started");
    const events = (await runtime.collectArtifacts()).events;
    // A new server would compile WordPress again: more misses than hits.
    const next = await php("<?php $s = opcache_get_status(false)['opcache_statistics']; echo $s['hits'] > $s['misses'] ? 'warm' : 'cold';");
    assert.equal(next.stdout, "warm", "OPcache's shared memory (the server process) survived the deadline");
    assert.ok(events.some((e) => e.type === "php-process-killed"));
  });
});

describe("WordPress preloaded beside a run (commands back to back)", { skip, timeout: 300_000 }, () => {
  let runtime: Runtime;
  let tmp: string;
  const php = async (code: string): Promise<ExecutionResult> => {
    const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
    assert.equal(result.status, "ok", JSON.stringify(result.error) + result.stdout + result.stderr);
    return result;
  };
  // Records when its process loaded WordPress; a page asked with ?wp_codebox_probe_write=V writes
  // V; once wp_codebox_count_loads is set, every load of WordPress counts itself (a site whose
  // loading writes to the database).
  const MU_PLUGIN = `<?php
$GLOBALS['wp_codebox_probe_loaded'] = microtime(true);
if (isset($_GET['wp_codebox_probe_write'])) { update_option('wp_codebox_probe', sanitize_key($_GET['wp_codebox_probe_write'])); }
if (get_option('wp_codebox_count_loads')) { update_option('wp_codebox_loads', (int) get_option('wp_codebox_loads') + 1); }
if (file_exists('/tmp/wp-codebox-boom')) { wp_codebox_undefined_function(); }
$GLOBALS['wp_codebox_probe_data'] = @file_get_contents(WP_CONTENT_DIR . '/wp-codebox-data/data.txt');
if (isset($_GET['wp_codebox_probe_later'])) { exec('php /wordpress/wp-content/wp-codebox-later.php ' . implode(' ', array_map('escapeshellarg', [DB_USER, DB_PASSWORD, DB_NAME, substr(DB_HOST, strpos(DB_HOST, ':') + 1), $GLOBALS['wpdb']->options, sanitize_key($_GET['wp_codebox_probe_later'])])) . ' > /dev/null 2>&1 &'); }`;
  // Started by a page, it outlives it: writes V in a transaction, holds it open 0.8 s, then
  // commits it with SET autocommit=1 (which moves none of MariaDB's write counters).
  const LATER = `<?php
[, $user, $password, $name, $socket, $table, $value] = $argv;
$db = new mysqli('localhost', $user, $password, $name, 0, $socket);
$db->query('SET autocommit=0');
$db->query("UPDATE $table SET option_value = '$value' WHERE option_name = 'wp_codebox_probe'");
usleep(800000);
$db->query('SET autocommit=1');`;
  // What WordPress holds in memory (options are cached as it loads) and what the database holds.
  const READ = `<?php global $wpdb; echo json_encode([get_option('wp_codebox_probe'), $wpdb->get_var("SELECT option_value FROM $wpdb->options WHERE option_name = 'wp_codebox_probe'")]);`;
  const SOCKET = "substr(DB_HOST, strpos(DB_HOST, ':') + 1)";
  const UPDATE = (v: string) => `"UPDATE {$GLOBALS['wpdb']->options} SET option_value = '${v}' WHERE option_name = 'wp_codebox_probe'"`;
  // The children preloaded beside a write have read the options before it lands (the pause), or,
  // for the open transaction, while it waits to be committed.
  const PAUSE = "usleep(200000);";
  const WRITERS: { name: string; write(v: string): string }[] = [
    { name: "update_option() through $wpdb", write: (v) => `${PAUSE} update_option('wp_codebox_probe', '${v}');` },
    { name: "a mysqli connection of the run's own", write: (v) => `${PAUSE} $db = new mysqli('localhost', DB_USER, DB_PASSWORD, DB_NAME, 0, ${SOCKET}); $db->query(${UPDATE(v)});` },
    { name: "PDO", write: (v) => `${PAUSE} $pdo = new PDO('mysql:unix_socket=' . ${SOCKET} . ';dbname=' . DB_NAME, DB_USER, DB_PASSWORD); $pdo->exec(${UPDATE(v)});` },
    { name: "a transaction left open, then committed by SET autocommit=1", write: (v) => `global $wpdb; $wpdb->query('SET autocommit=0'); $wpdb->query(${UPDATE(v)}); ${PAUSE} $wpdb->query('SET autocommit=1');` },
    { name: "a process the run forked, through a connection of its own", write: (v) => `${PAUSE} $pid = pcntl_fork(); if ($pid === 0) { $db = new mysqli('localhost', DB_USER, DB_PASSWORD, DB_NAME, 0, ${SOCKET}); $db->query(${UPDATE(v)}); posix_kill(posix_getpid(), SIGKILL); } pcntl_waitpid($pid, $status);` },
    { name: "a page of the site the run asked for", write: (v) => `${PAUSE} $r = wp_remote_get(add_query_arg('wp_codebox_probe_write', '${v}', home_url('/'))); if (wp_remote_retrieve_response_code($r) !== 200) { throw new Exception('the page answered ' . wp_remote_retrieve_response_code($r)); }` },
  ];

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "wp-codebox-native-pipeline-"));
    writeFileSync(join(tmp, "probe.php"), MU_PLUGIN);
    writeFileSync(join(tmp, "later.php"), LATER);
    for (const file of ["probe.php", "later.php"]) utimesSync(join(tmp, file), 1_600_000_000, 1_600_000_000);
    runtime = await createBackend("native", { cwd: process.cwd() }).create({
      mounts: [
        { source: join(tmp, "probe.php"), target: "/wordpress/wp-content/mu-plugins/probe.php", mode: "readonly" },
        { source: join(tmp, "later.php"), target: "/wordpress/wp-content/wp-codebox-later.php", mode: "readonly" },
      ],
    });
    await php("<?php update_option('wp_codebox_probe', 'start', true); mkdir(WP_CONTENT_DIR . '/wp-codebox-data'); file_put_contents(WP_CONTENT_DIR . '/wp-codebox-data/data.txt', 'd0');");
    // Boot made the mount point: preloads trust the files once they are two seconds old.
    await sleep(2500);
  });
  after(async () => {
    await runtime?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("a run right after another is served by a WordPress loaded while that one ran", async () => {
    // Only a request that reaches the server within 0.1 s of the last run's end counts as back to
    // back (php/server.php); a loaded machine can delay this process past that now and then, so
    // the pair is tried a few times and one preloaded run proves it.
    const tries: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await php("<?php echo 1;");
      const slow = await php("<?php usleep(300000); echo json_encode([microtime(true)]);");
      const next = await php("<?php echo json_encode([$GLOBALS['wp_codebox_probe_loaded']]);");
      const [ended] = slow.json as [number];
      const [loaded] = next.json as [number];
      if (loaded < ended) return;
      tries.push(`loaded at ${loaded}, after the run before it ended (${ended})`);
    }
    assert.fail(`no run was served by a WordPress loaded beside the one before it: ${tries.join("; ")}`);
  });

  for (const [i, writer] of WRITERS.entries()) {
    it(`a write by ${writer.name} is seen by the run right after it`, async () => {
      const value = `w${i}`;
      await php("<?php echo 1;");
      const wrote = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php ${writer.write(value)} echo 'written';`] });
      assert.equal(wrote.stdout, "written", JSON.stringify(wrote.error) + wrote.stdout + wrote.stderr);
      const read = await php(READ);
      assert.deepEqual(read.json, [value, value]);
    });
  }

  it("a write by a page the host served (wordpress.http-request) is seen by the run after it", async () => {
    await php("<?php echo 1;");
    await php("<?php usleep(200000);");
    const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/?wp_codebox_probe_write=page", "as=anonymous"] });
    assert.equal(page.status, "ok", JSON.stringify(page.error));
    assert.deepEqual((await php(READ)).json, ["page", "page"]);
  });

  it("a transaction a process started by a page holds open, committed after that command by SET autocommit=1, is seen by the runs after it (back to back, and after a pause)", async () => {
    const start = (value: string) => `<?php $r = wp_remote_get(add_query_arg('wp_codebox_probe_later', '${value}', home_url('/'))); echo wp_remote_retrieve_response_code($r);`;
    await php("<?php echo 1;");
    assert.equal((await php(start("later1"))).stdout, "200");
    // Back to back: WordPress loads beside this run while the transaction is open, then it commits.
    await php("<?php usleep(1200000);");
    assert.deepEqual((await php(READ)).json, ["later1", "later1"]);
    assert.equal((await php(start("later2"))).stdout, "200");
    // A pause: the WordPress loaded after that command read the database before the commit.
    await sleep(1200);
    assert.deepEqual((await php(READ)).json, ["later2", "later2"]);
  });

  it("a file WordPress reads as it loads (not a script), rewritten in place by a run, is read again by the run right after it", async () => {
    await php("<?php echo 1;");
    await php("<?php usleep(200000); file_put_contents(WP_CONTENT_DIR . '/wp-codebox-data/data.txt', 'd1');");
    assert.equal((await php("<?php echo $GLOBALS['wp_codebox_probe_data'];")).stdout, "d1");
  });

  it("a fatal error of WordPress loading beside a run is not that run's, and the next run loads WordPress again", async () => {
    await php("<?php echo 1;");
    // While the flag is there, every load of WordPress dies (the mu-plugin calls an undefined function).
    const ran = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php touch('/tmp/wp-codebox-boom'); usleep(400000); unlink('/tmp/wp-codebox-boom'); echo 'ran';"] });
    assert.equal(ran.status, "ok", JSON.stringify(ran.error));
    assert.equal(ran.stdout, "ran");
    assert.equal((await php("<?php echo 'next';")).stdout, "next");
  });

  it("a run that stops the processes loading WordPress beside it (SIGSTOP) does not stall the next command", async () => {
    await php("<?php echo 1;");
    await php("<?php usleep(100000); foreach (scandir('/proc') as $p) { if (!ctype_digit($p) || (int) $p === getmypid()) { continue; } $st = (string) @file_get_contents(\"/proc/$p/stat\"); $f = explode(' ', substr($st, strrpos($st, ')') + 2)); if ((int) ($f[1] ?? 0) === posix_getppid()) { posix_kill((int) $p, SIGSTOP); } } echo 'stopped';");
    const next = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname') !== false ? 'next' : 'no option';"], timeoutMs: 8000 });
    assert.equal(next.status, "ok", JSON.stringify(next.error));
    assert.equal(next.stdout, "next");
  });

  it("on a site whose loading writes to the database, every run back to back sees the database as it is", async () => {
    await php("<?php update_option('wp_codebox_count_loads', 1);");
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const got = await php(`<?php global $wpdb; echo json_encode([(int) get_option('wp_codebox_loads'), (int) $wpdb->get_var("SELECT option_value FROM $wpdb->options WHERE option_name = 'wp_codebox_loads'")]);`);
      const [held, stored] = got.json as [number, number];
      assert.equal(held, stored, `run ${i}: WordPress holds ${held} loads, the database ${stored}`);
      seen.push(held);
    }
    assert.ok(seen.every((n, i) => i === 0 || n > seen[i - 1]!), seen.join(", "));
  });
});
