/**
 * The runtime snapshot contract `wp-codebox/wordpress-runtime-snapshot/v1`: database
 * tables (row counts, content hashes) plus the SQLite file, wp-content files (path, bytes,
 * SHA-256), mounted input metadata, active theme/plugins, WordPress/PHP compatibility metadata,
 * and SHA-256 hashes over all of it. Hash checks, bundle layout and `restoreRuntime` live here;
 * capturing and applying a snapshot is the backend's job.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Type, type Static } from "@sinclair/typebox";
import { domainDigest, sha256Hex } from "../digest.js";
import { BUNDLE_PATHS } from "./bundle-layout.js";
import { WpCodeboxError } from "../errors.js";
import type { ArtifactFile, MountSpec, Runtime, RuntimeBackend, RuntimeCreateSpec } from "../runtime.js";
import { validateAgainstSchema, type SchemaIssue } from "../schema-validation.js";

/** Schema id of a runtime snapshot. */
export const WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA = "wp-codebox/wordpress-runtime-snapshot/v1" as const;
/** Semantics of a Playground snapshot and the `replay.status` of its reference-manifest entry. */
export const RUNTIME_STATE_ARTIFACT_SEMANTICS = "runtime-state-artifact" as const;
/** Bundle folder of snapshot files: `files/runtime-snapshots/<id>/…`. */
export const RUNTIME_SNAPSHOTS_DIR = "files/runtime-snapshots" as const;
/** Artifact kinds of snapshot files in a bundle. */
export const RUNTIME_SNAPSHOT_KINDS = {
  manifest: "wordpress-runtime-snapshot",
  database: "runtime-snapshot-database",
  file: "runtime-snapshot-file",
} as const;
/** Name of the snapshot's JSON description inside its bundle folder. */
export const RUNTIME_SNAPSHOT_MANIFEST_NAME = "snapshot.json" as const;

const Hash = Type.String({ pattern: "^[0-9a-f]{64}$" });
const strict = { additionalProperties: false } as const;
const RelativePath = Type.String({ minLength: 1, pattern: "^(?!/)(?!.*(^|/)\\.\\.?(/|$)).+$" });

/** A file of the sandbox's wp-content: path relative to `/wordpress/`, size in bytes, SHA-256. */
export const RuntimeSnapshotFileEntrySchema = Type.Object({ path: RelativePath, bytes: Type.Integer({ minimum: 0 }), sha256: Hash }, strict);
export type RuntimeSnapshotFileEntry = Static<typeof RuntimeSnapshotFileEntrySchema>;

/**
 * A file the snapshot carries (the SQLite database, and every wp-content file that differs from
 * the backend's clean base). `content` is present in memory and in a bundle folder; it is left
 * out of `snapshot.json` and of every digest (the `sha256` stands for it).
 */
export const RuntimeSnapshotCarriedFileSchema = Type.Object(
  {
    path: RelativePath,
    kind: Type.Union([Type.Literal(RUNTIME_SNAPSHOT_KINDS.database), Type.Literal(RUNTIME_SNAPSHOT_KINDS.file)]),
    bytes: Type.Integer({ minimum: 0 }),
    sha256: Hash,
    /** Bytes (a `Uint8Array`); checked by `verifyRuntimeSnapshot`, not by the JSON Schema. */
    content: Type.Optional(Type.Unsafe<Uint8Array>({ description: "file bytes (in memory only)" })),
  },
  strict,
);
export type RuntimeSnapshotCarriedFile = Static<typeof RuntimeSnapshotCarriedFileSchema>;

/** One database table: name, row count, SHA-256 over its rows in rowid order (PHP `serialize()` of each row). */
export const RuntimeSnapshotTableSchema = Type.Object({ name: Type.String({ minLength: 1 }), rows: Type.Integer({ minimum: 0 }), sha256: Hash }, strict);

