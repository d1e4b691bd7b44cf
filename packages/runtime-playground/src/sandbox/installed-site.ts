/**
 * Installed-site cache: the first boot of a (WordPress, PHP) pair runs the installer once into
 * `<cacheDir>/sites/<key>/`; later boots mount that tree (core shared, wp-content copied per
 * sandbox) and skip the installer.
 */
import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { replaceWithStaged, siblingTempPath, sweepEntryLeftovers, withCacheLock, type CacheLockOptions } from "../site/cache-entry.js";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { PhpWorkerHost } from "../worker/php-worker-host.js";
import { sqliteIntegrationZipPath } from "../site/sqlite-integration.js";
import { seedPackPath, writeSeedPack } from "../site/opcache-seed.js";
import { baseConstants } from "../site/wordpress-constants.js";
import type { WorkerBootOptions, WorkerHttpResult, WorkerRunResult } from "../worker/php-worker-protocol.js";
import { installerMuPlugin } from "../php-source/site-php.js";

/** A cached installed site: `dir` holds core, wp-config.php and wp-content with the database. */
export interface InstalledSite {
  dir: string;
  release: string;
  php: string;
  /** True when this call ran the installer. */
  installed: boolean;
}

const STAMP = ".wp-codebox-site.json";

/** Stable cache key for a WordPress tree + PHP version. */
export function siteKey(treeDir: string, release: string, php: string): string {
  // The suffix versions the cache layout: sites installed before the OPcache seed was built with
  // content-derived mtimes (php-worker.ts stabiliseMtimes) get a new key and install once more.
  const h = createHash("sha256").update(treeDir).update("\0opcache-content-mtimes").digest("hex").slice(0, 8);
  return `wp-${release}-php-${php}-${h}`;
}

/** Where the installed site of a tree and PHP version lives in the cache (complete or not). */
export function installedSiteDir(tree: { dir: string; release: string }, php: string, cacheDir: string): string {
  return join(cacheDir, "sites", siteKey(tree.dir, tree.release, php));
}

/** Whether the cache holds a complete installed site of any release for PHP `php` (a run that finds none will install one). */
export function hasInstalledSite(php: string, cacheDir: string): boolean {
  const sites = join(cacheDir, "sites");
  let names: string[];
  try {
    names = readdirSync(sites);
  } catch {
    return false;
  }
  return names.some((name) => name.includes(`-php-${php}-`) && isInstalledSiteComplete(join(sites, name)));
}

/** Whether the installed site at `dir` is complete (its stamp is written last, then the folder renamed into place). */
export function isInstalledSiteComplete(dir: string): boolean {
  return existsSync(join(dir, STAMP));
}

/**
 * Returns the installed site for the tree and PHP version, installing it first when needed. The
 * install runs under the site's cache lock in a staging folder beside it; its OPcache seed, then
 * the site (whose stamp marks it complete), are renamed into place. Other processes wait for it
 * (cache-entry.ts) and never see a half-installed site.
 * @param options - `signal` interrupts the wait for another installer (not an install in progress);
 *   `installer`, a worker started early (`startInstallerWorker`), installs the site if an install
 *   is needed and is terminated otherwise. `seedBySandbox`: the installer saves no OPcache seed; the
 *   sandbox booted from the site makes it (`PlaygroundRuntimeSetup.seedOpcache`).
 * @throws `boot-failed` when the installer fails; `interrupted` when `options.signal` aborts the wait.
 */
export async function ensureInstalledSite(
  tree: { dir: string; release: string },
  php: string,
  cacheDir: string,
  onProgress?: (message: string) => void,
  options: CacheLockOptions & { installer?: PhpWorkerHost; seedBySandbox?: boolean } = {},
): Promise<InstalledSite> {
  const dir = installedSiteDir(tree, php, cacheDir);
  const complete = (): boolean => isInstalledSiteComplete(dir);
  const { installer, seedBySandbox, ...lockOptions } = options;
  const unused = (): void => void installer?.terminate();
  if (complete()) {
    unused();
    return { dir, release: tree.release, php, installed: false };
  }
  return withCacheLock(
    dir,
    async () => {
      if (complete()) {
        unused();
        return { dir, release: tree.release, php, installed: false };
      }
      sweepEntryLeftovers(dir);
      onProgress?.(`Installing WordPress ${tree.release} for PHP ${php} (first run only; later boots reuse it)`);
      const staging = siblingTempPath(dir, "staging");
      try {
        await installInto(staging, tree, php, { ...(installer ? { host: installer } : {}), ...(seedBySandbox ? { seed: false } : {}) });
        writeFileSync(join(staging, STAMP), JSON.stringify({ release: tree.release, php, createdAt: new Date().toISOString() }));
        // A seed folder of the site replaced here (sites installed before the installer packed its seed).
        rmSync(opcacheDirFor(dir), { recursive: true, force: true });
        if (existsSync(seedPackPath(opcacheDirFor(staging)))) replaceWithStaged(seedPackPath(opcacheDirFor(staging)), seedPackPath(opcacheDirFor(dir)));
        else rmSync(seedPackPath(opcacheDirFor(dir)), { force: true });
        replaceWithStaged(staging, dir);
      } catch (error) {
        rmSync(staging, { recursive: true, force: true });
        rmSync(seedPackPath(opcacheDirFor(staging)), { force: true });
        throw error;
      }
      return { dir, release: tree.release, php, installed: true };
    },
    {
      ...lockOptions,
      onWait: (owner) => {
        onProgress?.(`Waiting for another wp-codebox process${owner ? ` (pid ${owner.pid})` : ""} to install WordPress ${tree.release} for PHP ${php}`);
        options.onWait?.(owner);
      },
    },
  ).catch((error: unknown) => {
    unused();
    throw error;
  });
}

