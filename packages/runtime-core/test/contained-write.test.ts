/**
 * A snapshot restore writes into a folder the sandbox could write to, as the host user: links the
 * sandbox left there (as the file itself or as a folder on the way) are replaced, never followed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scratchDir } from "../../../test/support/scratch-dir.js";
import { writeFileInside } from "../src/contained-write.js";

const bytes = new TextEncoder().encode("restored");

const cases: { name: string; relative: string; prepare(root: string, outside: string): void }[] = [
  { name: "a new file in new folders", relative: "plugins/new/a.php", prepare: () => undefined },
  { name: "an existing file", relative: "a.txt", prepare: (root) => writeFileSync(join(root, "a.txt"), "old") },
  { name: "a link at the file's place pointing outside", relative: "a.txt", prepare: (root, outside) => symlinkSync(join(outside, "victim.txt"), join(root, "a.txt")) },
  { name: "a link to an outside folder on the way", relative: "plugins/a.php", prepare: (root, outside) => symlinkSync(outside, join(root, "plugins")) },
  { name: "a file where a folder must go", relative: "uploads/x/a.txt", prepare: (root) => writeFileSync(join(root, "uploads"), "a file") },
  { name: "a folder at the file's place", relative: "a.txt", prepare: (root) => mkdirSync(join(root, "a.txt")) },
];

for (const c of cases) {
  test(`writeFileInside: ${c.name}`, () => {
    const base = scratchDir("contained-write-");
    const root = join(base, "root");
    const outside = join(base, "outside");
    mkdirSync(root);
    mkdirSync(outside);
    writeFileSync(join(outside, "victim.txt"), "host file");
    c.prepare(root, outside);
    const created: string[] = [];
    writeFileInside(root, c.relative, bytes, (p) => created.push(p));
    const target = join(root, ...c.relative.split("/"));
    assert.ok(lstatSync(target).isFile());
    assert.equal(readFileSync(target, "utf8"), "restored");
    assert.equal(readFileSync(join(outside, "victim.txt"), "utf8"), "host file");
    assert.ok(!existsSync(join(outside, "a.php")) && !existsSync(join(outside, "a.txt")));
    assert.equal(created[created.length - 1], target);
  });
}

test("writeFileInside refuses paths that leave the folder", () => {
  for (const relative of ["../x", "a/../../x", "", "a//b", "./a"]) {
    assert.throws(() => writeFileInside(tmpdir(), relative, bytes), /must stay below its folder/, relative);
  }
});
