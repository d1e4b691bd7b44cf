/**
 * WP-CLI phars fetched for the user (`wp-codebox wp-cli install [VERSION|latest]`): from WP-CLI's
 * release location (default its GitHub releases, https://github.com/wp-cli/wp-cli/releases/;
 * override with `WP_CODEBOX_WP_CLI_MIRROR`), checked against the SHA-512 published beside each
 * phar before it is kept, and cached as `<cacheDir>/wp-cli/wp-cli-<version>.phar` with a JSON
 * record. `wordpress.wp-cli` then uses the newest cached phar when no other is named.
 *
 * Mirror layout (the GitHub releases one): `<mirror>download/v<X.Y.Z>/wp-cli-<X.Y.Z>.phar` and
 * `….phar.sha512`; `<mirror>latest` redirects to `…/tag/v<X.Y.Z>`, which names the newest release.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

/** WP-CLI's official release location. */
export const DEFAULT_WP_CLI_MIRROR = "https://github.com/wp-cli/wp-cli/releases/";

/** What `wp-cli install` accepts: `X.Y.Z` or `latest`. */
export const WP_CLI_VERSION_PATTERN = /^(?:\d+\.\d+\.\d+|latest)$/;

/** Time limit for the small requests (checksum, latest version), in ms: an unreachable network fails fast. */
const SMALL_REQUEST_TIMEOUT_MS = 15_000;
/** Time limit for the phar itself (about 7 MB), in ms. */
const PHAR_TIMEOUT_MS = 120_000;

/** Options of `installWpCli`. */
export interface WpCliInstallOptions {
  cacheDir: string;
  /** Release location base URL; default `$WP_CODEBOX_WP_CLI_MIRROR`, else `DEFAULT_WP_CLI_MIRROR`. */
  mirror?: string;
  /** Never fetch; default `$WP_CODEBOX_OFFLINE === "1"`. */
  offline?: boolean;
  onProgress?: (message: string) => void;
  /** Time limit of the phar download in ms; default 120000 (the checksum request has 15000). */
  timeoutMs?: number;
}

/** A cached phar, checked against its published SHA-512. */
export interface CachedWpCli {
  /** The WP-CLI release, `2.10.0`. */
  version: string;
  /** Absolute path of the cached phar. */
  pharPath: string;
  /** Hex SHA-512 of the phar, as published. */
  sha512: string;
  /** Where it was fetched from. */
  url: string;
  /** ISO-8601 time of the fetch. */
  fetchedAt: string;
}

/** The release location base URL, always ending in `/`. */
export function wpCliMirror(mirror?: string): string {
  const base = mirror ?? (process.env.WP_CODEBOX_WP_CLI_MIRROR || DEFAULT_WP_CLI_MIRROR);
  return base.endsWith("/") ? base : `${base}/`;
}

/** The URL of one release's phar under `mirror`. */
export function wpCliPharUrl(version: string, mirror?: string): string {
  return new URL(`download/v${version}/wp-cli-${version}.phar`, wpCliMirror(mirror)).toString();
}

const WHAT_TO_DO =
  "Check the network (or set WP_CODEBOX_WP_CLI_MIRROR to a reachable copy of the release location), or download wp-cli.phar on a machine that can and pass --wp-cli-phar PATH or set WP_CODEBOX_WP_CLI_PHAR=PATH";

const downloadFailed = (message: string, data: Record<string, unknown>) => new WpCodeboxError("wp-cli-download-failed", `${message} ${WHAT_TO_DO}.`, data);

async function get(url: string, timeoutMs: number): Promise<{ status: number; url: string; body?: Uint8Array }> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "follow" });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = (error as Error).name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw downloadFailed(`Cannot reach the WP-CLI release location at ${url}: ${why}.`, { url, cause: why });
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { status: response.status, url: response.url || url };
  }
  return { status: response.status, url: response.url || url, body: new Uint8Array(await response.arrayBuffer()) };
}

