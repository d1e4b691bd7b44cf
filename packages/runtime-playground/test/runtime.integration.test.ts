/**
 * Integration: a real WordPress booted once for this file. The rules under test: a PHP fatal after
 * WordPress loads is `php-fatal` with PHP's message, file and line; an endless loop ends as
 * `timed-out` near its deadline and the runtime keeps working; huge output is capped with the
 * total byte count recorded; activating a plugin that fatals leaves it inactive and the runtime
 * keeps serving; a plugin's custom REST route answers over HTTP as admin and anonymously; the
 * bundle of these runs verifies and tampering is detected. Fixtures are in test/fixtures/plugins.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, rmSync, symlinkSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyArtifactBundle, writeArtifactBundle } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/plugins/", import.meta.url));
let runtime: PlaygroundRuntime;
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-test-"));

before(async () => {
  runtime = await createPlaygroundBackend().create({
    plugins: [join(fixtures, "rest-echo")],
    mounts: [{ source: join(fixtures, "fatal-on-activate"), target: "/wordpress/wp-content/plugins/fatal-on-activate", mode: "readonly" }],
  });
});

after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const runPhp = (code: string, extra: string[] = [], timeoutMs?: number) =>
  runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, ...extra], timeoutMs });

test("run-php loads WordPress and prints the bundled version", async () => {
  const result = await runPhp("<?php echo get_bloginfo('version');");
  assert.equal(result.status, "ok");
  assert.equal(result.stdout, "6.5.5");
  assert.equal(runtime.info().wordpressVersion, "6.5.5");
});

test("run-php acts as the administrator by default, found in the same request before any lookup, and later from the cache", async () => {
  // This file's first commands never resolved an actor: the wrapper finds the administrator itself.
  const first = await runPhp("<?php echo json_encode([wp_get_current_user()->user_login, current_user_can('manage_options')]);");
  assert.deepEqual(first.json, ["admin", true]);
  // An HTTP request resolves (and caches) the administrator's id; run-php then switches to that id.
  const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-admin/index.php", "as=admin"] });
  assert.equal(page.status, "ok");
  const cached = await runPhp("<?php echo wp_get_current_user()->user_login;");
  assert.equal(cached.stdout, "admin");
  const anonymous = await runPhp("<?php echo get_current_user_id();", ["as=anonymous"]);
  assert.equal(anonymous.stdout, "0");
});

test("a fatal after WordPress loads is php-fatal with message, file and line", async () => {
  const result = await runPhp("<?php\nundefined_function_xyz();");
  assert.equal(result.status, "error");
  assert.equal(result.error?.code, "php-fatal");
  assert.match(result.error!.message, /undefined_function_xyz/);
  assert.equal(result.error?.data?.line, 2);
  assert.match(String(result.error?.data?.file), /code\.php$/);
});

test("bootstrap=none runs bare PHP without WordPress", async () => {
  const result = await runPhp("<?php echo json_encode(['wp' => function_exists('get_bloginfo'), 'v' => PHP_MAJOR_VERSION]);", ["bootstrap=none"]);
  assert.equal(result.status, "ok");
  assert.deepEqual(result.json, { wp: false, v: 8 });
});

test("an infinite loop times out near the deadline and the runtime keeps working", async () => {
  const result = await runPhp("<?php echo 'before-loop'; error_log('err-before'); while (true) {}", [], 3000);
  assert.equal(result.status, "timed-out");
  assert.equal(result.error?.code, "timeout");
  // The deadline that stopped it is the one asked for (an event, not a wall-clock measurement).
  assert.equal((result.error?.data as { timeoutMs?: number } | undefined)?.timeoutMs, 3000);
  assert.match(result.stdout, /before-loop/, "output printed before the deadline is kept");
  const next = await runPhp("<?php echo 'alive';");
  assert.equal(next.status, "ok");
  assert.equal(next.stdout, "alive");
});

test("WordPress core is copy-on-write: writes succeed in this sandbox (copy-on-write.integration.test.ts proves the cache is untouched)", async () => {
  const result = await runPhp(
    "<?php echo json_encode([file_put_contents('/wordpress/wp-includes/x.php', 'x'), mkdir('/wordpress/new'), file_put_contents('/wordpress/.htaccess', '# rules'), file_put_contents('/wordpress/wp-content/ok.txt', 'ok')]);",
  );
  assert.deepEqual(result.json, [1, true, 7, 2]);
  const again = await runPhp("<?php echo get_bloginfo('version');");
  assert.equal(again.stdout, "6.5.5");
});

test("huge output is capped with the total byte count recorded", async () => {
  const result = await runPhp("<?php echo str_repeat('x', 50 * 1024 * 1024);");
  assert.equal(result.status, "ok");
  assert.equal(result.stdoutBytes, 50 * 1024 * 1024);
  assert.equal(result.truncated?.stdout, true);
  assert.equal(result.stdout.length, 10 * 1024 * 1024);
});

test("a cap that falls inside a multi-byte character cuts before it: no U+FFFD, true byte count kept", async () => {
  const cap = 10 * 1024 * 1024;
  // Two of the emoji's four bytes fit under the cap.
  const result = await runPhp(`<?php echo str_repeat('x', ${cap - 2}) . "\u{1F600}" . 'tail';`);
  assert.equal(result.status, "ok");
  assert.equal(result.stdoutBytes, cap - 2 + 4 + 4);
  assert.equal(result.truncated?.stdout, true);
  assert.equal(result.stdout.length, cap - 2);
  assert.ok(!result.stdout.includes("\uFFFD"), "the cut character does not decode to U+FFFD");
});

test("run-php defines STDIN, STDOUT and STDERR as the PHP command line does; writes land in stdout and stderr", async () => {
  const result = await runPhp(
    "<?php fwrite(STDERR, \"to STDERR\\n\"); fwrite(STDOUT, \"to STDOUT\\n\"); fwrite(fopen('php://stderr', 'w'), \"to php://stderr\\n\"); echo json_encode([is_resource(STDIN), is_resource(STDOUT), is_resource(STDERR)]);",
  );
  assert.equal(result.status, "ok", JSON.stringify(result.error));
  assert.match(result.stderr, /^to STDERR\n/m);
  assert.match(result.stderr, /^to php:\/\/stderr\n/m);
  assert.match(result.stdout, /^to STDOUT\n/m);
  assert.match(result.stdout, /\[true,true,true\]$/);
  const bare = await runPhp("<?php fwrite(STDERR, 'bare'); echo defined('STDIN') ? 'ok' : 'missing';", ["bootstrap=none"]);
  assert.equal(bare.status, "ok", JSON.stringify(bare.error));
  assert.equal(bare.stdout, "ok");
  assert.equal(bare.stderr, "bare");
});

test("activating a plugin that fatals leaves it inactive and the runtime keeps serving", async () => {
  // WordPress includes the plugin file during activate_plugin(); its fatal ends that PHP request,
  // which the result reports with the plugin's file and line. Nothing is left half-activated.
  const result = await runPhp("<?php $r = activate_plugin('fatal-on-activate/fatal-on-activate.php'); var_dump($r);");
  assert.equal(result.status, "error");
  assert.equal(result.error?.code, "php-fatal");
  assert.match(String(result.error?.data?.file), /fatal-on-activate\.php$/);
  assert.match(result.error!.message, /corpus_function_that_does_not_exist/);
  const state = await runPhp("<?php echo json_encode(['active' => is_plugin_active('fatal-on-activate/fatal-on-activate.php'), 'list' => get_option('active_plugins')]);");
  assert.equal(state.status, "ok");
  assert.deepEqual(state.json, { active: false, list: ["rest-echo/rest-echo.php"] });
  // Catching the Error keeps the request alive and still leaves the plugin inactive.
  const caught = await runPhp("<?php try { activate_plugin('fatal-on-activate/fatal-on-activate.php'); echo 'no'; } catch (Error $e) { echo 'caught'; } echo is_plugin_active('fatal-on-activate/fatal-on-activate.php') ? ' active' : ' inactive';");
  assert.equal(caught.status, "ok");
  assert.equal(caught.stdout, "caught inactive");
  const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/", "as=anonymous"] });
  assert.equal(page.status, "ok");
  assert.match(page.stdout, /<html/i);
});

test("custom REST route over HTTP (pretty and rest_route) as admin and anonymously", async () => {
  for (const path of ["/wp-json/corpus/v1/echo?msg=hi", "/?rest_route=/corpus/v1/echo&msg=hi"]) {
    const admin = await runtime.execute({ command: "wordpress.http-request", args: [`path=${path}`, "as=admin"] });
    assert.equal(admin.status, "ok", admin.stdout);
    assert.deepEqual((admin.json as { body: unknown }).body, { msg: "hi", user: 1 });
    assert.equal((admin.json as { status: number }).status, 200);
    const anon = await runtime.execute({ command: "wordpress.http-request", args: [`path=${path}`, "as=anonymous"] });
    assert.deepEqual((anon.json as { body: unknown }).body, { msg: "hi", user: 0 });
  }
});

test("rest-request dispatches in-process", async () => {
  const result = await runtime.execute({ command: "wordpress.rest-request", args: ["route=/corpus/v1/echo", 'params-json={"msg":"yo"}', "as=anonymous"] });
  assert.equal(result.status, "ok");
  assert.deepEqual((result.json as { data: unknown }).data, { msg: "yo", user: 0 });
  const missing = await runtime.execute({ command: "wordpress.rest-request", args: ["route=/nope/v1/missing"] });
  assert.equal(missing.status, "error");
  assert.equal(missing.error?.code, "http-error");
});

test("commands sent at once run one at a time, each with its own program and its own deadline", async () => {
  // run-php and rest-request each write their program to one scratch file before running it: two
  // at once ran the second one's program twice.
  const sent = [
    { command: "wordpress.run-php", args: ["code=<?php echo 'first';"], want: (r: { stdout: string }) => r.stdout === "first" },
    { command: "wordpress.rest-request", args: ["route=/corpus/v1/echo", 'params-json={"msg":"second"}'], want: (r: { json?: unknown }) => (r.json as { data?: { msg?: string } }).data?.msg === "second" },
    { command: "wordpress.run-php", args: ["code=<?php echo 'third';"], want: (r: { stdout: string }) => r.stdout === "third" },
    { command: "wordpress.rest-request", args: ["route=/corpus/v1/echo", 'params-json={"msg":"fourth"}'], want: (r: { json?: unknown }) => (r.json as { data?: { msg?: string } }).data?.msg === "fourth" },
    { command: "wordpress.run-php", args: ["code=<?php echo 'fifth';", "bootstrap=none"], want: (r: { stdout: string }) => r.stdout === "fifth" },
  ];
  const results = await Promise.all(sent.map((c) => runtime.execute({ command: c.command, args: c.args })));
  results.forEach((result, i) => {
    assert.equal(result.status, "ok", `${sent[i]!.command} #${i}: ${result.error?.message}`);
    assert.ok(sent[i]!.want(result), `${sent[i]!.command} #${i} got another command's answer: ${result.stdout}`);
  });
  const started = results.map((r) => r.startedAt);
  assert.deepEqual([...started].sort(), started, "in the order sent");
  // The second waits 3 s behind the first; its 2 s deadline starts when it starts.
  const [slow, queued] = await Promise.all([runPhp("<?php sleep(3); echo 'slept';", ["bootstrap=none"]), runPhp("<?php echo 'waited';", ["bootstrap=none"], 2000)]);
  assert.equal(slow.stdout, "slept");
  assert.equal(queued.status, "ok", queued.error?.message);
  assert.equal(queued.stdout, "waited");
});

test("inspect-mounted-inputs lists the plugin and the read-only mount", async () => {
  const result = await runtime.execute({ command: "inspect-mounted-inputs", args: [] });
  const targets = (result.json as { mounts: { target: string; mode: string }[] }).mounts.map((m) => m.target).sort();
  assert.deepEqual(targets, ["/wordpress/wp-content/plugins/fatal-on-activate", "/wordpress/wp-content/plugins/rest-echo"]);
});

test("the bundle of these runs verifies, and tampering is detected", async () => {
  const dir = join(scratch, "bundle");
  const written = await writeArtifactBundle(dir, await runtime.collectArtifacts());
  assert.equal(written.valid, true);
  assert.deepEqual((await verifyArtifactBundle(dir)).violations, []);
  const commands = join(dir, "files", "commands.jsonl");
  const lines = readFileSync(commands, "utf8").trim().split("\n");
  assert.ok(lines.some((l) => JSON.parse(l).status === "timed-out"), "the timed-out command is recorded");
  // One changed byte.
  const original = readFileSync(commands);
  const changed = Buffer.from(original);
  changed[10] = changed[10] === 0x41 ? 0x42 : 0x41;
  writeFileSync(commands, changed);
  let report = await verifyArtifactBundle(dir);
  assert.equal(report.valid, false);
  assert.ok(report.violations.some((v) => v.path === "files/commands.jsonl"));
  writeFileSync(commands, original);
  // An unlisted file.
  writeFileSync(join(dir, "files", "extra.txt"), "x");
  report = await verifyArtifactBundle(dir);
  assert.ok(report.violations.some((v) => v.path === "files/extra.txt"));
  rmSync(join(dir, "files", "extra.txt"));
  // A file replaced by a symlink.
  rmSync(join(dir, "files", "events.jsonl"));
  symlinkSync("/etc/hostname", join(dir, "files", "events.jsonl"));
  report = await verifyArtifactBundle(dir);
  assert.ok(report.violations.some((v) => v.path === "files/events.jsonl"));
  assert.ok(readdirSync(dir).includes("manifest.json"));
});
