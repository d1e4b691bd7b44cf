/**
 * WordPress releases beyond the bundled builds: `--wp X.Y[.Z]|latest` names a release zip in a
 * WordPress release mirror (default the official archive, https://wordpress.org/; override with
 * `WP_CODEBOX_WORDPRESS_MIRROR`). A release is fetched once, checked against the checksum the
 * mirror publishes next to it (`<zip>.sha1`, else `<zip>.md5`) before anything uses it, and kept
 * in `<cacheDir>/releases/`. With `WP_CODEBOX_OFFLINE=1` nothing is ever fetched: only cached
 * releases can be used. The zip then boots through the same path as `--wordpress PATH`.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { WpCodeboxError, compareWordPressVersions, isLatestCheckFresh, quoteValue } from "@wp-codebox/runtime-core";
import { unzipSync } from "fflate";
import { findWordPressBuild, listWordPressBuilds } from "./wordpress-builds.js";
import { sweepStalePartials, withCacheLock, writeFileAtomic } from "./cache-entry.js";

/** The official WordPress release archive. */
export const DEFAULT_WORDPRESS_MIRROR = "https://wordpress.org/";

/** What `--wp` accepts: a version `X.Y` / `X.Y.Z`, or `latest`. */
export const WORDPRESS_VERSION_PATTERN = /^(?:\d+\.\d+(?:\.\d+)?|latest)$/;

/** Where releases come from and whether fetching is allowed. */
export interface WordPressReleaseOptions {
  cacheDir: string;
  /** Mirror base URL; default `$WP_CODEBOX_WORDPRESS_MIRROR`, else the official archive. */
  mirror?: string;
  /** Never fetch; default `$WP_CODEBOX_OFFLINE === "1"`. */
  offline?: boolean;
  onProgress?: (message: string) => void;
  /** Per-request time limit in ms; default 120000. */
  timeoutMs?: number;
  /** Interrupts waiting for another process that is fetching the same release (`interrupted`). */
  signal?: AbortSignal;
  /** Time limit in ms of each checksum request (the small ones that say whether the mirror answers); default `timeoutMs`. */
  checkTimeoutMs?: number;
  /**
   * `latest` only: reuse the cached answer when the mirror was asked less than this many ms ago
   * (and it is the same mirror); default 0 (always ask).
   */
  maxAgeMs?: number;
}

/** A release zip in the cache, checked against its published checksum. */
export interface CachedRelease {
  /** The version asked for (`6.7.1`, `latest`). */
  requested: string;
  /** The release inside the zip (`wp-includes/version.php`). */
  release: string;
  zipPath: string;
  checksum: { algorithm: "sha1" | "md5"; value: string; url: string };
  /** True when this call downloaded it. */
  fetched: boolean;
}

/** True when `version` is a bundled build (`6.5`, `6.5.5`), so no mirror is needed. */
export function isBundledWordPress(version: string | undefined): boolean {
  if (version === undefined) return true;
  try {
    findWordPressBuild(version);
    return true;
  } catch {
    return false;
  }
}

/** The mirror base URL, always ending in `/`. */
export function wordpressMirror(mirror?: string): string {
  const base = mirror ?? (process.env.WP_CODEBOX_WORDPRESS_MIRROR || DEFAULT_WORDPRESS_MIRROR);
  return base.endsWith("/") ? base : `${base}/`;
}

/** The zip's file name in the archive: `wordpress-6.7.1.zip`, `latest.zip`. */
export function releaseZipName(version: string): string {
  return version === "latest" ? "latest.zip" : `wordpress-${version}.zip`;
}

function hash(algorithm: "sha1" | "md5", data: Uint8Array): string {
  return createHash(algorithm).update(data).digest("hex");
}

/** The release named in a zip's `wp-includes/version.php` (with or without the `wordpress/` folder). */
export function zipWordPressRelease(data: Uint8Array): string | undefined {
  const files = unzipSync(data, { filter: (f) => f.name === "wordpress/wp-includes/version.php" || f.name === "wp-includes/version.php" });
  const source = Object.values(files)[0];
  if (!source) return undefined;
  return /\$wp_version\s*=\s*'([^']+)'/.exec(new TextDecoder().decode(source))?.[1];
}

