/**
 * Snapshots on the native backend, on real parts (Debian's PHP, MariaDB, mariadb-dump, bubblewrap):
 * a snapshot carries the MariaDB database as a dump (`database.engine: "mariadb"`), verifies, goes
 * into a bundle and back, and `restoreRuntime` loads it into a fresh sandbox: rows, a table the
 * sandbox created and a wp-content file come back; what was written after the snapshot does not.
 * Skipped, naming the packages, when the Debian packages are missing.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  RUNTIME_SNAPSHOT_KINDS,
  readRuntimeSnapshotFromBundle,
  restoreRuntime,
  verifyRuntimeSnapshot,
  writeArtifactBundle,
  type Runtime,
  type WordPressRuntimeSnapshot,
} from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { createBackend } from "../../packages/cli/src/commands/backends.js";
import { recordedBackend, replayEpisode } from "../../packages/cli/src/commands/episode-replay.js";
import { show, spawnCli } from "./spawn-cli.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

const STATE = `<?php global $wpdb;
echo json_encode([
  'option' => get_option('wp_codebox_snap'),
  'table' => $wpdb->get_var("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'wp_codebox_made'") ? (int) $wpdb->get_var('SELECT SUM(n) FROM wp_codebox_made') : null,
  'file' => @file_get_contents(WP_CONTENT_DIR . '/uploads/snap.txt'),
  'later' => get_option('wp_codebox_later'),
]);`;

describe("native snapshots and restore", { skip, timeout: 300_000 }, () => {
  const backend = createBackend("native", { cwd: process.cwd() });
  let runtime: Runtime;
  let restored: Runtime | undefined;
  let snapshot: WordPressRuntimeSnapshot;
  const dirs: string[] = [];
  const php = async (rt: Runtime, code: string) => {
    const r = await rt.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
    return r;
  };

  before(async () => {
    runtime = await backend.create({});
    await php(runtime, `<?php global $wpdb;
      update_option('wp_codebox_snap', 'kept');
      $wpdb->query('CREATE TABLE wp_codebox_made (n INT PRIMARY KEY)');
      $wpdb->query('INSERT INTO wp_codebox_made VALUES (2), (40)');
      wp_mkdir_p(WP_CONTENT_DIR . '/uploads');
      file_put_contents(WP_CONTENT_DIR . '/uploads/snap.txt', 'in the snapshot');`);
    snapshot = (await runtime.snapshot!()) as WordPressRuntimeSnapshot;
    await php(runtime, "<?php update_option('wp_codebox_later', 'after'); update_option('wp_codebox_snap', 'changed'); unlink(WP_CONTENT_DIR . '/uploads/snap.txt');");
  });
  after(async () => {
    await runtime?.dispose();
    await restored?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("the snapshot carries a MariaDB dump and verifies", () => {
    assert.deepEqual(verifyRuntimeSnapshot(snapshot).issues, []);
    assert.equal(snapshot.compatibility.backend, "native");
    assert.equal(snapshot.database.engine, "mariadb");
    assert.equal(snapshot.database.path, "database/wordpress.sql");
    const dump = snapshot.files.find((f) => f.kind === RUNTIME_SNAPSHOT_KINDS.database)!;
    const sql = Buffer.from(dump.content!).toString("utf8");
    assert.match(sql, /CREATE TABLE `wp_codebox_made`/);
    assert.match(sql, /'wp_codebox_snap','kept'/);
    assert.ok(snapshot.database.tables.some((t) => t.name === "wp_codebox_made" && t.rows === 2));
    assert.ok(snapshot.files.some((f) => f.path === "wp-content/uploads/snap.txt"));
    assert.ok(!snapshot.wpContent.files.some((f) => f.path === "database/wordpress.sql"));
  });

  it("two snapshots of an unchanged sandbox are the same bytes and id; a write changes them", async () => {
    const first = (await runtime.snapshot!()) as WordPressRuntimeSnapshot;
    const second = (await runtime.snapshot!()) as WordPressRuntimeSnapshot;
    assert.equal(second.database.sha256, first.database.sha256);
    assert.equal(second.id, first.id);
    await php(runtime, "<?php update_option('wp_codebox_later', 'again');");
    const third = (await runtime.snapshot!()) as WordPressRuntimeSnapshot;
    assert.notEqual(third.id, first.id);
    assert.notEqual(third.database.tablesSha256, first.database.tablesSha256);
  });

  it("goes into a bundle and restoreRuntime loads it into a fresh native sandbox", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wp-codebox-native-snap-"));
    dirs.push(dir);
    const bundle = await writeArtifactBundle(dir, await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: true }));
    const read = await readRuntimeSnapshotFromBundle(bundle.directory, snapshot.id);
    await php(runtime, "<?php update_option('wp_codebox_later', 'after');");
    restored = await restoreRuntime(read, backend);
    const r = await php(restored, STATE);
    assert.deepEqual(r.json, { option: "kept", table: 42, file: "in the snapshot", later: false });
    assert.equal(restored.info().backend, "native");
    // reset() still goes back to the state right after boot, not to the snapshot.
    await restored.reset!();
    assert.deepEqual((await php(restored, STATE)).json, { option: false, table: null, file: false, later: false });
  });

  it("a tampered dump is refused before anything boots", async () => {
    const dump = snapshot.files.find((f) => f.kind === RUNTIME_SNAPSHOT_KINDS.database)!;
    const content = new Uint8Array(dump.content!);
    content[content.length - 2] = content[content.length - 2]! ^ 1;
    const bad = { ...snapshot, files: snapshot.files.map((f) => (f === dump ? { ...f, content } : f)) };
    await assert.rejects(restoreRuntime(bad, backend), (e: { code?: string }) => e.code === "snapshot-tampered");
  });
});

describe("an episode on the native backend with a snapshot step, replayed on native", { skip, timeout: 300_000 }, () => {
  let tmp: string;
  before(() => (tmp = mkdtempSync(join(tmpdir(), "wp-codebox-native-episode-"))));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("episode run bundles the MariaDB snapshot; episode replay boots native (the recorded backend) and matches", async () => {
    const script = join(tmp, "episode.json");
    writeFileSync(script, JSON.stringify({
      schema: "wp-codebox/episode-script/v1",
      runtime: { backend: "native" },
      artifacts: { includeRuntimeSnapshotBundles: true },
      steps: [
        { action: { command: "wordpress.run-php", args: { code: "<?php update_option('wp_codebox_episode', 'kept'); echo 'written';" } } },
        { snapshot: true },
        { action: { command: "wordpress.run-php", args: { code: "<?php global $wpdb; echo json_encode([get_option('wp_codebox_episode'), (bool) preg_match('/MariaDB/', $wpdb->get_var('SELECT VERSION()'))]);" } } },
      ],
    }));
    const bundle = join(tmp, "bundle");
    const run = await spawnCli(["episode", "run", script, "--artifacts", bundle, "--json"], { env: { WP_CODEBOX_CACHE_DIR: undefined } as unknown as NodeJS.ProcessEnv });
    assert.equal(run.code, 0, show(run));
    const trace = JSON.parse(readFileSync(join(bundle, "files", "runtime-episode-trace.json"), "utf8")) as { runtime: { backend: string }; snapshots: { id: string }[] };
    assert.equal(trace.runtime.backend, "native");
    assert.equal(trace.snapshots.length, 1);
    const [id] = readdirSync(join(bundle, "files", "runtime-snapshots"));
    assert.match(readFileSync(join(bundle, "files", "runtime-snapshots", id!, "database", "wordpress.sql"), "utf8"), /'wp_codebox_episode','kept'/);
    assert.equal(recordedBackend(bundle), "native");
    const report = await replayEpisode({ bundle, cwd: tmp });
    assert.equal(report.ok, true, JSON.stringify(report.steps.filter((s) => !s.match)));
    assert.equal(report.summary.steps, 2);
  });
});
