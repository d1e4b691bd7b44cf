/**
 * Integration: `wordpress.wp-cli` with the real WP-CLI 2.10.0 phar from the shared test assets
 * (`$WP_CODEBOX_TEST_SHARED/wp-cli/`), on one booted sandbox shared by every test in this file.
 * Each test runs real WP-CLI commands and reads their effect back through WP-CLI or run-php.
 * Without `WP_CODEBOX_TEST_SHARED` the tests skip and say so.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandResult } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const shared = process.env.WP_CODEBOX_TEST_SHARED;
const phar = shared ? join(shared, "wp-cli", "wp-cli-2.10.0.phar") : undefined;
const skip = !phar
  ? "WP_CODEBOX_TEST_SHARED is not set: it names the shared test assets folder holding wp-cli/wp-cli-2.10.0.phar (.ci/run sets it)"
  : !existsSync(phar)
    ? `${phar} is missing: the shared test assets hold no WP-CLI 2.10.0 phar`
    : false;

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-wp-cli-real-"));
let runtime: PlaygroundRuntime;

before(async () => {
  if (skip) return;
  const plugin = join(scratch, "wpcli-fixture");
  mkdirSync(plugin);
  writeFileSync(
    join(plugin, "wpcli-fixture.php"),
    `<?php
/**
 * Plugin Name: WP-CLI fixture
 */
