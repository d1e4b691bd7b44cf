/**
 * A hostile sandbox on the native backend against the host, which runs as root and exchanges
 * files with the sandbox through folders the sandbox can write (its internal folder, wp-content).
 * For every kind of thing PHP can leave at a name the host then writes or reads (a link to a host
 * file, a dangling link to where a host file would be made, a FIFO, a link to /dev/zero, a link to
 * a host folder in place of a folder), every host operation (run-php, rest-request, http-request,
 * snapshot, restore, reset) finishes, leaves the host's files as they were and reports nothing of
 * them. And a link left in place of the folder holding a mount point does not have reset() empty
 * a host folder. A hostile `--wordpress` tree (its wp-content, or the db.php in it, a link to a
 * host path) does not have the host write there while the cached site is made. Skipped, naming the packages, without the native backend's Debian packages.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionResult, Runtime } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, createNativeBackend, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { findWordPressBuild } from "@wp-codebox/runtime-playground";
import { extractZip } from "../packages/runtime-playground/src/site/zip.js";
import { createBackend } from "../packages/cli/src/commands/backends.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

/** A host file whose content is valid as every JSON file the host reads back (so a read through a link would show). */
const SECRET = JSON.stringify({ query: "HOST-SECRET", message: "HOST-SECRET", file: "HOST-SECRET", line: 1, type: 1, status: 599, headers: { "x-leak": "HOST-SECRET" } });

/** Names in the internal folder the host writes before a run (and reads or removes after it). */
const WRITTEN = ["request.json", "rest-request.json", "http-request.json", "clean-db.json", "snapshot.sql", "clean-db-signatures.json"];
/** Names PHP writes and the host reads or checks after a run. */
const READ = ["last-error.json", "db-errors.jsonl", "http-response.json", "actor-missing"];

interface Kind {
  name: string;
  /** PHP making the thing at `$p` (`$host` is the host folder's path). */
  php: string;
}

const KINDS: Kind[] = [
  { name: "a link to a host file", php: "symlink($host . '/secret.json', $p);" },
  { name: "a dangling link to where a host file would be made", php: "symlink($host . '/made-by-host', $p);" },
  { name: "a FIFO", php: "posix_mkfifo($p, 0666);" },
  { name: "a link to /dev/zero", php: "symlink('/dev/zero', $p);" },
];

/** PHP that replaces each of `names` in the internal folder by the kind, and code/ by a link to the host folder. */
function planter(kind: Kind, host: string, names: string[]): string {
  return `$host = ${JSON.stringify(host)}; foreach (${JSON.stringify(names)} as $n) { $p = '/internal/wp-codebox/' . $n; if (is_dir($p) && !is_link($p)) { @rmdir($p); } else { @unlink($p); } ${kind.php} } @rename('/internal/wp-codebox/code', '/internal/wp-codebox/code-away'); @symlink($host, '/internal/wp-codebox/code');`;
}

