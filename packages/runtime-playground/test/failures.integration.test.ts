/**
 * Integration: failures are reported as failures. A PHP fatal inside an
 * HTTP request (REST route, shortcode on a page, admin page, admin-ajax) or a browser page load is
 * `php-fatal` with message, file and line; unbounded recursion is `php-fatal`, never a bare exit
 * code; database errors are listed per command in `result.dbErrors` and counted in review.json.
 * One real WordPress booted for the whole file, plus one boot that fails (a must-use plugin that
 * throws while WordPress installs) to check the boot-failed message carries PHP's own error.
 */
import { after, before, describe, it, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyArtifactBundle, writeArtifactBundle, type ExecutionResult } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, findChromium, findWordPressBuild, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";
import { extractZip } from "../src/site/zip.js";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/plugins/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-failures-"));
let runtime: PlaygroundRuntime;
let boomPage = "";

before(async () => {
  runtime = await createPlaygroundBackend().create({
    plugins: [join(fixtures, "fatal-route"), join(fixtures, "fatal-admin")],
    policy: { commands: ["wordpress.run-php", "wordpress.http-request", "wordpress.rest-request", "wordpress.browser-actions"] },
  });
  const page = await php("<?php $id = wp_insert_post(['post_title' => 'Boom', 'post_name' => 'boom', 'post_content' => '[corpus_boom]', 'post_status' => 'publish', 'post_type' => 'page']); echo wp_make_link_relative(get_permalink($id));");
  boomPage = page.stdout;
});

after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

async function php(code: string): Promise<ExecutionResult> {
  return runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
}
const http = (...args: string[]) => runtime.execute({ command: "wordpress.http-request", args });

function assertFatal(result: ExecutionResult, message: RegExp, file: RegExp, line: number | undefined, status?: number): void {
  assert.equal(result.status, "error", JSON.stringify(result.error));
  // PHP's exit code for a script; 1 for an HTTP request that failed.
  assert.equal(result.exitCode, result.command === "wordpress.http-request" ? 1 : 255);
  assert.equal(result.error?.code, "php-fatal", JSON.stringify(result.error));
  assert.match(result.error!.message, message);
  assert.match(String(result.error?.data?.file), file);
  if (line !== undefined) assert.equal(result.error?.data?.line, line);
  if (status !== undefined) {
    assert.equal(result.error?.data?.status, status);
    assert.equal((result.json as { status: number }).status, status);
  }
}

test("a fatal in a REST route is php-fatal with file, line and HTTP 500, not ok with a 200 body", async () => {
  assertFatal(await http("path=/wp-json/corpus/v1/boom"), /corpus_function_that_is_not_defined/, /fatal-route\.php$/, 12, 500);
});

test("a fatal in a shortcode on a page is php-fatal with HTTP 500", async () => {
  assert.match(boomPage, /^\/boom\/?$/);
  assertFatal(await http(`path=${boomPage}`), /corpus_other_missing_function/, /fatal-route\.php$/, 17, 500);
});

test("a fatal in admin-ajax is php-fatal with HTTP 500", async () => {
  assertFatal(await http("method=POST", "path=/wp-admin/admin-ajax.php", "body=action=fatal_admin_boom"), /fatal_admin_missing_ajax_function/, /fatal-admin\.php$/, 16, 500);
});

test("a fatal in an admin page after its output began is php-fatal; the status is what PHP could still send", async () => {
  const result = await http("path=/wp-admin/tools.php?page=fatal-admin");
  assertFatal(result, /fatal_admin_missing_page_function/, /fatal-admin\.php$/, 12);
  assert.match(result.stdout, /<h1>Fatal Admin<\/h1>/, "the page had started, so its status line was already sent");
  assert.equal(result.error?.data?.status, (result.json as { status: number }).status);
});

test("rest-request (in-process) to a fatal route is php-fatal too", async () => {
  const result = await runtime.execute({ command: "wordpress.rest-request", args: ["route=/corpus/v1/boom"] });
  assertFatal(result, /corpus_function_that_is_not_defined/, /fatal-route\.php$/, 12);
});

