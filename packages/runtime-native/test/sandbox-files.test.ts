/**
 * The host's reads and writes in a folder a sandbox can write (`sandbox-files.ts`): for every kind
 * of thing the sandbox can leave at a name the host uses (a link to a host file, a dangling link
 * to where a host file would be made, a link to a host folder in place of a folder on the way, a
 * FIFO, a link to /dev/zero, a folder), a write lands in the folder and nowhere else, and a read
 * returns nothing rather than following, blocking or reading without end.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, statSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chownSandboxTree, makeSandboxPath, readSandboxFile, removeSandboxPath, sandboxPathExists, writeSandboxFile } from "../src/sandbox-files.js";

interface Plant {
  name: string;
  /** Leaves something at `box/<path>`; `host` is a folder outside the box holding `secret.txt`. */
  plant(box: string, path: string, host: string): void;
}

const PLANTS: Plant[] = [
  { name: "a link to a host file", plant: (box, path, host) => symlinkSync(join(host, "secret.txt"), join(box, path)) },
  { name: "a dangling link to where a host file would be made", plant: (box, path, host) => symlinkSync(join(host, "made-by-host"), join(box, path)) },
  { name: "a FIFO", plant: (box, path) => execFileSync("mkfifo", [join(box, path)]) },
  { name: "a link to /dev/zero", plant: (box, path) => symlinkSync("/dev/zero", join(box, path)) },
  { name: "a folder with a file", plant: (box, path) => (mkdirSync(join(box, path)), writeFileSync(join(box, path, "x"), "x")) },
  { name: "a relative link out of the folder", plant: (box, path) => symlinkSync("../host/secret.txt", join(box, path)) },
];

/** Paths the host uses: one directly in the folder, one in a sub-folder (code/…). */
const PATHS = ["request.json", "code/code.php"];

function setup(): { root: string; box: string; host: string } {
  const root = mkdtempSync(join(tmpdir(), "wp-codebox-sandbox-files-"));
  const box = join(root, "box");
  const host = join(root, "host");
  mkdirSync(box);
  mkdirSync(host);
  writeFileSync(join(host, "secret.txt"), "HOST SECRET");
  return { root, box, host };
}

function hostUnchanged(host: string): void {
  assert.deepEqual(readdirSync(host), ["secret.txt"]);
  assert.equal(readFileSync(join(host, "secret.txt"), "utf8"), "HOST SECRET");
}

