/**
 * The OPcache seed: the compiled core scripts the installer saved (OPcache's file cache folder,
 * `<site>.opcache/`), packed into one file, `<site>.opcache.pack`, so a PHP worker loads it with
 * one read and hands each script to its in-memory filesystem without copying. Reading the 430-odd
 * files one by one and copying them in cost 90–170 ms of every worker's boot; the pack takes
 * ~20 ms.
 *
 * Layout: a 4-byte little-endian length N, N bytes of UTF-8 JSON `[[relativePath, byteLength], …]`,
 * then the files' bytes in that order.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { sweepStalePartials, writeFileAtomic, writeFileAtomicAsync } from "./cache-entry.js";

/** One file of a pack: its path relative to the seed folder (`/`-separated) and its bytes. */
export interface SeedFile {
  path: string;
  data: Uint8Array;
}

/** Where the pack of the seed folder `seedDir` lives. */
export function seedPackPath(seedDir: string): string {
  return `${seedDir}.pack`;
}

function listFiles(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/** Packs the files under `seedDir` into one buffer (see the module comment). */
export function packSeed(seedDir: string): Buffer {
  return packSeedFiles(listFiles(seedDir).map((path) => ({ path, data: readFileSync(join(seedDir, path)) })));
}

/** Packs `files` (paths relative to the seed folder, `/`-separated) into one buffer, in the order given. */
export function packSeedFiles(files: SeedFile[]): Buffer {
  const index = Buffer.from(JSON.stringify(files.map((f) => [f.path, f.data.byteLength])), "utf8");
  const header = Buffer.alloc(4);
  header.writeUInt32LE(index.byteLength, 0);
  return Buffer.concat([header, index, ...files.map((f) => f.data)]);
}

/**
 * The files of a pack, as views into `pack` (nothing is copied).
 * @throws Error when the buffer is not a well-formed pack.
 */
export function unpackSeed(pack: Uint8Array): SeedFile[] {
  if (pack.byteLength < 4) throw new Error("OPcache seed pack: too short");
  const view = new DataView(pack.buffer, pack.byteOffset, pack.byteLength);
  const indexLength = view.getUint32(0, true);
  let offset = 4 + indexLength;
  if (offset > pack.byteLength) throw new Error("OPcache seed pack: index runs past the end");
  const index = JSON.parse(new TextDecoder().decode(pack.subarray(4, offset))) as unknown;
  if (!Array.isArray(index)) throw new Error("OPcache seed pack: index is not a list");
  const files: SeedFile[] = [];
  for (const entry of index) {
    const [path, size] = entry as [unknown, unknown];
    if (typeof path !== "string" || typeof size !== "number" || !Number.isInteger(size) || size < 0 || path.split("/").some((p) => p === "" || p === "." || p === "..")) {
      throw new Error(`OPcache seed pack: bad entry ${JSON.stringify(entry)}`);
    }
    if (offset + size > pack.byteLength) throw new Error(`OPcache seed pack: ${path} runs past the end`);
    files.push({ path, data: pack.subarray(offset, offset + size) });
    offset += size;
  }
  if (offset !== pack.byteLength) throw new Error("OPcache seed pack: bytes after the last file");
  return files;
}

/**
 * Writes a pack (a worker's exported OPcache, `export-opcache`) to `packPath`, atomically
 * (`writeFileAtomicAsync`): a boot that reads it meanwhile finds no pack or the whole one. The
 * pack is ~28 MB for WordPress 7.0 core.
 * @throws what writing the file throws (ENOSPC, EACCES).
 */
export async function writeSeedPack(pack: Uint8Array, packPath: string): Promise<void> {
  await writeFileAtomicAsync(packPath, pack);
}

/**
 * Removes the partial files of the pack at `packPath` (`<pack>.partial-<pid>-<hex>`, written by
 * `writeSeedPack` or by older versions) that are older than a minute: a process killed while it
 * wrote the seed (~28 MB) leaves one, and the seed is written only while none exists, so nothing
 * else would ever remove them (`sweepStalePartials`).
 * @returns how many it removed.
 */
export function sweepStaleSeedPartials(packPath: string, now = Date.now()): number {
  return sweepStalePartials(dirname(packPath), basename(packPath), now);
}

/**
 * The pack of `seedDir`. The installer writes it (a site's folder is then never written); a site
 * installed before that has only the folder, packed here on its first boot. Written beside it under a unique temporary name and renamed (`writeFileAtomic`), so a
 * concurrent boot never reads half a pack; two writers write the same bytes.
 * @returns its path, or undefined when there is no seed folder.
 */
export function ensureSeedPack(seedDir: string): string | undefined {
  const pack = seedPackPath(seedDir);
  if (existsSync(pack)) return pack;
  if (!existsSync(seedDir)) return undefined;
  writeFileAtomic(pack, packSeed(seedDir));
  return pack;
}
