/**
 * Unzipping: the native-zlib reader gives exactly what fflate gives (names, order, bytes) on a
 * real WordPress build and on made-up zips (a comment too); zips it does not read itself (Zip64,
 * no end record) go to fflate; a corrupt entry or an escaping path is refused.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { unzipSync, zipSync } from "fflate";
import { dosDateTimeMs, extractZip, readZipEntries } from "../src/site/zip.js";
import { findWordPressBuild } from "../src/site/wordpress-builds.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-zip-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const fflateEntries = (zip: Uint8Array) => Object.entries(unzipSync(zip)).map(([name, data]) => ({ name, data: Buffer.from(data) }));
const ours = (zip: Uint8Array) => readZipEntries(zip).map(({ name, data }) => ({ name, data: Buffer.from(data) }));
const text = (s: string) => new TextEncoder().encode(s);
const sample = zipSync({
  "site/": {},
  "site/readme.txt": [text("stored, not deflated"), { level: 0 }],
  "site/wp-includes/version.php": text("<?php $wp_version = '7.0.4';\n".repeat(50)),
  "site/ünïcode – name.php": text("<?php echo 'ok';"),
  "site/empty.txt": new Uint8Array(0),
});

/** Offsets of every central-directory header of `zip` (signature PK\1\2). */
function centralHeaders(zip: Uint8Array): number[] {
  const buf = Buffer.from(zip);
  const out: number[] = [];
  for (let p = buf.indexOf("PK\u0001\u0002", 0, "latin1"); p >= 0; p = buf.indexOf("PK\u0001\u0002", p + 4, "latin1")) out.push(p);
  return out;
}
/** A copy of `zip` with `edit` applied to its bytes. */
function edited(zip: Uint8Array, edit: (buf: Buffer) => void): Uint8Array {
  const buf = Buffer.from(zip);
  edit(buf);
  return buf;
}

test("the native reader and fflate give the same entries, in the same order, byte for byte", () => {
  const cases: [string, Uint8Array][] = [
    ["made-up zip (stored, deflated, UTF-8 name, empty file, a folder)", sample],
    ["the bundled WordPress build", readFileSync(findWordPressBuild().zipPath)],
    // A zip comment moves the end record away from the end of the file.
    ["made-up zip with a comment", Buffer.concat([edited(sample, (b) => b.writeUInt16LE(9, b.length - 2)), Buffer.from("a comment")])],
  ];
  for (const [name, zip] of cases) {
    const expected = fflateEntries(zip);
    assert.ok(expected.length >= 5, name);
    assert.deepEqual(ours(zip), expected, name);
  }
});

test("zips the native reader does not handle go to fflate, with the same result", () => {
  const first = centralHeaders(sample)[1]!;
  const cases: [string, Uint8Array][] = [
    ["Zip64 size marker", edited(sample, (b) => b.writeUInt32LE(0xffffffff, first + 20))],
    ["no end record", sample.subarray(0, sample.length - 22)],
  ];
  for (const [name, zip] of cases) {
    let expected: unknown;
    try {
      expected = fflateEntries(zip);
    } catch (error) {
      expected = error instanceof Error ? error.message : error;
    }
    let actual: unknown;
    try {
      actual = ours(zip);
    } catch (error) {
      actual = error instanceof Error ? error.message : error;
    }
    assert.deepEqual(actual, expected, name);
  }
});

test("a deflated entry whose size differs from the recorded one is refused, never inflated past it", () => {
  const headers = centralHeaders(sample);
  // Entry 2 is version.php (deflated, 1,450 bytes).
  const smaller = edited(sample, (b) => b.writeUInt32LE(100, headers[2]! + 24));
  assert.throws(() => readZipEntries(smaller), /inflated|RangeError|Cannot create a Buffer larger|buffer/i);
  const larger = edited(sample, (b) => b.writeUInt32LE(5000, headers[2]! + 24));
  assert.throws(() => readZipEntries(larger), /site\/wp-includes\/version\.php: 1450 bytes inflated, 5000 recorded/);
});

test("extractZip writes every file and refuses an entry that leaves the destination", () => {
  const dir = join(scratch, "out");
  assert.equal(extractZip(writeZip("ok.zip", sample), dir), 4);
  assert.deepEqual(readdirSync(join(dir, "site")).sort(), ["empty.txt", "readme.txt", "wp-includes", "ünïcode – name.php"]);
  assert.equal(readFileSync(join(dir, "site/readme.txt"), "utf8"), "stored, not deflated");
  for (const name of ["../escape.php", "/abs.php", "a/../../escape.php"]) {
    const zip = zipSync({ [name]: text("x") });
    assert.throws(() => extractZip(writeZip("bad.zip", zip), join(scratch, "bad")), /zip entry escapes the destination/, name);
  }
});

// [MS-DOS date, MS-DOS time, ms since the epoch or undefined]; "now" is 2026-12-01T00:00:00Z.
const NOW = Date.UTC(2026, 11, 1);
const DOS_CASES: [number, number, number | undefined][] = [
  [((2024 - 1980) << 9) | (4 << 5) | 16, (13 << 11) | (45 << 5) | (58 / 2), Date.UTC(2024, 3, 16, 13, 45, 58)],
  [(0 << 9) | (1 << 5) | 1, 0, Date.UTC(1980, 0, 1)],
  // Later than a minute before now (a clock ahead, a zip made just now): a minute before now.
  [((2030 - 1980) << 9) | (1 << 5) | 1, 0, NOW - 60_000],
  [((2026 - 1980) << 9) | (12 << 5) | 1, 0, NOW - 60_000],
  // Unset or out of range: no time.
  [0, 0, undefined],
  [((2024 - 1980) << 9) | (13 << 5) | 1, 0, undefined],
  [((2024 - 1980) << 9) | (1 << 5) | 0, 0, undefined],
  [((2024 - 1980) << 9) | (1 << 5) | 1, 24 << 11, undefined],
  [((2024 - 1980) << 9) | (1 << 5) | 1, 60 << 5, undefined],
];

test("an entry's MS-DOS date and time read as UTC, never later than a minute ago", () => {
  for (const [date, time, expected] of DOS_CASES) {
    assert.equal(dosDateTimeMs(date, time, NOW), expected, `date ${date} time ${time}`);
  }
});

test("extractZip gives each file the modification time its entry records", () => {
  // fflate's zipSync records `mtime` as the entry's MS-DOS date and time (local time; read here as UTC).
  const when = new Date(2024, 3, 16, 13, 45, 58);
  const zip = zipSync({ "wp-includes/load.php": [text("<?php"), { mtime: when }], "readme.html": [text("x"), { mtime: when }] });
  const dir = join(scratch, "dated");
  extractZip(writeZip("dated.zip", zip), dir);
  const expected = Date.UTC(2024, 3, 16, 13, 45, 58);
  for (const file of ["wp-includes/load.php", "readme.html"]) assert.equal(statSync(join(dir, file)).mtimeMs, expected, file);
  // A real release: every PHP file is older than OPcache's two seconds, so it is cached at once.
  const build = findWordPressBuild();
  const entries = readZipEntries(readFileSync(build.zipPath)).filter((e) => !e.name.endsWith("/"));
  assert.ok(entries.length > 1000 && entries.every((e) => e.mtimeMs !== undefined && e.mtimeMs < Date.now() - 2_000), "every entry is dated in the past");
});

function writeZip(name: string, zip: Uint8Array): string {
  const path = join(scratch, name);
  writeFileSync(path, zip);
  return path;
}
