/** ContentSync (fast reset): only changed files are put back, and nothing a sandbox did survives. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { ContentSync } from "../src/sandbox/content-sync.js";

function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string): void => {
    for (const name of readdirSync(abs).sort()) {
      const a = join(abs, name);
      if (statSync(a).isDirectory()) {
        out[`${relative(dir, a)}/`] = "";
        walk(a);
      } else out[relative(dir, a)] = readFileSync(a, "utf8");
    }
  };
  walk(dir);
  return out;
}

describe("ContentSync", () => {
  it("restores changed, added, deleted and forged files; keeps mount points; leaves untouched files alone", () => {
    const tmp = mkdtempSync(join(tmpdir(), "wp-codebox-content-sync-"));
    try {
      const base = join(tmp, "base");
      mkdirSync(join(base, "themes/t1"), { recursive: true });
      mkdirSync(join(base, "plugins"), { recursive: true });
      writeFileSync(join(base, "index.php"), "<?php // silence");
      writeFileSync(join(base, "themes/t1/style.css"), "body{}");
      writeFileSync(join(base, "themes/t1/functions.php"), "<?php // t1");
      const plugin = join(tmp, "my-plugin");
      mkdirSync(plugin);
      writeFileSync(join(plugin, "my-plugin.php"), "<?php /* Plugin Name: Mine */");
      const root = join(tmp, "sandbox");
      cpSync(base, root, { recursive: true });
      cpSync(plugin, join(root, "plugins/my-plugin"), { recursive: true });
      mkdirSync(join(root, "uploads-rw"));
      const sync = new ContentSync(root, [{ source: base, target: "" }, { source: plugin, target: "plugins/my-plugin" }], [{ target: "uploads-rw" }]);
      sync.stampNow();
      const clean = listing(root);
      const untouched = statSync(join(root, "themes/t1/style.css")).ino;

      writeFileSync(join(root, "themes/t1/functions.php"), "<?php // hacked");
      rmSync(join(root, "index.php"));
      writeFileSync(join(root, "plugins/my-plugin/extra.php"), "<?php // added");
      mkdirSync(join(root, "cache/deep"), { recursive: true });
      writeFileSync(join(root, "cache/deep/x"), "x");
      rmSync(join(root, "themes/t1/style.css"));
      mkdirSync(join(root, "themes/t1/style.css"));
      // Same size and mtime as the clean file: only the ctime tells.
      const forged = join(root, "plugins/my-plugin/my-plugin.php");
      const before = statSync(forged);
      writeFileSync(forged, "<?php /* Plugin Name: EVIL */".slice(0, before.size));
      utimesSync(forged, before.atime, before.mtime);

      const report = sync.restore();
      sync.stampNow();
      const after = listing(root);
      delete after["uploads-rw/"];
      const expected = { ...clean };
      delete expected["uploads-rw/"];
      assert.deepEqual(after, expected);
      assert.ok(existsSync(join(root, "uploads-rw")), "a read-write mount point stays");
      assert.ok(report.copied >= 4 && report.removed >= 3, JSON.stringify(report));
      assert.equal(statSync(join(root, "themes/t1/functions.php")).isFile(), true);

      // A second restore with nothing changed touches nothing.
      const ino = statSync(join(root, "index.php")).ino;
      assert.deepEqual(sync.restore(), { removed: 0, copied: 0 });
      assert.equal(statSync(join(root, "index.php")).ino, ino);
      void untouched;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
