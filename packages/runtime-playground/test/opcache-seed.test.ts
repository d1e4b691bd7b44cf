/**
 * The packed OPcache seed: a folder packs into one file and unpacks to the same paths and bytes
 * (views, no copies); malformed packs are refused rather than seeding garbage.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { ensureSeedPack, packSeed, seedPackPath, sweepStaleSeedPartials, unpackSeed, writeSeedPack } from "../src/site/opcache-seed.js";

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

test("a killed seed write's partial file is swept once it is a minute old; nothing else beside the pack is touched", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-seed-partials-"));
  try {
    const pack = join(dir, "wp-7.0.4-php-8.3-abcd1234.opcache.pack");
    const old = Date.now() / 1000 - 120;
    // [name, age: "old" (2 minutes) or "new" (now), swept?]
    const cases: [string, "old" | "new", boolean][] = [
      [`${basename(pack)}.partial-485-59f0d61d`, "old", true], // writeSeedPack's name (writeFileAtomicAsync)
      [`${basename(pack)}.partial-2028-1`, "old", true], // an older version's name (pid-worker id)
      [`${basename(pack)}.partial-3726-09fcb518`, "new", false], // another process writing it now
      [basename(pack), "old", false], // the seed itself
      [`${basename(pack)}.partial-x`, "old", false], // not a name we write
      ["wp-7.0.4-php-8.3-abcd1234", "old", false], // the site
      ["wp-7.0.4-php-8.3-abcd1234.lock", "old", false],
      ["wp-6.9.4-php-8.3-ffff0000.opcache.pack.partial-11-aa", "old", false], // another site's: swept with that site
    ];
    for (const [name, age] of cases) {
      writeFileSync(join(dir, name), "x");
      if (age === "old") utimesSync(join(dir, name), old, old);
    }
    assert.equal(sweepStaleSeedPartials(pack), cases.filter(([, , swept]) => swept).length);
    assert.deepEqual(readdirSync(dir).sort(), cases.filter(([, , swept]) => !swept).map(([name]) => name).sort());
    assert.equal(sweepStaleSeedPartials(join(dir, "missing", "x.pack")), 0, "a folder that is not there is nothing to sweep");
    // A pack written and renamed into place leaves no partial of its own.
    await writeSeedPack(new Uint8Array([1, 2, 3]), join(dir, "fresh.opcache.pack"));
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith("fresh.")), ["fresh.opcache.pack"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