/**
 * The newest WP-CLI release, read from where `<mirror>latest` redirects (`…/tag/v2.12.0`).
 * @throws WpCodeboxError `wp-cli-download-failed` (unreachable, or the answer names no version).
 */
export async function latestWpCliVersion(mirror?: string): Promise<string> {
  const url = new URL("latest", wpCliMirror(mirror)).toString();
  const got = await get(url, SMALL_REQUEST_TIMEOUT_MS);
  const version = /\/tag\/v?(\d+\.\d+\.\d+)\/?$/.exec(new URL(got.url).pathname)?.[1];
  if (!version) throw downloadFailed(`${url} did not lead to a release tag (ended at ${got.url}, HTTP ${got.status}), so the newest WP-CLI version is unknown; name one, e.g. \`wp-codebox wp-cli install 2.10.0\`.`, { url, finalUrl: got.url });
  return version;
}

function recordPath(cacheDir: string, version: string): string {
  return join(cacheDir, "wp-cli", `wp-cli-${version}.json`);
}

/** A cache record whose phar still matches its SHA-512; a damaged entry is removed. */
function readCached(cacheDir: string, version: string): CachedWpCli | undefined {
  const path = recordPath(cacheDir, version);
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, "utf8")) as Omit<CachedWpCli, "pharPath">;
    const pharPath = join(cacheDir, "wp-cli", `wp-cli-${record.version}.phar`);
    if (record.version === version && existsSync(pharPath) && createHash("sha512").update(readFileSync(pharPath)).digest("hex") === record.sha512) {
      return { ...record, pharPath };
    }
  } catch {
    // fall through: treat as not cached
  }
  rmSync(path, { force: true });
  return undefined;
}

/** Orders `X.Y.Z` versions newest first. */
const newestFirst = (a: string, b: string) => {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pb[i]! - pa[i]!;
  return 0;
};

/**
 * Every phar `installWpCli` cached, newest first, each checked against its SHA-512 (a damaged one
 * is dropped from the cache and not listed).
 * @param cacheDir - the project cache dir (`resolveCacheDir()`).
 */
export function listCachedWpCli(cacheDir: string): CachedWpCli[] {
  return cachedVersions(cacheDir).map((v) => readCached(cacheDir, v)).filter((c): c is CachedWpCli => c !== undefined);
}

/**
 * The newest phar `installWpCli` cached that still matches its SHA-512 (only that one is hashed).
 * @returns the phar, or undefined when none is cached.
 */
export function newestCachedWpCli(cacheDir: string): CachedWpCli | undefined {
  for (const version of cachedVersions(cacheDir)) {
    const cached = readCached(cacheDir, version);
    if (cached) return cached;
  }
  return undefined;
}

/** Versions with a cache record, newest first (not yet checked). */
function cachedVersions(cacheDir: string): string[] {
  const dir = join(cacheDir, "wp-cli");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^wp-cli-(\d+\.\d+\.\d+)\.json$/.exec(name)?.[1])
    .filter((v): v is string => v !== undefined)
    .sort(newestFirst);
}

/**
 * Fetches a WP-CLI release phar, checks it against its published SHA-512 and caches it; a phar
 * already cached (and still matching) is returned without asking the network.
 * @param version - `X.Y.Z` or `latest` (resolved through the release location first).
 * @returns the cached phar and `fetched` (true when this call downloaded it).
 * @throws WpCodeboxError `invalid-argument` (not a version; exit 2); `wp-cli-download-failed`
 *   (exit 3: offline with `WP_CODEBOX_OFFLINE=1`, the location unreachable or silent past its
 *   time limit, no such release, no published SHA-512); `wp-cli-checksum-mismatch` (exit 3: the
 *   phar does not match its published SHA-512; nothing is kept).
 * @example await installWpCli("2.10.0", { cacheDir: resolveCacheDir() }) // { version: "2.10.0", pharPath: ".../wp-cli/wp-cli-2.10.0.phar", fetched: true, ... }
 */