/** Boot options of the installer's worker, but for where the site is and how to install it. */
function installerBootOptions(php: string, shortcuts: boolean): Omit<WorkerBootOptions, "coreDir" | "installMode"> {
  return {
    phpVersion: php,
    siteUrl: "http://127.0.0.1",
    coreWritable: true,
    mounts: [],
    sqliteZipPath: sqliteIntegrationZipPath(),
    // The installer has no HTTP server: WP-Cron must not try to spawn during installation.
    constants: { ...baseConstants(), DISABLE_WP_CRON: true },
    ...(shortcuts ? { installerMuPlugin: installerMuPlugin() } : {}),
    processId: 1,
  };
}

/**
 * Starts the installer's worker before the release is unpacked (a first run): it loads and
 * starts PHP on the second core meanwhile, and `ensureInstalledSite` (option `installer`) gives it
 * the site once the files are there. The caller must pass it to `ensureInstalledSite`, which
 * terminates it when no install is needed. `quickCompile`: OPcache does not optimise the scripts it
 * compiles and keeps no file cache (worker boot option), for an install whose seed the sandbox makes.
 */
export function startInstallerWorker(php: string, options: { quickCompile?: boolean } = {}): PhpWorkerHost {
  return new PhpWorkerHost({ ...installerBootOptions(php, true), coreDir: "", installMode: "do-not-attempt-installing", awaitSite: true, ...(options.quickCompile ? { quickCompile: true } : {}) });
}

/**
 * Links the tree into `staging`, runs the installer there and saves its OPcache file cache beside
 * it, packed (`seedPackPath(opcacheDirFor(staging))`).
 * @param options - `shortcuts: false` installs without the installer's must-use plugin
 *   (`installerMuPlugin`), for tests that compare the two sites; default true. `host`: a worker
 *   from `startInstallerWorker` to install with (it has the shortcuts); terminated at the end like
 *   one started here. `installerPlugin`: PHP source of the installer's must-use plugin instead of
 *   `installerMuPlugin()` (a bench's profiling hooks). `seed: false` skips warming OPcache and
 *   saving the seed (the sandbox makes it). `onStep` is called (and awaited) as each step
 *   ends ("worker-ready", "install", "post-install", "warm", "export"), for benches that time them.
 * @throws `boot-failed` when the installer or the post-install setup fails.
 */
export async function installInto(staging: string, tree: { dir: string }, php: string, options: { shortcuts?: boolean; host?: PhpWorkerHost; installerPlugin?: string; seed?: boolean; onStep?: (step: string, host: PhpWorkerHost) => void | Promise<void> } = {}): Promise<void> {
  mkdirSync(dirname(staging), { recursive: true });
  linkCoreCopyRest(tree.dir, staging);
  const bringsDatabase = existsSync(join(staging, "wp-content", "database", ".ht.sqlite"));
  // With the shortcuts, the installer's request is sent here (`installRequest`) instead of by
  // Playground's boot, which loads WordPress twice more after it (is it installed? set its
  // permalinks) and once more to check the database connection; the post-install setup below
  // checks the same and sets the permalinks itself.
  const shortcuts = options.host !== undefined || options.shortcuts !== false;
  const ownRequest = shortcuts && !bringsDatabase;
  // A fresh copy of a release has no database: nothing to ask WordPress before installing it. A
  // custom tree that brings its own database is asked first, as before.
  const site = { coreDir: staging, installMode: ownRequest ? "do-not-attempt-installing" : bringsDatabase ? "install-from-existing-files-if-needed" : "install-from-existing-files" } as const;
  const bootOptions = installerBootOptions(php, shortcuts);
  if (shortcuts && options.installerPlugin !== undefined) bootOptions.installerMuPlugin = options.installerPlugin;
  if (options.seed === false) bootOptions.quickCompile = true;
  const host = options.host ?? new PhpWorkerHost({ ...bootOptions, ...site });
  const step = async (name: string): Promise<void> => options.onStep?.(name, host);
  options.host?.releaseSite(site);
  try {
    await host.ready;
    await step("worker-ready");
    if (ownRequest) await installRequest(host);
    await step("install");
    const result = await host.call<WorkerRunResult>({
      op: "run",
      capBytes: 65536,
      code: `<?php
require '/wordpress/wp-load.php';
update_option('permalink_structure', '/%postname%/'); // also set as the install ends (installer-mu-plugin.php)
update_option('blogname', 'wp-codebox');
global $wp_rewrite; $wp_rewrite->init(); $wp_rewrite->flush_rules(false);
echo json_encode(['version' => get_bloginfo('version'), 'admin' => (bool) get_user_by('login', 'admin')]);`,
    });
    const text = new TextDecoder().decode(result.stdout.data);
    if (result.exitCode !== 0 || !text.includes('"admin":true')) {
      throw new WpCodeboxError("boot-failed", `The post-install setup of WordPress failed (exit ${result.exitCode}): ${text}${new TextDecoder().decode(result.stderr.data)}`, { exitCode: result.exitCode });
    }
    await step("post-install");
    // The sandbox booted from this site compiles core itself while the install runs, and saves the seed.
    if (options.seed === false) return;
    // Warm OPcache with what most commands load, then save the compiled core for later boots.
    await host.call({ op: "http", method: "GET", url: "http://127.0.0.1/wp-login.php", headers: {}, capBytes: 0 });
    await host.call({ op: "http", method: "GET", url: "http://127.0.0.1/?rest_route=/", headers: {}, capBytes: 0 });
    await step("warm");
    const { pack } = await host.call<{ pack: Uint8Array }>({ op: "export-opcache" });
    await writeSeedPack(pack, seedPackPath(opcacheDirFor(staging)));
    await step("export");
  } finally {
    await host.terminate();
  }
}