/**
 * The snapshot. `sha256` = `domainDigest(schema id, snapshot minus id, createdAt, sha256 and file
 * contents)`; `id` = `snapshot-<first 16 hex of sha256>`.
 * - `compatibility`: backend, WordPress and PHP versions a restore must match.
 * - `database`: engine (`sqlite`: `path` is the SQLite file under wp-content, listed in
 *   `wpContent`; `mariadb`: `path` is an SQL dump of the sandbox's MariaDB database, e.g.
 *   `database/wordpress.sql`, outside wp-content and not listed there), its bytes/SHA-256 (a
 *   carried file), `tables`, `tablesSha256`.
 * - `wpContent`: every file under wp-content (captured mounts included), `sha256` over that list,
 *   and `baseSha256`, the digest of the clean base the uncarried files come from.
 * - `mounts`: sandbox target, mode, kind and whether its files are captured (`readwrite` mounts are
 *   host folders: never captured).
 * - `core` (optional): what the sandbox changed outside wp-content, in its copy-on-write layer over
 *   the shared WordPress core: every file written there (all carried), the directories it created,
 *   the core entries it deleted, and the directories whose core content it replaced (`opaque`).
 *   Paths relative to `/wordpress/`.
 */
export const WordPressRuntimeSnapshotSchema = Type.Object(
  {
    schema: Type.Literal(WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA),
    version: Type.Literal(1),
    id: Type.String({ pattern: "^snapshot-[0-9a-f]{16}$" }),
    semantics: Type.Literal(RUNTIME_STATE_ARTIFACT_SEMANTICS),
    createdAt: Type.String(),
    compatibility: Type.Object({ backend: Type.String(), wordpressVersion: Type.String(), phpVersion: Type.String() }, strict),
    activeTheme: Type.String(),
    activePlugins: Type.Array(Type.String()),
    mounts: Type.Array(Type.Object({ target: Type.String(), mode: Type.String(), kind: Type.String(), captured: Type.Boolean() }, strict)),
    database: Type.Object(
      {
        engine: Type.Union([Type.Literal("sqlite"), Type.Literal("mariadb")]),
        path: RelativePath,
        bytes: Type.Integer({ minimum: 0 }),
        sha256: Hash,
        tables: Type.Array(RuntimeSnapshotTableSchema),
        tablesSha256: Hash,
      },
      strict,
    ),
    wpContent: Type.Object({ files: Type.Array(RuntimeSnapshotFileEntrySchema), sha256: Hash, baseSha256: Hash }, strict),
    core: Type.Optional(
      Type.Object(
        {
          files: Type.Array(RuntimeSnapshotFileEntrySchema),
          directories: Type.Array(RelativePath),
          deleted: Type.Array(RelativePath),
          opaque: Type.Array(RelativePath),
        },
        strict,
      ),
    ),
    files: Type.Array(RuntimeSnapshotCarriedFileSchema),
    sha256: Hash,
  },
  { $id: WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA, ...strict },
);
export type WordPressRuntimeSnapshot = Static<typeof WordPressRuntimeSnapshotSchema>;

/** The snapshot without its derived `id`/`sha256`. */
export type WordPressRuntimeSnapshotDraft = Omit<WordPressRuntimeSnapshot, "id" | "sha256">;

const domain = (what: string) => `${WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA}#${what}`;

/** SHA-256 over a file listing (sorted by path). */
export function runtimeSnapshotListingDigest(files: readonly RuntimeSnapshotFileEntry[]): string {
  return domainDigest(domain("files"), [...files].map((f) => ({ path: f.path, bytes: f.bytes, sha256: f.sha256 })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
}

/** SHA-256 over the table list. */
export function runtimeSnapshotTablesDigest(tables: readonly Static<typeof RuntimeSnapshotTableSchema>[]): string {
  return domainDigest(domain("tables"), tables.map((t) => ({ name: t.name, rows: t.rows, sha256: t.sha256 })));
}

/** The snapshot's own digest: everything except `id`, `createdAt`, `sha256` and file contents. */
export function runtimeSnapshotDigest(snapshot: WordPressRuntimeSnapshotDraft | WordPressRuntimeSnapshot): string {
  const { id: _id, sha256: _sha, createdAt: _at, files, ...rest } = snapshot as WordPressRuntimeSnapshot;
  return domainDigest(WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA, { ...rest, files: files.map(({ content: _c, ...f }) => f) });
}

/** Adds `sha256` and `id` to a draft (the backend calls this after capturing). */
export function finalizeRuntimeSnapshot(draft: WordPressRuntimeSnapshotDraft): WordPressRuntimeSnapshot {
  const sha256 = runtimeSnapshotDigest(draft);
  return { schema: draft.schema, version: draft.version, id: `snapshot-${sha256.slice(0, 16)}`, ...omit(draft, ["schema", "version"]), sha256 } as WordPressRuntimeSnapshot;
}

function omit<T extends object>(value: T, keys: string[]): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k))) as Partial<T>;
}