describe("a hostile native sandbox leaves the host's files alone", { skip, timeout: 600_000 }, () => {
  let root: string;
  let host: string;
  let runtime: Runtime;
  const factory = createBackend("native", { cwd: process.cwd() });
  const results: ExecutionResult[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "wp-codebox-hostile-"));
    host = join(root, "host");
    mkdirSync(host);
    writeFileSync(join(host, "secret.json"), SECRET);
    mkdirSync(join(root, "mine"));
    writeFileSync(join(root, "mine", "mine.php"), "<?php // mounted");
    // mu-plugins is not in the cached site's wp-content: the mount makes a folder only the sandbox has.
    runtime = await factory.create({ mounts: [{ source: join(root, "mine"), target: "/wordpress/wp-content/mu-plugins/mine", mode: "readonly" }] });
  });
  after(async () => {
    await runtime?.dispose();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const php = async (code: string, extra: string[] = []) => {
    const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php ${code}`, ...extra], timeoutMs: 20_000 });
    results.push(result);
    return result;
  };
  const hostUnchanged = () => {
    assert.deepEqual(readdirSync(host), ["secret.json"]);
    assert.equal(readFileSync(join(host, "secret.json"), "utf8"), SECRET);
    for (const r of results) assert.doesNotMatch(JSON.stringify(r), /HOST-SECRET/, "a host file's content reached a result");
  };

  for (const kind of KINDS) {
    it(`${kind.name} at every name the host writes, then each host operation`, async () => {
      const operations: [string, () => Promise<unknown>][] = [
        ["run-php", () => php("echo 'ok';")],
        ["rest-request", async () => results.push(await runtime.execute({ command: "wordpress.rest-request", args: ["route=/wp/v2/types/post"], timeoutMs: 20_000 }))],
        ["http-request", async () => results.push(await runtime.execute({ command: "wordpress.http-request", args: ["path=/"], timeoutMs: 20_000 }))],
        ["snapshot and restore", async () => runtime.restoreSnapshot!(await runtime.snapshot!())],
        ["reset", () => runtime.reset!()],
      ];
      for (const [name, operation] of operations) {
        const planted = await php(planter(kind, host, WRITTEN), ["bootstrap=none"]);
        assert.equal(planted.status, "ok", JSON.stringify(planted.error));
        await operation();
        hostUnchanged();
        const alive = await php("echo 'alive';", ["bootstrap=none"]);
        assert.equal(alive.stdout, "alive", `after ${name}: ${JSON.stringify(alive.error)}`);
      }
    });

    it(`${kind.name} left by PHP at every name the host reads after a run`, async () => {
      // The run's own code plants them as it ends (after runner.php and WordPress wrote theirs).
      const plant = planter(kind, host, READ);
      const ran = await php(`global $wpdb; $wpdb->query('SELECT wp_codebox_missing FROM nowhere'); ${plant}`);
      hostUnchanged();
      assert.ok(ran.status === "ok" || ran.status === "error", ran.status);
      // (What the run's own PHP does to its result is its business; the host must only stay intact.)
      await php(`register_shutdown_function(function () { ${plant} }); wp_codebox_missing_function();`);
      hostUnchanged();
      const alive = await php("echo 'alive';", ["bootstrap=none"]);
      assert.equal(alive.stdout, "alive", JSON.stringify(alive.error));
    });
  }

  it("a link to a host folder in place of the folder holding a mount point: reset() removes the link, the host folder keeps its files", async () => {
    const moved = await php(`$ok = rename(WP_CONTENT_DIR . '/mu-plugins', WP_CONTENT_DIR . '/mu-away'); echo json_encode([$ok, symlink(${JSON.stringify(host)}, WP_CONTENT_DIR . '/mu-plugins')]);`);
    assert.deepEqual(moved.json, [true, true], JSON.stringify(moved.error ?? moved.stdout));
    await runtime.reset!();
    hostUnchanged();
    const after = await php("echo json_encode([is_link('/wordpress/wp-content/mu-plugins'), file_exists('/wordpress/wp-content/mu-plugins/mine/mine.php')]);", ["bootstrap=none"]);
    assert.deepEqual(after.json, [false, true], JSON.stringify(after.error ?? after.stdout));
  });
});

describe("what a sandbox's PHP can do to its MariaDB is refused or undone by reset()", { skip, timeout: 600_000 }, () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await createBackend("native", { cwd: process.cwd() }).create({});
  });
  after(async () => runtime?.dispose());

  // Each statement would outlive reset() (the clean copy it restores from, server-wide state,
  // objects reset() does not track) if WordPress's database account could run it.
  const cases: { name: string; sql: string }[] = [
    { name: "changing the clean copy reset() restores from", sql: "UPDATE wp_codebox_clean.wp_options SET option_value = 'PWNED' WHERE option_name = 'blogname'" },
    { name: "a server-wide setting", sql: "SET GLOBAL sql_mode = 'ANSI_QUOTES'" },
    { name: "a trigger", sql: "CREATE TRIGGER wp_codebox_t BEFORE INSERT ON wp_posts FOR EACH ROW SET NEW.post_title = 'PWNED'" },
    { name: "a view", sql: "CREATE VIEW wp_codebox_v AS SELECT 1" },
    { name: "a stored procedure", sql: "CREATE PROCEDURE wp_codebox_p() SELECT 1" },
    { name: "an account", sql: "CREATE USER 'x'@'localhost'" },
    { name: "reading another database", sql: "SELECT COUNT(*) FROM mysql.user" },
  ];
  for (const c of cases) {
    it(`${c.name} is a database error, and reset() leaves the site as booted`, async () => {
      const ran = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php global $wpdb; $wpdb->query(${JSON.stringify(c.sql).replace(/\$/g, "\\$")}); update_option('blogname', 'changed');`] });
      assert.equal(ran.status, "ok", JSON.stringify(ran.error));
      assert.equal(ran.dbErrors?.length, 1, JSON.stringify(ran.dbErrors));
      await runtime.reset!();
      const read = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php global $wpdb; $id = wp_insert_post(['post_title' => 'mine', 'post_status' => 'publish']); echo json_encode([get_option('blogname'), get_post($id)->post_title, $wpdb->get_var('SELECT @@GLOBAL.sql_mode LIKE \"%ANSI_QUOTES%\"')]);"] });
      assert.deepEqual(read.json, ["wp-codebox", "mine", "0"], JSON.stringify(read.error ?? read.stdout));
    });
  }

  it("a wp-content file rewritten with its size and mtime kept (touch -d) is put back by reset()", async () => {
    // touch -r keeps the nanoseconds too (PHP's touch() sets whole seconds).
    const code = "$f = WP_CONTENT_DIR . '/index.php'; $was = file_get_contents($f); $t = filemtime($f); copy($f, '/tmp/ref'); shell_exec('touch -r ' . escapeshellarg($f) . ' /tmp/ref'); file_put_contents($f, strrev($was)); shell_exec('touch -r /tmp/ref ' . escapeshellarg($f)); clearstatcache(); echo json_encode([strlen($was) === filesize($f), $t === filemtime($f), $was]);";
    const changed = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php ${code}`] });
    const [sameSize, sameTime, original] = changed.json as [boolean, boolean, string];
    assert.deepEqual([sameSize, sameTime], [true, true], JSON.stringify(changed.error ?? changed.stdout));
    await runtime.reset!();
    const read = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo file_get_contents('/wordpress/wp-content/index.php');", "bootstrap=none"] });
    assert.equal(read.stdout, original);
  });

  it("a file written past the size limit is php-exit naming SIGXFSZ and the limit; reset() removes it", async () => {
    const ran = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php $f = fopen('/wordpress/wp-content/big.bin', 'w'); $c = str_repeat('x', 8 << 20); for ($i = 0; $i < 130; $i++) { fwrite($f, $c); }", "bootstrap=none"] });
    assert.equal(ran.status, "error");
    assert.equal(ran.error?.code, "php-exit", JSON.stringify(ran.error));
    assert.match(ran.error!.message, /SIGXFSZ: it wrote a file over the sandbox's file size limit \(1 GiB\)/);
    await runtime.reset!();
    const gone = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php var_export(file_exists('/wordpress/wp-content/big.bin'));", "bootstrap=none"] });
    assert.equal(gone.stdout, "false");
  });

  it("MariaDB's root cannot be reached without its password", async () => {
    const ran = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php mysqli_report(MYSQLI_REPORT_OFF); $m = @new mysqli('localhost', 'root', '', '', 0, '/run/mysqld/mysqld.sock'); echo json_encode([$m->connect_errno !== 0, (bool) getenv('WP_CODEBOX_DB_ROOT_PASSWORD')]);", "bootstrap=none"] });
    assert.deepEqual(ran.json, [true, false], JSON.stringify(ran.error ?? ran.stdout));
  });
});

describe("a hostile WordPress tree leaves the host's files alone while the cached site is made", { skip, timeout: 600_000 }, () => {
  const cases: { name: string; plant(tree: string, host: string): void; code?: string }[] = [
    { name: "wp-content a link to a host folder: refused before anything is written", plant: (tree, host) => (rmSync(join(tree, "wp-content"), { recursive: true }), symlinkSync(host, join(tree, "wp-content"))), code: "wordpress-source-invalid" },
    { name: "wp-content/db.php a link to a host file: the site is made, the host file keeps its bytes", plant: (tree, host) => (rmSync(join(tree, "wp-content", "db.php"), { force: true }), symlinkSync(join(host, "secret.json"), join(tree, "wp-content", "db.php"))) },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const root = mkdtempSync(join(tmpdir(), "wp-codebox-hostile-tree-"));
      try {
        const tree = join(root, "wordpress");
        const host = join(root, "host");
        mkdirSync(host);
        writeFileSync(join(host, "secret.json"), SECRET);
        extractZip(findWordPressBuild().zipPath, tree);
        c.plant(tree, host);
        const backend = createNativeBackend({ cacheDir: join(root, "cache") });
        const made = backend.create({ wordpress: { path: tree } });
        if (c.code) {
          await assert.rejects(made, (error: Error & { code?: string }) => error.code === c.code);
        } else {
          const runtime = await made;
          try {
            const r = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] });
            assert.equal(r.status, "ok", JSON.stringify(r.error));
          } finally {
            await runtime.dispose();
          }
        }
        assert.deepEqual(readdirSync(host), ["secret.json"]);
        assert.equal(readFileSync(join(host, "secret.json"), "utf8"), SECRET);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});

describe("a host temporary directory the sandbox cannot be made in", { skip, timeout: 120_000 }, () => {
  const cases: { name: string; dir: string; why: RegExp }[] = [
    { name: "read-only (a kernel file system)", dir: "/sys/kernel", why: /cannot be written/ },
    { name: "missing", dir: "/nonexistent/wp-codebox-tmp", why: /does not exist/ },
  ];
  for (const c of cases) {
    it(`${c.name}: boot-failed naming it and TMPDIR, not an unexpected error`, async () => {
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = c.dir;
      try {
        await assert.rejects(createBackend("native", { cwd: process.cwd() }).create({}), (error: Error & { code?: string }) => {
          assert.equal(error.code, "boot-failed", error.message);
          assert.match(error.message, c.why);
          assert.match(error.message, /TMPDIR/);
          return true;
        });
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
      }
    });
  }
});

describe("a damaged native site cache", { skip, timeout: 600_000 }, () => {
  // Each removes a part every boot needs; the entry still says it is complete.
  const damages: { name: string; path: string }[] = [
    { name: "the WordPress database's folder deleted", path: "data/wordpress" },
    { name: "MariaDB's system tables deleted", path: "data/mysql" },
    { name: "the clean copy's signatures deleted", path: "clean-db-signatures.json" },
  ];
  it(`is made again before a boot uses it (${damages.map((d) => d.name).join("; ")})`, async () => {
    const root = mkdtempSync(join(tmpdir(), "wp-codebox-damaged-cache-"));
    try {
      const tree = join(root, "wordpress");
      extractZip(findWordPressBuild().zipPath, tree);
      const backend = createNativeBackend({ cacheDir: join(root, "cache") });
      const boot = async () => {
        const runtime = await backend.create({ wordpress: { path: tree } });
        try {
          const r = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] });
          assert.equal(r.stdout, "wp-codebox", JSON.stringify(r.error ?? r.stdout.slice(0, 300)));
          return runtime.info().bootMode;
        } finally {
          await runtime.dispose();
        }
      };
      assert.equal(await boot(), "installed");
      const sites = join(root, "cache", "native-sites");
      for (const damage of damages) {
        const [entry] = readdirSync(sites);
        rmSync(join(sites, entry!, damage.path), { recursive: true, force: true });
        assert.equal(await boot(), "installed", damage.name);
        assert.equal(readdirSync(sites).length, 1, "the damaged entry is gone");
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