add_action('wpcli_fixture_event', function ($label) { update_option('wpcli_fixture_ran', 'ran:' . $label); });
`,
  );
  const files = join(scratch, "files");
  mkdirSync(files);
  writeFileSync(join(files, "probe.php"), `<?php\necho json_encode(['args' => $args, 'home' => home_url(), 'wp_cli' => defined('WP_CLI') && WP_CLI]);\n`);
  runtime = await createPlaygroundBackend().create({
    wpCliPhar: phar!,
    mounts: [
      { source: plugin, target: "/wordpress/wp-content/plugins/wpcli-fixture", mode: "readonly" },
      { source: files, target: "/workspace/files", mode: "readonly" },
    ],
  });
});

after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const wp = (command: string): Promise<CommandResult> => runtime.execute({ command: "wordpress.wp-cli", args: [`command=${command}`], timeoutMs: 120_000 });

/** Runs a command that must succeed and returns its result. */
async function ok(command: string): Promise<CommandResult> {
  const result = await wp(command);
  assert.equal(result.status, "ok", `wp ${command}: ${result.error?.message ?? ""}\n${result.stderr}`);
  return result;
}

test("the output has no #! line: --format=json is parsed into result.json", { skip }, async () => {
  const result = await ok("post list --format=json --fields=ID,post_title");
  assert.ok(!result.stdout.startsWith("#!"), result.stdout.slice(0, 80));
  assert.ok(Array.isArray(result.json), `result.json: ${JSON.stringify(result.json)}`);
  assert.deepEqual(Object.keys((result.json as object[])[0]!), ["ID", "post_title"]);
  const version = await ok("cli version");
  assert.equal(version.stdout.trim(), "WP-CLI 2.10.0");
});

test("--no-color by default: a table has no ANSI escapes; the caller's --color is kept", { skip }, async () => {
  const plain = await ok("cli info");
  assert.doesNotMatch(plain.stdout, /\u001b\[/);
  const colored = await ok("eval 'echo WP_CLI::colorize(\"%gx%n\");' --color");
  assert.match(colored.stdout, /\u001b\[32/);
});

test("wp eval and wp eval-file run PHP with WordPress loaded", { skip }, async () => {
  const evaluated = await ok(`eval 'echo json_encode(["sapi" => PHP_SAPI, "admin" => function_exists("add_settings_section"), "user" => get_current_user_id()]);' --user=admin`);
  assert.deepEqual(evaluated.json, { sapi: "cli", admin: true, user: 1 });
  const file = await ok("eval-file /workspace/files/probe.php one two");
  const json = file.json as { args: string[]; home: string; wp_cli: boolean };
  assert.deepEqual(json.args, ["one", "two"]);
  assert.equal(json.wp_cli, true);
  assert.match(json.home, /^http:\/\/127\.0\.0\.1:\d+$/);
});

test("wp option: update, get as JSON, delete", { skip }, async () => {
  await ok(`option update wpcli_structured '{"a":[1,2]}' --format=json`);
  assert.deepEqual((await ok("option get wpcli_structured --format=json")).json, { a: [1, 2] });
  // A bare JSON scalar is the result too when --format=json asked for it (not only objects).
  await ok("option update wpcli_scalar 'Site \"quoted\"'");
  const scalar = await ok("option get wpcli_scalar --format=json");
  assert.equal(scalar.stdout, '"Site \\"quoted\\""\n');
  assert.equal(scalar.json, 'Site "quoted"');
  assert.equal((await ok("option get wpcli_scalar")).json, undefined);
  await ok("option delete wpcli_structured");
  const missing = await wp("option get wpcli_structured");
  assert.equal(missing.status, "error");
  assert.equal(missing.error?.code, "wp-cli-failed");
  assert.equal(missing.exitCode, 1);
});

test("wp post and wp user: create, then list and get them as JSON", { skip }, async () => {
  const id = Number((await ok(`post create --post_title="From WP-CLI" --post_status=publish --porcelain`)).stdout.trim());
  assert.ok(id > 1, `post id ${id}`);
  const post = (await ok(`post get ${id} --format=json --fields=post_title,post_status`)).json;
  assert.deepEqual(post, { post_title: "From WP-CLI", post_status: "publish" });
  const titles = ((await ok("post list --post_type=post --format=json --fields=ID,post_title")).json as { ID: number; post_title: string }[]).map((p) => p.post_title);
  assert.ok(titles.includes("From WP-CLI"), titles.join(", "));
  await ok("user create editor1 editor1@example.com --role=editor --porcelain");
  const users = (await ok("user list --role=editor --format=json --fields=user_login,roles")).json;
  assert.deepEqual(users, [{ user_login: "editor1", roles: "editor" }]);
});

test("wp plugin and wp theme: list, activate, status as JSON", { skip }, async () => {
  await ok("plugin activate wpcli-fixture");
  const plugins = (await ok("plugin list --format=json --fields=name,status")).json as { name: string; status: string }[];
  assert.deepEqual(plugins.find((p) => p.name === "wpcli-fixture"), { name: "wpcli-fixture", status: "active" });
  const themes = (await ok("theme list --format=json --fields=name,status")).json as { name: string; status: string }[];
  assert.equal(themes.filter((t) => t.status === "active").length, 1, JSON.stringify(themes));
  const inactive = themes.find((t) => t.status === "inactive");
  if (inactive) {
    await ok(`theme activate ${inactive.name}`);
    assert.equal((await ok("option get stylesheet")).stdout.trim(), inactive.name);
  }
});

test("wp cron event run runs the plugin's hook with its arguments", { skip }, async () => {
  // Scheduled ahead: an event due now may be run first by the site's own WP-Cron spawn.
  await ok(`cron event schedule wpcli_fixture_event '+1 hour' --0=first`);
  const events = (await ok("cron event list --format=json --fields=hook")).json as { hook: string }[];
  assert.ok(events.some((e) => e.hook === "wpcli_fixture_event"), JSON.stringify(events));
  const run = await ok("cron event run wpcli_fixture_event");
  assert.match(run.stdout, /Executed a total of 1 cron event/);
  assert.equal((await ok("option get wpcli_fixture_ran")).stdout.trim(), "ran:first");
});

test("wp rewrite: structure and flush, then the rules are listed", { skip }, async () => {
  // `rewrite structure` sets the option, then starts a child `wp rewrite flush`, which PHP-wasm cannot.
  const structure = await wp(`rewrite structure '/%year%/%postname%/'`);
  assert.equal(structure.status, "error");
  assert.equal(structure.exitCode, 127);
  assert.match(structure.stdout, /Success: Rewrite structure set/);
  assert.match(structure.error!.message, /cannot start processes.*rewrite flush/);
  assert.equal(structure.error!.data?.reason, "process-unavailable");
  assert.equal((await ok("option get permalink_structure")).stdout.trim(), "/%year%/%postname%/");
  await ok("rewrite flush");
  const rules = (await ok("rewrite list --format=json")).json as { match: string; query: string }[];
  assert.ok(rules.some((r) => r.query.includes("year=$matches[1]")), `${rules.length} rules`);
});

test("wp search-replace changes stored content and reports the count", { skip }, async () => {
  await ok(`post create --post_title="Needle post" --post_content="find the NEEDLE-123 here" --post_status=publish`);
  const dry = await ok("search-replace NEEDLE-123 THREAD-456 wp_posts --dry-run --format=count");
  assert.equal(dry.stdout.trim(), "1");
  await ok("search-replace NEEDLE-123 THREAD-456 wp_posts");
  const content = await ok(`eval 'global $wpdb; echo json_encode($wpdb->get_col("SELECT post_content FROM $wpdb->posts WHERE post_content LIKE \\"%THREAD-456%\\""));'`);
  assert.deepEqual(content.json, ["find the THREAD-456 here"]);
});

test("wp export writes a WXR file in the sandbox; wp import says it needs the WordPress Importer plugin", { skip }, async () => {
  const exported = await ok("export --dir=/tmp --filename_format=site.xml --post_type=post");
  assert.match(exported.stdout, /Writing to file \/tmp\/site\.xml/);
  const wxr = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo file_get_contents('/tmp/site.xml');"] });
  assert.match(wxr.stdout, /<rss[^>]*>/);
  assert.match(wxr.stdout, /From WP-CLI/);
  // `wp import` drives the WordPress Importer plugin, which is not part of WordPress.
  const imported = await wp("import /tmp/site.xml --authors=skip");
  assert.equal(imported.status, "error");
  assert.equal(imported.error?.code, "wp-cli-failed");
  assert.match(imported.error!.message, /WordPress Importer/);
});

test("commands that need a MySQL client are refused before WP-CLI runs, with the reason", { skip }, async () => {
  for (const command of ["db query 'SELECT 1'", "db export out.sql", "wp db import dump.sql"]) {
    await assert.rejects(wp(command), (e: Error & { code?: string }) => e.code === "wp-cli-unsupported" && /MySQL/.test(e.message), command);
  }
  // `db tables` reads through $wpdb, which the SQLite integration answers.
  assert.match((await ok("db tables")).stdout, /wp_posts/);
});
