/**
 * A first boot on an empty cache starts the installer's worker before the release is unpacked and
 * the sandbox's first worker while WordPress installs (both wait for the site: `awaitSite`). The
 * sandbox boots on the installed site and says it installed it; its worker compiled core while the
 * site installed and saved the site's OPcache seed, which holds core and the SQLite integration's
 * grammar and none of the sandbox's own (its secret environment, wp-content), and which the next
 * boot's first WordPress load runs from.
 * A failing install fails the boot with the installer's answer and leaves no sandbox folder behind.
 * A first boot works on every kind of php-wasm build (with and without OPcache shared memory).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { PlaygroundRuntime } from "../src/sandbox/playground-runtime.js";
import { extractZip } from "../src/site/zip.js";
import { unpackSeed } from "../src/site/opcache-seed.js";
import { sharedWordPressReleasesDir, WORDPRESS_MIRROR_SKIP } from "../../../test/support/wordpress-mirror.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-first-boot-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const releases = sharedWordPressReleasesDir();
const zip = releases
  ? readdirSync(releases)
      .filter((f) => /^wordpress-\d+\.\d+(?:\.\d+)?\.zip$/.test(f))
      .sort((x, y) => x.localeCompare(y, "en", { numeric: true }))
      .map((f) => join(releases, f))
      .pop()
  : undefined;
const skip = zip ? {} : { skip: WORDPRESS_MIRROR_SKIP };

/** An unpacked copy of the release, changed by `edit`, as a `--wordpress PATH` tree. */
function releaseTree(name: string, edit: (root: string) => void = () => undefined): string {
  const dir = join(scratch, name);
  extractZip(zip!, dir);
  const root = join(dir, "wordpress");
  edit(root);
  return root;
}

/** A scratch folder for sandbox folders, to see what a boot leaves there. */
function sandboxTemp(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  process.env.WP_CODEBOX_TMPDIR = dir;
  return dir;
}

test("a first boot installs the site, boots on it and says so; the next boot reuses it", { timeout: 600_000, ...skip }, async () => {
  const root = releaseTree("good");
  const temp = sandboxTemp("good-sandboxes");
  const cacheDir = join(scratch, "good-cache");
  const backend = createPlaygroundBackend({ cacheDir, offline: true });
  const secret = "wpcb-seed-secret-7f3a9c";
  // OPcache's counters over the WordPress load alone (the worker's own compiling before it counts too).
  const code =
    "<?php $a = opcache_get_status(false)['opcache_statistics']; require_once '/wordpress/wp-load.php'; $b = opcache_get_status(false)['opcache_statistics'];" +
    " echo json_encode(['site' => get_option('blogname') . ' ' . get_option('permalink_structure'), 'hits' => $b['hits'] - $a['hits'], 'misses' => $b['misses'] - $a['misses'], 'files' => count(get_included_files())]);";
  const firstLoads: Record<string, { site: string; hits: number; misses: number; files: number }> = {};
  for (const expected of ["installed", "cached"]) {
    const runtime = await backend.create({ wordpress: { path: root }, secretEnv: { SEED_SECRET: secret } });
    try {
      assert.equal(runtime.info().bootMode, expected);
      if (expected === "installed") {
        // The sandbox's worker compiled the SQLite integration (the seed's rest) while the site
        // installed, and mounted the site only after that (boot option siteAfterBoot).
        const marks = (runtime as unknown as { pool: { primary: { bootMarks: [string, number][] } } }).pool.primary.bootMarks.map(([step]) => step);
        const compiled = marks.indexOf("SQLite integration compiled, its grammar built");
        assert.ok(compiled >= 0 && compiled < marks.indexOf("site released"), `the worker's boot steps: ${marks.join(" | ")}`);
      }
      // The installed site has WordPress's recurring events (the post-install setup's load of
      // WordPress scheduled them), and the boot moved the overdue ones past its clock: no
      // event is due when the first command starts, so it does not start by running WP-Cron.
      // Read with PDO, before anything loads WordPress.
      const due = await runtime.execute({
        command: "wordpress.run-php",
        args: [
          "code=<?php $pdo = new PDO('sqlite:/wordpress/wp-content/database/.ht.sqlite'); $c = unserialize($pdo->query(\"SELECT option_value FROM wp_options WHERE option_name = 'cron'\")->fetchColumn()); $hooks = []; foreach ($c as $t => $h) if (is_array($h)) foreach ($h as $hook => $e) $hooks[$hook] = (int) $t - time(); echo json_encode($hooks);",
          "bootstrap=none",
        ],
      });
      const hooks = JSON.parse(due.stdout) as Record<string, number>;
      for (const hook of ["wp_version_check", "wp_update_plugins", "wp_update_themes", "wp_privacy_delete_old_export_files", "wp_site_health_scheduled_check"]) {
        assert.ok((hooks[hook] ?? -1) > 0, `${expected}: ${hook} is scheduled after now: ${due.stdout}${due.stderr}`);
      }
      if (expected === "installed") {
        const fastForwarded = (await runtime.collectArtifacts()).events.find((e) => e.type === "cron-fast-forwarded");
        assert.ok(Number(fastForwarded?.data?.events) >= 4, `the boot fast-forwarded the update checks and the export clean-up: ${JSON.stringify(fastForwarded)}`);
      }
      const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, "bootstrap=none"] });
      assert.equal(result.status, "ok", result.stderr);
      firstLoads[expected] = JSON.parse(result.stdout);
      assert.equal(firstLoads[expected]!.site, "wp-codebox /%postname%/");
    } finally {
      await runtime.dispose();
    }
    if (expected === "installed") {
      const packs = readdirSync(join(cacheDir, "sites")).filter((name) => name.endsWith(".opcache.pack"));
      assert.equal(packs.length, 1, `the first boot saved the site's seed: ${readdirSync(join(cacheDir, "sites")).join(", ")}`);
      const bytes = readFileSync(join(cacheDir, "sites", packs[0]!));
      const paths = unpackSeed(bytes).map((file) => file.path);
      assert.ok(paths.some((path) => path.endsWith("/wordpress/wp-includes/load.php.bin")), "core is in the seed");
      assert.ok(paths.some((path) => path.includes("/internal/shared/")), "the sandbox's shared scripts are in the seed");
      assert.ok(paths.some((path) => path.startsWith("wp-codebox/sqlite-grammar/")), "the SQLite integration's grammar is in the seed");
      for (const path of paths) {
        assert.ok(!path.includes("/wp-content/") && !path.endsWith("/0-wp-codebox.php.bin"), `not the sandbox's own: ${path}`);
      }
      assert.ok(!bytes.includes(Buffer.from(secret)), "the secret environment is not in the seed");
    }
  }
  // Each boot's first WordPress load ran core from OPcache: compiled while the site installed, then from the seed.
  for (const [boot, load] of Object.entries(firstLoads)) {
    assert.ok(load.files > 300, `${boot}: WordPress loaded (${load.files} files)`);
    // What few are compiled then: the site's wp-config.php and classes an autoloader loads (WordPress 7.0's AI client).
    assert.ok(load.hits > load.files * 0.8 && load.misses < 20, `${boot}: most scripts came from OPcache: ${JSON.stringify(load)}`);
  }
  assert.deepEqual(readdirSync(temp), [], "no sandbox folder is left");
});