const unavailable = (version: string, why: string, data: Record<string, unknown> = {}) => {
  const bundled = listWordPressBuilds().map((b) => b.version);
  return new WpCodeboxError(
    "wordpress-version-unavailable",
    `WordPress ${version} is not available: ${why}. Bundled versions (always offline): ${bundled.join(", ")}; or pass --wordpress PATH with a WordPress zip or folder of your own.`,
    { requested: version, available: bundled, ...data },
  );
};

async function get(url: string, timeoutMs: number): Promise<{ status: number; body?: Uint8Array }> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "follow" });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new WpCodeboxError(
      "wordpress-download-failed",
      `Cannot reach the WordPress release mirror at ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}. Check the network or WP_CODEBOX_WORDPRESS_MIRROR, or use a bundled version or --wordpress PATH.`,
      { url, cause: cause?.code ?? (error as Error).message },
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { status: response.status };
  }
  return { status: response.status, body: new Uint8Array(await response.arrayBuffer()) };
}

/** The checksum published next to `zipUrl`: `.sha1`, else `.md5`. */
async function publishedChecksum(zipUrl: string, timeoutMs: number): Promise<CachedRelease["checksum"] | undefined> {
  for (const algorithm of ["sha1", "md5"] as const) {
    const url = `${zipUrl}.${algorithm}`;
    const got = await get(url, timeoutMs);
    if (!got.body) continue;
    const value = /\b([0-9a-f]{40}|[0-9a-f]{32})\b/i.exec(new TextDecoder().decode(got.body))?.[1]?.toLowerCase();
    if (value && value.length === (algorithm === "sha1" ? 40 : 32)) return { algorithm, value, url };
  }
  return undefined;
}

/**
 * Checks without fetching or booting that a non-bundled release can be had: online it always can
 * be tried; offline only a cached one. (Used by the backend's preflight, before anything boots.)
 * @throws WpCodeboxError `wordpress-version-unavailable` (offline and not cached), `invalid-argument` (not a version).
 */
export function assertWordPressReleaseObtainable(version: string, options: Pick<WordPressReleaseOptions, "cacheDir" | "offline">): void {
  if (!WORDPRESS_VERSION_PATTERN.test(version)) {
    throw new WpCodeboxError("invalid-argument", `--wp ${quoteValue(version)}: expected a version such as 6.7 or 6.7.1, or "latest".`, { requested: version });
  }
  const offline = options.offline ?? process.env.WP_CODEBOX_OFFLINE === "1";
  if (offline && !existsSync(join(options.cacheDir, "releases", `${version}.json`))) {
    throw unavailable(version, "it is not bundled, not in the cache, and WP_CODEBOX_OFFLINE=1 forbids fetching it", { offline: true });
  }
}

interface CacheRecord {
  requested: string;
  release: string;
  file: string;
  checksum: CachedRelease["checksum"];
  mirror: string;
  fetchedAt: string;
  /** When the mirror last confirmed this record (ISO-8601); `latest` is asked again after `maxAgeMs`. */
  checkedAt?: string;
}

/**
 * Returns the release zip for `version` from the cache, fetching and verifying it first when
 * needed. `latest` asks the mirror for its current checksum each time (unless offline) and reuses
 * the cached zip when it matches.
 * @throws WpCodeboxError (all exit 3) `wordpress-version-unavailable` (offline and not cached, or
 *   the mirror has no such release), `wordpress-download-failed` (mirror unreachable, no checksum
 *   published, or the zip holds another version), `wordpress-checksum-mismatch` (the download does
 *   not match the published checksum; nothing is kept).
 */
