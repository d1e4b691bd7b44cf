/**
 * `wp-codebox wp-cli install [VERSION|latest]`: fetches WP-CLI's release phar once, checks its
 * published SHA-512 and caches it, so `wordpress.wp-cli` works without a phar downloaded by hand.
 * The work is `installWpCli` in runtime-playground; this maps the CLI's environment onto it.
 */
import { installWpCli, resolveCacheDir, wpCliMirror, type CachedWpCli } from "@wp-codebox/runtime-playground";

/** What `wp-cli install --json` prints. */
export interface WpCliInstallReport extends CachedWpCli {
  /** True when this run downloaded the phar; false when the cache already held it. */
  fetched: boolean;
}

/**
 * Installs a WP-CLI phar into the cache dir named by `env` (`WP_CODEBOX_CACHE_DIR`), from
 * `WP_CODEBOX_WP_CLI_MIRROR` (default WP-CLI's GitHub releases), honouring `WP_CODEBOX_OFFLINE=1`.
 * @param version - `X.Y.Z` or `latest` (default).
 * @throws WpCodeboxError `invalid-argument` (exit 2), `wp-cli-download-failed` and
 *   `wp-cli-checksum-mismatch` (exit 3), as `installWpCli`.
 */
export async function runWpCliInstall(options: { version?: string; env: NodeJS.ProcessEnv; onProgress?: (message: string) => void }): Promise<WpCliInstallReport> {
  const { env } = options;
  return installWpCli(options.version ?? "latest", {
    cacheDir: resolveCacheDir(env.WP_CODEBOX_CACHE_DIR),
    mirror: wpCliMirror(env.WP_CODEBOX_WP_CLI_MIRROR || undefined),
    offline: env.WP_CODEBOX_OFFLINE === "1",
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}
