/**
 * Integration: `recycle()` (how a warm pool hands a sandbox to its next session) puts the PHP
 * worker's in-memory file system back as at boot without booting a new worker when nothing that
 * was there at boot changed, and replaces the worker when something did. Either way the next
 * session sees nothing of the previous one, and seeded entropy repeats what a fresh boot gives.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;

before(async () => {
  runtime = await createPlaygroundBackend().create({ seed: 11, origin: "loopback" });
});
after(async () => {
  await runtime?.dispose();
});

async function php(code: string): Promise<string> {
  const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stderr}`);
  return result.stdout;
}

/** Recycles and returns the `runtime-recycled` event's data. */
async function recycle(): Promise<{ workers: string; restartReason?: string }> {
  await runtime.recycle();
  const events = (await runtime.collectArtifacts()).events;
  const recycled = events.filter((e) => e.type === "runtime-recycled").at(-1);
  assert.ok(recycled, "a runtime-recycled event");
  return recycled.data as { workers: string; restartReason?: string };
}

const RANDOM = "<?php echo wp_rand(), '|', bin2hex(random_bytes(8)), '|', mt_rand();";
/** What a session could leave behind, as seen from PHP. */
const LEFT_BEHIND = `<?php echo json_encode([
  'tmp' => file_exists('/tmp/wpcb-left/x.php'),
  'mu' => file_exists('/internal/shared/mu-plugins/wpcb-left.php') || defined('WPCB_LEFT'),
  'home' => file_exists('/home/wpcb-left.txt'),
]);`;

