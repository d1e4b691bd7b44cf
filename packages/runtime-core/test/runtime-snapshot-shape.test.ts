/**
 * Unit: the runtime snapshot's database entry on both engines. A SQLite snapshot carries the
 * database file inside wp-content (listed there); a MariaDB snapshot (native backend) carries an
 * SQL dump outside wp-content (`database/wordpress.sql`, not listed). Both are hash-checked the
 * same way: every tampering below is refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  RUNTIME_SNAPSHOT_KINDS,
  RUNTIME_STATE_ARTIFACT_SEMANTICS,
  WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA,
  assertRuntimeSnapshot,
  finalizeRuntimeSnapshot,
  runtimeSnapshotListingDigest,
  runtimeSnapshotTablesDigest,
  sha256Hex,
  verifyRuntimeSnapshot,
  type WordPressRuntimeSnapshot,
} from "@wp-codebox/runtime-core";

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const tables = [{ name: "wp_options", rows: 2, sha256: "a".repeat(64) }];

function snapshot(engine: "sqlite" | "mariadb"): WordPressRuntimeSnapshot {
  const dbPath = engine === "sqlite" ? "wp-content/database/.ht.sqlite" : "database/wordpress.sql";
  const db = bytes(engine === "sqlite" ? "SQLite format 3\0" : "CREATE TABLE `wp_options` (option_id int);\n");
  const plugin = bytes("<?php // changed");
  const listing = [
    { path: "wp-content/plugins/p.php", bytes: plugin.byteLength, sha256: sha256Hex(plugin) },
    ...(engine === "sqlite" ? [{ path: dbPath, bytes: db.byteLength, sha256: sha256Hex(db) }] : []),
  ].sort((a, b) => (a.path < b.path ? -1 : 1));
  return finalizeRuntimeSnapshot({
    schema: WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA,
    version: 1,
    semantics: RUNTIME_STATE_ARTIFACT_SEMANTICS,
    createdAt: "2026-01-01T00:00:00.000Z",
    compatibility: { backend: engine === "sqlite" ? "playground" : "native", wordpressVersion: "6.8.3", phpVersion: "8.2" },
    activeTheme: "twentytwentyfive",
    activePlugins: [],
    mounts: [],
    database: { engine, path: dbPath, bytes: db.byteLength, sha256: sha256Hex(db), tables, tablesSha256: runtimeSnapshotTablesDigest(tables) },
    wpContent: { files: listing, sha256: runtimeSnapshotListingDigest(listing), baseSha256: "b".repeat(64) },
    files: [
      { path: dbPath, kind: RUNTIME_SNAPSHOT_KINDS.database, bytes: db.byteLength, sha256: sha256Hex(db), content: db },
      { path: "wp-content/plugins/p.php", kind: RUNTIME_SNAPSHOT_KINDS.file, bytes: plugin.byteLength, sha256: sha256Hex(plugin), content: plugin },
    ],
  });
}

for (const engine of ["sqlite", "mariadb"] as const) {
  test(`a ${engine} snapshot verifies, and its id pairs with its digest`, () => {
    const s = snapshot(engine);
    assert.deepEqual(verifyRuntimeSnapshot(s).issues, []);
    assert.equal(s.id, `snapshot-${s.sha256.slice(0, 16)}`);
    assert.doesNotThrow(() => assertRuntimeSnapshot(s));
  });
}

const TAMPERED: { name: string; engine: "sqlite" | "mariadb"; change(s: WordPressRuntimeSnapshot): unknown; code: string; issue: RegExp }[] = [
  {
    name: "a changed dump byte",
    engine: "mariadb",
    change: (s) => ({ ...s, files: s.files.map((f) => (f.kind === RUNTIME_SNAPSHOT_KINDS.database ? { ...f, content: bytes("DROP TABLE wp_users;\n".padEnd(f.bytes, " ")) } : f)) }),
    code: "snapshot-tampered",
    issue: /content has SHA-256/,
  },
  {
    name: "a dump the database entry does not describe",
    engine: "mariadb",
    change: (s) => ({ ...s, database: { ...s.database, bytes: s.database.bytes + 1 } }),
    code: "snapshot-tampered",
    issue: /database entry does not match/,
  },
  {
    name: "a dump listed as a wp-content file",
    engine: "mariadb",
    change: (s) => {
      const dump = s.files.find((f) => f.kind === RUNTIME_SNAPSHOT_KINDS.database)!;
      const files = [...s.wpContent.files, { path: dump.path, bytes: dump.bytes, sha256: dump.sha256 }];
      return finalizeRuntimeSnapshot({ ...s, wpContent: { ...s.wpContent, files, sha256: runtimeSnapshotListingDigest(files) } });
    },
    code: "snapshot-tampered",
    issue: /must not be listed/,
  },
  {
    name: "a SQLite database file missing from the wp-content listing",
    engine: "sqlite",
    change: (s) => {
      const files = s.wpContent.files.filter((f) => !f.path.endsWith(".ht.sqlite"));
      return finalizeRuntimeSnapshot({ ...s, wpContent: { ...s.wpContent, files, sha256: runtimeSnapshotListingDigest(files) } });
    },
    code: "snapshot-tampered",
    issue: /does not match its wpContent or core listing entry/,
  },
  {
    name: "an engine the contract does not know",
    engine: "mariadb",
    change: (s) => ({ ...s, database: { ...s.database, engine: "postgres" } }),
    code: "invalid-snapshot",
    issue: /engine/,
  },
];

for (const t of TAMPERED) {
  test(`refused: ${t.name} (${t.engine})`, () => {
    const bad = t.change(snapshot(t.engine));
    const { valid, issues } = verifyRuntimeSnapshot(bad);
    assert.equal(valid, false);
    assert.match(issues.map((i) => `${i.path}: ${i.message}`).join("\n"), t.issue);
    assert.throws(() => assertRuntimeSnapshot(bad), (e: { code?: string }) => e.code === t.code);
  });
}
