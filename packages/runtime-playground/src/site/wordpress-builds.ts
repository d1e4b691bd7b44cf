/**
 * Offline WordPress builds from the `@wp-playground/wordpress-builds` npm package.
 * Source: @wp-playground/wordpress-builds 0.9.19 — `src/wordpress/wp-X.Y.zip` omits the static
 * assets listed in `public/wp-X.Y/wordpress-remote-asset-paths`; those files live under
 * `public/wp-X.Y/` (or `public/wp-X.Y/wordpress/` in some releases). A complete tree is the zip's
 * root with the assets merged over it.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, cpSync, statSync, writeFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { WpCodeboxError, compareWordPressVersions } from "@wp-codebox/runtime-core";
import { extractZip } from "./zip.js";
import { ensureCacheEntry, type CacheLockOptions } from "./cache-entry.js";

const require = createRequire(import.meta.url);

/** A WordPress version this machine can boot without network. */
export interface WordPressBuild {
  /** Short version used on the command line, e.g. `"6.5"`. */
  version: string;
  /** Full release, e.g. `"6.5.5"`. */
  release: string;
  zipPath: string;
  assetsDir: string;
  assetListPath: string;
}

function buildsPackageDir(): string {
  return dirname(require.resolve("@wp-playground/wordpress-builds/package.json"));
}

/** Every bundled stable WordPress version (newest first). Betas and nightlies are left out. */
export function listWordPressBuilds(): WordPressBuild[] {
  const root = buildsPackageDir();
  const versions = JSON.parse(readFileSync(join(root, "src/wordpress/wp-versions.json"), "utf8")) as Record<string, string>;
  return Object.entries(versions)
    .filter(([short]) => /^\d+\.\d+$/.test(short))
    .map(([short, release]) => {
      const publicDir = join(root, "public", `wp-${short}`);
      const nested = join(publicDir, "wordpress");
      return {
        version: short,
        release,
        zipPath: join(root, "src/wordpress", `wp-${short}.zip`),
        assetsDir: existsSync(nested) ? nested : publicDir,
        assetListPath: join(publicDir, "wordpress-remote-asset-paths"),
      };
    })
    .filter((b) => existsSync(b.zipPath))
    .sort((a, b) => compareWordPressVersions(b.version, a.version));
}


/**
 * Finds the bundled build for `version` (`"6.5"` or `"6.5.5"`; default newest).
 * @throws `wordpress-version-unavailable` listing the available versions.
 */
export function findWordPressBuild(version?: string): WordPressBuild {
  const builds = listWordPressBuilds();
  if (builds.length === 0) {
    throw new WpCodeboxError("wordpress-build-missing", "No WordPress builds found in @wp-playground/wordpress-builds. Run `npm install` in the wp-codebox checkout.");
  }
  if (!version) return builds[0]!;
  const found = builds.find((b) => b.version === version || b.release === version);
  if (!found) {
    const list = builds.map((b) => `${b.version} (${b.release})`).join(", ");
    throw new WpCodeboxError(
      "wordpress-version-unavailable",
      `WordPress ${version} is not available offline. Available: ${list}. Pass --wp with one of them, or --wordpress PATH for your own build (zip or directory).`,
      { requested: version, available: builds.map((b) => b.version) },
    );
  }
  return found;
}

/** Counts regular files below `dir`. */
export function countFiles(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) n += countFiles(join(dir, entry.name));
    else if (entry.isFile()) n++;
  }
  return n;
}

/**
 * Assembles a complete WordPress tree for `build` in the cache (once) and returns its path:
 * `<cacheDir>/wordpress/<release>/`. Verified by checking every listed asset exists and
 * recording the file count in `.wp-codebox-tree.json`. Concurrent callers (other processes too)
 * wait for one builder (cache-entry.ts); a tree in use is never replaced.
 * @throws `wordpress-build-missing` when the package's assets are incomplete; `interrupted` when
 *   `options.signal` aborts while another process builds it.
 */