test("unbounded recursion in run-php is php-fatal with PHP's own message and file:line", async () => {
  const result = await php("<?php\nfunction f($n){ return f($n+1); }\nf(0);");
  assertFatal(result, /Allowed memory size of \d+ bytes exhausted/, /code\.php$/, 2);
  assert.equal((await php("<?php echo 'alive';")).stdout, "alive");
});

test("unbounded recursion in an HTTP request is php-fatal with HTTP 500 (logged before PHP ran out of memory)", async () => {
  assertFatal(await http("method=POST", "path=/wp-admin/admin-ajax.php", "body=action=fatal_admin_recurse"), /Allowed memory size/, /fatal-admin\.php$/, 19, 500);
});

test("recursion through PHP's C functions ends at PHP's own stack limit: php-fatal with file, line and HTTP 500, as on a real PHP 8.3 server", async () => {
  // Before: it ran past php-wasm's 1 MiB stack into PHP's globals and trapped, or hung until the
  // site request limit. Repeated, because every overflow after the first used to hang.
  const limit = /^Uncaught Error: Maximum call stack size of \d+ bytes \(zend\.max_allowed_stack_size - zend\.reserved_stack_size\) reached\. Infinite recursion\?/;
  for (let round = 0; round < 2; round++) {
    const viaHttp = await http("method=POST", "path=/wp-admin/admin-ajax.php", "body=action=fatal_admin_recurse_native");
    assertFatal(viaHttp, /Maximum call stack size of \d+ bytes/, /fatal-admin\.php$/, 25, 500);
    assert.match(String(viaHttp.error?.data?.message), limit);
    const viaRun = await php("<?php\nfunction g($a){ return array_map('g', [$a]); }\ng(1);");
    assertFatal(viaRun, /Infinite recursion\?/, /code\.php$/, 2);
  }
  assert.equal((await http("path=/wp-json/")).status, "ok");
  assert.equal((await php("<?php echo 'alive';")).stdout, "alive");
  const replaced = (await runtime.collectArtifacts()).events.filter((e) => e.type === "php-worker-replaced");
  assert.deepEqual(replaced, [], "a PHP error ends a request; the worker stays");
});

test("C recursion that PHP checks only now and then (array_walk_recursive over a 20,000-deep array) gets PHP's own error, not a trap elsewhere", async () => {
  // array_walk_recursive recurses without checking; only its callbacks are checked. On php-wasm's
  // own 1 MiB stack it ran over PHP's globals first: "null function or function signature mismatch".
  const result = await php("<?php echo 'built '; $a = [1]; for ($i = 0; $i < 20000; $i++) $a = [$a];\narray_walk_recursive($a, function ($v) {});");
  assert.equal(result.error?.code, "php-fatal", JSON.stringify(result.error));
  assert.match(result.error!.message, /^PHP fatal error: Uncaught Error: Maximum call stack size of \d+ bytes \(zend\.max_allowed_stack_size - zend\.reserved_stack_size\) reached\. Infinite recursion\? \(\/internal\/wp-codebox\/code\/code\.php:2\)$/);
  assert.match(result.stdout, /^built /);
  assert.equal((await php("<?php echo 'alive';")).stdout, "alive");
});

test("a Fiber (php-wasm's builds cannot switch stacks) is php-fatal saying so, not a recursion, and the next command works", async () => {
  const result = await php("<?php echo 'before '; $f = new Fiber(function () { return 5; }); $f->start(); echo $f->getReturn();");
  assert.equal(result.error?.code, "php-fatal", JSON.stringify(result.error));
  assert.match(result.error!.message, /^PHP fatal error: php-wasm aborted PHP \(missing function: [^)]*\): the script used something this PHP build does not have, such as Fibers/);
  assert.doesNotMatch(result.error!.message, /recursion/);
  assert.equal(result.stdout, "before ");
  assert.equal((await php("<?php echo 'alive';")).stdout, "alive");
});

