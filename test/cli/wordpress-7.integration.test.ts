/**
 * Integration on WordPress 7.0.4, served by the loopback release mirror (test/support): a site like
 * a developer's test site (WP_DEBUG on, nothing printed into pages, SCRIPT_DEBUG, --define),
 * run-php with WP-CLI's admin includes, plugins activated as on the Plugins screen, and plugin
 * requirements refused before boot (`run`) or reported (`check`), and the block-editor example
 * script. One sandbox is shared by the
 * API-level tests; the CLI tests boot their own. Without WP_CODEBOX_TEST_SHARED the 7.0.4 tests skip.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle, type ExecutionResult, type Runtime } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { prepareRun } from "@wp-codebox/cli";
import { prepareServe } from "../../packages/cli/src/commands/serve.js";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";
import { WORDPRESS_MIRROR_SKIP, serveWordPressMirror, sharedWordPressReleasesDir, type WordPressMirror } from "../support/wordpress-mirror.js";

const skip = sharedWordPressReleasesDir() ? false : WORDPRESS_MIRROR_SKIP;
const fixture = (name: string) => join(REPO_ROOT, "test/fixtures/plugins", name);
let tmp: string;
let mirror: WordPressMirror | undefined;
// The default cache (shared with the other integration tests), and the loopback mirror.
const env = (): NodeJS.ProcessEnv => ({ WP_CODEBOX_CACHE_DIR: undefined, WP_CODEBOX_WORDPRESS_MIRROR: mirror?.url }) as unknown as NodeJS.ProcessEnv;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-wp7-"));
  if (!skip) mirror = await serveWordPressMirror();
});
after(async () => {
  await mirror?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("a 7.0.4 sandbox like a developer's test site (one shared sandbox)", { skip, timeout: 600_000 }, () => {
  let runtime: Runtime;
  const php = async (code: string): Promise<ExecutionResult> => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });

  before(async () => {
    runtime = await createPlaygroundBackend({ wordpressMirror: mirror!.url }).create({
      wordpress: { version: "7.0.4" },
      plugins: [fixture("activation-admin-api")],
      // SCRIPT_DEBUG is off by default; a define turns it on like any other constant.
      defines: { MY_PLUGIN_FLAG: "on", WP_ENVIRONMENT_TYPE: "local", MY_LIMIT: 3, SCRIPT_DEBUG: true },
    });
  });
  after(async () => runtime?.dispose());

  it("run-php loads what WP-CLI loads: the admin includes (add_settings_section, WP_Filesystem) exist", async () => {
    assert.equal(runtime.info().wordpressVersion, "7.0.4");
    const result = await php(`echo json_encode([get_bloginfo('version'), function_exists('add_settings_section'), function_exists('WP_Filesystem'), WP_Filesystem(), function_exists('get_plugin_data')]);`);
    assert.equal(result.status, "ok", result.stderr);
    assert.deepEqual(result.json, ["7.0.4", true, true, true, true]);
  });

  it("WP_DEBUG is on, WP_DEBUG_DISPLAY off, and the --define constants (SCRIPT_DEBUG too) are set and recorded", async () => {
    const result = await php("echo json_encode([WP_DEBUG, WP_DEBUG_DISPLAY, SCRIPT_DEBUG, MY_PLUGIN_FLAG, MY_LIMIT, wp_get_environment_type()]);");
    assert.deepEqual(result.json, [true, false, true, "on", 3, "local"], result.stderr);
    assert.deepEqual(runtime.info().defines, { MY_PLUGIN_FLAG: "on", WP_ENVIRONMENT_TYPE: "local", MY_LIMIT: 3, SCRIPT_DEBUG: true });
    assert.deepEqual((await runtime.collectArtifacts()).info.defines, runtime.info().defines);
  });

  it("wp_trigger_error() and _doing_it_wrong() are captured on stderr with core's own file:line", async () => {
    const result = await php("wp_trigger_error('', 'wp7-trigger-captured'); _doing_it_wrong('wp7_probe', 'wp7-doing-it-wrong', '7.0'); echo 'done';");
    assert.equal(result.status, "ok", result.stderr);
    assert.equal(result.stdout, "done");
    assert.match(result.stderr, /Notice: wp7-trigger-captured in \/wordpress\/wp-includes\/functions\.php on line (\d+)/);
    // The release build is not minified: the line is the real one, not line 2 or 3.
    const line = Number(/wp7-trigger-captured in \S+ on line (\d+)/.exec(result.stderr)![1]);
    assert.ok(line > 100, result.stderr);
    assert.match(result.stderr, /wp7_probe.*wp7-doing-it-wrong/s);
  });

  it("a plugin whose activation hook calls got_mod_rewrite() and WP_Filesystem() is activated at boot, as the administrator", async () => {
    const result = await php("echo json_encode([get_option('activation_admin_api'), is_plugin_active('activation-admin-api/activation-admin-api.php')]);");
    assert.deepEqual(result.json, [{ got_mod_rewrite: false, filesystem: true, user_can: true }, true], result.stderr);
  });

  it("a notice raised while serving a page is not printed into the page", async () => {
    const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/?activation_admin_api_notice=1"] });
    assert.equal(page.status, "ok", page.stderr);
    assert.equal((page.json as { status: number }).status, 200);
    assert.match(page.stdout, /<\/html>/);
    assert.doesNotMatch(page.stdout, /page-notice-kept-out-of-html|Notice:/);
    // The notice did fire during that request.
    assert.equal((await php("echo get_option('activation_admin_api_notice_fired');")).stdout, "yes");
  });

  it("the block-editor example publishes a post and shows it on the front end (as on the bundled release)", { timeout: 300_000 }, async () => {
    const script = readFileSync(join(REPO_ROOT, "examples/browser/block-editor-publish.json"), "utf8");
    // This sandbox has SCRIPT_DEBUG on: the editor loads unminified scripts, so steps get more time.
    const result = await runtime.execute({ command: "wordpress.browser-actions", args: [`steps-json=${script}`, "step-timeout=90s", "timeout=280s"], timeoutMs: 290_000 });
    assert.equal(result.status, "ok", result.stdout);
    assert.equal((result.json as { assertions: { failed: number } }).assertions.failed, 0);
    const post = await php("$p = get_posts(['post_status' => 'publish', 'title' => 'Hello from wp-codebox']); echo json_encode([count($p), $p ? $p[0]->post_content : '']);");
    const [count, content] = post.json as [number, string];
    assert.equal(count, 1, post.stderr);
    assert.match(content, /A paragraph typed in the editor\./);
  });
});

describe("wp-codebox run and check on 7.0.4", { skip, timeout: 300_000 }, () => {
  it("run refuses a plugin that requires WordPress 99.0 before booting: plugin-requirements, exit 2, naming the flag", async () => {
    const dir = join(tmp, "requires");
    const run = await spawnCli(["run", "--wp", "7.0.4", "--plugin", fixture("requires-future"), "--command", "wordpress.run-php", "--arg", "code=echo 1;", "--artifacts", dir], { env: env() });
    assert.equal(run.code, 2, show(run));
    assert.match(run.stderr, /error\[plugin-requirements\]: The plugin requires-future requires WordPress 99\.0 \("Requires at least" in requires-future\.php\), but this sandbox runs WordPress 7\.0\.4: pass --wp 99\.0/);
    assert.doesNotMatch(run.stderr, /Booting/);
    assert.equal(existsSync(dir), false);
  });

  it("with --wp latest the requirement is checked once latest resolves (7.0.4), still before WordPress boots: exit 2, bundle written", async () => {
    const dir = join(tmp, "requires-latest");
    const run = await spawnCli(["run", "--wp", "latest", "--plugin", fixture("requires-future"), "--command", "wordpress.run-php", "--arg", "code=echo 1;", "--artifacts", dir], { env: env() });
    assert.equal(run.code, 2, show(run));
    assert.match(run.stderr, /error\[plugin-requirements\]: .*runs WordPress 7\.0\.4: pass --wp 99\.0/);
    assert.doesNotMatch(run.stderr, /Booted WordPress/);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
  });

  it("run --define sets a constant and the bundle records it; the activation hook's admin calls boot", async () => {
    const dir = join(tmp, "define");
    const run = await spawnCli(
      ["run", "--wp", "7.0.4", "--define", "WP_ENVIRONMENT_TYPE=staging", "--define", 'MY_TEXT="true"', "--plugin", fixture("activation-admin-api"), "--command", "wordpress.run-php", "--arg", "code=echo wp_get_environment_type(), '|', var_export(MY_TEXT, true), '|', var_export([WP_DEBUG, WP_DEBUG_DISPLAY, SCRIPT_DEBUG], true);", "--json", "--artifacts", dir],
      { env: env() },
    );
    assert.equal(run.code, 0, show(run));
    // Without defines of its own: WP_DEBUG on, display off, SCRIPT_DEBUG WordPress's default (off).
    assert.equal(JSON.parse(run.stdout).result.stdout.replace(/\s+/g, " "), "staging|'true'|array ( 0 => true, 1 => false, 2 => false, )");
    const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"));
    assert.deepEqual(metadata.runtime.defines, { WP_ENVIRONMENT_TYPE: "staging", MY_TEXT: "true" });
    assert.equal(metadata.runtime.wordpressVersion, "7.0.4");
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
  });

  it("check reports unmet requirements as an error finding of kind requirements, naming the flag", async () => {
    const dir = join(tmp, "check");
    const run = await spawnCli(["check", fixture("requires-future"), "--wp", "7.0.4", "--json", "--artifacts", dir], { env: env() });
    assert.equal(run.code, 1, show(run));
    const report = JSON.parse(run.stdout);
    const findings = report.findings.filter((f: { kind: string }) => f.kind === "requirements");
    assert.equal(findings.length, 1, JSON.stringify(report.findings));
    assert.equal(findings[0].severity, "error");
    assert.match(findings[0].message, /requires WordPress 99\.0.*runs WordPress 7\.0\.4: pass --wp 99\.0/);
    assert.ok(existsSync(join(dir, findings[0].evidence)), findings[0].evidence);
  });
});

describe("--define and requirements before boot (no boot, no shared assets needed)", () => {
  it("run and serve carry --define and a recipe's runtime.defines into the create spec; requirements are checked against the bundled build", async () => {
    const dir = join(tmp, "unused");
    const base = { command: "wordpress.run-php", args: ["code=1"], artifactsDir: dir };
    assert.deepEqual(prepareRun({ ...base, defines: ["A=1", "B=text", 'C="7"'] }).createSpec.defines, { A: 1, B: "text", C: "7" });
    assert.equal(prepareRun(base).createSpec.defines, undefined);
    assert.throws(() => prepareRun({ ...base, plugins: [fixture("requires-future")] }), (error: unknown) => (error as { code?: string }).code === "plugin-requirements" && /runs WordPress 6\.5\.5: pass --wp 99\.0/.test((error as Error).message));
    assert.throws(() => prepareRun({ ...base, plugins: [fixture("requires-php-readme")] }), (error: unknown) => (error as { code?: string }).code === "plugin-requirements" && /requires PHP 99\.1 \("Requires PHP" in readme\.txt\)/.test((error as Error).message));
    const recipe = join(tmp, "defines-recipe.json");
    writeFileSync(recipe, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", runtime: { defines: { FROM_RECIPE: "yes", N: 2 } }, steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }] }));
    const served = await prepareServe({ recipe, defines: ["N=3"], cwd: tmp });
    assert.deepEqual(served.spec.defines, { FROM_RECIPE: "yes", N: 3 });
  });


  it("a reserved or malformed --define is invalid-define, exit 2, before boot", async () => {
    for (const flag of ["DB_NAME=evil", "ABSPATH=/tmp", "WP_SITEURL=http://x", "WP_HTTP_BLOCK_EXTERNAL=false", "1BAD=1", "NOVALUE"]) {
      const run = await spawnCli(["run", "--define", flag, "--command", "wordpress.run-php", "--arg", "code=echo 1;", "--artifacts", join(tmp, "bad")]);
      assert.equal(run.code, 2, `${flag}\n${show(run)}`);
      assert.match(run.stderr, /error\[invalid-define\]/, flag);
      assert.doesNotMatch(run.stderr, /Booting/);
    }
  });
});
