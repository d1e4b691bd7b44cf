/**
 * The WordPress a sandbox boots when the caller names none: the newest release, asked of the
 * release mirror at most once a day; offline (`WP_CODEBOX_OFFLINE=1`) or when the mirror cannot
 * be reached within `MIRROR_CHECK_TIMEOUT_MS`, the newest WordPress already here (a cached release
 * or a bundled build). `WP_CODEBOX_WP` names the default instead (like `--wp`; `bundled` is the
 * newest bundled build), which is how a machine or a test suite pins it.
 */
import {
  LATEST_CHECK_MAX_AGE_MS,
  WpCodeboxError,
  chooseDefaultWordPress,
  quoteValue,
  type DefaultWordPressChoice,
  type DefaultWordPressInputs,
} from "@wp-codebox/runtime-core";
import { listWordPressBuilds } from "./wordpress-builds.js";
import { WORDPRESS_VERSION_PATTERN, ensureWordPressRelease, listCachedReleases, wordpressMirror, type CachedRelease, type WordPressReleaseOptions } from "./wordpress-releases.js";

/**
 * How long, in ms, each request that asks the mirror for the newest release may take before the
 * default falls back to what is here: a blackholed address or a resolver that never answers costs
 * at most this (a refused connection or a failed DNS lookup returns at once).
 */
export const MIRROR_CHECK_TIMEOUT_MS = 4000;

/** The value of `WP_CODEBOX_WP` that means the newest bundled build. */
export const BUNDLED_DEFAULT = "bundled";

/**
 * The version `WP_CODEBOX_WP` pins as the default (`6.5`, `7.0.4`, `latest`), the newest bundled
 * build's for `bundled`, or undefined when unset or empty.
 * @throws WpCodeboxError `invalid-argument` (exit 2) when the value is not a version, `latest` or `bundled`.
 */
export function pinnedDefaultWordPress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.WP_CODEBOX_WP;
  if (value === undefined || value === "") return undefined;
  if (value === BUNDLED_DEFAULT) return listWordPressBuilds()[0]?.version;
  if (!WORDPRESS_VERSION_PATTERN.test(value)) {
    throw new WpCodeboxError("invalid-argument", `WP_CODEBOX_WP=${quoteValue(value)}: expected a version such as 6.7 or 6.7.1, "latest" or "bundled".`, { WP_CODEBOX_WP: value.slice(0, 200) });
  }
  return value;
}

/** The default WordPress, chosen, with the cached release zip when the choice is a release. */
export interface ResolvedDefaultWordPress {
  choice: DefaultWordPressChoice;
  /** The verified release zip (`choice.source === "release"`). */
  release?: CachedRelease;
}

/**
 * Chooses the default WordPress (see the module comment). Online, `latest` is fetched and cached
 * like `--wp latest` (checksum verified), but the mirror is asked at most once a day and each
 * request that checks it is bounded by `MIRROR_CHECK_TIMEOUT_MS`.
 * @param options - as for `ensureWordPressRelease`; `checkTimeoutMs` and `maxAgeMs` default to
 *   `MIRROR_CHECK_TIMEOUT_MS` and one day.
 * @throws WpCodeboxError `wordpress-checksum-mismatch` and the other `ensureWordPressRelease`
 *   errors except an unreachable mirror (that one falls back); `wordpress-build-missing` when
 *   nothing at all can be booted.
 */
export async function resolveDefaultWordPress(options: WordPressReleaseOptions): Promise<ResolvedDefaultWordPress> {
  const offline = options.offline ?? process.env.WP_CODEBOX_OFFLINE === "1";
  let latest: DefaultWordPressInputs["latest"];
  let fetched: CachedRelease | undefined;
  if (!offline) {
    try {
      fetched = await ensureWordPressRelease("latest", {
        ...options,
        offline: false,
        checkTimeoutMs: options.checkTimeoutMs ?? MIRROR_CHECK_TIMEOUT_MS,
        maxAgeMs: options.maxAgeMs ?? LATEST_CHECK_MAX_AGE_MS,
      });
      latest = { release: fetched.release };
    } catch (error) {
      // Only a mirror that cannot be reached falls back; a bad checksum or a wrong file is an error.
      if (!(error instanceof WpCodeboxError) || error.code !== "wordpress-download-failed" || error.data.cause === undefined) throw error;
      latest = { unreachable: String(error.data.cause), mirror: wordpressMirror(options.mirror) };
    }
  }
  const cached = listCachedReleases(options.cacheDir);
  const bundled = listWordPressBuilds();
  if (bundled.length === 0 && cached.length === 0 && !fetched) {
    throw new WpCodeboxError("wordpress-build-missing", "No WordPress to boot: no bundled build (run npm install in the wp-codebox checkout) and no cached release.");
  }
  const choice = chooseDefaultWordPress({ offline, ...(latest ? { latest } : {}), cachedReleases: cached.map((c) => c.release), bundledReleases: bundled.map((b) => b.release) });
  if (choice.source !== "release") return { choice };
  if (fetched && fetched.release === choice.version) return { choice, release: fetched };
  const entry = cached.find((c) => c.release === choice.version)!;
  return { choice, release: { requested: choice.version, release: entry.release, zipPath: entry.zipPath, checksum: entry.checksum, fetched: false } };
}
