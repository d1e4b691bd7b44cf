/**
 * Where a WordPress zip is unpacked in the cache (`customZipTreeDir`, for releases from the mirror
 * and `--wordpress ZIP`): one folder per zip path, size and modification time. Its key kept only
 * the tail of the three, so two different zips of one size and time at different paths were
 * booted from one tree.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { customZipTreeDir } from "../src/site/wordpress-builds.js";

test("each zip path, size and modification time has a tree folder of its own; the same zip keeps its folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-tree-dir-"));
  try {
    const cache = join(dir, "cache");
    const when = new Date("2026-01-02T03:04:05Z");
    const zip = (name: string, bytes: string, at = when): string => {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      utimesSync(path, at, at);
      return path;
    };
    const a = zip("wordpress-6.9.4.zip", "0123456789");
    const folderOfA = customZipTreeDir(a, cache);
    assert.equal(customZipTreeDir(a, cache), folderOfA, "the same zip, asked again");
    assert.equal(customZipTreeDir(join(dir, ".", "wordpress-6.9.4.zip"), cache), folderOfA, "the same zip by another spelling of its path");
    // [what differs from the first zip, the zip]
    const others: [string, () => string][] = [
      ["another path, the same size and time", () => zip("b.zip", "9876543210")],
      ["the same name in another folder, the same size and time", () => {
        mkdirSync(join(dir, "other"));
        return zip(join("other", "wordpress-6.9.4.zip"), "9876543210");
      }],
      ["the same path, another time", () => zip("wordpress-6.9.4.zip", "0123456789", new Date("2026-01-02T03:04:06Z"))],
      ["the same path, another size", () => zip("wordpress-6.9.4.zip", "01234567890")],
    ];
    const seen = new Set([folderOfA]);
    for (const [what, make] of others) {
      const folder = customZipTreeDir(make(), cache);
      assert.ok(!seen.has(folder), `${what}: a folder of its own`);
      assert.ok(folder.startsWith(join(cache, "wordpress", "custom-")), folder);
      seen.add(folder);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