test("a query the SQLite translation rejects leaves the run ok and is listed in result.dbErrors and review.json", async () => {
  const result = await php(`<?php global $wpdb; var_dump($wpdb->get_var("SELECT GROUP_CONCAT(post_title SEPARATOR '|') FROM wp_posts"));`);
  assert.equal(result.status, "ok");
  assert.equal(result.dbErrors?.length, 1);
  assert.equal(result.dbErrors![0]!.query, "SELECT GROUP_CONCAT(post_title SEPARATOR '|') FROM wp_posts");
  assert.match(result.dbErrors![0]!.message, /SEPARATOR/);
  assert.doesNotMatch(result.dbErrors![0]!.message, /<div|&nbsp;/, "the message is plain text");
  const clean = await php("<?php global $wpdb; echo $wpdb->get_var('SELECT COUNT(*) FROM wp_posts') > 0 ? 'rows' : 'none';");
  assert.equal(clean.dbErrors, undefined, "a command without database errors has no dbErrors");
  // Database errors of an HTTP request belong to that command.
  await php(`<?php file_put_contents(WP_CONTENT_DIR . '/bad-query.php', '<?php require "/wordpress/wp-load.php"; global $wpdb; $wpdb->query("SELEKT nonsense"); echo "done";');`);
  const viaHttp = await http("path=/wp-content/bad-query.php");
  assert.equal(viaHttp.status, "ok");
  assert.equal(viaHttp.dbErrors?.length, 1);
  assert.equal(viaHttp.dbErrors![0]!.query, "SELEKT nonsense");

  const bundle = await writeArtifactBundle(join(scratch, "bundle"), await runtime.collectArtifacts());
  const review = JSON.parse(readFileSync(join(bundle.directory, "files/review.json"), "utf8")) as { dbErrors: number; commands: { id: string; dbErrors?: number }[] };
  assert.equal(review.dbErrors, 2);
  assert.equal(review.commands.find((c) => c.id === result.id)?.dbErrors, 1);
  assert.equal(review.commands.find((c) => c.id === clean.id)?.dbErrors, undefined);
  assert.equal((await verifyArtifactBundle(bundle.directory)).valid, true);
});

