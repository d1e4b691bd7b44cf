/**
 * The installer's must-use plugin (assets/site/installer-mu-plugin.php) only leaves out work whose
 * result an installed site does not keep: the same release installed with it and without it has
 * the same database, row for row, apart from what every install makes anew (times, password hashes,
 * keys), and nothing of the plugin stays in the site or its OPcache seed; also with wp-codebox
 * sending the installer's request itself instead of Playground's boot. Neither install changes
 * the WordPress tree the sites link their files to.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { ensureWordPressTree, findWordPressBuild } from "@wp-codebox/runtime-playground";
import { ensureCustomWordPressTree } from "../src/site/wordpress-builds.js";
import { sharedWordPressReleasesDir, WORDPRESS_MIRROR_SKIP } from "../../../test/support/wordpress-mirror.js";
import { installInto, opcacheDirFor } from "../src/sandbox/installed-site.js";
import { createNodeFsMountHandler, loadNodeRuntime } from "@php-wasm/node";
import { PHP } from "@php-wasm/universal";
import { seedPackPath, unpackSeed } from "../src/site/opcache-seed.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-shortcuts-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Every row of every table of the site's SQLite database, read with PDO in a bare PHP: WordPress
 * is not loaded (a load would schedule its recurring events into the dump).
 */
async function dumpDatabase(siteDir: string): Promise<Record<string, Record<string, unknown>[]>> {
  const php = new PHP(await loadNodeRuntime("8.3", { emscriptenOptions: { processId: 1 } }));
  try {
    php.mkdir("/site");
    await php.mount("/site", createNodeFsMountHandler(siteDir));
    const result = await php.run({
      code: `<?php
$pdo = new PDO('sqlite:/site/wp-content/database/.ht.sqlite');
$out = [];
foreach ($pdo->query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'wp\\_%' ESCAPE '\\\\' ORDER BY name")->fetchAll(PDO::FETCH_COLUMN) as $table) {
  $out[$table] = $pdo->query("SELECT * FROM \\"$table\\"")->fetchAll(PDO::FETCH_ASSOC);
}
echo json_encode($out);`,
    });
    assert.equal(result.exitCode, 0, result.errors);
    return JSON.parse(result.text) as Record<string, Record<string, unknown>[]>;
  } finally {
    php.exit();
  }
}

/** Values every install makes anew: dates and times, password hashes, random keys and nonces. */
const VOLATILE_COLUMNS = new Set(["user_registered", "user_pass", "post_date", "post_date_gmt", "post_modified", "post_modified_gmt", "comment_date", "comment_date_gmt"]);
const VOLATILE_OPTIONS = new Set(["admin_email_lifespan", "recovery_keys", "initial_db_version", "fresh_site"]);

