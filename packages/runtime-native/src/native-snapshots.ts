/**
 * Runtime snapshots on the native backend (`wp-codebox/wordpress-runtime-snapshot/v1` with
 * `database.engine: "mariadb"`): the sandbox's `wordpress` database as an SQL dump made by
 * Debian's `mariadb-dump` (`database/wordpress.sql`, carried, hash-checked like every carried
 * file), table facts read with mysqli, and wp-content as on Playground (every file listed, the
 * ones that differ from the cached site's wp-content carried). Applying one loads the dump with
 * Debian's `mariadb` client (the dump drops and re-creates the database, so tables the sandbox
 * made since are gone too) and makes wp-content equal to the listing. Every process runs confined
 * like the sandbox's PHP. Call these while no command runs.
 */
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
} from "@wp-codebox/runtime-core";
import { PHP_LIMITS, confinedCommand } from "./bubblewrap.js";
import { DB_TOOL_DEADLINE_MS, startConfined } from "./confined-process.js";
import { startPhp } from "./native-php.js";
import { SANDBOX_PATHS, type SiteLayout } from "./native-site.js";
import type { NativeTools } from "./native-tools.js";
import { readSandboxFile, removeSandboxPath, writeSandboxFile } from "./sandbox-files.js";

/** Path of the dump inside a snapshot (and under `files/runtime-snapshots/<id>/` in a bundle). */
export const NATIVE_DUMP_PATH = "database/wordpress.sql";
/** The dump's file in the sandbox's internal folder while it is made or loaded. */
const DUMP_FILE = "snapshot.sql";
/** Cap on what the dump and load tools print (their output is only read on failure). */
const TOOL_OUTPUT_BYTES = 64 << 10;
/** Largest dump read back (bytes): the dump tool runs with PHP's file size limit, 1 GiB. */
const MAX_DUMP_BYTES = 1 << 30;

/** What snapshot capture and apply need from a native runtime. */
export interface NativeStateHost {
  tools: NativeTools;
  layout: SiteLayout;
  /** Host folder of the WordPress tree (PHP binds it at /wordpress). */
  treeDir: string;
  /** Host folder of the cached site's wp-content: the clean base. */
  baseContent: string;
  mounts: ResolvedMount[];
  /** Password of the sandbox's MariaDB root (the dump and load need it; WordPress's account cannot). */
  dbRootPassword: string;
  wordpressVersion: string;
  phpVersion: string;
}

const baseListings = new Map<string, RuntimeSnapshotFileEntry[]>();


/** The cached site's wp-content listing, hashed once per process (the cache entry never changes). */
function baseListing(dir: string): RuntimeSnapshotFileEntry[] {
  let listing = baseListings.get(dir);
  if (!listing) baseListings.set(dir, (listing = listSnapshotFiles(dir, "wp-content")));
  return listing;
}



/** Runs a MariaDB client tool confined, with the sandbox's socket and internal folder bound. @throws `state-export-failed`. */
async function runDbTool(host: NativeStateHost, argv: string[], what: string): Promise<void> {
  const command = confinedCommand(
    host.tools,
    {
      binds: [
        { source: host.layout.run, target: SANDBOX_PATHS.dbRun, readOnly: true },
        { source: host.layout.internal, target: SANDBOX_PATHS.internal, readOnly: false },
      ],
      chdir: "/",
      limits: PHP_LIMITS,
      uid: host.layout.uid,
      // In the environment, not on the command line another host user could read.
      env: { MYSQL_PWD: host.dbRootPassword },
    },
    argv,
  );
  const run = await startConfined(command, TOOL_OUTPUT_BYTES, DB_TOOL_DEADLINE_MS).done;
  if (run.exitCode !== 0) {
    const said = `${run.stderr.data.toString("utf8")}\n${run.stdout.data.toString("utf8")}`.trim().slice(-800);
    throw new WpCodeboxError("state-export-failed", `${what} failed (exit ${run.exitCode}${run.signal ? `, ${run.signal}` : ""}): ${said || "(no output)"}`, { exitCode: run.exitCode });
  }
}

/** Tables (row counts, content hashes) and active theme/plugins (`php/snapshot-facts.php`). @throws `state-export-failed`. */
async function readDatabaseFacts(host: NativeStateHost): Promise<{ tables: { name: string; rows: number; sha256: string }[]; activeTheme: string; activePlugins: string[] }> {
  const run = await startPhp({ tools: host.tools, layout: host.layout, treeDir: host.treeDir, script: `${SANDBOX_PATHS.programs}/snapshot-facts.php`, capBytes: 16 << 20, deadlineMs: DB_TOOL_DEADLINE_MS, env: { WP_CODEBOX_DB_ROOT_PASSWORD: host.dbRootPassword }, ini: ["opcache.enable_cli=0"] }).done;
  const stdout = run.stdout.data.toString("utf8");
  try {
    if (run.exitCode !== 0 || run.stdout.truncated) throw new Error();
    return JSON.parse(stdout);
  } catch {
    throw new WpCodeboxError("state-export-failed", `Reading the database for a snapshot failed (exit ${run.exitCode}): ${`${run.stderr.data.toString("utf8")}\n${stdout}`.trim().slice(-800)}`);
  }
}