export async function ensureWordPressRelease(version: string, options: WordPressReleaseOptions): Promise<CachedRelease> {
  if (!WORDPRESS_VERSION_PATTERN.test(version)) {
    throw new WpCodeboxError("invalid-argument", `--wp ${quoteValue(version)}: expected a version such as 6.7 or 6.7.1, or "latest".`, { requested: version });
  }
  const dir = join(options.cacheDir, "releases");
  // What a process killed while it saved a download (a zip, a record) left.
  sweepStalePartials(dir);
  const recordPath = join(dir, `${version}.json`);
  const offline = options.offline ?? process.env.WP_CODEBOX_OFFLINE === "1";
  const timeoutMs = options.timeoutMs ?? 120_000;
  const recorded = existsSync(recordPath);
  const cached = readRecord(recordPath, dir);
  // A record whose zip no longer matches its checksum is dropped by readRecord: said, not hidden.
  const dropped = recorded && !cached;
  if (offline) {
    if (cached) return { ...cached, fetched: false };
    if (dropped) throw unavailable(version, "its cached zip no longer matches its checksum (damaged or changed) and was dropped, and WP_CODEBOX_OFFLINE=1 forbids fetching it again", { offline: true, dropped: true });
    throw unavailable(version, "it is not bundled, not in the cache, and WP_CODEBOX_OFFLINE=1 forbids fetching it", { offline: true });
  }
  if (dropped) options.onProgress?.(`The cached WordPress ${version} zip no longer matches its checksum (damaged or changed): dropped, fetching it again`);
  const mirror = wordpressMirror(options.mirror);
  const zipUrl = new URL(releaseZipName(version), mirror).toString();
  // A fixed version never changes: a verified cached copy is used without asking the mirror.
  if (cached && version !== "latest") return { ...cached, fetched: false };
  if (cached && cached.mirror === mirror && isLatestCheckFresh(cached.checkedAt, Date.now(), options.maxAgeMs ?? 0)) return { ...cached, fetched: false };
  // One process fetches; concurrent ones wait and then read what it cached.
  return withCacheLock(recordPath, () => fetchRelease(version, dir, recordPath, mirror, zipUrl, timeoutMs, options), {
    ...(options.signal ? { signal: options.signal } : {}),
    // Said once: a download can take a while, and the waiting process would otherwise print nothing.
    onWait: (owner) => options.onProgress?.(`Waiting for another wp-codebox process${owner ? ` (pid ${owner.pid})` : ""} to download WordPress ${version}`),
  });
}

