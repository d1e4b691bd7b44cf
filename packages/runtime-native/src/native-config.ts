/**
 * The wp-config.php constants of a native sandbox: the database on the sandbox's own socket, the
 * stable site origin, fresh salts, the same policy constants and developer-site defaults as the
 * Playground backend, then the caller's `--define`s.
 */
import { randomBytes } from "node:crypto";
import { STABLE_SITE_ORIGIN, type RuntimePolicy, type WpDefineValue } from "@wp-codebox/runtime-core";
import { SANDBOX_PATHS } from "./native-site.js";

/**
 * WordPress's database connection: the sandbox's MariaDB over its socket, as an account with
 * rights on the `wordpress` database only (php/db-admin.php); root is the host's, for reset() and
 * snapshots. The WordPress core test library (`wordpress.phpunit`) is pointed at the same.
 */
export const SITE_DATABASE = Object.freeze({ name: "wordpress", user: "wordpress", password: "", host: `localhost:${SANDBOX_PATHS.socket}`, charset: "utf8mb4" });

const SALTS = ["AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"];

/**
 * @param options.siteUrl - the site's origin (default `STABLE_SITE_ORIGIN`; `serve` uses the loopback front's).
 * @param options.installing - the installer's constants only (the cached site does not depend on
 *   policy or defines).
 * @returns name → JSON scalar, for `writeSiteConfig`.
 */
export function siteConstants(options: { policy?: RuntimePolicy; defines?: Record<string, WpDefineValue>; installing?: boolean; siteUrl?: string }): Record<string, string | number | boolean | null> {
  const constants: Record<string, string | number | boolean | null> = {
    DB_NAME: SITE_DATABASE.name,
    DB_USER: SITE_DATABASE.user,
    DB_PASSWORD: SITE_DATABASE.password,
    DB_HOST: SITE_DATABASE.host,
    DB_CHARSET: SITE_DATABASE.charset,
    DB_COLLATE: "",
    WP_HOME: options.siteUrl ?? STABLE_SITE_ORIGIN,
    WP_SITEURL: options.siteUrl ?? STABLE_SITE_ORIGIN,
    WP_DISABLE_FATAL_ERROR_HANDLER: true,
    FS_METHOD: "direct",
    AUTOMATIC_UPDATER_DISABLED: true,
    WP_AUTO_UPDATE_CORE: false,
  };
  for (const salt of SALTS) constants[salt] = randomBytes(32).toString("base64");
  // The installer runs with no network at all (no relay): spawning WP-Cron would only fail.
  if (options.installing) return { ...constants, WP_HTTP_BLOCK_EXTERNAL: true, DISABLE_WP_CRON: true };
  constants.WP_DEBUG = true;
  constants.WP_DEBUG_DISPLAY = false;
  const network = options.policy?.network ?? "deny";
  // Outside the site, PHP's requests go through the policy proxy (native-network.ts), which
  // forwards the hosts the policy allows; WordPress refuses the others before they leave.
  if (network !== "deny") Object.assign(constants, { WP_PROXY_HOST: "127.0.0.1", WP_PROXY_PORT: "3128", WP_PROXY_BYPASS_HOSTS: "localhost" });
  if (network === "deny" || typeof network === "object") constants.WP_HTTP_BLOCK_EXTERNAL = true;
  if (typeof network === "object") constants.WP_ACCESSIBLE_HOSTS = network.allowHosts.join(",");
  return { ...constants, ...(options.defines ?? {}) };
}
