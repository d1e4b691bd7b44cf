/**
 * The native site cache: per WordPress tree, PHP and MariaDB version, one MariaDB data directory
 * with WordPress installed (and its clean copy for reset(), `wp_codebox_clean`) and the wp-content
 * it was installed with, prepared once (a minute at
 * most) and copied into every sandbox. Concurrent processes that prepare the same entry each build
 * their own staging folder; the first rename wins and the others discard theirs.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WpCodeboxError, fatalFromPhpOutput } from "@wp-codebox/runtime-core";
import { MariaDbServer, PHP_DIR, SANDBOX_PATHS, copyTree, createLayout, giveToSandbox, installDataDir, siteLayout, writeSiteConfig, type SiteLayout } from "./native-site.js";
import { startPhp } from "./native-php.js";
import { HOST_STEP_DEADLINE_MS } from "./confined-process.js";
import { mariadbVersion, type NativeTools } from "./native-tools.js";
import { writeSandboxFile } from "./sandbox-files.js";
import { saveCleanDb } from "./clean-db.js";
import { siteConstants } from "./native-config.js";

/** Bumped when what an entry holds changes. */
const CACHE_FORMAT = "native-site-v9";

/** The signatures of the clean copy's tables (`php/clean-db.php`), in a cache entry's root (the host's only). */
export const CLEAN_DB_SIGNATURES = "clean-db-signatures.json";

/**
 * The file in a cache entry's root holding the password of its MariaDB's root (the same in every
 * sandbox copied from it). Only the host reads it: no sandbox binds the cache.
 */
export const DB_ROOT_PASSWORD_FILE = "db-root-password";

/** The password of a cache entry's MariaDB root (`DB_ROOT_PASSWORD_FILE`). */
export function readDbRootPassword(site: SiteLayout): string {
  return readFileSync(join(site.root, DB_ROOT_PASSWORD_FILE), "utf8");
}

/** A prepared site: its folder (a `SiteLayout` root) and whether this call installed it. */
export interface NativeSite {
  layout: SiteLayout;
  installed: boolean;
}

/**
 * Returns the cached installed site for a WordPress tree, installing it first when missing.
 * @throws `boot-failed` when MariaDB or the WordPress installer fails (with what they printed).
 */
export async function ensureNativeSite(tools: NativeTools, tree: { dir: string; release: string }, phpVersion: string, cacheDir: string, onProgress?: (message: string) => void): Promise<NativeSite> {
  const key = createHash("sha256").update(JSON.stringify([CACHE_FORMAT, tree.dir, tree.release, phpVersion, mariadbVersion(tools)])).digest("hex").slice(0, 16);
  const root = join(cacheDir, "native-sites", `${tree.release}-${key}`);
  const layout = siteLayout(root);
  if (existsSync(join(root, "complete.json"))) {
    if (cacheEntryIntact(root)) return { layout, installed: false };
    // A damaged entry (a folder deleted, a cleanup that stopped half-way) would fail every boot:
    // set aside and made again.
    onProgress?.(`The cached native site ${root} is damaged; making it again`);
    const aside = `${root}.damaged-${randomBytes(6).toString("hex")}`;
    try {
      renameSync(root, aside);
    } catch {
      // another process set it aside first
    }
    rmSync(aside, { recursive: true, force: true });
  }
  onProgress?.(`Installing WordPress ${tree.release} into a MariaDB data directory (once per release)`);
  // A --wordpress tree is the caller's, maybe hostile: a wp-content that is a link would be copied as
  // the link, and the host (root) would then write db.php, and bind, wherever it points.
  const treeContent = join(tree.dir, "wp-content");
  if (!lstatSync(treeContent, { throwIfNoEntry: false })?.isDirectory()) {
    throw new WpCodeboxError("wordpress-source-invalid", `${treeContent} is not a folder (a link or missing): a WordPress tree must hold its own wp-content folder.`, { path: treeContent });
  }
  const staging = siteLayout(`${root}.staging-${randomBytes(6).toString("hex")}`);
  try {
    createLayout(staging);
    copyTree(treeContent, staging.content);
    // Not through a db.php link the tree may hold.
    writeSandboxFile(staging.content, "db.php", readFileSync(join(PHP_DIR, "db.php")), staging.uid);
    giveToSandbox(staging.content);
    writeSiteConfig(staging, siteConstants({ installing: true }));
    installDataDir(tools, staging);
    const server = await MariaDbServer.start(tools, staging);
    const password = randomBytes(24).toString("hex");
    writeFileSync(join(staging.root, DB_ROOT_PASSWORD_FILE), password, { mode: 0o600 });
    const php = (script: string, args: string[] = []) => runOrThrow(tools, staging, tree.dir, script, args);
    // Runs as MariaDB's root get its password in their environment and no OPcache: the tree's own PHP
    // (install.php loads it) could have left compiled code in the site's OPcache file cache.
    const privileged = (script: string, args: string[] = []) => runOrThrow(tools, staging, tree.dir, script, args, password);
    try {
      await privileged(`${SANDBOX_PATHS.programs}/db-admin.php`, ["create"]);
      await php(`${SANDBOX_PATHS.programs}/install.php`);
      // The clean copy reset() restores from, made once here: a sandbox with no plugins, themes or
      // site options to activate boots with it as it is.
      writeFileSync(join(staging.root, CLEAN_DB_SIGNATURES), await saveCleanDb(tools, staging, tree.dir, password));
    } catch (error) {
      server.kill();
      throw error;
    }
    await server.stop(() => privileged(`${SANDBOX_PATHS.programs}/db-admin.php`, ["shutdown"]));
    // InnoDB's system tablespace is mostly zero pages: as holes, every sandbox's copy (and reset) skips them.
    spawnSync("fallocate", ["--dig-holes", join(staging.data, "ibdata1")]);
    writeFileSync(join(staging.root, "complete.json"), JSON.stringify({ release: tree.release, php: phpVersion, format: CACHE_FORMAT }));
    try {
      renameSync(staging.root, root);
    } catch (error) {
      // Another process finished the same entry first: use theirs.
      if (!existsSync(join(root, "complete.json"))) throw error;
    }
  } finally {
    rmSync(staging.root, { recursive: true, force: true });
  }
  return { layout, installed: true };
}

