/**
 * Runtime state on the host side of a Playground sandbox: the clean-state reset, snapshot capture
 * and snapshot apply. The sandbox's wp-content (with the SQLite database at
 * `wp-content/database/.ht.sqlite`) is a host folder the PHP worker mounts, and so are the two
 * folders of its copy-on-write layer over core (changed files, deletion markers: see
 * copy-on-write-fs.ts); WordPress opens the database per request, so swapping files while no
 * request runs (the caller holds the runtime's exclusive lock) is safe.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { posix } from "node:path";
import { dirname, join } from "node:path";
import {
  RUNTIME_SNAPSHOT_KINDS,
  RUNTIME_STATE_ARTIFACT_SEMANTICS,
  WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA,
  WpCodeboxError,
  finalizeRuntimeSnapshot,
  runtimeSnapshotListingDigest,
  runtimeSnapshotTablesDigest,
  sha256Hex,
  type ResolvedMount,
  type RuntimeSnapshotCarriedFile,
  type RuntimeSnapshotFileEntry,
  type WordPressRuntimeSnapshot,
  listSnapshotFiles,
  snapshotContentPath,
  writeFileInside,
} from "@wp-codebox/runtime-core";
import type { WorkerRunResult } from "../worker/php-worker-protocol.js";
import { phpProgram } from "../php-source/php-assets.js";
import type { ContentSync } from "./content-sync.js";
import { outcomeFromRun, withFatalRecorder, phpValue } from "@wp-codebox/commands";

/** Path of the SQLite database relative to `/wordpress/` (set by the SQLite integration). */
export const DATABASE_PATH = "wp-content/database/.ht.sqlite";

/** What the state functions need from a runtime. */
export interface RuntimeStateHost {
  /** Host folder of the installed site (its `wp-content` is the clean base). */
  siteDir: string;
  /** Host folder mounted at `/wordpress/wp-content`. */
  contentDir: string;
  /** Host folders of the copy-on-write layer over core (changed entries, deletion markers). */
  coreLayers: { upper: string; whiteouts: string };
  mounts: ResolvedMount[];
  backend: string;
  wordpressVersion: string;
  phpVersion: string;
  runPhp(code: string): Promise<WorkerRunResult>;
  /** Present: `resetContent` restores only what changed (content-sync.ts) instead of re-copying everything. */
  contentSync?: ContentSync;
}

const baseListings = new Map<string, RuntimeSnapshotFileEntry[]>();


/** The clean base listing (the installed site's wp-content), hashed once per process. */
export function baseListing(siteDir: string): RuntimeSnapshotFileEntry[] {
  let listing = baseListings.get(siteDir);
  if (!listing) {
    listing = listSnapshotFiles(join(siteDir, "wp-content"), "wp-content");
    baseListings.set(siteDir, listing);
  }
  return listing;
}

/** Host path of a `wp-content/…` path. */
function hostPath(host: RuntimeStateHost, path: string): string {
  return join(host.contentDir, ...snapshotContentPath(path).split("/"));
}


/**
 * Rebuilds wp-content as it was right after boot: the installed site's wp-content, the read-only
 * mounts copied over it, and the database captured after boot (plugins/themes activated, site
 * options applied). Read-write mounts are host folders and are left as they are.
 */
export function resetContent(host: RuntimeStateHost, cleanDatabase: Uint8Array): void {
  if (host.contentSync) {
    // Only what the sandbox changed is put back (content-sync.ts): a reset costs one lstat per file.
    host.contentSync.restore();
  } else {
    rmSync(host.contentDir, { recursive: true, force: true });
    cpSync(join(host.siteDir, "wp-content"), host.contentDir, { recursive: true, preserveTimestamps: true });
    for (const mount of host.mounts) {
      if (!mount.target.startsWith("/wordpress/wp-content/")) continue;
      const target = join(host.contentDir, mount.target.slice("/wordpress/wp-content/".length));
      if (mount.mode === "readonly") cpSync(mount.source, target, { recursive: true, dereference: false, preserveTimestamps: true });
      else if (mount.kind === "directory") mkdirSync(target, { recursive: true });
    }
  }
  writeFileSync(hostPath(host, DATABASE_PATH), cleanDatabase);
  host.contentSync?.stampNow();
  clearCoreLayer(host);
}

function clearCoreLayer(host: RuntimeStateHost): void {
  rmSync(host.coreLayers.upper, { recursive: true, force: true });
  rmSync(host.coreLayers.whiteouts, { recursive: true, force: true });
  mkdirSync(host.coreLayers.upper, { recursive: true });
}

const WHITEOUT_PREFIX = ".wh.";
const OPAQUE_MARKER = ".wh..opq";