test("no code of the caller's runs before the first sandbox saves the seed: a drop-in that rewrites core cannot reach later sandboxes", { timeout: 600_000, ...skip }, async () => {
  const root = releaseTree("dropin");
  sandboxTemp("dropin-sandboxes");
  const cacheDir = join(scratch, "dropin-cache");
  const backend = createPlaygroundBackend({ cacheDir, offline: true });
  // Rewrites core and copies the secrets where the seed export looks, whenever it first runs.
  const dropin = fileURLToPath(new URL("./fixtures/dropins/object-cache-rewrites-core.php", import.meta.url));
  const secret = "wpcb-dropin-secret-4e1d";
  const first = await backend.create({ wordpress: { path: root }, secretEnv: { DROPIN_SECRET: secret }, mounts: [{ source: dropin, target: "/wordpress/wp-content/object-cache.php", mode: "readonly" }] });
  try {
    // The drop-in ran at this sandbox's first WordPress load, after the seed was saved (version.php
    // was loaded before it then); the next load runs the rewritten core.
    const code = "code=<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');";
    await first.execute({ command: "wordpress.run-php", args: [code, "bootstrap=none"] });
    const result = await first.execute({ command: "wordpress.run-php", args: [code, "bootstrap=none"] });
    assert.equal(result.stdout, "6.6.6-POISONED", result.stderr);
  } finally {
    await first.dispose();
  }
  const pack = readdirSync(join(cacheDir, "sites")).find((name) => name.endsWith(".opcache.pack"))!;
  const bytes = Buffer.concat(unpackSeed(readFileSync(join(cacheDir, "sites", pack))).map((file) => file.data));
  assert.ok(!bytes.includes(Buffer.from("POISONED")), "the seed holds no bytecode the drop-in compiled");
  // The must-use plugin holds the environment as base64 of its JSON.
  for (const form of [secret, Buffer.from(JSON.stringify({ DROPIN_SECRET: secret })).toString("base64")]) assert.ok(!bytes.includes(Buffer.from(form)), `the seed holds no secret (${form})`);
  const second = await backend.create({ wordpress: { path: root } });
  try {
    const result = await second.execute({ command: "wordpress.run-php", args: ["code=<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');", "bootstrap=none"] });
    assert.match(result.stdout, /^\d+\.\d+(?:\.\d+)?$/, `a later sandbox runs its own core: ${result.stdout}`);
  } finally {
    await second.dispose();
  }
});

