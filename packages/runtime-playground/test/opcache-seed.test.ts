/**
 * The packed OPcache seed: a folder packs into one file and unpacks to the same paths and bytes
 * (views, no copies); malformed packs are refused rather than seeding garbage.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureSeedPack, packSeed, seedPackPath, unpackSeed } from "../src/site/opcache-seed.js";

test("a seed folder packs and unpacks to the same files, in path order", () => {
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-seed-"));
  try {
    const files: Record<string, Uint8Array> = {
      "abc123/wordpress/wp-load.php.bin": new Uint8Array([1, 2, 3]),
      "abc123/wordpress/wp-includes/plugin.php.bin": new Uint8Array(70_000).fill(7),
      "abc123/internal/shared/empty.php.bin": new Uint8Array(0),
      "abc123/wordpress/ünïcode name.php.bin": new TextEncoder().encode("é"),
    };
    for (const [path, data] of Object.entries(files)) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), data);
    }
    const pack = packSeed(dir);
    const unpacked = unpackSeed(pack);
    assert.deepEqual(unpacked.map((f) => f.path), Object.keys(files).sort());
    for (const f of unpacked) {
      assert.deepEqual([...f.data], [...files[f.path]!], f.path);
      assert.equal(f.data.buffer, pack.buffer, "a view into the pack, not a copy");
    }
    // ensureSeedPack writes it once, beside the folder, and reuses it.
    const packPath = ensureSeedPack(dir)!;
    assert.equal(packPath, seedPackPath(dir));
    assert.deepEqual(readFileSync(packPath), pack);
    assert.equal(ensureSeedPack(join(dir, "missing")), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(seedPackPath(dir), { force: true });
  }
});

const header = (index: unknown[], extra = new Uint8Array(0)): Uint8Array => {
  const json = new TextEncoder().encode(JSON.stringify(index));
  const out = new Uint8Array(4 + json.byteLength + extra.byteLength);
  new DataView(out.buffer).setUint32(0, json.byteLength, true);
  out.set(json, 4);
  out.set(extra, 4 + json.byteLength);
  return out;
};

for (const [name, pack] of [
  ["too short", new Uint8Array([1, 0])],
  ["index past the end", (() => { const p = header([]); new DataView(p.buffer).setUint32(0, 999, true); return p; })()],
  ["index not a list", header({} as unknown as unknown[])],
  ["file past the end", header([["a.bin", 10]], new Uint8Array(3))],
  ["bytes after the last file", header([["a.bin", 1]], new Uint8Array(2))],
  ["path escaping the folder", header([["../etc/passwd", 0]])],
  ["empty path segment", header([["a//b.bin", 0]])],
  ["negative size", header([["a.bin", -1]])],
] as const) {
  test(`a malformed pack is refused: ${name}`, () => {
    assert.throws(() => unpackSeed(pack), /OPcache seed pack/);
  });
}