/** What the sandbox changed in its copy-on-write layer over core (paths relative to `/wordpress/`). */
export function readCoreLayer(host: RuntimeStateHost): { files: RuntimeSnapshotFileEntry[]; directories: string[]; deleted: string[]; opaque: string[] } {
  const files: RuntimeSnapshotFileEntry[] = [];
  const directories: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      const a = join(abs, entry.name);
      if (entry.isDirectory()) {
        directories.push(r);
        walk(a, r);
      } else if (entry.isFile()) {
        const bytes = readFileSync(a);
        files.push({ path: r, bytes: bytes.byteLength, sha256: sha256Hex(bytes) });
      }
    }
  };
  if (existsSync(host.coreLayers.upper)) walk(host.coreLayers.upper, "");
  const deleted: string[] = [];
  const opaque: string[] = [];
  const markers = (abs: string, rel: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.isDirectory()) markers(join(abs, entry.name), rel ? `${rel}/${entry.name}` : entry.name);
      else if (entry.name === OPAQUE_MARKER) opaque.push(rel);
      else if (entry.name.startsWith(WHITEOUT_PREFIX)) {
        const name = entry.name.slice(WHITEOUT_PREFIX.length);
        deleted.push(rel ? `${rel}/${name}` : name);
      }
    }
  };
  if (existsSync(host.coreLayers.whiteouts)) markers(host.coreLayers.whiteouts, "");
  const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return { files: files.sort((a, b) => byPath(a.path, b.path)), directories: directories.sort(byPath), deleted: deleted.sort(byPath), opaque: opaque.filter((p) => p !== "").sort(byPath) };
}