async function fetchRelease(version: string, dir: string, recordPath: string, mirror: string, zipUrl: string, timeoutMs: number, options: WordPressReleaseOptions): Promise<CachedRelease> {
  const cached = readRecord(recordPath, dir);
  if (cached && version !== "latest") return { ...cached, fetched: false };
  // Another process may have asked the mirror while this one waited for the lock.
  if (cached && cached.mirror === mirror && isLatestCheckFresh(cached.checkedAt, Date.now(), options.maxAgeMs ?? 0)) return { ...cached, fetched: false };
  const checksum = await publishedChecksum(zipUrl, options.checkTimeoutMs ?? timeoutMs);
  if (!checksum) {
    const head = await get(zipUrl, timeoutMs);
    if (!head.body) throw unavailable(version, `the mirror ${mirror} has no ${releaseZipName(version)} (HTTP ${head.status})`, { url: zipUrl, status: head.status });
    throw new WpCodeboxError(
      "wordpress-download-failed",
      `The mirror ${mirror} publishes no checksum for ${releaseZipName(version)} (neither .sha1 nor .md5), so it cannot be verified and is not used.`,
      { url: zipUrl },
    );
  }
  const checkedAt = new Date().toISOString();
  if (cached && cached.checksum.value === checksum.value) {
    writeRecord(recordPath, { requested: version, release: cached.release, file: basename(cached.zipPath), checksum, mirror, fetchedAt: cached.fetchedAt, checkedAt });
    return { ...cached, fetched: false };
  }
  // `latest` is usually a release already cached under its own number (or the other way round):
  // the same published checksum means the same zip, so it is neither fetched nor installed again.
  const same = sameZipCached(dir, checksum);
  if (same && (version === "latest" || same.release === version)) {
    writeRecord(recordPath, { requested: version, release: same.release, file: basename(same.zipPath), checksum, mirror, fetchedAt: checkedAt, checkedAt });
    return { ...same, requested: version, checksum, fetched: false };
  }
  options.onProgress?.(`Fetching WordPress ${version} from ${zipUrl} (once; it is cached)`);
  const got = await get(zipUrl, timeoutMs);
  if (!got.body) throw unavailable(version, `the mirror ${mirror} has no ${releaseZipName(version)} (HTTP ${got.status})`, { url: zipUrl, status: got.status });
  const actual = hash(checksum.algorithm, got.body);
  if (actual !== checksum.value) {
    throw new WpCodeboxError(
      "wordpress-checksum-mismatch",
      `${zipUrl} does not match its published ${checksum.algorithm} (${checksum.url}): expected ${checksum.value}, got ${actual}. The download was discarded; try again or use another mirror (WP_CODEBOX_WORDPRESS_MIRROR).`,
      { url: zipUrl, algorithm: checksum.algorithm, expected: checksum.value, actual },
    );
  }
  let release: string | undefined;
  try {
    release = zipWordPressRelease(got.body);
  } catch (error) {
    throw new WpCodeboxError("wordpress-download-failed", `${zipUrl} is not a readable zip: ${(error as Error).message}.`, { url: zipUrl });
  }
  if (!release) throw new WpCodeboxError("wordpress-download-failed", `${zipUrl} holds no wp-includes/version.php: it is not a WordPress release.`, { url: zipUrl });
  if (version !== "latest" && release !== version) {
    throw new WpCodeboxError("wordpress-download-failed", `${zipUrl} holds WordPress ${release}, not ${version}: the mirror serves the wrong file.`, { url: zipUrl, release });
  }
  mkdirSync(dir, { recursive: true });
  const file = `wordpress-${release}-${checksum.value.slice(0, 12)}.zip`;
  // Whatever is at the zip's path (a folder would refuse the rename) is replaced.
  rmSync(join(dir, file), { recursive: true, force: true });
  writeFileAtomic(join(dir, file), got.body);
  markZipVerified(join(dir, file), checksum);
  writeRecord(recordPath, { requested: version, release, file, checksum, mirror, fetchedAt: checkedAt, checkedAt });
  return { requested: version, release, zipPath: join(dir, file), checksum, fetched: true };
}

/** The size and modification time of a cached zip when it last matched its checksum (`<zip>.verified`). */
interface ZipVerified {
  size: number;
  mtimeMs: number;
  algorithm: string;
  value: string;
}

/**
 * Whether the cached zip at `zipPath` has `checksum`. It is hashed once (reading and hashing a
 * 30 MB release took ~70 ms of every boot of it, and every cached zip was hashed again to find the
 * newest); after that, while its size and modification time are the ones recorded beside it
 * (`<zip>.verified`), it is taken to be the same file. A zip changed in any other way is hashed
 * again, and dropped when it no longer matches.
 */
function zipHasChecksum(zipPath: string, checksum: CachedRelease["checksum"]): boolean {
  const info = statSync(zipPath);
  if (!info.isFile()) return false;
  const stampPath = `${zipPath}.verified`;
  const stamp = readStamp(stampPath);
  if (stamp && stamp.size === info.size && stamp.mtimeMs === info.mtimeMs && stamp.algorithm === checksum.algorithm && stamp.value === checksum.value) return true;
  if (hash(checksum.algorithm, readFileSync(zipPath)) !== checksum.value) {
    rmSync(stampPath, { recursive: true, force: true });
    return false;
  }
  markZipVerified(zipPath, checksum);
  return true;
}

/** Stamps are this small; anything larger, or not a regular file (a FIFO would block the read), is no stamp. */
const MAX_STAMP_BYTES = 4096;

/** The stamp at `stampPath`, or undefined when there is none or it is not one (then removed). */
function readStamp(stampPath: string): Partial<ZipVerified> | undefined {
  let info;
  try {
    info = lstatSync(stampPath);
  } catch {
    return undefined;
  }
  try {
    if (info.isFile() && info.size <= MAX_STAMP_BYTES) return JSON.parse(readFileSync(stampPath, "utf8")) as Partial<ZipVerified>;
  } catch {
    // unreadable: replaced below
  }
  rmSync(stampPath, { recursive: true, force: true });
  return undefined;
}