test("a script of the list that cannot be compiled only leaves the rest to be compiled when included: the first boot works", { timeout: 600_000, ...skip }, async () => {
  // Multisite's deprecated functions: listed (wp-settings.php includes it for a network), never loaded on a single site.
  const root = releaseTree("uncompilable", (dir) => writeFileSync(join(dir, "wp-includes", "ms-deprecated.php"), "<?php\nfunction wp_codebox_twice() {}\nfunction wp_codebox_twice() {}\n"));
  sandboxTemp("uncompilable-sandboxes");
  const runtime = await createPlaygroundBackend({ cacheDir: join(scratch, "uncompilable-cache"), offline: true }).create({ wordpress: { path: root } });
  try {
    assert.equal(runtime.info().bootMode, "installed");
    const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php require_once '/wordpress/wp-load.php'; echo get_option('blogname');", "bootstrap=none"] });
    assert.equal(result.status, "ok", result.stderr);
    assert.equal(result.stdout, "wp-codebox");
  } finally {
    await runtime.dispose();
  }
});

test("a first run whose WordPress cannot be found fails with that error after its workers started, leaving no sandbox folder", { timeout: 600_000 }, async () => {
  // An empty cache: the installer's and the sandbox's first workers start before the release is looked for.
  const temp = sandboxTemp("unavailable-sandboxes");
  const notZip = join(scratch, "not-a-wordpress.zip");
  writeFileSync(notZip, "not a zip");
  const progress: string[] = [];
  await assert.rejects(createPlaygroundBackend({ cacheDir: join(scratch, "unavailable-cache"), offline: true }).create({ wordpress: { path: notZip }, onProgress: (m) => progress.push(m) }), (error: unknown) => {
    assert.ok(error instanceof WpCodeboxError, String(error));
    assert.equal(error.code, "wordpress-source-invalid");
    return true;
  });
  assert.ok(progress.includes("Preparing WordPress"), `the boot had begun: ${progress.join(" | ")}`);
  assert.deepEqual(readdirSync(temp), [], "no sandbox folder is left");
});

test("a first boot whose install fails is boot-failed with the installer's answer; no sandbox folder is left", { timeout: 600_000, ...skip }, async () => {
  const root = releaseTree("broken", (dir) => writeFileSync(join(dir, "wp-admin", "install.php"), "<?php http_response_code(500); echo 'this installer is broken';"));
  const temp = sandboxTemp("broken-sandboxes");
  const cacheDir = join(scratch, "broken-cache");
  await assert.rejects(createPlaygroundBackend({ cacheDir, offline: true }).create({ wordpress: { path: root } }), (error: unknown) => {
    assert.ok(error instanceof WpCodeboxError, String(error));
    assert.equal(error.code, "boot-failed");
    assert.match(error.message, /answered 500: this installer is broken/);
    return true;
  });
  assert.deepEqual(readdirSync(temp), [], "no sandbox folder is left");
  assert.ok(!existsSync(join(cacheDir, "sites")) || readdirSync(join(cacheDir, "sites")).every((name) => name.endsWith(".lock") === false && !name.includes("staging")), "no half-installed site is left");
});

// Each kind of php-wasm build, on a machine's first boot (an empty cache: the installer's worker
// compiles without keeping a file cache). The 7.4 and 8.0 builds have no OPcache shared memory,
// only its file cache; without that their PHP did not start at all (exit -2, nothing printed).
for (const php of ["7.4", "8.0", "8.5"]) {
  test(`a first boot on an empty cache works on PHP ${php}`, { timeout: 600_000 }, async () => {
    sandboxTemp(`php-${php}-sandboxes`);
    const cacheDir = join(scratch, `php-${php}-cache`);
    const runtime = await createPlaygroundBackend({ cacheDir, offline: true }).create({ wordpress: { version: "6.5" }, php });
    try {
      assert.equal(runtime.info().bootMode, "installed");
      const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION, ' ', get_bloginfo('name');"] });
      assert.equal(result.status, "ok", result.stderr);
      assert.equal(result.stdout, `${php} wp-codebox`);
    } finally {
      await runtime.dispose();
    }
    // The sandbox saved the site's OPcache seed, the SQLite integration's scripts in it (compiling
    // them failed on the file-cache-only builds, which then never had a seed).
    const packs = readdirSync(join(cacheDir, "sites")).filter((name) => name.endsWith(".opcache.pack"));
    assert.equal(packs.length, 1, `the first boot saved the site's seed: ${readdirSync(join(cacheDir, "sites")).join(", ")}`);
    const paths = unpackSeed(readFileSync(join(cacheDir, "sites", packs[0]!))).map((file) => file.path);
    assert.ok(paths.some((path) => path.includes("/internal/shared/sqlite-database-integration/")), `the integration is in the seed: ${paths.length} files`);
    // The next boot starts from it and loads WordPress from it.
    const warm = await createPlaygroundBackend({ cacheDir, offline: true }).create({ wordpress: { version: "6.5" }, php });
    try {
      assert.equal(warm.info().bootMode, "cached");
      const result = await warm.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_bloginfo('name');"] });
      assert.equal(result.status, "ok", result.stderr);
      assert.equal(result.stdout, "wp-codebox");
    } finally {
      await warm.dispose();
    }
  });
}