/**
 * Checks a snapshot before it is trusted: shape, every carried file's bytes and SHA-256, the
 * database entry against its carried file and the listing, the listing and table digests, the
 * snapshot digest and the id. Never throws.
 * @param options.requireContent - when true (default), every carried file must have its `content`.
 * @returns `{ valid, issues: [{ path, message }] }`.
 */
export function verifyRuntimeSnapshot(snapshot: unknown, options: { requireContent?: boolean } = {}): { valid: boolean; issues: SchemaIssue[] } {
  const issues = validateAgainstSchema(WordPressRuntimeSnapshotSchema, snapshot);
  if (issues.length > 0) return { valid: false, issues };
  const s = snapshot as WordPressRuntimeSnapshot;
  const requireContent = options.requireContent ?? true;
  const listing = new Map([...s.wpContent.files, ...(s.core?.files ?? [])].map((f) => [f.path, f]));
  // A MariaDB dump is not a wp-content file: it is checked against `database` below instead.
  const isDump = (f: RuntimeSnapshotCarriedFile) => s.database.engine !== "sqlite" && f.kind === RUNTIME_SNAPSHOT_KINDS.database && f.path === s.database.path;
  s.files.forEach((f, i) => {
    if (f.content !== undefined && !(f.content instanceof Uint8Array)) {
      issues.push({ path: `/files/${i}/content`, message: `${f.path}: content must be bytes (a Uint8Array)` });
    } else if (f.content === undefined) {
      if (requireContent) issues.push({ path: `/files/${i}/content`, message: `${f.path}: content is missing` });
    } else {
      const actual = sha256Hex(f.content);
      if (actual !== f.sha256) issues.push({ path: `/files/${i}/sha256`, message: `${f.path}: content has SHA-256 ${actual}, the snapshot says ${f.sha256}` });
      if (f.content.byteLength !== f.bytes) issues.push({ path: `/files/${i}/bytes`, message: `${f.path}: content has ${f.content.byteLength} bytes, the snapshot says ${f.bytes}` });
    }
    const listed = listing.get(f.path);
    if (isDump(f)) {
      if (listed) issues.push({ path: `/files/${i}`, message: `${f.path}: a ${s.database.engine} dump must not be listed as a wp-content or core file` });
      return;
    }
    if (!listed || listed.sha256 !== f.sha256 || listed.bytes !== f.bytes) issues.push({ path: `/files/${i}`, message: `${f.path} does not match its wpContent or core listing entry` });
  });
  const carried = new Set(s.files.map((f) => f.path));
  (s.core?.files ?? []).forEach((f, i) => {
    if (!carried.has(f.path)) issues.push({ path: `/core/files/${i}`, message: `${f.path}: a core-layer file must be carried by the snapshot` });
  });
  const db = s.files.find((f) => f.path === s.database.path && f.kind === RUNTIME_SNAPSHOT_KINDS.database);
  if (!db) issues.push({ path: "/database/path", message: `the database file ${s.database.path} is not carried by the snapshot` });
  else if (db.sha256 !== s.database.sha256 || db.bytes !== s.database.bytes) issues.push({ path: "/database/sha256", message: "the database entry does not match the carried database file" });
  const listingDigest = runtimeSnapshotListingDigest(s.wpContent.files);
  if (listingDigest !== s.wpContent.sha256) issues.push({ path: "/wpContent/sha256", message: `the wp-content listing digest is ${listingDigest}, the snapshot says ${s.wpContent.sha256}` });
  const tablesDigest = runtimeSnapshotTablesDigest(s.database.tables);
  if (tablesDigest !== s.database.tablesSha256) issues.push({ path: "/database/tablesSha256", message: `the table digest is ${tablesDigest}, the snapshot says ${s.database.tablesSha256}` });
  const digest = runtimeSnapshotDigest(s);
  if (digest !== s.sha256) issues.push({ path: "/sha256", message: `the snapshot digest is ${digest}, the snapshot says ${s.sha256}` });
  if (s.id !== `snapshot-${s.sha256.slice(0, 16)}`) issues.push({ path: "/id", message: `id ${s.id} does not pair with sha256 ${s.sha256}` });
  return { valid: issues.length === 0, issues };
}

/**
 * Throws unless `verifyRuntimeSnapshot(snapshot)` is valid.
 * @throws WpCodeboxError `snapshot-tampered` (a hash or size does not match: `data.issues`), or
 *   `invalid-snapshot` (not a `wp-codebox/wordpress-runtime-snapshot/v1` object).
 */