/** What a complete cache entry holds; a missing piece means it was damaged after it was made. */
const ENTRY_PARTS: { path: string; kind: "file" | "dir" }[] = [
  { path: "complete.json", kind: "file" },
  { path: DB_ROOT_PASSWORD_FILE, kind: "file" },
  { path: CLEAN_DB_SIGNATURES, kind: "file" },
  { path: "data/ibdata1", kind: "file" },
  { path: "data/mysql", kind: "dir" },
  { path: "data/wordpress", kind: "dir" },
  { path: "data/wp_codebox_clean", kind: "dir" },
  { path: "wp-content/db.php", kind: "file" },
];

/** True when a cache entry has every part it was made with, and was made by this format. */
function cacheEntryIntact(root: string): boolean {
  for (const part of ENTRY_PARTS) {
    const stat = lstatSync(join(root, part.path), { throwIfNoEntry: false });
    if (!stat || (part.kind === "file" ? !stat.isFile() : !stat.isDirectory())) return false;
  }
  try {
    return (JSON.parse(readFileSync(join(root, "complete.json"), "utf8")) as { format?: unknown }).format === CACHE_FORMAT;
  } catch {
    return false;
  }
}

async function runOrThrow(tools: NativeTools, layout: SiteLayout, treeDir: string, script: string, args: string[], rootPassword?: string): Promise<void> {
  // A --wordpress tree's own PHP runs here: it cannot hang the first boot for good.
  const privileged = rootPassword !== undefined ? { env: { WP_CODEBOX_DB_ROOT_PASSWORD: rootPassword }, ini: ["opcache.enable_cli=0"] } : {};
  const run = await startPhp({ tools, layout, treeDir, script, args, capBytes: 64 << 10, deadlineMs: HOST_STEP_DEADLINE_MS, ...privileged }).done;
  if (run.exitCode !== 0) {
    const stderr = run.stderr.data.toString("utf8");
    const stdout = run.stdout.data.toString("utf8");
    const fatal = fatalFromPhpOutput(`${stderr}\n${stdout}`);
    const said = fatal ? `${fatal.message.split("\n")[0]} (${fatal.file}:${fatal.line})` : `${stderr}\n${stdout}`.trim().slice(-800);
    throw new WpCodeboxError("boot-failed", `Preparing the native site failed: ${script} exited with ${run.exitCode}: ${said || "(no output)"}`);
  }
}

