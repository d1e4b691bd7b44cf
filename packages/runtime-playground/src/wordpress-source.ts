/**
 * The WordPress tree a create spec names: a bundled build, a release from the mirror (checked and
 * cached), or the caller's own zip or directory. Shared with the native backend, which boots the
 * same trees (the CLI hands it `resolveWordPressTree`).
 */
import { resolve } from "node:path";
import type { RuntimeCreateSpec } from "@wp-codebox/runtime-core";
import type { CacheLockOptions } from "./cache-entry.js";
import { ensureCustomWordPressTree, ensureWordPressTree, findWordPressBuild } from "./wordpress-builds.js";
import { ensureWordPressRelease, isBundledWordPress } from "./wordpress-releases.js";

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
}

/**
 * Makes sure the WordPress tree of `spec.wordpress` is in the cache.
 * @returns its folder, its release (`"6.5.5"`) and, for a release from the mirror, where it came from.
 * @throws `wordpress-version-unavailable`, `wordpress-download-failed`, `wordpress-checksum-mismatch`,
 *   `wordpress-source-invalid`, `wordpress-build-missing`, `interrupted`.
 */
export async function resolveWordPressTree(spec: Pick<RuntimeCreateSpec, "wordpress">, options: WordPressTreeOptions): Promise<{ dir: string; release: string; source?: WordPressSourceRecord }> {
  const lockOptions = options.signal ? { signal: options.signal } : {};
  const version = spec.wordpress?.version;
  if (spec.wordpress?.path) return ensureCustomWordPressTree(resolve(options.cwd, spec.wordpress.path), options.cacheDir, lockOptions);
  if (isBundledWordPress(version)) {
    const build = findWordPressBuild(version);
    return { dir: await ensureWordPressTree(build, options.cacheDir, lockOptions), release: build.release };
  }
  // Not bundled: a release zip from the mirror (checked against its published checksum, cached),
  // booted like a user's own --wordpress zip.
  const release = await ensureWordPressRelease(version!, {
    cacheDir: options.cacheDir,
    ...(options.wordpressMirror !== undefined ? { mirror: options.wordpressMirror } : {}),
    ...(options.offline !== undefined ? { offline: options.offline } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...lockOptions,
  });
  const tree = await ensureCustomWordPressTree(release.zipPath, options.cacheDir, lockOptions);
  return { ...tree, source: { requested: release.requested, release: release.release, checksum: release.checksum, fetched: release.fetched } };
}