export function assertRuntimeSnapshot(snapshot: unknown): asserts snapshot is WordPressRuntimeSnapshot {
  const shape = validateAgainstSchema(WordPressRuntimeSnapshotSchema, snapshot);
  if (shape.length > 0) {
    throw new WpCodeboxError(
      "invalid-snapshot",
      `Not a ${WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA} snapshot: ${shape.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join("; ")}. Pass the object runtime.snapshot() returned, or load one with readRuntimeSnapshotFromBundle().`,
      { issues: shape },
    );
  }
  const { valid, issues } = verifyRuntimeSnapshot(snapshot);
  if (!valid) {
    throw new WpCodeboxError(
      "snapshot-tampered",
      `Snapshot refused: its hashes do not match its content (${issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join("; ")}). Use an unmodified snapshot.`,
      { issues },
    );
  }
}

/**
 * Restores a snapshot into a fresh runtime, after verifying its hashes.
 * @param snapshot - a `wp-codebox/wordpress-runtime-snapshot/v1` object with file contents.
 * @param backend - a backend with `restore` (the Playground backend).
 * @param options.runtime - create spec of the fresh runtime (WordPress/PHP must match the
 *   snapshot's `compatibility`); `options.mounts` replaces `runtime.mounts` when given.
 * @returns the restored runtime; dispose it when done.
 * @throws `invalid-snapshot`, `snapshot-tampered`, `snapshot-unsupported` (backend without
 *   restore), `snapshot-incompatible` (from the backend: versions or base differ).
 * @example const restored = await restoreRuntime(snapshot, createPlaygroundBackend(), { mounts });
 */
export async function restoreRuntime(
  snapshot: unknown,
  backend: RuntimeBackend,
  options: { runtime?: RuntimeCreateSpec; mounts?: MountSpec[] } = {},
): Promise<Runtime> {
  assertRuntimeSnapshot(snapshot);
  if (!backend.restore) {
    throw new WpCodeboxError("snapshot-unsupported", `The ${backend.kind} backend cannot restore snapshots. Use a backend that implements restore().`, { backend: backend.kind });
  }
  const spec: RuntimeCreateSpec = { ...(options.runtime ?? {}), ...(options.mounts ? { mounts: options.mounts } : {}) };
  return backend.restore(snapshot, spec);
}

/** Bundle paths the bundle writer masked a secret in (`files/review.json` `redaction.maskedFiles`); none when unreadable. */
async function maskedBundleFiles(bundleDir: string): Promise<string[]> {
  try {
    const review = JSON.parse(await readFile(join(bundleDir, ...BUNDLE_PATHS.review.split("/")), "utf8")) as { redaction?: { maskedFiles?: unknown } };
    const files = review.redaction?.maskedFiles;
    return Array.isArray(files) ? files.filter((f): f is string => typeof f === "string") : [];
  } catch {
    return [];
  }
}

/** A snapshot declared in the reference manifest (same shape `writeArtifactBundle` takes). */
export interface RuntimeSnapshotBundleRef {
  id: string;
  semantics: string;
  replay: { status: string };
  artifacts: string[];
}

/**
 * The bundle files of a snapshot: `files/runtime-snapshots/<id>/snapshot.json` (without contents)
 * and every carried file under `files/runtime-snapshots/<id>/<path>`. Carried files are
 * `application/octet-stream`: the bundle writer masks a secret in them byte for byte (same size,
 * same structure), and never rewrites them as text; the reference manifest entry has
 * `replay.status: "runtime-state-artifact"`.
 */
export function runtimeSnapshotBundleFiles(snapshot: WordPressRuntimeSnapshot): { files: ArtifactFile[]; ref: RuntimeSnapshotBundleRef } {
  const dir = `${RUNTIME_SNAPSHOTS_DIR}/${snapshot.id}`;
  const manifest = { ...snapshot, files: snapshot.files.map(({ content: _c, ...f }) => f) };
  const files: ArtifactFile[] = [
    { path: `${dir}/${RUNTIME_SNAPSHOT_MANIFEST_NAME}`, kind: RUNTIME_SNAPSHOT_KINDS.manifest, contentType: "application/json", content: `${JSON.stringify(manifest, null, 2)}\n` },
    ...snapshot.files.map((f) => ({ path: `${dir}/${f.path}`, kind: f.kind, contentType: "application/octet-stream", content: f.content ?? new Uint8Array() })),
  ];
  return { files, ref: { id: snapshot.id, semantics: snapshot.semantics, replay: { status: RUNTIME_STATE_ARTIFACT_SEMANTICS }, artifacts: files.map((f) => f.path) } };
}

