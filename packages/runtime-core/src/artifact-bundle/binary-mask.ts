/**
 * Secrets in binary artifact files (snapshot files: the SQLite database, wp-content files,
 * uploads; screenshots): masked byte for byte, so a file keeps its size and structure. A deflated
 * zip entry's bytes do not contain the text it holds, so the entries of a zip archive are inflated
 * and masked, and an archive in which something changed is written again: masked entries
 * deflated anew, every other entry as it was, so it stays a valid zip.
 */
import { crc32, deflateRawSync, inflateRawSync } from "node:zlib";
import type { Redactor } from "../redaction.js";

/**
 * `content` as the bundle stores a binary file: a zip archive's entries masked inside, then every
 * byte of a secret form in the file itself turned into `*` (`Redactor.redactBytes`).
 * @returns `content` itself when nothing was masked.
 */
export function maskBinaryContent(content: Uint8Array, redactor: Redactor): Uint8Array {
  const opened = looksLikeZip(content) ? maskZipEntries(content, (entry) => redactor.redactBytes(entry)) : undefined;
  // Then the file's own bytes: an archive's names and comments, and what could not be opened.
  return redactor.redactBytes(opened ?? content);
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;

interface ZipEntry {
  /** The central directory record, as read (its offsets and sizes are rewritten). */
  central: Buffer;
  method: number;
  /** The local header's fixed part, name and extra field. */
  local: Buffer;
  /** The entry's stored (compressed) bytes. */
  data: Buffer;
}

/** True when `bytes` starts like a zip archive (a local file header). */
export function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 30 && Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32LE(0) === LOCAL_HEADER;
}

/**
 * `zip` with `mask` applied to the content of every entry (stored or deflated).
 * @param mask - returns its argument itself when it changed nothing.
 * @returns `zip` itself when no entry changed, else the rewritten archive; `undefined` when the
 *   archive cannot be read here (zip64, encryption, a compression other than deflate, a damaged
 *   directory): the caller then masks its bytes as they are.
 */
export function maskZipEntries(zip: Uint8Array, mask: (content: Uint8Array) => Uint8Array): Uint8Array | undefined {
  const buf = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
  const entries = readEntries(buf);
  if (!entries) return undefined;
  let changed = false;
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    let data = entry.data;
    let local = entry.local;
    let record = entry.central;
    let content: Buffer;
    try {
      content = entry.method === 8 ? inflateRawSync(entry.data) : entry.data;
    } catch {
      return undefined;
    }
    const masked = mask(content);
    if (masked !== content) {
      changed = true;
      data = entry.method === 8 ? deflateRawSync(masked) : Buffer.from(masked);
      const crc = crc32(masked);
      local = Buffer.from(local);
      local.writeUInt16LE(local.readUInt16LE(6) & ~0x08, 6); // sizes are in the header now, no data descriptor
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(data.length, 18);
      local.writeUInt32LE(masked.byteLength, 22);
      record = Buffer.from(record);
      record.writeUInt16LE(record.readUInt16LE(8) & ~0x08, 8);
      record.writeUInt32LE(crc, 16);
      record.writeUInt32LE(data.length, 20);
      record.writeUInt32LE(masked.byteLength, 24);
    } else if ((local.readUInt16LE(6) & 0x08) !== 0) {
      // Its data descriptor (after the data) is dropped below: the sizes go into the header.
      local = Buffer.from(local);
      local.writeUInt16LE(local.readUInt16LE(6) & ~0x08, 6);
      local.writeUInt32LE(record.readUInt32LE(16), 14);
      local.writeUInt32LE(record.readUInt32LE(20), 18);
      local.writeUInt32LE(record.readUInt32LE(24), 22);
      record = Buffer.from(record);
      record.writeUInt16LE(record.readUInt16LE(8) & ~0x08, 8);
    }
    record = Buffer.from(record);
    record.writeUInt32LE(offset, 42);
    parts.push(local, data);
    central.push(record);
    offset += local.length + data.length;
  }
  if (!changed) return zip;
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...parts, directory, end]));
}

/** The entries of a plain zip (no zip64, no encryption, stored or deflated), else `undefined`. */
function readEntries(buf: Buffer): ZipEntry[] | undefined {
  // The end-of-central-directory record: 22 bytes plus a comment of up to 64 KiB, at the end.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || at === 0xffffffff) return undefined; // zip64
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL_HEADER) return undefined;
    const flags = buf.readUInt16LE(at + 8);
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const localAt = buf.readUInt32LE(at + 42);
    if ((flags & 0x01) !== 0 || (method !== 0 && method !== 8) || compressed === 0xffffffff || localAt === 0xffffffff) return undefined;
    const recordEnd = at + 46 + nameLength + extraLength + commentLength;
    if (recordEnd > buf.length || localAt + 30 > buf.length || buf.readUInt32LE(localAt) !== LOCAL_HEADER) return undefined;
    const localEnd = localAt + 30 + buf.readUInt16LE(localAt + 26) + buf.readUInt16LE(localAt + 28);
    if (localEnd + compressed > buf.length) return undefined;
    entries.push({
      central: buf.subarray(at, recordEnd),
      method,
      local: buf.subarray(localAt, localEnd),
      data: buf.subarray(localEnd, localEnd + compressed),
    });
    at = recordEnd;
  }
  return entries;
}