describe("recycle with real WordPress", { timeout: 600_000 }, () => {
  it("deletes what a session created in memory without a new worker, and forgets its compiled PHP", async () => {
    const fresh = await php(RANDOM);
    await php(`<?php
      mkdir('/tmp/wpcb-left');
      file_put_contents('/tmp/wpcb-left/x.php', '<?php return "one";');
      touch('/tmp/wpcb-left/x.php', 1000000000);
      include '/tmp/wpcb-left/x.php';
      file_put_contents('/internal/shared/mu-plugins/wpcb-left.php', "<?php define('WPCB_LEFT', 1);");
      file_put_contents('/home/wpcb-left.txt', 'left');`);
    assert.deepEqual(JSON.parse(await php(LEFT_BEHIND)), { tmp: true, mu: true, home: true }, "the session sees what it made");

    const recycled = await recycle();
    assert.equal(recycled.workers, "restored", recycled.restartReason);
    // The first command of each session: the same piece of work after boot.
    assert.equal(await php(RANDOM), fresh, "seeded entropy repeats what the fresh sandbox gave");
    assert.deepEqual(JSON.parse(await php(LEFT_BEHIND)), { tmp: false, mu: false, home: false });
    // Same path, size and mtime, new content: OPcache must not run the previous session's bytecode.
    assert.equal(await php(`<?php mkdir('/tmp/wpcb-left'); file_put_contents('/tmp/wpcb-left/x.php', '<?php return "two";'); touch('/tmp/wpcb-left/x.php', 1000000000); echo include '/tmp/wpcb-left/x.php';`), "two");
    assert.equal((await recycle()).workers, "restored");
  });

  it("a session that ended with PHP fatal errors is recycled like any other: its files are gone, the worker stays", async () => {
    // php-wasm used to swap in a new PHP runtime after every request that exited non-zero; the
    // worker then watched the old runtime's files and kept this session's for the next one.
    await php("<?php mkdir('/tmp/wpcb-fatal'); file_put_contents('/tmp/wpcb-fatal/x.txt', 'left');");
    for (const code of ["<?php undefined_function_in_session();", "<?php throw new Exception('uncaught');", "<?php exit(3);"]) {
      const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
      assert.equal(result.status, "error", code);
    }
    assert.equal(await php("<?php echo file_get_contents('/tmp/wpcb-fatal/x.txt');"), "left");
    assert.equal((await recycle()).workers, "restored");
    assert.equal(await php("<?php var_export(file_exists('/tmp/wpcb-fatal/x.txt'));"), "false");
    const events = (await runtime.collectArtifacts()).events;
    assert.equal(events.filter((e) => e.type === "php-worker-replaced").length, 0);
  });

  it("drops an OPcache file-cache entry a session rewrote instead of replacing the worker", async () => {
    const entry = await php(`<?php
      $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator('/internal/shared/opcache', FilesystemIterator::SKIP_DOTS));
      foreach ($it as $f) { if (str_ends_with((string) $f, '.bin')) { echo $f; break; } }`);
    assert.match(entry, /\.bin$/, "the worker has OPcache file-cache entries from boot");
    await php(`<?php file_put_contents('${entry}', 'a session wrote this');`);
    const recycled = await recycle();
    assert.equal(recycled.workers, "restored", recycled.restartReason);
    // A missing entry is a cache miss (compiled again); the session's bytes are gone.
    assert.equal(await php(`<?php clearstatcache(); echo file_exists('${entry}') ? file_get_contents('${entry}') : 'missing';`), "missing");
  });

  // Every way a session can change a file that was there at boot: its bytes are not kept, so the
  // worker is replaced, and the next session gets the boot content back.
  const BOOT_FILE = "/internal/shared/mu-plugins/0-playground.php";
  const changes: Array<[string, string]> = [
    ["append", `file_put_contents('${BOOT_FILE}', "\\n// changed", FILE_APPEND);`],
    ["overwrite with the same size", `$s = file_get_contents('${BOOT_FILE}'); file_put_contents('${BOOT_FILE}', strtoupper($s));`],
    ["truncate", `$h = fopen('${BOOT_FILE}', 'r+'); ftruncate($h, 10); fclose($h);`],
    ["chmod", `chmod('${BOOT_FILE}', 0600);`],
    ["touch", `touch('${BOOT_FILE}', 1000000000);`],
    ["rename", `rename('${BOOT_FILE}', '/tmp/moved.php');`],
    ["unlink", `unlink('${BOOT_FILE}');`],
    ["replace by rename", `file_put_contents('/tmp/new.php', '<?php // new'); rename('/tmp/new.php', '${BOOT_FILE}');`],
  ];
  const FINGERPRINT = `<?php clearstatcache(); echo file_exists('${BOOT_FILE}') ? md5_file('${BOOT_FILE}') . ':' . decoct(fileperms('${BOOT_FILE}') & 0777) . ':' . filemtime('${BOOT_FILE}') : 'missing';`;

  it("replaces the worker when a session changed a file that was there at boot (every kind of change)", async () => {
    const boot = await php(FINGERPRINT);
    assert.notEqual(boot, "missing");
    for (const [kind, change] of changes) {
      await php(`<?php ${change}`);
      assert.notEqual(await php(FINGERPRINT), boot, `${kind}: the change is visible in the session`);
      const recycled = await recycle();
      assert.equal(recycled.workers, "restarted", `${kind}: a new worker`);
      assert.match(recycled.restartReason ?? "", /0-playground\.php|was changed|moved or removed/, kind);
      assert.equal(await php(FINGERPRINT), boot, `${kind}: the boot content is back`);
    }
  });
});

describe("recycle with a virtual clock and a seed", { timeout: 600_000 }, () => {
  it("the first command of every session sees the instants and entropy of a freshly booted sandbox's first command", async () => {
    const clocked = await createPlaygroundBackend().create({ seed: 11, clock: "2030-01-01T00:00:00Z" });
    try {
      // WordPress loads first (its path lookups and its own uniqid() call read the clock), then
      // every way PHP reads time or entropy.
      const code = `<?php echo json_encode(['microtime' => sprintf('%.6f', microtime(true)), 'hrtime' => hrtime(true), 'uniqid' => uniqid(), 'lcg' => lcg_value(), 'mt' => mt_rand(), 'bytes' => bin2hex(random_bytes(8)), 'wp' => wp_rand()]);`;
      const first = async () => {
        const result = await clocked.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
        assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stderr}`);
        return result.stdout;
      };
      const fresh = await first();
      // One command per session: each recycled session replays the instants of the one before it.
      for (let session = 2; session <= 4; session++) {
        await clocked.recycle();
        assert.equal(await first(), fresh, `session ${session}`);
      }
    } finally {
      await clocked.dispose();
    }
  });
});