// The default WordPress is the newest release, so a machine that has installed one release meets
// the next as a first boot of it: its workers start before the release is unpacked, as on an empty
// cache. The sandbox's folder is made just before its first worker starts, so it exists when the
// install begins only if the sandbox's worker was started first.
test("a release not installed yet, where another one is, boots beside its install as a first run does", { timeout: 600_000 }, async () => {
  const temp = sandboxTemp("second-release-sandboxes");
  const backend = createPlaygroundBackend({ cacheDir: join(scratch, "second-release-cache"), offline: true });
  for (const version of ["6.5", "6.4"]) {
    const sandboxesAtInstall: number[] = [];
    const runtime = await backend.create({ wordpress: { version }, onProgress: (m) => void (m.startsWith("Installing WordPress") && sandboxesAtInstall.push(readdirSync(temp).length)) });
    try {
      assert.equal(runtime.info().bootMode, "installed");
      assert.deepEqual(sandboxesAtInstall, [1], `${version}: the sandbox's worker had started when the install began`);
      const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_bloginfo('version');"] });
      assert.equal(result.status, "ok", result.stderr);
      assert.ok(result.stdout.startsWith(version), result.stdout);
    } finally {
      await runtime.dispose();
    }
  }
});

// What a boot started before the release is unpacked (the installer's worker) ends when the boot
// fails before its own worker starts (here the sandbox cannot start: its start is made to throw).
// Nothing hangs, and the next boot installs the release. A scratch folder that is a file is
// refused before any of that starts (host-dir-unusable): no worker is started for it at all.
for (const c of [
  { name: "on an empty cache", installedFirst: false },
  { name: "where another release is installed", installedFirst: true },
]) {
  test(`a first boot that fails before the sandbox's worker starts ends the install it began, ${c.name}`, { timeout: 600_000 }, async (t) => {
    const temp = sandboxTemp(`early-failure-${c.installedFirst}-sandboxes`);
    const backend = createPlaygroundBackend({ cacheDir: join(scratch, `early-failure-${c.installedFirst}-cache`), offline: true });
    if (c.installedFirst) await (await backend.create({ wordpress: { version: "6.5" } })).dispose();
    const notAFolder = join(scratch, `early-failure-${c.installedFirst}-file`);
    writeFileSync(notAFolder, "a file where the sandboxes' folder should be");
    // The process's threads: the installer's worker is one of them while it lives. (Node's own
    // thread pool is started first, so that it does not count as the boot's.)
    await readFile(notAFolder);
    const threads = (): number => readdirSync("/proc/self/task").length;
    const settled = async (before: number): Promise<number> => {
      for (let i = 0; i < 100 && threads() > before; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      return threads();
    };
    const before = threads();
    process.env.WP_CODEBOX_TMPDIR = notAFolder;
    await assert.rejects(backend.create({ wordpress: { version: "6.4" } }), (error: unknown) => error instanceof WpCodeboxError && error.code === "host-dir-unusable");
    assert.ok((await settled(before)) <= before, `no worker was left: ${threads()} threads, ${before} before the boot`);
    process.env.WP_CODEBOX_TMPDIR = temp;
    const start = t.mock.method(PlaygroundRuntime.prototype as unknown as { start: () => Promise<void> }, "start", async () => {
      throw new Error("the sandbox could not start");
    });
    await assert.rejects(backend.create({ wordpress: { version: "6.4" } }), /the sandbox could not start/);
    assert.equal(start.mock.callCount(), 1);
    start.mock.restore();
    assert.ok((await settled(before)) <= before, `the installer's worker was ended: ${threads()} threads, ${before} before the boot`);
    const runtime = await backend.create({ wordpress: { version: "6.4" } });
    try {
      assert.equal(runtime.info().bootMode, "installed");
    } finally {
      await runtime.dispose();
    }
  });
}