/**
 * Captures a snapshot of a native sandbox: `mariadb-dump` of the `wordpress` database (with
 * `DROP DATABASE`/`CREATE DATABASE`, routines and triggers, rows in primary-key order, no dates:
 * the same state gives the same bytes), the table facts, every wp-content file, and the contents
 * of the ones that differ from the cached site. Mounts are bound, never copied, on this backend:
 * none is captured.
 * @throws `state-export-failed` (the dump or the facts could not be read).
 */
export async function captureNativeSnapshot(host: NativeStateHost): Promise<WordPressRuntimeSnapshot> {
  removeSandboxPath(host.layout.internal, DUMP_FILE);
  try {
    await runDbTool(host, [
      host.tools.mariadbDump,
      `--socket=${SANDBOX_PATHS.socket}`,
      "--user=root",
      "--skip-comments",
      "--skip-dump-date",
      "--single-transaction",
      "--order-by-primary",
      "--hex-blob",
      "--routines",
      "--triggers",
      "--add-drop-database",
      "--databases",
      "wordpress",
      `--result-file=${SANDBOX_PATHS.internal}/${DUMP_FILE}`,
    ], "mariadb-dump of the sandbox's database");
    const dump = readDump(host);
    const facts = await readDatabaseFacts(host);
    const listing = listSnapshotFiles(host.layout.content, "wp-content");
    const base = new Map(baseListing(host.baseContent).map((f) => [f.path, f.sha256]));
    const dumpSha = sha256Hex(dump);
    const files: RuntimeSnapshotCarriedFile[] = [{ path: NATIVE_DUMP_PATH, kind: RUNTIME_SNAPSHOT_KINDS.database, bytes: dump.byteLength, sha256: dumpSha, content: dump }];
    const carried = listing.filter((entry) => base.get(entry.path) !== entry.sha256);
    assertCarriedWithin(dump.byteLength, carried);
    for (const entry of carried) {
      files.push({ path: entry.path, kind: RUNTIME_SNAPSHOT_KINDS.file, bytes: entry.bytes, sha256: entry.sha256, content: readListedFile(host, entry) });
    }
    return finalizeRuntimeSnapshot({
      schema: WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA,
      version: 1,
      semantics: RUNTIME_STATE_ARTIFACT_SEMANTICS,
      createdAt: new Date().toISOString(),
      compatibility: { backend: "native", wordpressVersion: host.wordpressVersion, phpVersion: host.phpVersion },
      activeTheme: facts.activeTheme,
      activePlugins: facts.activePlugins,
      mounts: host.mounts.map((m) => ({ target: m.target, mode: m.mode, kind: m.kind, captured: false })),
      database: { engine: "mariadb", path: NATIVE_DUMP_PATH, bytes: dump.byteLength, sha256: dumpSha, tables: facts.tables, tablesSha256: runtimeSnapshotTablesDigest(facts.tables) },
      wpContent: { files: listing, sha256: runtimeSnapshotListingDigest(listing), baseSha256: runtimeSnapshotListingDigest(baseListing(host.baseContent)) },
      files,
    });
  } finally {
    removeSandboxPath(host.layout.internal, DUMP_FILE);
  }
}

/** Most bytes a snapshot holds in memory (the dump and the carried wp-content files), 2 GiB. */
export const MAX_SNAPSHOT_BYTES = 2 * (1 << 30);

/**
 * Refuses a snapshot that would hold more than `maxBytes` in memory: a sandbox may write up to
 * 1 GiB per file and any number of files, and the host reads every carried file.
 * @throws `state-export-failed` naming the total and the biggest files.
 */
export function assertCarriedWithin(dumpBytes: number, carried: readonly RuntimeSnapshotFileEntry[], maxBytes = MAX_SNAPSHOT_BYTES): void {
  const total = carried.reduce((sum, f) => sum + f.bytes, dumpBytes);
  if (total <= maxBytes) return;
  const biggest = [...carried].sort((a, b) => b.bytes - a.bytes).slice(0, 3).map((f) => `${f.path} (${f.bytes} bytes)`);
  throw new WpCodeboxError("state-export-failed", `The snapshot would hold ${total} bytes (the database dump and the changed wp-content files), over the limit of ${maxBytes}; the biggest: ${biggest.join(", ")}. Remove large files before taking it.`, { bytes: total, limit: maxBytes });
}