export async function ensureWordPressTree(build: WordPressBuild, cacheDir: string, options: CacheLockOptions = {}): Promise<string> {
  const target = bundledTreeDir(build, cacheDir);
  await ensureCacheEntry(target, {
    ...options,
    isComplete: (dir) => {
      const stamp = join(dir, ".wp-codebox-tree.json");
      if (!existsSync(stamp)) return false;
      const recorded = JSON.parse(readFileSync(stamp, "utf8")) as { files: number };
      return countFiles(dir) - 1 === recorded.files;
    },
    build: (staging) => {
      mkdirSync(staging, { recursive: true });
      extractZip(build.zipPath, staging);
      // Some zips wrap everything in `wordpress/`; flatten that.
      if (!existsSync(join(staging, "wp-load.php")) && existsSync(join(staging, "wordpress", "wp-load.php"))) {
        const inner = `${staging}-inner`;
        renameSync(join(staging, "wordpress"), inner);
        rmSync(staging, { recursive: true, force: true });
        renameSync(inner, staging);
      }
      cpSync(build.assetsDir, staging, { recursive: true, filter: (src) => !src.endsWith("wordpress-remote-asset-paths") });
      const assets = existsSync(build.assetListPath)
        ? readFileSync(build.assetListPath, "utf8").split("\n").map((l) => l.trim()).filter(Boolean)
        : [];
      const missing = assets.filter((p) => !existsSync(join(staging, p)));
      if (missing.length > 0) {
        throw new WpCodeboxError(
          "wordpress-build-missing",
          `The WordPress ${build.release} build is incomplete: ${missing.length} static assets are missing (e.g. ${missing[0]}). Reinstall dependencies with \`npm ci\`.`,
          { missing: missing.slice(0, 20) },
        );
      }
      const files = countFiles(staging);
      writeFileSync(join(staging, ".wp-codebox-tree.json"), JSON.stringify({ release: build.release, files, assets: assets.length }));
    },
  });
  return target;
}

/**
 * Where `ensureCustomWordPressTree` unpacks the zip at `zipPath`: a folder of the cache
 * keyed by the zip's path, size and modification time, so a changed zip is unpacked anew. Known
 * before anything is unpacked.
 * @throws the error of `statSync` when the zip does not exist.
 */
export function customZipTreeDir(zipPath: string, cacheDir: string): string {
  const abs = resolve(zipPath);
  const st = statSync(abs);
  // Hashed: the tail of the base64 of the three kept only the size and time, so two zips of one
  // size and time at different paths shared a tree.
  const key = createHash("sha256").update(`${abs}\0${st.size}\0${st.mtimeMs}`).digest("base64url").slice(0, 32);
  return join(cacheDir, "wordpress", `custom-${key}`);
}

/**
 * Where `ensureWordPressTree` puts the tree of a bundled build (known before it is unpacked).
 */
export function bundledTreeDir(build: WordPressBuild, cacheDir: string): string {
  return join(cacheDir, "wordpress", build.release);
}

/**
 * Prepares a user-supplied WordPress (`--wordpress PATH`, a zip or a directory) as a tree in the
 * cache keyed by its path and modification time (a zip is unpacked once, under the entry's lock).
 * @throws `wordpress-source-invalid` when the path is missing or holds no `wp-load.php`;
 *   `interrupted` when `options.signal` aborts while another process unpacks the same zip.
 */
export async function ensureCustomWordPressTree(path: string, cacheDir: string, options: CacheLockOptions = {}): Promise<{ dir: string; release: string }> {
  const abs = resolve(path);
  if (!existsSync(abs)) {
    throw new WpCodeboxError("wordpress-source-invalid", `--wordpress ${path} does not exist. Pass a WordPress zip or an unpacked WordPress directory.`, { path });
  }
  const st = statSync(abs);
  let dir = abs;
  if (st.isFile()) {
    dir = customZipTreeDir(abs, cacheDir);
    await ensureCacheEntry(dir, {
      ...options,
      isComplete: (d) => existsSync(join(d, "wp-load.php")),
      build: (staging) => {
        const unpacked = `${staging}-unpacked`;
        mkdirSync(unpacked, { recursive: true });
        try {
          try {
            extractZip(abs, unpacked);
          } catch (error) {
            throw new WpCodeboxError("wordpress-source-invalid", `--wordpress ${path} is not a readable zip file: ${(error as Error).message}`, { path });
          }
          const root = existsSync(join(unpacked, "wp-load.php")) ? unpacked : join(unpacked, "wordpress");
          if (!existsSync(join(root, "wp-load.php"))) {
            throw new WpCodeboxError("wordpress-source-invalid", `--wordpress ${path} does not contain wp-load.php at its root or under wordpress/.`, { path });
          }
          renameSync(root, staging);
        } finally {
          rmSync(unpacked, { recursive: true, force: true });
        }
      },
    });
  } else if (!existsSync(join(dir, "wp-load.php"))) {
    throw new WpCodeboxError("wordpress-source-invalid", `--wordpress ${path} is a directory without wp-load.php. Point it at the WordPress root.`, { path });
  }
  const versionFile = readFileSync(join(dir, "wp-includes", "version.php"), "utf8");
  const release = /\$wp_version\s*=\s*'([^']+)'/.exec(versionFile)?.[1] ?? "unknown";
  return { dir, release };
}