export async function installWpCli(version: string, options: WpCliInstallOptions): Promise<CachedWpCli & { fetched: boolean }> {
  if (!WP_CLI_VERSION_PATTERN.test(version)) {
    throw new WpCodeboxError("invalid-argument", `wp-cli install ${version}: expected a WP-CLI version such as 2.10.0, or "latest".`, { requested: version });
  }
  const offline = options.offline ?? process.env.WP_CODEBOX_OFFLINE === "1";
  if (version !== "latest") {
    const cached = readCached(options.cacheDir, version);
    if (cached) return { ...cached, fetched: false };
  }
  if (offline) {
    const cached = version === "latest" ? newestCachedWpCli(options.cacheDir) : undefined;
    if (cached) return { ...cached, fetched: false };
    throw new WpCodeboxError(
      "wp-cli-download-failed",
      `WP-CLI ${version} is not in the cache, and WP_CODEBOX_OFFLINE=1 forbids fetching it: unset WP_CODEBOX_OFFLINE when the network is back, or pass --wp-cli-phar PATH or set WP_CODEBOX_WP_CLI_PHAR=PATH to a wp-cli.phar you have.`,
      { requested: version, offline: true },
    );
  }
  const mirror = wpCliMirror(options.mirror);
  const resolved = version === "latest" ? await latestWpCliVersion(mirror) : version;
  if (version === "latest") {
    const cached = readCached(options.cacheDir, resolved);
    if (cached) return { ...cached, fetched: false };
  }
  const url = wpCliPharUrl(resolved, mirror);
  const checksum = await get(`${url}.sha512`, SMALL_REQUEST_TIMEOUT_MS);
  const sha512 = checksum.body ? /\b([0-9a-f]{128})\b/i.exec(new TextDecoder().decode(checksum.body))?.[1]?.toLowerCase() : undefined;
  if (!sha512) {
    const why = checksum.status === 404 ? `there is no WP-CLI ${resolved} there (HTTP 404 for ${url}.sha512)` : `it publishes no SHA-512 for it (${url}.sha512: HTTP ${checksum.status})`;
    throw downloadFailed(`WP-CLI ${resolved} cannot be installed from ${mirror}: ${why}.`, { url: `${url}.sha512`, status: checksum.status, requested: version });
  }
  options.onProgress?.(`Fetching WP-CLI ${resolved} from ${url} (once; it is cached)`);
  const got = await get(url, options.timeoutMs ?? PHAR_TIMEOUT_MS);
  if (!got.body) throw downloadFailed(`WP-CLI ${resolved} cannot be installed: ${url} answered HTTP ${got.status}.`, { url, status: got.status, requested: version });
  const actual = createHash("sha512").update(got.body).digest("hex");
  if (actual !== sha512) {
    throw new WpCodeboxError(
      "wp-cli-checksum-mismatch",
      `${url} does not match its published SHA-512 (${url}.sha512): expected ${sha512}, got ${actual}. The download was discarded; try again, or use another mirror (WP_CODEBOX_WP_CLI_MIRROR).`,
      { url, expected: sha512, actual },
    );
  }
  const dir = join(options.cacheDir, "wp-cli");
  mkdirSync(dir, { recursive: true });
  const pharPath = join(dir, `wp-cli-${resolved}.phar`);
  // Written under a temporary name and renamed, so a reader never sees half a phar.
  writeFileSync(`${pharPath}.partial-${process.pid}`, got.body);
  renameSync(`${pharPath}.partial-${process.pid}`, pharPath);
  const record = { version: resolved, sha512, url, fetchedAt: new Date().toISOString() };
  writeFileSync(`${recordPath(options.cacheDir, resolved)}.partial-${process.pid}`, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(`${recordPath(options.cacheDir, resolved)}.partial-${process.pid}`, recordPath(options.cacheDir, resolved));
  return { ...record, pharPath, fetched: true };
}
