/**
 * The sandbox lifecycle on current WordPress (7.0.4, served by the loopback release mirror):
 * one `wp-codebox serve --pool 1` process that an MCP SDK client (`wp-codebox mcp --attach`) and
 * `run --attach` share — state export with a real `abilities` section, snapshot, restore, reset,
 * the pool handing a clean sandbox to the next session, PHPUnit — and one `episode run` with its
 * `episode replay`. Three boots in all. Without WP_CODEBOX_TEST_SHARED the same tests run on the
 * newest bundled build and say so.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";
import { CLI_ENTRY } from "../support/cli-entry.ts";
import { startServe, type ServeAddress, type ServeProcess } from "../support/serve-process.js";
import { WORDPRESS_MIRROR_SKIP, serveWordPressMirror, sharedWordPressReleasesDir, type WordPressMirror } from "../support/wordpress-mirror.js";

const shared = sharedWordPressReleasesDir() !== undefined;
// 7.0.4 when the shared releases are there; else the newest bundled build, and the run says why.
const WP = shared ? "7.0.4" : "6.5";
if (!shared) console.log(`${WORDPRESS_MIRROR_SKIP}; running these tests on the bundled WordPress ${WP} instead`);
const hasAbilities = shared;
// The version get_bloginfo('version') reports.
const VERSION = shared ? /^7\.0\.4$/ : /^6\.5\.\d+$/;
const PLUGIN = join(REPO_ROOT, "test/fixtures/plugins/phpunit-demo");

let tmp: string;
let mirror: WordPressMirror | undefined;
// The default cache (shared with the other integration tests), and the loopback mirror.
const env = (): NodeJS.ProcessEnv => ({ WP_CODEBOX_CACHE_DIR: undefined, WP_CODEBOX_WORDPRESS_MIRROR: mirror?.url }) as unknown as NodeJS.ProcessEnv;
const childEnv = (extra: Record<string, string> = {}): Record<string, string> =>
  Object.fromEntries(Object.entries({ ...process.env, ...env(), ...extra }).filter((e): e is [string, string] => e[1] !== undefined));

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-wp7-lifecycle-"));
  if (shared) mirror = await serveWordPressMirror();
});
after(async () => {
  await mirror?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe(`serve --pool 1 on WordPress ${WP}: an MCP client, run --attach and PHPUnit share one served sandbox`, { timeout: 600_000 }, () => {
  let served: ServeProcess;
  let address: ServeAddress;
  const events = (): { event: string; data?: Record<string, any> }[] => served.events();
  const waitFor = (event: string, count: number): Promise<void> => served.waitForEvent(event, count);

  before(async () => {
    served = await startServe(["--wp", WP, "--plugin", PLUGIN, "--pool", "1", "--ttl", "10m"], { env: childEnv() });
    address = served.address;
  });
  after(async () => {
    await served?.stop();
  });

  it("an MCP SDK client on `mcp --attach`: the site's version, state export with the abilities section, snapshot, restore and reset", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...CLI_ENTRY, "mcp", "--attach", address.control, "--artifacts", join(tmp, "mcp")],
      cwd: REPO_ROOT,
      env: childEnv({ WP_CODEBOX_TOKEN: address.token }),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: "wp-codebox-wp7-lifecycle", version: "1.0.0" });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 })) as CallToolResult;
    const sc = (r: CallToolResult) => r.structuredContent as Record<string, any>;
    const php = async (code: string) => {
      const result = await call("wordpress_run_php", { code });
      assert.equal(result.isError, false, JSON.stringify(result.content));
      return sc(result).stdout as string;
    };
    try {
      const [version, home] = (await php("<?php echo get_bloginfo('version'), '|', home_url();")).split("|");
      assert.match(version!, VERSION);
      assert.equal(home, address.url, "the tools run in the served sandbox");
      const { tools } = await client.listTools();
      assert.equal(tools.some((t) => t.name === "core__get-site-info"), hasAbilities, "ability tools exist exactly where WordPress has the API");

      const state = await call("wordpress_state_export", { sections: "summary,abilities" });
      assert.equal(state.isError, false, JSON.stringify(state.content));
      const exported = sc(state).json as { sections: { abilities: { available: boolean; count: number } }; artifacts: { abilities: { artifact: string } } };
      assert.equal(exported.sections.abilities.available, hasAbilities);
      // The section file comes back in the session's bundle (fetched from serve).
      const bundle = sc(await call("collect_artifacts", { directory: "state" })).bundle;
      assert.deepEqual((await verifyArtifactBundle(bundle.directory)).violations, []);
      const abilities = JSON.parse(readFileSync(join(bundle.directory, exported.artifacts.abilities.artifact), "utf8"));
      assert.equal(JSON.stringify(abilities).includes('"core/get-site-info"'), hasAbilities, "a real abilities section where WordPress has the API");

      await php("<?php update_option('wp7_lifecycle_marker', 'before');");
      const snap = await call("snapshot");
      assert.equal(snap.isError, undefined, JSON.stringify(snap.content));
      await php("<?php update_option('wp7_lifecycle_marker', 'after'); wp_insert_post(['post_title' => 'after the snapshot', 'post_status' => 'publish']);");
      const restored = await call("restore", { snapshot: sc(snap).snapshot.id });
      assert.equal(restored.isError, undefined, JSON.stringify(restored.content));
      assert.equal(await php("<?php echo get_option('wp7_lifecycle_marker'), '|', count(get_posts(['title' => 'after the snapshot', 'post_status' => 'any']));"), "before|0");
      const reset = await call("reset");
      assert.equal(reset.isError, undefined, JSON.stringify(reset.content));
      assert.equal(await php("<?php var_export(get_option('wp7_lifecycle_marker'));"), "false");
      // Left for the pool to clean up when this session ends.
      await php("<?php update_option('wp7_lifecycle_marker', 'left-by-mcp');");
    } finally {
      await client.close();
    }
    assert.match(stderr, /Detaching from the serve sandbox/);
  });

  it("the pool gives the next session (run --attach) a clean sandbox, where PHPUnit runs the plugin's suite with the failure's file:line", async () => {
    await waitFor("session-closed", 1);
    const attach = { env: { ...env(), WP_CODEBOX_TOKEN: address.token } };
    const clean = await spawnCli(["run", "--attach", address.control, "--command", "wordpress.run-php", "--arg", "code=<?php var_export(get_option('wp7_lifecycle_marker')); echo '|', get_bloginfo('version');", "--artifacts", join(tmp, "clean")], attach);
    assert.equal(clean.code, 0, show(clean));
    const [marker, version] = clean.stdout.split("|");
    assert.equal(marker, "false", "the option the MCP session left is gone");
    assert.match(version!, VERSION);
    const dir = join(tmp, "phpunit");
    const run = await spawnCli(["run", "--attach", address.control, "--command", "wordpress.phpunit", "--arg", "phpunit=/usr/bin/phpunit", "--artifacts", dir], attach);
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /error\[tests-failed\]: 1 of 5 tests failed; first: SlugTest::test_slug_keeps_underscores \(tests\/SlugTest\.php:15\)/);
    const results = JSON.parse(readFileSync(join(dir, "files/phpunit/test-results.json"), "utf8"));
    assert.equal(results.tests.passed, 4);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
  });
});

describe(`episode run and episode replay on WordPress ${WP}`, { timeout: 600_000 }, () => {
  it("an episode (seed, state with abilities, snapshot, a core fatal) replays with every deterministic step equal", async () => {
    const script = join(tmp, "episode.json");
    writeFileSync(
      script,
      JSON.stringify({
        schema: "wp-codebox/episode-script/v1",
        runtime: { wp: WP },
        steps: [
          {
            name: "seed",
            action: { command: "wordpress.run-php", args: { code: "<?php update_option('blogname', 'Episode on current WordPress'); echo wp_insert_post(['post_title' => 'Episode post', 'post_status' => 'publish']) > 0 ? get_bloginfo('version') : 'no';" } },
            observe: { type: "wordpress-state", sections: ["summary", "options", "abilities"], optionNames: ["blogname"] },
          },
          { name: "checkpoint", snapshot: true },
          // A TypeError thrown inside core: the fatal names core's own file and line.
          { name: "core fatal", action: { command: "wordpress.run-php", args: { code: "<?php remove_accents(array('not a string'));" } } },
        ],
        artifacts: { includeRuntimeSnapshotBundles: true },
      }),
    );
    const dir = join(tmp, "episode");
    const run = await spawnCli(["episode", "run", script, "--artifacts", dir, "--json"], { env: env() });
    assert.equal(run.code, 1, show(run)); // the fatal step fails the episode
    const trace = JSON.parse(readFileSync(join(dir, "files/runtime-episode-trace.json"), "utf8"));
    assert.match(trace.steps[0].execution.stdout, VERSION);
    assert.equal(trace.snapshots.length, 1);
    const fatal = trace.steps[1].execution;
    assert.equal(fatal.status, "error", JSON.stringify(fatal));
    assert.equal(fatal.error.code, "php-fatal", JSON.stringify(fatal.error));
    assert.equal(fatal.error.data.file, "/wordpress/wp-includes/formatting.php", JSON.stringify(fatal.error));
    // A release build is not minified: the line is the real one (the bundled build says 2 or 3).
    if (shared) assert.ok(fatal.error.data.line > 100, JSON.stringify(fatal.error));
    const abilities = JSON.parse(readFileSync(join(dir, "files/observations/wordpress-state-0001/abilities.json"), "utf8"));
    assert.equal(JSON.stringify(abilities).includes("core/get-site-info"), hasAbilities, JSON.stringify(abilities).slice(0, 400));
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });

    const replay = await spawnCli(["episode", "replay", dir, "--json"], { env: env() });
    assert.equal(replay.code, 0, show(replay));
    const report = JSON.parse(replay.stdout) as { ok: boolean; steps: { match: boolean; deterministic: boolean }[] };
    assert.equal(report.ok, true);
    assert.equal(report.steps.length, 2);
    assert.ok(report.steps.every((s) => s.deterministic && s.match), JSON.stringify(report.steps));
  });
});
