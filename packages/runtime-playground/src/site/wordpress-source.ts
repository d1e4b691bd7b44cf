/**
 * The WordPress tree a create spec names: a bundled build, a release from the mirror (checked and
 * cached), or the caller's own zip or directory. Shared with the native backend, which boots the
 * same trees (the CLI hands it `resolveWordPressTree`).
 */
import { resolve } from "node:path";
import type { RuntimeCreateSpec, WordPressChoiceRecord } from "@wp-codebox/runtime-core";
import type { CacheLockOptions } from "./cache-entry.js";
import { bundledTreeDir, customZipTreeDir, ensureCustomWordPressTree, ensureWordPressTree, findWordPressBuild, type WordPressBuild } from "./wordpress-builds.js";
import { pinnedDefaultWordPress, resolveDefaultWordPress } from "./wordpress-default.js";
import { ensureWordPressRelease, isBundledWordPress, type CachedRelease } from "./wordpress-releases.js";

/** Where a release from the mirror came from, for the bundle's `wordpress-release` event. */
export interface WordPressSourceRecord {
  requested: string;
  release: string;
  checksum: { algorithm: string; value: string; url: string };
  fetched: boolean;
}

/** Options of `resolveWordPressTree`. */
export interface WordPressTreeOptions extends CacheLockOptions {
  cwd: string;
  cacheDir: string;
  wordpressMirror?: string;
  offline?: boolean;
  onProgress?: (message: string) => void;
  /**
   * Called once it is known which tree a bundled build or a release from the mirror will be and
   * where it goes, before it is unpacked (not for the caller's own `wordpress.path`): its folder
   * and release, as the resolved tree will have them. The unpack waits for what it returns (a
   * boot starts the workers of a release it has not installed yet first: unpacking blocks the
   * thread); a rejection ends the resolution with it.
   */
  onTreeLocated?: (tree: { dir: string; release: string }) => void | Promise<void>;
}

/**
 * Makes sure the WordPress tree of `spec.wordpress` is in the cache. A spec that names no version
 * gets the default (`WP_CODEBOX_WP`, else the newest release, else offline the newest cached or
 * bundled one, said in one `onProgress` line).
 * @returns its folder, its release (`"6.5.5"`), how it was chosen and, for a release from the
 *   mirror, where it came from.
 * @throws `wordpress-version-unavailable`, `wordpress-download-failed`, `wordpress-checksum-mismatch`,
 *   `wordpress-source-invalid`, `wordpress-build-missing`, `invalid-argument` (a bad `WP_CODEBOX_WP`), `interrupted`.
 */
export async function resolveWordPressTree(
  spec: Pick<RuntimeCreateSpec, "wordpress">,
  options: WordPressTreeOptions,
): Promise<{ dir: string; release: string; source?: WordPressSourceRecord; chosen: Omit<WordPressChoiceRecord, "version"> }> {
  const lockOptions = options.signal ? { signal: options.signal } : {};
  const releaseOptions = {
    cacheDir: options.cacheDir,
    ...(options.wordpressMirror !== undefined ? { mirror: options.wordpressMirror } : {}),
    ...(options.offline !== undefined ? { offline: options.offline } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...lockOptions,
  };
  // A release zip from the mirror (checked against its published checksum, cached), booted like a user's own --wordpress zip.
  const fromRelease = async (release: CachedRelease) => {
    if (options.onTreeLocated) {
      let dir: string | undefined;
      try {
        dir = customZipTreeDir(release.zipPath, options.cacheDir);
      } catch {
        // The zip is gone meanwhile (another process replacing it): ensureCustomWordPressTree says so.
      }
      if (dir !== undefined) await options.onTreeLocated({ dir, release: release.release });
    }
    return {
      ...(await ensureCustomWordPressTree(release.zipPath, options.cacheDir, lockOptions)),
      source: { requested: release.requested, release: release.release, checksum: release.checksum, fetched: release.fetched },
    };
  };
  const fromBuild = async (build: WordPressBuild) => {
    await options.onTreeLocated?.({ dir: bundledTreeDir(build, options.cacheDir), release: build.release });
    return { dir: await ensureWordPressTree(build, options.cacheDir, lockOptions), release: build.release };
  };
  if (spec.wordpress?.path) {
    return { ...(await ensureCustomWordPressTree(resolve(options.cwd, spec.wordpress.path), options.cacheDir, lockOptions)), chosen: { source: "custom", chosenBy: "named" } };
  }
  const version = spec.wordpress?.version ?? pinnedDefaultWordPress();
  if (version === undefined) {
    const resolved = await resolveDefaultWordPress(releaseOptions);
    // The one line that says which WordPress an offline default is, and why.
    if (resolved.choice.notice) options.onProgress?.(resolved.choice.notice);
    const tree = resolved.release ? await fromRelease(resolved.release) : await fromBuild(findWordPressBuild(resolved.choice.version));
    return { ...tree, chosen: { source: resolved.choice.source, chosenBy: resolved.choice.chosenBy } };
  }
  if (isBundledWordPress(version)) return { ...(await fromBuild(findWordPressBuild(version))), chosen: { source: "bundled", chosenBy: "named" } };
  return { ...(await fromRelease(await ensureWordPressRelease(version, releaseOptions))), chosen: { source: "release", chosenBy: "named" } };
}
