/**
 * Which WordPress a sandbox boots when the caller names none, and how that choice is recorded.
 * Pure logic: the backend asks the release mirror (or does not, offline) and lists what it has;
 * this decides. The default is the newest release; offline, or when the mirror cannot be reached,
 * the newest WordPress this machine already has (a cached release or a bundled build).
 */

/**
 * How the WordPress version was chosen (`runtime.wordpress.chosenBy` in `metadata.json`):
 * - `named`: the caller named it (`--wp`, a recipe's `runtime.wp`, a replayed bundle, `WP_CODEBOX_WP`);
 * - `latest`: the newest release, as the release mirror says (asked at most once a day);
 * - `offline-cached`: offline or the mirror unreachable, the newest release already in the cache;
 * - `offline-bundled`: offline or the mirror unreachable, the newest bundled build.
 */
export type WordPressChosenBy = "named" | "latest" | "offline-cached" | "offline-bundled";

/** Where the WordPress files came from: a `bundled` build, a `release` zip from the mirror, or a `custom` `--wordpress PATH`. */
export type WordPressSourceKind = "bundled" | "release" | "custom";

/** What a bundle records about its WordPress (`RuntimeInfo.wordpress`). */
export interface WordPressChoiceRecord {
  /** The release booted (`7.0.4`). */
  version: string;
  source: WordPressSourceKind;
  chosenBy: WordPressChosenBy;
}

/** How the one line about an offline default begins (so a quiet caller can still pass it on). */
export const OFFLINE_NOTICE_PREFIX = "offline: ";

/** How long the mirror's answer to "which release is newest" is trusted: one day, in ms. */
export const LATEST_CHECK_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** What the backend knows when choosing the default WordPress. */
export interface DefaultWordPressInputs {
  /** `WP_CODEBOX_OFFLINE=1`: the mirror was not asked. */
  offline: boolean;
  /**
   * The mirror's answer when asked: the newest release (now in the cache), or why it could not be
   * reached (`"ECONNREFUSED"`, `"timed out after 4000 ms"`). Absent when offline.
   */
  latest?: { release: string } | { unreachable: string; mirror: string };
  /** Releases in the cache, verified against their checksums (`["6.9.4", "7.0.4"]`), any order. */
  cachedReleases: readonly string[];
  /** Bundled builds' releases (`["6.5.5", "6.4.5"]`), any order; at least one. */
  bundledReleases: readonly string[];
}

/** The default WordPress and, when it is not the newest release, the one line that says why. */
export interface DefaultWordPressChoice {
  version: string;
  source: "release" | "bundled";
  chosenBy: Exclude<WordPressChosenBy, "named">;
  /** One line for stderr when the default fell back (offline or unreachable mirror); absent otherwise. */
  notice?: string;
}

/** Compares dotted versions numerically (`6.10` > `6.9`); negative when `a` is older. */
export function compareWordPressVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const newest = (versions: readonly string[]): string | undefined => [...versions].sort(compareWordPressVersions).at(-1);

/**
 * Chooses the default WordPress: the mirror's newest release when it answered; otherwise the
 * newest of the cached releases and the bundled builds (a release wins a tie: it is not minified).
 * @throws Error when there is neither a cached release nor a bundled build (a broken install; the
 *   backend reports `wordpress-build-missing` before it gets here).
 * @example chooseDefaultWordPress({ offline: true, cachedReleases: [], bundledReleases: ["6.5.5"] })
 *   // { version: "6.5.5", source: "bundled", chosenBy: "offline-bundled", notice: "offline: using WordPress 6.5.5, ..." }
 */
export function chooseDefaultWordPress(inputs: DefaultWordPressInputs): DefaultWordPressChoice {
  if (!inputs.offline && inputs.latest && "release" in inputs.latest) {
    return { version: inputs.latest.release, source: "release", chosenBy: "latest" };
  }
  const why = inputs.offline
    ? "WP_CODEBOX_OFFLINE=1 forbids checking for the newest release"
    : `the newest release could not be checked (${inputs.latest && "unreachable" in inputs.latest ? `${inputs.latest.mirror}: ${inputs.latest.unreachable}` : "the mirror was not asked"})`;
  const cached = newest(inputs.cachedReleases);
  const bundled = newest(inputs.bundledReleases);
  if (cached !== undefined && (bundled === undefined || compareWordPressVersions(cached, bundled) >= 0)) {
    return { version: cached, source: "release", chosenBy: "offline-cached", notice: `${OFFLINE_NOTICE_PREFIX}using WordPress ${cached}, the newest release in the cache; ${why}` };
  }
  if (bundled === undefined) throw new Error("No WordPress to fall back to: no cached release and no bundled build.");
  return { version: bundled, source: "bundled", chosenBy: "offline-bundled", notice: `${OFFLINE_NOTICE_PREFIX}using WordPress ${bundled}, the newest bundled build; ${why}` };
}

/** True when a "newest release" answer checked at `checkedAt` (ISO-8601) is younger than `maxAgeMs` at `nowMs`. */
export function isLatestCheckFresh(checkedAt: string | undefined, nowMs: number, maxAgeMs: number = LATEST_CHECK_MAX_AGE_MS): boolean {
  if (checkedAt === undefined) return false;
  const at = Date.parse(checkedAt);
  // A check "from the future" (a clock moved back) is not trusted.
  return Number.isFinite(at) && at <= nowMs && nowMs - at < maxAgeMs;
}
