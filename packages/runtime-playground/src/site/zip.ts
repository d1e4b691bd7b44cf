import { closeSync, futimesSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { inflateRawSync } from "node:zlib";
import { unzipSync } from "fflate";

/**
 * Extracts every file of the zip at `zipPath` into `destination` (created if needed), each with
 * the modification time the zip records (`ZipEntry.mtimeMs`) where it records one, as `unzip`
 * does. That matters to PHP: OPcache does not cache a script whose mtime is under two seconds old
 * (`opcache.file_update_protection`), so a release stamped with the time it was unpacked would be
 * compiled again at every request of a first boot.
 * Entries whose path would leave `destination` (`..`, absolute) are refused.
 * @returns the number of files written.
 * @throws Error on a corrupt zip or an escaping entry.
 */
export function extractZip(zipPath: string, destination: string): number {
  const zip = readFileSync(zipPath);
  const made = new Set<string>();
  const mkdir = (dir: string): void => {
    if (made.has(dir)) return;
    mkdirSync(dir, { recursive: true });
    made.add(dir);
  };
  let count = 0;
  const write = ({ name, data, mtimeMs }: ZipEntry): void => {
    const rel = normalize(name);
    if (rel.startsWith("..") || rel.startsWith(sep) || /^[a-zA-Z]:/.test(rel)) {
      throw new Error(`zip entry escapes the destination: ${name}`);
    }
    const out = join(destination, rel);
    if (name.endsWith("/")) {
      mkdir(out);
      return;
    }
    mkdir(dirname(out));
    // One open file for the bytes and the time: a second lookup of the path per file was measurable.
    const fd = openSync(out, "w");
    try {
      for (let written = 0; written < data.byteLength; ) written += writeSync(fd, data, written);
      if (mtimeMs !== undefined) futimesSync(fd, mtimeMs / 1000, mtimeMs / 1000);
    } finally {
      closeSync(fd);
    }
    count++;
  };
  // A plain zip is inflated one entry at a time as it is written: holding a release's 85 MB of
  // inflated files at once made the unpack ~10% slower (allocation and garbage collection).
  const directory = readPlainZipDirectory(zip);
  if (directory) for (const entry of directory) write(inflateEntry(zip, entry));
  else for (const entry of fflateEntries(zip)) write(entry);
  return count;
}

/** One entry of a zip: its name as stored and its uncompressed bytes. */
export interface ZipEntry {
  name: string;
  data: Uint8Array;
  /**
   * Its modification time (ms since the epoch), from the zip's MS-DOS date and time read as UTC,
   * never later than a minute ago; absent when the zip records none (or fflate read the zip).
   */
  mtimeMs?: number;
}

/** Entries dated later than this before now are dated this far back (`ZipEntry.mtimeMs`), so OPcache caches them at once. */
const NEWEST_ENTRY_AGE_MS = 60_000;

/** The MS-DOS `date` and `time` fields of a zip entry as ms since the epoch (read as UTC), or undefined when unset or invalid. */
export function dosDateTimeMs(date: number, time: number, now = Date.now()): number | undefined {
  const year = 1980 + (date >> 9);
  const month = (date >> 5) & 0xf;
  const day = date & 0x1f;
  const hours = time >> 11;
  const minutes = (time >> 5) & 0x3f;
  const seconds = (time & 0x1f) * 2;
  if (month < 1 || month > 12 || day < 1 || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  return Math.min(Date.UTC(year, month - 1, day, hours, minutes, seconds), now - NEWEST_ENTRY_AGE_MS);
}

/**
 * The entries of a zip, in central-directory order. A plain zip (one disk, no Zip64, entries
 * stored or deflated, not encrypted) is read from its central directory and inflated with Node's
 * native zlib: on a first boot that unpacks a WordPress release (4,400 files) it is 2–4 times
 * faster than fflate's JavaScript inflate, which has not been JIT-compiled yet. Anything else goes
 * to fflate, which reads the zip on its own.
 * @throws Error on a corrupt zip (from the fast path, an entry whose inflated size differs from
 *   the size the directory records).
 */
export function readZipEntries(zip: Uint8Array): ZipEntry[] {
  const directory = readPlainZipDirectory(zip);
  return directory ? directory.map((entry) => inflateEntry(zip, entry)) : fflateEntries(zip);
}

function fflateEntries(zip: Uint8Array): ZipEntry[] {
  return Object.entries(unzipSync(zip)).map(([name, data]) => ({ name, data }));
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Where one entry of a plain zip is and what it holds, read from the central directory. */
interface PlainZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  /** Byte offset of its stored bytes in the zip, and their length. */
  start: number;
  compressedSize: number;
  /** Its uncompressed size, in bytes. */
  size: number;
  mtimeMs?: number;
}

/**
 * The entries of a plain zip (see `readZipEntries`), located but not inflated, or undefined when
 * it is not one. Every entry is checked before any is inflated, so a zip that is not plain goes
 * whole to fflate.
 * @throws Error when an entry's bytes run past the end of the zip.
 */
function readPlainZipDirectory(zip: Uint8Array): PlainZipEntry[] | undefined {
  const buf = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
  // The end-of-central-directory record: 22 bytes plus a comment of at most 65,535.
  let eocd = -1;
  for (let p = buf.length - 22; p >= Math.max(0, buf.length - 22 - 0xffff); p -= 1) {
    if (buf.readUInt32LE(p) === EOCD) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const entries = buf.readUInt16LE(eocd + 10);
  const directorySize = buf.readUInt32LE(eocd + 12);
  const directoryOffset = buf.readUInt32LE(eocd + 16);
  // Zip64 marks its counts and offsets 0xFFFF / 0xFFFFFFFF.
  if (entries === 0xffff || directoryOffset === 0xffffffff || directoryOffset + directorySize > eocd) return undefined;
  const out: PlainZipEntry[] = [];
  let p = directoryOffset;
  for (let i = 0; i < entries; i += 1) {
    if (p + 46 > eocd || buf.readUInt32LE(p) !== CENTRAL) return undefined;
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    const mtimeMs = dosDateTimeMs(buf.readUInt16LE(p + 14), buf.readUInt16LE(p + 12));
    const compressedSize = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLength = buf.readUInt16LE(p + 28);
    const extraLength = buf.readUInt16LE(p + 30);
    const commentLength = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    // Encrypted, another method, or Zip64 sizes: leave it to fflate.
    if (flags & 0x1 || (method !== 0 && method !== 8) || compressedSize === 0xffffffff || size === 0xffffffff || local === 0xffffffff) return undefined;
    // Names are UTF-8 (flag bit 11) in every zip this reads; fflate decodes others as CP437.
    if (!(flags & 0x800) && /[^\x20-\x7e]/.test(buf.toString("latin1", p + 46, p + 46 + nameLength))) return undefined;
    const name = buf.toString("utf8", p + 46, p + 46 + nameLength);
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== LOCAL) return undefined;
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    if (start + compressedSize > buf.length) throw new Error(`zip entry runs past the end of the file: ${name}`);
    out.push({ name, method, start, compressedSize, size, ...(mtimeMs === undefined ? {} : { mtimeMs }) });
    p += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

/**
 * The bytes of one entry of a plain zip, inflated.
 * @throws Error when they do not come to the size the directory records (a RangeError from zlib
 *   when they would run past it: a bomb stops there).
 */
function inflateEntry(zip: Uint8Array, entry: PlainZipEntry): ZipEntry {
  const stored = zip.subarray(entry.start, entry.start + entry.compressedSize);
  const data = entry.method === 0 ? stored : inflateRawSync(stored, { maxOutputLength: Math.max(entry.size, 1) });
  if (data.byteLength !== entry.size) throw new Error(`zip entry ${entry.name}: ${data.byteLength} bytes inflated, ${entry.size} recorded`);
  return entry.mtimeMs === undefined ? { name: entry.name, data } : { name: entry.name, data, mtimeMs: entry.mtimeMs };
}