/** The dump mariadb-dump wrote (as the sandbox's uid, in a folder the sandbox can write): a regular file, read without following a link. */
function readDump(host: NativeStateHost): Uint8Array {
  const read = readSandboxFile(host.layout.internal, DUMP_FILE, MAX_DUMP_BYTES);
  if (!read || read.truncated) throw new WpCodeboxError("state-export-failed", `mariadb-dump's output ${read ? `is over ${MAX_DUMP_BYTES} bytes` : "is missing or not a regular file"}.`);
  return new Uint8Array(read.data);
}

/** A listed wp-content file's bytes, read without following a link; it must still be the file listed. @throws `state-export-failed`. */
function readListedFile(host: NativeStateHost, entry: RuntimeSnapshotFileEntry): Uint8Array {
  const read = readSandboxFile(host.layout.content, snapshotContentPath(entry.path), entry.bytes + 1);
  if (!read || read.truncated || sha256Hex(read.data) !== entry.sha256) {
    throw new WpCodeboxError("state-export-failed", `${entry.path} changed or was replaced while the snapshot was taken.`, { path: entry.path });
  }
  return new Uint8Array(read.data);
}

/**
 * Makes a native sandbox's state equal to a verified snapshot: wp-content first (carried files
 * written, uncarried ones must already match, unlisted ones removed), then the dump loaded with
 * the `mariadb` client.
 * @throws `snapshot-incompatible` (not a native MariaDB snapshot, other WordPress or PHP version,
 *   or a listed file neither the snapshot nor this sandbox has); `state-export-failed` (the dump
 *   did not load).
 */
export async function applyNativeSnapshot(host: NativeStateHost, snapshot: WordPressRuntimeSnapshot): Promise<void> {
  const c = snapshot.compatibility;
  if (c.backend !== "native" || snapshot.database.engine !== "mariadb" || c.wordpressVersion !== host.wordpressVersion || c.phpVersion !== host.phpVersion) {
    throw new WpCodeboxError(
      "snapshot-incompatible",
      `Snapshot ${snapshot.id} was taken on ${c.backend} (${snapshot.database.engine}) WordPress ${c.wordpressVersion} / PHP ${c.phpVersion}; this runtime is native (mariadb) WordPress ${host.wordpressVersion} / PHP ${host.phpVersion}. Restore it on the backend it was taken on, with the same --wp and --php.`,
      { snapshot: { ...c, engine: snapshot.database.engine }, runtime: { backend: "native", engine: "mariadb", wordpressVersion: host.wordpressVersion, phpVersion: host.phpVersion } },
    );
  }
  const current = new Map(listSnapshotFiles(host.layout.content, "wp-content").map((f) => [f.path, f.sha256]));
  const carried = new Map(snapshot.files.filter((f) => f.kind === RUNTIME_SNAPSHOT_KINDS.file).map((f) => [f.path, f]));
  const missing = snapshot.wpContent.files.filter((f) => !carried.has(f.path) && current.get(f.path) !== f.sha256);
  if (missing.length > 0) {
    throw new WpCodeboxError(
      "snapshot-incompatible",
      `Snapshot ${snapshot.id} expects ${missing.length} file(s) this sandbox does not have with the same content (first: ${missing[0]!.path}). Restore with the same mounts, plugins and themes as when it was taken.`,
      { missing: missing.slice(0, 20).map((f) => f.path) },
    );
  }
  const listed = new Set(snapshot.wpContent.files.map((f) => f.path));
  // Without following what the sandbox left in wp-content (these run as the host user).
  for (const path of current.keys()) if (!listed.has(path)) removeSandboxPath(host.layout.content, snapshotContentPath(path));
  for (const file of carried.values()) writeSandboxFile(host.layout.content, snapshotContentPath(file.path), file.content!, host.layout.uid);
  const dump = snapshot.files.find((f) => f.kind === RUNTIME_SNAPSHOT_KINDS.database && f.path === snapshot.database.path)!;
  writeSandboxFile(host.layout.internal, DUMP_FILE, dump.content!, host.layout.uid);
  try {
    await runDbTool(host, [host.tools.mariadb, `--socket=${SANDBOX_PATHS.socket}`, "--user=root", `--execute=source ${SANDBOX_PATHS.internal}/${DUMP_FILE}`], "Loading the snapshot's database dump");
  } finally {
    removeSandboxPath(host.layout.internal, DUMP_FILE);
  }
}