/** Makes the copy-on-write layer over core equal to a snapshot's `core` section (empty when absent). */
function writeCoreLayer(host: RuntimeStateHost, snapshot: WordPressRuntimeSnapshot): void {
  clearCoreLayer(host);
  const core = snapshot.core;
  if (!core) return;
  const { upper, whiteouts } = host.coreLayers;
  for (const dir of core.directories) mkdirSync(join(upper, ...dir.split("/")), { recursive: true });
  const carried = new Map(snapshot.files.map((f) => [f.path, f]));
  for (const file of core.files) {
    const target = join(upper, ...file.path.split("/"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, carried.get(file.path)!.content!);
  }
  for (const rel of core.deleted) {
    const marker = join(whiteouts, ...posix.dirname(rel).split("/").filter((p) => p !== "."), WHITEOUT_PREFIX + posix.basename(rel));
    mkdirSync(dirname(marker), { recursive: true });
    writeFileSync(marker, "");
  }
  for (const rel of core.opaque) {
    mkdirSync(join(whiteouts, ...rel.split("/")), { recursive: true });
    writeFileSync(join(whiteouts, ...rel.split("/"), OPAQUE_MARKER), "");
  }
}

/** Reads the database file (call with the exclusive lock held). */
export function readDatabase(host: RuntimeStateHost): Uint8Array {
  return new Uint8Array(readFileSync(hostPath(host, DATABASE_PATH)));
}

/** Reads the database facts without loading WordPress (`assets/state/database-facts.php`). */
function databaseFactsProgram(): string {
  return withFatalRecorder(phpProgram({ wp_codebox_database: phpValue(`/wordpress/${DATABASE_PATH}`) }, "state/database-facts.php"));
}

/** Tables (row counts, content hashes) and active theme/plugins, read with PDO without loading WordPress (so nothing is written). */
export async function readDatabaseFacts(host: RuntimeStateHost): Promise<{ tables: { name: string; rows: number; sha256: string }[]; activeTheme: string; activePlugins: string[] }> {
  const outcome = outcomeFromRun(await host.runPhp(databaseFactsProgram()));
  if (outcome.status !== "ok" || outcome.json === undefined) {
    throw new WpCodeboxError("state-export-failed", `Reading the database for a snapshot failed: ${outcome.error?.message ?? outcome.stdout.slice(0, 300)}.`, { error: outcome.error ?? null });
  }
  return outcome.json as { tables: { name: string; rows: number; sha256: string }[]; activeTheme: string; activePlugins: string[] };
}

/**
 * Captures a snapshot (call with the exclusive lock held): the database facts, every wp-content
 * file, the contents of the database plus every file that differs from the clean base, and the
 * sandbox's changes to core (its copy-on-write layer, every file carried).
 */
export async function captureSnapshot(host: RuntimeStateHost): Promise<WordPressRuntimeSnapshot> {
  const facts = await readDatabaseFacts(host);
  const listing = listSnapshotFiles(host.contentDir, "wp-content");
  const base = new Map(baseListing(host.siteDir).map((f) => [f.path, f.sha256]));
  const files: RuntimeSnapshotCarriedFile[] = [];
  for (const entry of listing) {
    const isDatabase = entry.path === DATABASE_PATH;
    if (!isDatabase && base.get(entry.path) === entry.sha256) continue;
    const content = new Uint8Array(readFileSync(hostPath(host, entry.path)));
    files.push({ path: entry.path, kind: isDatabase ? RUNTIME_SNAPSHOT_KINDS.database : RUNTIME_SNAPSHOT_KINDS.file, bytes: entry.bytes, sha256: entry.sha256, content });
  }
  const core = readCoreLayer(host);
  for (const entry of core.files) {
    const content = new Uint8Array(readFileSync(join(host.coreLayers.upper, ...entry.path.split("/"))));
    files.push({ path: entry.path, kind: RUNTIME_SNAPSHOT_KINDS.file, bytes: entry.bytes, sha256: entry.sha256, content });
  }
  const coreChanged = core.files.length + core.directories.length + core.deleted.length + core.opaque.length > 0;
  const db = listing.find((f) => f.path === DATABASE_PATH);
  if (!db) throw new WpCodeboxError("state-export-failed", `The sandbox has no database at /wordpress/${DATABASE_PATH}.`);
  return finalizeRuntimeSnapshot({
    schema: WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA,
    version: 1,
    semantics: RUNTIME_STATE_ARTIFACT_SEMANTICS,
    createdAt: new Date().toISOString(),
    compatibility: { backend: host.backend, wordpressVersion: host.wordpressVersion, phpVersion: host.phpVersion },
    activeTheme: facts.activeTheme,
    activePlugins: facts.activePlugins,
    mounts: host.mounts.map((m) => ({ target: m.target, mode: m.mode, kind: m.kind, captured: m.mode === "readonly" && m.target.startsWith("/wordpress/wp-content/") })),
    database: { engine: "sqlite", path: DATABASE_PATH, bytes: db.bytes, sha256: db.sha256, tables: facts.tables, tablesSha256: runtimeSnapshotTablesDigest(facts.tables) },
    wpContent: { files: listing, sha256: runtimeSnapshotListingDigest(listing), baseSha256: runtimeSnapshotListingDigest(baseListing(host.siteDir)) },
    ...(coreChanged ? { core } : {}),
    files,
  });
}

/**
 * Makes wp-content equal to a verified snapshot (call with the exclusive lock held): carried files
 * are written, uncarried files must already be present with the listed hash (from the clean base
 * or a mount), files the snapshot does not list are removed.
 * @throws WpCodeboxError `snapshot-incompatible` (other backend, WordPress or PHP version, other
 *   base, or a listed file that neither the snapshot nor this sandbox has).
 */
export function applySnapshot(host: RuntimeStateHost, snapshot: WordPressRuntimeSnapshot): void {
  const c = snapshot.compatibility;
  if (c.backend !== host.backend || c.wordpressVersion !== host.wordpressVersion || c.phpVersion !== host.phpVersion) {
    throw new WpCodeboxError(
      "snapshot-incompatible",
      `Snapshot ${snapshot.id} was taken on ${c.backend} WordPress ${c.wordpressVersion} / PHP ${c.phpVersion}; this runtime is ${host.backend} WordPress ${host.wordpressVersion} / PHP ${host.phpVersion}. Restore it with the same --wp and --php.`,
      { snapshot: c, runtime: { backend: host.backend, wordpressVersion: host.wordpressVersion, phpVersion: host.phpVersion } },
    );
  }
  const current = new Map(listSnapshotFiles(host.contentDir, "wp-content").map((f) => [f.path, f.sha256]));
  const corePaths = new Set((snapshot.core?.files ?? []).map((f) => f.path));
  const carried = new Map(snapshot.files.filter((f) => !corePaths.has(f.path)).map((f) => [f.path, f]));
  const missing = snapshot.wpContent.files.filter((f) => !carried.has(f.path) && current.get(f.path) !== f.sha256);
  if (missing.length > 0) {
    throw new WpCodeboxError(
      "snapshot-incompatible",
      `Snapshot ${snapshot.id} expects ${missing.length} file(s) this sandbox does not have with the same content (first: ${missing[0]!.path}). Restore with the same mounts, plugins and themes as when it was taken.`,
      { missing: missing.slice(0, 20).map((f) => f.path) },
    );
  }
  const listed = new Set(snapshot.wpContent.files.map((f) => f.path));
  for (const path of current.keys()) if (!listed.has(path)) rmSync(hostPath(host, path), { force: true });
  // Not through links the sandbox's PHP may have left in wp-content: this write runs as the host user.
  for (const file of carried.values()) writeFileInside(host.contentDir, snapshotContentPath(file.path), file.content!);
  writeCoreLayer(host, snapshot);
}