/**
 * Reads a snapshot back from a bundle folder (`files/runtime-snapshots/<id>/`), contents included.
 * Verify it (or let `restoreRuntime` do it) before use.
 * @throws WpCodeboxError `snapshot-not-found` when the folder or a carried file is missing;
 *   `snapshot-redacted` when the bundle writer masked a secret in one of its files (listed in
 *   `files/review.json` `redaction.maskedFiles`): those files are no longer the state it hashed.
 */
export async function readRuntimeSnapshotFromBundle(bundleDir: string, id: string): Promise<WordPressRuntimeSnapshot> {
  const dir = join(bundleDir, ...RUNTIME_SNAPSHOTS_DIR.split("/"), id);
  const masked = await maskedBundleFiles(bundleDir);
  const ownMasked = masked.filter((path) => path.startsWith(`${RUNTIME_SNAPSHOTS_DIR}/${id}/`));
  if (ownMasked.length > 0) {
    throw new WpCodeboxError(
      "snapshot-redacted",
      `Snapshot ${id} in ${bundleDir} cannot be restored: ${ownMasked.length} of its files held a secret (--secret-env), which the bundle masks with "*" (${ownMasked.slice(0, 3).map((p) => p.slice(RUNTIME_SNAPSHOTS_DIR.length + id.length + 2)).join(", ")}${ownMasked.length > 3 ? ", …" : ""}). Restore it in the sandbox that took it (restore {snapshot}), or take it from a run without secrets.`,
      { id, maskedFiles: ownMasked },
    );
  }
  let manifest: WordPressRuntimeSnapshot;
  try {
    manifest = JSON.parse(await readFile(join(dir, RUNTIME_SNAPSHOT_MANIFEST_NAME), "utf8")) as WordPressRuntimeSnapshot;
  } catch {
    throw new WpCodeboxError("snapshot-not-found", `No snapshot ${id} in ${bundleDir}: expected ${RUNTIME_SNAPSHOTS_DIR}/${id}/${RUNTIME_SNAPSHOT_MANIFEST_NAME}. Collect artifacts with includeRuntimeSnapshotBundles: true.`, { id });
  }
  const files = await Promise.all(
    (manifest.files ?? []).map(async (f) => {
      try {
        return { ...f, content: new Uint8Array(await readFile(join(dir, ...f.path.split("/")))) };
      } catch {
        throw new WpCodeboxError("snapshot-not-found", `Snapshot ${id} in ${bundleDir} lacks its file ${f.path}.`, { id, path: f.path });
      }
    }),
  );
  return { ...manifest, files };
}

/**
 * Every regular file under `dir` as a snapshot listing entry, for the wp-content part of a
 * snapshot (both backends list their sandbox's wp-content this way).
 * @param dir - a host folder; a missing one lists nothing.
 * @param prefix - what each path starts with (`"wp-content"` gives `wp-content/plugins/x.php`).
 * @returns `{ path, bytes, sha256 }` per file, sorted by path (symlinks and other special files left out).
 */
export function listSnapshotFiles(dir: string, prefix: string): RuntimeSnapshotFileEntry[] {
  const out: RuntimeSnapshotFileEntry[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const a = join(abs, entry.name);
      const r = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(a, r);
      else if (entry.isFile()) {
        const bytes = readFileSync(a);
        out.push({ path: r, bytes: bytes.byteLength, sha256: sha256Hex(bytes) });
      }
    }
  };
  if (existsSync(dir)) walk(dir, prefix);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Where a snapshot's wp-content file goes, relative to the sandbox's wp-content folder.
 * @param path - a listing path, e.g. `wp-content/plugins/x.php`.
 * @returns `plugins/x.php`.
 * @throws `invalid-snapshot` for a path outside wp-content.
 */
export function snapshotContentPath(path: string): string {
  if (!path.startsWith("wp-content/")) throw new WpCodeboxError("invalid-snapshot", `The snapshot lists ${path} as a wp-content file; its paths must start with wp-content/.`, { path });
  return path.slice("wp-content/".length);
}