/**
 * The form Playground's boot posts to WordPress's installer (`wp-admin/install.php?step=2`), as it
 * posts it, so a site installed either way has the same database.
 */
const INSTALL_FORM: Record<string, string> = {
  language: "en",
  prefix: "wp_",
  weblog_title: "My WordPress Website",
  user_name: "admin",
  admin_password: "password",
  admin_password2: "password",
  Submit: "Install WordPress",
  pw_weak: "1",
  admin_email: "admin@localhost.com",
};

/**
 * Runs WordPress's installer in `host` (booted with `do-not-attempt-installing`): the request
 * Playground's boot makes, once, without the page loads Playground adds after it.
 * @throws `boot-failed` when the installer does not answer 200.
 */
async function installRequest(host: PhpWorkerHost): Promise<void> {
  const body = new TextEncoder().encode(new URLSearchParams(INSTALL_FORM).toString());
  const response = await host.call<WorkerHttpResult>({
    op: "http",
    method: "POST",
    url: "http://127.0.0.1/wp-admin/install.php?step=2",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body,
    capBytes: 4096,
  });
  if (response.status !== 200) {
    throw new WpCodeboxError("boot-failed", `WordPress's installer answered ${response.status}: ${new TextDecoder().decode(response.body.data).slice(0, 300)}`, { status: response.status });
  }
}

/**
 * Paths of a WordPress tree that may be rewritten in place while a site is installed from it, by
 * Playground's boot (its patches for older releases in `wp-includes/`, the SQLite integration's
 * `wp-content/db.php`, the wp-config.php of a tree that brings one) or by the installer (a database
 * the tree brings): copied, never linked, so a rewrite cannot reach the tree. `/`-separated,
 * relative to the tree. Playground's patches of `wp-admin/` files are made only for PHP 5.2,
 * which wp-codebox does not run.
 */
const MAY_BE_REWRITTEN = new Set([
  ...["wp-db.php", "version.php", "functions.php", "load.php", "vars.php", "class-simplepie.php", "rss-functions.php", "sqlite", "database"].map((name) => `wp-includes/${name}`),
  "wp-config.php",
  "wp-content/db.php",
  "wp-content/database",
]);

/**
 * Puts a WordPress tree into a site's staging folder as hard links to the tree's files, except the
 * few that may be rewritten in place (`MAY_BE_REWRITTEN`), which are copied, so the tree does not
 * change. Files the installer creates (wp-config.php from the sample, the database) are new files
 * in the staging folder's own directories. Copying a release's 1,000-odd `wp-admin/` and
 * `wp-content/` files took ~0.6 s of a first boot on a 2-core machine; linking them, ~0.05 s.
 * Sandboxes never write to an installed site: they boot its core as a copy-on-write layer and
 * its wp-content as a copy. Falls back to copying where a link cannot be made (another file system).
 */
function linkCoreCopyRest(treeDir: string, staging: string, rel = ""): void {
  mkdirSync(staging, { recursive: true });
  for (const entry of readdirSync(treeDir, { withFileTypes: true })) {
    const from = join(treeDir, entry.name);
    const to = join(staging, entry.name);
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (MAY_BE_REWRITTEN.has(path)) cpSync(from, to, { recursive: true, preserveTimestamps: true });
    else if (entry.isDirectory()) linkCoreCopyRest(from, to, path);
    else if (entry.isFile()) linkFile(from, to);
    else cpSync(from, to);
  }
}

function linkFile(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
  }
}

/**
 * The OPcache seed folder of an installed site (beside it, not inside it). The installer writes
 * only its pack, `seedPackPath(opcacheDirFor(site))`; sites installed before have the folder.
 */
export function opcacheDirFor(siteDir: string): string {
  return `${siteDir}.opcache`;
}