describe("writeSandboxFile / readSandboxFile against what a sandbox leaves behind", () => {
  for (const plant of PLANTS) {
    for (const path of PATHS) {
      it(`${plant.name} at ${path}: the write lands in the folder, the host is untouched`, () => {
        const { root, box, host } = setup();
        try {
          if (path.includes("/")) mkdirSync(join(box, path, ".."), { recursive: true });
          plant.plant(box, path, host);
          writeSandboxFile(box, path, "from the host");
          assert.ok(lstatSync(join(box, path)).isFile());
          assert.equal(readFileSync(join(box, path), "utf8"), "from the host");
          assert.equal(readSandboxFile(box, path, 1024)?.data.toString(), "from the host");
          hostUnchanged(host);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      });
      it(`${plant.name} at ${path}: a read gives nothing (no block, no host bytes), a removal removes only it`, () => {
        const { root, box, host } = setup();
        try {
          if (path.includes("/")) mkdirSync(join(box, path, ".."), { recursive: true });
          plant.plant(box, path, host);
          assert.equal(readSandboxFile(box, path, 1 << 20), undefined);
          assert.equal(sandboxPathExists(box, path), true);
          removeSandboxPath(box, path);
          assert.equal(sandboxPathExists(box, path), false);
          hostUnchanged(host);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      });
    }
  }

  it("a link to a host folder in place of a folder on the way: the write makes a real folder, a read gives nothing", () => {
    const { root, box, host } = setup();
    try {
      symlinkSync(host, join(box, "code"));
      writeFileSync(join(host, "code.php"), "HOST FILE");
      assert.equal(readSandboxFile(box, "code/code.php", 1024), undefined);
      assert.equal(sandboxPathExists(box, "code/code.php"), false);
      removeSandboxPath(box, "code/code.php");
      assert.equal(readFileSync(join(host, "code.php"), "utf8"), "HOST FILE");
      writeSandboxFile(box, "code/code.php", "mine");
      assert.ok(lstatSync(join(box, "code")).isDirectory());
      assert.equal(readFileSync(join(box, "code", "code.php"), "utf8"), "mine");
      assert.equal(readFileSync(join(host, "code.php"), "utf8"), "HOST FILE");
      assert.equal(readFileSync(join(host, "secret.txt"), "utf8"), "HOST SECRET");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("a read stops at its cap and says so; a regular file is read whole below it", () => {
    const { root, box } = setup();
    try {
      writeFileSync(join(box, "big"), Buffer.alloc(10_000, 65));
      const cut = readSandboxFile(box, "big", 100);
      assert.equal(cut?.data.byteLength, 100);
      assert.equal(cut?.truncated, true);
      assert.equal(readSandboxFile(box, "big", 10_000)?.truncated, false);
      assert.equal(readSandboxFile(box, "missing", 10), undefined);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("paths with empty, . or .. segments are refused", () => {
    for (const bad of ["../x", "a/../../x", "./x", "a//b", ""]) {
      assert.throws(() => writeSandboxFile("/nonexistent", bad, "x"), /refused path/);
    }
    assert.equal(existsSync("/nonexistent"), false);
  });
});

describe("chownSandboxTree against links a sandbox leaves", () => {
  const asRoot = process.getuid?.() === 0;
  it("gives the tree and its links to the uid, never the host file or folder a link names", { skip: asRoot ? false : "changing owners needs root" }, () => {
    const { root, box, host } = setup();
    try {
      mkdirSync(join(box, "a", "b"), { recursive: true });
      writeFileSync(join(box, "a", "b", "f"), "x");
      symlinkSync(join(host, "secret.txt"), join(box, "a", "to-file"));
      symlinkSync(host, join(box, "a", "to-folder"));
      execFileSync("mkfifo", [join(box, "a", "fifo")]);
      chownSandboxTree(box, 4242);
      for (const p of ["", "a", "a/b", "a/b/f", "a/to-file", "a/to-folder", "a/fifo"]) assert.equal(lstatSync(join(box, p)).uid, 4242, p);
      assert.equal(statSync(host).uid, 0);
      assert.equal(statSync(join(host, "secret.txt")).uid, 0);
      hostUnchanged(host);
      // The tree's root itself a link: only the link changes.
      symlinkSync(host, join(root, "link-root"));
      chownSandboxTree(join(root, "link-root"), 4243);
      assert.equal(lstatSync(join(root, "link-root")).uid, 4243);
      assert.equal(statSync(host).uid, 0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("makeSandboxPath against what a sandbox leaves on a mount point's way", () => {
  for (const plant of PLANTS) {
    for (const [kind, path] of [["dir", "plugins/mine"], ["file", "plugins/one.php"]] as const) {
      it(`${plant.name} in place of plugins/: a real folder and ${kind} are made, the host untouched`, () => {
        const { root, box, host } = setup();
        try {
          plant.plant(box, "plugins", host);
          assert.ok(makeSandboxPath(box, path, kind, 4244) >= 1);
          assert.ok(lstatSync(join(box, "plugins")).isDirectory());
          const made = lstatSync(join(box, path));
          assert.ok(kind === "dir" ? made.isDirectory() : made.isFile() && made.size === 0);
          hostUnchanged(host);
          assert.equal(makeSandboxPath(box, path, kind, 4244), 0, "everything in place: nothing made");
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      });
    }
  }
});
