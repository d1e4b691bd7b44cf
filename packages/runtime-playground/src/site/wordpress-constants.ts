import type { RuntimePolicy } from "@wp-codebox/runtime-core";

/**
 * wp-config constants every sandbox gets. `WP_HTTP_BLOCK_EXTERNAL` keeps WordPress from waiting
 * out 3–10 s timeouts on update checks with no network and is how `network: "deny"`
 * reaches PHP; `WP_ACCESSIBLE_HOSTS` carries an allow-list. WordPress lets requests to its own
 * host through that block, and so does the network guard, so WP-Cron spawns and runs as on a real
 * site (`DISABLE_WP_CRON` is not set).
 */
export function baseConstants(policy?: RuntimePolicy): Record<string, string | boolean> {
  const constants: Record<string, string | boolean> = {
    WP_DISABLE_FATAL_ERROR_HANDLER: true,
    // PHP writes every file it may change itself (core through the sandbox's copy-on-write layer,
    // wp-content, mounts); WordPress's own ownership probe would compare the host's uid leaking
    // through the host mounts with the uid of an in-memory script and could answer "ftpext".
    FS_METHOD: "direct",
    AUTOMATIC_UPDATER_DISABLED: true,
    WP_AUTO_UPDATE_CORE: false,
    WP_HTTP_BLOCK_EXTERNAL: true,
  };
  const network = policy?.network ?? "deny";
  if (network === "allow") constants.WP_HTTP_BLOCK_EXTERNAL = false;
  else if (typeof network === "object") constants.WP_ACCESSIBLE_HOSTS = network.allowHosts.join(",");
  return constants;
}

/**
 * wp-config constants of a developer's test site, as wp-env sets them: WordPress's debug paths on
 * (`wp_trigger_error()`, `_doing_it_wrong()`, every `if ( WP_DEBUG )`), nothing printed into pages
 * (messages are captured on stderr: `site/debug-display-mu-plugin.php`). Not used by the
 * installer, whose cached site does not depend on them. `--define` overrides any of them.
 * `SCRIPT_DEBUG` stays WordPress's default (false): with it on, the block editor loads React's
 * development build and every script unminified, and opening it in Chromium took 18 s instead of
 * 6.5 s on a 2-core machine, past the browser steps' default limits. `--define SCRIPT_DEBUG=true`
 * turns it on.
 */
export const DEVELOPER_SITE_CONSTANTS: Readonly<Record<string, boolean>> = Object.freeze({
  WP_DEBUG: true,
  WP_DEBUG_DISPLAY: false,
});