test("a fatal in a browser page load is recorded against the step that caused it", { skip: findChromium() ? false : "no Chromium on this machine" }, async () => {
  const steps = [
    { kind: "navigate", url: "/" },
    { kind: "navigate", url: boomPage },
    { kind: "expect", selector: "body", state: "visible" },
  ];
  const result = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${JSON.stringify(steps)}`] });
  assert.equal(result.status, "error");
  assert.equal(result.error?.code, "php-fatal", result.error?.message);
  assert.match(result.error!.message, /step 1 \(navigate\).*corpus_other_missing_function.*fatal-route\.php:17/);
  const summary = result.json as { steps: { status: string; error?: { code: string } }[] };
  assert.deepEqual(summary.steps.map((s) => s.status), ["ok", "failed", "skipped"]);
  const records = (await runtime.collectArtifacts()).files.find((f) => f.path === "files/browser/steps.jsonl")!;
  const step1 = String(records.content).trim().split("\n").map((l) => JSON.parse(l) as { index: number; phpFatals?: { url: string; status: number; line: number }[] }).find((r) => r.index === 1)!;
  assert.equal(step1.phpFatals?.[0]?.status, 500);
  assert.equal(step1.phpFatals?.[0]?.line, 17);
});

test("a boot that fails in PHP says what PHP said (message, file:line), not php-wasm's empty Stdout/Stderr template", async () => {
  // Your own WordPress with a must-use plugin that throws: the installer's first WordPress load fails.
  const wordpress = join(scratch, "wordpress-boom");
  extractZip(findWordPressBuild().zipPath, wordpress);
  mkdirSync(join(wordpress, "wp-content", "mu-plugins"), { recursive: true });
  writeFileSync(join(wordpress, "wp-content", "mu-plugins", "boom.php"), "<?php\nthrow new RuntimeException('boom while booting');\n");
  await assert.rejects(createPlaygroundBackend({ cacheDir: join(scratch, "cache") }).create({ wordpress: { path: wordpress }, extensions: [] }), (error: Error & { code?: string }) => {
    assert.equal(error.code, "boot-failed");
    assert.match(error.message, /PHP exited with code 255: Uncaught RuntimeException: boom while booting \(\/wordpress\/wp-content\/mu-plugins\/boom\.php:2\)/);
    assert.doesNotMatch(error.message, /=== Std(out|err) ===/);
    return true;
  });
});

// php-wasm's other PHP builds have no stack check of their own. PHP's C stack has 32 MiB of its own
// (php-worker.ts, moveCStack), so the worker's native stack runs out first, before the C stack
// could reach PHP's globals.
for (const version of ["8.2", "8.4"]) {
  describe(`PHP ${version} (no stack limit of its own): the recursion ends the engine cleanly, it is replaced, nothing queued is lost`, () => {
    let old: PlaygroundRuntime;
    before(async () => {
      old = await createPlaygroundBackend().create({ php: version, extensions: [], plugins: [join(fixtures, "fatal-admin")], policy: { commands: ["wordpress.run-php", "wordpress.http-request"] } });
    });
    after(async () => {
      await old?.dispose();
    });
    // Never a trap somewhere else ("memory access out of bounds", "null function …"): that
    // came after the overflow had overwritten PHP's globals, and sometimes it spun instead.
    const overflow = /^PHP fatal error: Maximum call stack size exceeded: unbounded recursion overflowed the PHP engine's WebAssembly stack \(PHP could not report the line\)/;
    const replacedCount = async () => (await old.collectArtifacts()).events.filter((e) => e.type === "php-worker-replaced" && e.data?.reason === "engine-crashed").length;

    it("a run-php that recurses through array_map is php-fatal with what it printed; PHP work sent to the worker meanwhile runs on its replacement", async () => {
      const crash = old.execute({ command: "wordpress.run-php", args: ["code=<?php echo 'before the crash'; function g($a){ return array_map('g', [$a]); } g(1);"] });
      // An observation runs beside commands: its PHP was queued in the worker that crashed.
      const observed = old.observe({ type: "wordpress-state" });
      const [crashed, state] = await Promise.all([crash, observed]);
      assert.equal(crashed.status, "error", JSON.stringify(crashed.error));
      assert.equal(crashed.error?.code, "php-fatal");
      assert.match(crashed.error!.message, overflow);
      assert.equal(crashed.stdout, "before the crash", "what PHP printed before its engine died");
      assert.equal(state.type, "wordpress-state");
      const next = await old.execute({ command: "wordpress.run-php", args: ["code=<?php echo 'next ', PHP_MAJOR_VERSION, '.', PHP_MINOR_VERSION;"] });
      assert.equal(next.stdout, `next ${version}`, next.error?.message);
      assert.equal(await replacedCount(), 1);
    });

    it("usort and __toString recursion end the same way", async () => {
      for (const code of ["function c($a, $b) { $x = [2, 1]; usort($x, 'c'); return 0; } $x = [2, 1]; usort($x, 'c');", "class A { function __toString(): string { return (string) new A; } } echo (string) new A;"]) {
        const result = await old.execute({ command: "wordpress.run-php", args: [`code=<?php ${code}`] });
        assert.equal(result.error?.code, "php-fatal", code);
        assert.match(result.error!.message, overflow, code);
      }
      assert.equal(await replacedCount(), 3);
    });

    it("an HTTP request that recurses is php-fatal with HTTP 500, and the site keeps serving", async () => {
      const result = await old.execute({ command: "wordpress.http-request", args: ["method=POST", "path=/wp-admin/admin-ajax.php", "body=action=fatal_admin_recurse_native"] });
      assert.equal(result.error?.code, "php-fatal", result.error?.message);
      assert.match(result.error!.message, overflow);
      assert.equal(result.error?.data?.status, 500);
      assert.equal((await old.execute({ command: "wordpress.http-request", args: ["path=/wp-json/"] })).status, "ok");
      assert.equal(await replacedCount(), 4);
    });
  });
}