/** Records that the zip at `zipPath`, as it is now, has `checksum` (see `zipHasChecksum`). */
function markZipVerified(zipPath: string, checksum: CachedRelease["checksum"]): void {
  const info = statSync(zipPath);
  const stampPath = `${zipPath}.verified`;
  // A folder there would refuse the rename.
  rmSync(stampPath, { recursive: true, force: true });
  writeFileAtomic(stampPath, JSON.stringify({ size: info.size, mtimeMs: info.mtimeMs, algorithm: checksum.algorithm, value: checksum.value } satisfies ZipVerified));
}

function writeRecord(recordPath: string, record: CacheRecord): void {
  writeFileAtomic(recordPath, `${JSON.stringify(record, null, 2)}\n`);
}

/** Another cached release whose zip has this checksum (verified again here), if any. */
function sameZipCached(dir: string, checksum: CachedRelease["checksum"]): CachedRecord | undefined {
  if (!existsSync(dir)) return undefined;
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".json")) continue;
    let record: CacheRecord;
    try {
      record = JSON.parse(readFileSync(join(dir, name), "utf8")) as CacheRecord;
    } catch {
      continue;
    }
    if (record.checksum?.algorithm !== checksum.algorithm || record.checksum.value !== checksum.value) continue;
    const found = readRecord(join(dir, name), dir);
    if (found) return found;
  }
  return undefined;
}

type CachedRecord = Omit<CachedRelease, "fetched"> & { mirror: string; fetchedAt: string; checkedAt?: string };

/** A cache record whose zip still matches its recorded checksum; a damaged entry is dropped. */
function readRecord(recordPath: string, dir: string): CachedRecord | undefined {
  if (!existsSync(recordPath)) return undefined;
  try {
    const record = JSON.parse(readFileSync(recordPath, "utf8")) as CacheRecord;
    const zipPath = join(dir, record.file);
    if (existsSync(zipPath) && zipHasChecksum(zipPath, record.checksum)) {
      return { requested: record.requested, release: record.release, zipPath, checksum: record.checksum, mirror: record.mirror, fetchedAt: record.fetchedAt, ...(record.checkedAt ? { checkedAt: record.checkedAt } : {}) };
    }
  } catch {
    // fall through: treat as not cached
  }
  rmSync(recordPath, { force: true });
  return undefined;
}

/** A release in the cache: its version, zip and checksum, and when the mirror last confirmed it. */
export interface CachedReleaseEntry {
  release: string;
  zipPath: string;
  checksum: CachedRelease["checksum"];
  mirror: string;
  fetchedAt: string;
}

/**
 * The releases in `<cacheDir>/releases/` whose zips still match their checksums, newest first,
 * one entry per release (`latest.json` names a release cached under its own number too). Reads
 * and hashes the cached zips; never fetches.
 */
export function listCachedReleases(cacheDir: string): CachedReleaseEntry[] {
  const dir = join(cacheDir, "releases");
  if (!existsSync(dir)) return [];
  const byRelease = new Map<string, CachedReleaseEntry>();
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".json")) continue;
    const found = readRecord(join(dir, name), dir);
    if (!found || byRelease.has(found.release) || !/^\d+\.\d+(?:\.\d+)?$/.test(found.release)) continue;
    byRelease.set(found.release, { release: found.release, zipPath: found.zipPath, checksum: found.checksum, mirror: found.mirror, fetchedAt: found.fetchedAt });
  }
  return [...byRelease.values()].sort((a, b) => compareWordPressVersions(b.release, a.release));
}

/** What the mirror last said `latest` is, from the cache (never fetches): the release and when it was asked. */
export function cachedLatestCheck(cacheDir: string): { release: string; mirror: string; checkedAt?: string } | undefined {
  const dir = join(cacheDir, "releases");
  const found = readRecord(join(dir, "latest.json"), dir);
  return found ? { release: found.release, mirror: found.mirror, ...(found.checkedAt ? { checkedAt: found.checkedAt } : {}) } : undefined;
}
