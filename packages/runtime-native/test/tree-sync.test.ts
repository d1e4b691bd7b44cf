/**
 * `syncTree` (what a native `reset()` does to wp-content): one case per kind of difference, each
 * checking the destination ends equal to the source, what was copied and removed, that untouched
 * entries keep their inode, and that the root and protected paths (mount points) survive.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ctimeStamp, syncTree } from "../src/tree-sync.js";

/** A folder tree as { path: content } (a trailing "/" is a folder, "-> x" a symlink to x). */
type Tree = Record<string, string>;

function make(root: string, tree: Tree): void {
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(tree)) {
    const full = join(root, path);
    if (path.endsWith("/")) {
      mkdirSync(full, { recursive: true });
    } else if (content.startsWith("-> ")) {
      mkdirSync(join(full, ".."), { recursive: true });
      symlinkSync(content.slice(3), full);
    } else {
      mkdirSync(join(full, ".."), { recursive: true });
      writeFileSync(full, content);
      // A fixed mtime, as a copy made with cp -a keeps it.
      utimesSync(full, 1_700_000_000, 1_700_000_000);
    }
  }
}

function read(root: string): Tree {
  const tree: Tree = {};
  for (const path of readdirSync(root, { recursive: true, encoding: "utf8" }).sort()) {
    const full = join(root, path);
    const stat = lstatSync(full);
    tree[stat.isDirectory() ? `${path}/` : path] = stat.isSymbolicLink() ? `-> ${readlinkSync(full)}` : stat.isDirectory() ? "" : readFileSync(full, "utf8");
  }
  return tree;
}

const BASE: Tree = { "index.php": "<?php", "plugins/": "", "plugins/a/a.php": "a1", "themes/t/style.css": "css", "link": "-> ../nowhere" };

const cases: {
  name: string;
  /** Changes made to the destination (a copy of BASE) before the sync. */
  change: (dest: string) => void;
  protect?: string[];
  copied: string[];
  removed: string[];
  /** What the destination holds after the sync, beyond BASE (protected leftovers). */
  extra?: Tree;
  /** Paths whose inode must be the same before and after (not rewritten). */
  untouched?: string[];
}[] = [
  { name: "nothing changed: nothing copied or removed", change: () => undefined, copied: [], removed: [], untouched: ["index.php", "plugins/a/a.php", "themes/t/style.css"] },
  { name: "a file written (new content, new mtime) is copied back", change: (d) => writeFileSync(join(d, "plugins/a/a.php"), "changed"), copied: ["plugins/a/a.php"], removed: ["plugins/a/a.php"], untouched: ["index.php"] },
  { name: "same size, other mtime is copied back", change: (d) => { writeFileSync(join(d, "index.php"), "<?PHP"); }, copied: ["index.php"], removed: ["index.php"] },
  { name: "a mode change is copied back", change: (d) => chmodSync(join(d, "index.php"), 0o600), copied: ["index.php"], removed: ["index.php"] },
  { name: "a new file is removed", change: (d) => writeFileSync(join(d, "probe.txt"), "x"), copied: [], removed: ["probe.txt"], untouched: ["plugins/a/a.php"] },
  { name: "a new folder is removed whole", change: (d) => make(d, { "uploads/2025/01/x.jpg": "x" }), copied: [], removed: ["uploads"] },
  { name: "a deleted file is copied back", change: (d) => rmSync(join(d, "themes/t/style.css")), copied: ["themes/t/style.css"], removed: [] },
  { name: "a deleted folder is copied back whole", change: (d) => rmSync(join(d, "themes"), { recursive: true }), copied: ["themes"], removed: [] },
  { name: "a folder replaced by a file is put back", change: (d) => { rmSync(join(d, "plugins/a"), { recursive: true }); writeFileSync(join(d, "plugins/a"), "file"); }, copied: ["plugins/a"], removed: ["plugins/a"] },
  { name: "a symlink pointed elsewhere is put back", change: (d) => { rmSync(join(d, "link")); symlinkSync("../elsewhere", join(d, "link")); }, copied: ["link"], removed: ["link"] },
  {
    name: "a protected mount point and the folder holding it stay, with their content; the holder's other entries are synced",
    change: (d) => make(d, { "plugins/mine/mine.php": "host", "plugins/mine/deep/x": "y", "plugins/stray.php": "s" }),
    protect: ["plugins/mine"],
    copied: [],
    removed: ["plugins/stray.php"],
    extra: { "plugins/mine/": "", "plugins/mine/deep/": "", "plugins/mine/deep/x": "y", "plugins/mine/mine.php": "host" },
  },
  {
    name: "a mount point under a folder the source does not have keeps that folder; its other entries go",
    change: (d) => make(d, { "mu/inner/m.php": "host", "mu/other.php": "o" }),
    protect: ["mu/inner"],
    copied: [],
    removed: ["mu/other.php"],
    extra: { "mu/": "", "mu/inner/": "", "mu/inner/m.php": "host" },
  },
  {
    // The sandbox can rename the folder holding a mount point and leave a link to a host folder there.
    name: "a link to a host folder in place of a mount point's holder the source lacks is removed; the host folder is not looked into",
    change: (d) => symlinkSync(join(d, "..", "host"), join(d, "mu")),
    protect: ["mu/inner"],
    copied: [],
    removed: ["mu"],
  },
  {
    name: "a link to a host folder in place of a mount point's holder the source has is replaced by the source's folder",
    change: (d) => { rmSync(join(d, "plugins"), { recursive: true }); symlinkSync(join(d, "..", "host"), join(d, "plugins")); },
    protect: ["plugins/mine"],
    copied: ["plugins"],
    removed: ["plugins"],
  },
  {
    name: "a link to a host folder inside a mount point's holder the source lacks is removed",
    change: (d) => { make(d, { "mu/inner/m.php": "host" }); symlinkSync(join(d, "..", "host"), join(d, "mu", "deeper")); },
    protect: ["mu/inner"],
    copied: [],
    removed: ["mu/deeper"],
    extra: { "mu/": "", "mu/inner/": "", "mu/inner/m.php": "host" },
  },
  { name: "a protected file mount stays as it is", change: (d) => writeFileSync(join(d, "index.php"), "host file"), protect: ["index.php"], copied: [], removed: [], extra: { "index.php": "host file" } },
];

