import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The cache directory for WordPress trees and installed sites (every backend):
 * `$WP_CODEBOX_CACHE_DIR`, default `~/.cache/wp-codebox`.
 */
export function resolveCacheDir(override?: string): string {
  if (override) return resolve(override);
  const fromEnv = process.env.WP_CODEBOX_CACHE_DIR;
  if (fromEnv) return resolve(fromEnv);
  return join(homedir(), ".cache", "wp-codebox");
}