/** WP-Cron's events without their times (each install schedules them at its own time): hook and schedule, sorted. */
function cronEvents(serialized: unknown): string {
  const events = [...String(serialized).matchAll(/s:\d+:"([a-z0-9_]+)";a:\d+:\{s:32:"[0-9a-f]{32}";a:\d+:\{s:8:"schedule";(?:s:\d+:"([a-z]+)"|b:0)/g)].map((m) => `${m[1]}/${m[2] ?? "single"}`);
  return events.sort().join(" ");
}
const VOLATILE_OPTION_PATTERN = /(_key|_salt|^_transient_timeout_|^_site_transient_timeout_)/;

function normalise(dump: Record<string, Record<string, unknown>[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [table, rows] of Object.entries(dump)) {
    out[table] = rows
      .map((row) => {
        const copy: Record<string, unknown> = {};
        for (const [column, value] of Object.entries(row)) copy[column] = VOLATILE_COLUMNS.has(column) ? "(volatile)" : value;
        if (table === "wp_options" && (VOLATILE_OPTIONS.has(String(row.option_name)) || VOLATILE_OPTION_PATTERN.test(String(row.option_name)))) copy.option_value = "(volatile)";
        if (table === "wp_options" && row.option_name === "cron") copy.option_value = cronEvents(row.option_value);
        return JSON.stringify(copy);
      })
      .sort();
  }
  return out;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Path, size and SHA-256 of every file of a folder, and nothing else in it. */
function treeDigest(dir: string): string[] {
  return walk(dir).map((path) => `${path.slice(dir.length)} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`).sort();
}

const releases = sharedWordPressReleasesDir();
const newestRelease = releases
  ? readdirSync(releases)
      .filter((f) => /^wordpress-\d+\.\d+(?:\.\d+)?\.zip$/.test(f))
      .sort((x, y) => x.localeCompare(y, "en", { numeric: true }))
      .pop()
  : undefined;

/**
 * The trees installed: a release zip as the mirror serves it (no database: WordPress's installer
 * runs, in the request wp-codebox sends itself) and a bundled build (it brings an installed
 * database: Playground's boot only checks it).
 */
const cases: { name: string; tree: (cache: string) => Promise<string>; skip?: string }[] = [
  {
    name: "a release zip",
    tree: async (cache) => (await ensureCustomWordPressTree(join(releases ?? "", newestRelease ?? ""), cache)).dir,
    ...(newestRelease ? {} : { skip: WORDPRESS_MIRROR_SKIP }),
  },
  { name: "a bundled build", tree: (cache) => ensureWordPressTree(findWordPressBuild(), cache) },
];

for (const c of cases) {
  test(`${c.name} installed with the installer's shortcuts has the database of a plain install; nothing of them stays`, { timeout: 600_000, ...(c.skip ? { skip: c.skip } : {}) }, async () => {
    const dir = mkdtempSync(join(scratch, "case-"));
    const tree = await c.tree(join(dir, "cache"));
    const fast = join(dir, "with-shortcuts");
    const plain = join(dir, "without-shortcuts");
    const before = treeDigest(tree);
    await installInto(fast, { dir: tree }, "8.3");
    await installInto(plain, { dir: tree }, "8.3", { shortcuts: false });
    // The sites hard-link most of their files to the tree: no install may change it through them.
    assert.deepEqual(treeDigest(tree), before, "the WordPress tree is unchanged by the installs");
    const [a, b] = [normalise(await dumpDatabase(fast)), normalise(await dumpDatabase(plain))];
    assert.ok((a.wp_options?.length ?? 0) > 100, "the dump holds the options");
    assert.ok(a.wp_options?.some((row) => row.includes('"option_name":"siteurl"')), "siteurl is stored");
    assert.ok(a.wp_options?.some((row) => row.includes('"option_name":"permalink_structure","option_value":"/%postname%/"')), "the post-install permalinks are set");
    assert.ok(a.wp_users?.some((row) => row.includes('"user_login":"admin"') && row.includes('"user_email":"admin@localhost.com"')), "the administrator is the one Playground's installer makes");
    // The recurring events WordPress's first load after an install schedules (the post-install setup's load).
    for (const hook of ["wp_version_check/twicedaily", "wp_update_plugins/twicedaily", "wp_site_health_scheduled_check/weekly"]) {
      assert.ok(a.wp_options?.some((row) => row.includes('"option_name":"cron"') && row.includes(hook)), `${hook} is scheduled: ${a.wp_options?.find((row) => row.includes('"option_name":"cron"'))}`);
    }
    assert.deepEqual(a, b);
    const seeded = unpackSeed(readFileSync(seedPackPath(opcacheDirFor(fast)))).map((file) => file.path);
    assert.ok(seeded.some((path) => path.includes("wp-includes")), "the OPcache seed holds compiled core");
    const leftovers = [...walk(fast).map((path) => path.slice(dir.length)), ...seeded].filter((path) => path.includes("wp-codebox-installer"));
    assert.deepEqual(leftovers, [], "the installer's plugin is neither in the site nor in its OPcache seed");
  });
}