describe("syncTree", () => {
  for (const c of cases) {
    it(c.name, () => {
      const tmp = mkdtempSync(join(tmpdir(), "wp-codebox-tree-sync-"));
      try {
        const from = join(tmp, "from");
        const to = join(tmp, "to");
        make(from, BASE);
        make(to, BASE);
        make(join(tmp, "host"), { "keep.txt": "host file" });
        c.change(to);
        const rootInode = statSync(to).ino;
        const inodes = new Map((c.untouched ?? []).map((p) => [p, statSync(join(to, p)).ino]));
        const copiedPaths: string[] = [];
        const result = syncTree(from, to, { ...(c.protect ? { protect: c.protect } : {}), onCopied: (p) => copiedPaths.push(p) });
        assert.deepEqual([...result.copied].sort(), [...c.copied].sort());
        assert.deepEqual([...result.removed].sort(), [...c.removed].sort());
        assert.deepEqual(copiedPaths.sort(), c.copied.map((p) => join(to, p)).sort());
        assert.deepEqual(read(to), { ...read(from), ...(c.extra ?? {}) });
        assert.equal(statSync(to).ino, rootInode, "the root is never replaced");
        for (const [path, inode] of inodes) assert.equal(statSync(join(to, path)).ino, inode, `${path} was rewritten`);
        // A second sync finds nothing left to do.
        assert.deepEqual(syncTree(from, to, c.protect ? { protect: c.protect } : {}), { copied: [], removed: [] });
        assert.ok(existsSync(to));
        assert.deepEqual(read(join(tmp, "host")), { "keep.txt": "host file" }, "a host folder the destination linked to was changed");
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});

describe("syncTree with changedSinceNs (ctime)", () => {
  // Changes that keep size, mtime and mode as they were: only the ctime tells.
  const evasions: { name: string; change: (dest: string) => void; copied: string[] }[] = [
    { name: "nothing changed after the stamp: nothing copied", change: () => undefined, copied: [] },
    { name: "same-size rewrite with the mtime set back (touch -d)", change: (d) => { writeFileSync(join(d, "index.php"), "<?PHP"); utimesSync(join(d, "index.php"), 1_700_000_000, 1_700_000_000); }, copied: ["index.php"] },
    { name: "a mode changed and changed back", change: (d) => { chmodSync(join(d, "plugins/a/a.php"), 0o600); chmodSync(join(d, "plugins/a/a.php"), 0o644); }, copied: ["plugins/a/a.php"] },
    { name: "a same-size file with the same mtime renamed over the original", change: (d) => { writeFileSync(join(d, "x.tmp"), "A2"); utimesSync(join(d, "x.tmp"), 1_700_000_000, 1_700_000_000); renameSync(join(d, "x.tmp"), join(d, "plugins/a/a.php")); }, copied: ["plugins/a/a.php"] },
  ];
  for (const c of evasions) {
    it(c.name, () => {
      const tmp = mkdtempSync(join(tmpdir(), "wp-codebox-tree-sync-"));
      try {
        const from = join(tmp, "from");
        const to = join(tmp, "to");
        make(from, BASE);
        make(to, BASE);
        chmodSync(join(to, "plugins/a/a.php"), statSync(join(from, "plugins/a/a.php")).mode);
        const stamp = ctimeStamp(tmp);
        c.change(to);
        const result = syncTree(from, to, { changedSinceNs: stamp });
        assert.deepEqual(result.copied, c.copied);
        assert.deepEqual(read(to), read(from));
        assert.equal(readFileSync(join(to, "plugins/a/a.php"), "utf8"), "a1");
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});
