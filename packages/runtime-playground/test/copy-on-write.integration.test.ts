/**
 * Integration: the filesystem tells the truth. A sandbox writes anywhere a real site may (core
 * files, `.htaccess`, `wp-config.php`) through its own copy-on-write layer; `is_writable()` and
 * `get_filesystem_method()` agree with what the write then does; snapshots and `reset()` carry the
 * layer; the next sandbox never sees it and the shared installed-site cache never changes.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const backend = createPlaygroundBackend();
let runtime: PlaygroundRuntime;
let siteDir: string;
let cacheDigestBefore: string;

/** SHA-256 over every path, mode and content under a folder: the shared installed-site cache. */
function treeDigest(dir: string): string {
  const hash = createHash("sha256");
  const walk = (abs: string, rel: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const a = join(abs, entry.name);
      const r = `${rel}/${entry.name}`;
      hash.update(`${entry.isDirectory() ? "d" : entry.isSymbolicLink() ? "l" : "f"} ${r}\n`);
      if (entry.isDirectory()) walk(a, r);
      else if (entry.isFile()) hash.update(readFileSync(a));
    }
  };
  walk(dir, "");
  return hash.digest("hex");
}

async function php(target: PlaygroundRuntime, code: string): Promise<unknown> {
  const result = await target.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stdout} ${result.stderr}`);
  return result.json;
}

before(async () => {
  runtime = await backend.create({});
  siteDir = (runtime as unknown as { setup: { siteDir: string } }).setup.siteDir;
  cacheDigestBefore = treeDigest(siteDir);
});
after(async () => {
  await runtime?.dispose();
});

test("is_writable() and get_filesystem_method() agree with what writes to core then do", async () => {
  const facts = (await php(
    runtime,
    `<?php
require_once ABSPATH . 'wp-admin/includes/file.php';
$config = ABSPATH . 'wp-config.php';
$writable = is_writable($config);
$method = get_filesystem_method();
$appended = file_put_contents($config, "\\n// sandbox edit\\n", FILE_APPEND);
clearstatcache();
echo json_encode([
  'writable' => $writable,
  'method' => $method,
  'appended' => $appended,
  'configTail' => substr(file_get_contents($config), -17),
  'htaccess' => file_put_contents(ABSPATH . '.htaccess', "# BEGIN WordPress\\n"),
  'htaccessBack' => file_get_contents(ABSPATH . '.htaccess'),
  'coreWritable' => is_writable(ABSPATH . 'wp-includes/version.php'),
  'coreEdit' => file_put_contents(ABSPATH . 'wp-includes/version.php', "\\n// patched", FILE_APPEND) > 0,
  'version' => (function () { include ABSPATH . 'wp-includes/version.php'; return $wp_version; })(),
  'dirWritable' => is_writable(ABSPATH . 'wp-admin'),
]);`,
  )) as Record<string, unknown>;
  assert.deepEqual(
    { ...facts, version: typeof facts.version },
    {
      writable: true,
      method: "direct",
      appended: 17,
      configTail: "\n// sandbox edit\n",
      htaccess: 18,
      htaccessBack: "# BEGIN WordPress\n",
      coreWritable: true,
      coreEdit: true,
      version: "string",
      dirWritable: true,
    },
  );
});

test("directories merge, deletions hide core files, renames move them, and HTTP sees the same tree", async () => {
  const facts = (await php(
    runtime,
    `<?php
$inc = ABSPATH . 'wp-includes/';
$made = mkdir(ABSPATH . 'sandbox-dir/nested', 0755, true);
file_put_contents(ABSPATH . 'sandbox-dir/nested/a.txt', 'abc');
file_put_contents($inc . 'sandbox-added.txt', 'added');
$list = scandir($inc);
$deleted = unlink(ABSPATH . 'wp-links-opml.php');
clearstatcache();
$renamed = rename(ABSPATH . 'wp-trackback.php', ABSPATH . 'wp-trackback-moved.php');
clearstatcache();
file_put_contents(ABSPATH . 'probe.php', '<?php echo "probe:" . (file_exists(__DIR__ . "/.htaccess") ? "htaccess" : "none");');
echo json_encode([
  'made' => $made,
  'nestedSize' => filesize(ABSPATH . 'sandbox-dir/nested/a.txt'),
  'mergedHasNew' => in_array('sandbox-added.txt', $list, true),
  'mergedHasCore' => in_array('version.php', $list, true) && in_array('class-wp.php', $list, true),
  'deleted' => $deleted,
  'deletedExists' => file_exists(ABSPATH . 'wp-links-opml.php'),
  'deletedListed' => in_array('wp-links-opml.php', scandir(ABSPATH), true),
  'renamed' => $renamed,
  'renamedFrom' => file_exists(ABSPATH . 'wp-trackback.php'),
  'renamedTo' => strpos(file_get_contents(ABSPATH . 'wp-trackback-moved.php'), 'trackback') !== false,
  'rmdirNonEmpty' => @rmdir(ABSPATH . 'wp-admin/css'),
  'coreDirStillThere' => is_dir(ABSPATH . 'wp-admin/css'),
]);`,
  )) as Record<string, unknown>;
  assert.deepEqual(facts, {
    made: true,
    nestedSize: 3,
    mergedHasNew: true,
    mergedHasCore: true,
    deleted: true,
    deletedExists: false,
    deletedListed: false,
    renamed: true,
    renamedFrom: false,
    renamedTo: true,
    rmdirNonEmpty: false,
    coreDirStillThere: true,
  });
  const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/probe.php", "as=anonymous"] });
  assert.equal(page.stdout, "probe:htaccess");
  const gone = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-links-opml.php", "as=anonymous", "expect-status=404"] });
  assert.equal(gone.status, "ok", `a deleted core file is not served (HTTP ${(gone.json as { status: number }).status})`);
});

test("snapshots carry the core layer; reset() drops it; restoring brings it back", async () => {
  const snapshot = await runtime.snapshot();
  assert.ok(snapshot.core, "the snapshot has a core section");
  assert.ok(snapshot.core.files.some((f) => f.path === ".htaccess"));
  assert.ok(snapshot.core.deleted.includes("wp-links-opml.php"));
  assert.ok(snapshot.files.some((f) => f.path === "wp-config.php"), "changed core files are carried");
  const state = `<?php clearstatcache(); echo json_encode([file_exists(ABSPATH . '.htaccess'), file_exists(ABSPATH . 'wp-links-opml.php'), file_exists(ABSPATH . 'sandbox-dir/nested/a.txt'), substr(file_get_contents(ABSPATH . 'wp-config.php'), -17) === "\\n// sandbox edit\\n"]);`;
  assert.deepEqual(await php(runtime, state), [true, false, true, true]);
  await runtime.reset();
  assert.deepEqual(await php(runtime, state), [false, true, false, false]);
  await runtime.restoreSnapshot(snapshot);
  assert.deepEqual(await php(runtime, state), [true, false, true, true]);
});

test("the next sandbox starts from the unchanged core, and the shared cache never changed", async () => {
  await runtime.dispose();
  const next = await backend.create({});
  try {
    assert.deepEqual(await php(next, `<?php echo json_encode([file_exists(ABSPATH . '.htaccess'), file_exists(ABSPATH . 'wp-links-opml.php'), substr(file_get_contents(ABSPATH . 'wp-config.php'), -17) === "\\n// sandbox edit\\n"]);`), [false, true, false]);
  } finally {
    await next.dispose();
  }
  assert.equal(treeDigest(siteDir), cacheDigestBefore, "the installed-site cache is byte-identical");
});
