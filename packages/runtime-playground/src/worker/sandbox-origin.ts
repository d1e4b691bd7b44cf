/**
 * The sandbox's own site: the one place that decides whether a URL or a socket target is the
 * sandbox itself. The policy's network rule is about the outside world; the sandbox's own origin
 * is not outside, so PHP may always call it (WP-Cron, Site Health, `wp_remote_get(rest_url())`).
 *
 * Two addresses name the site: the origin WordPress is configured with (`siteUrl`, what PHP puts
 * in links and asks to connect to) and the loopback address where the sandbox's HTTP server
 * really listens. With the loopback origin they are the same (`http://127.0.0.1:PORT`); with the
 * stable origin (`http://wp-codebox.test`) only `siteUrl` differs, and every self-call is still
 * recognised here by the host name PHP asked for and connected to the real listener.
 */

/** Where the sandbox site is reached. */
export interface SandboxOrigin {
  /** The site URL WordPress uses (home/siteurl), e.g. `http://127.0.0.1:41234`. */
  siteUrl: string;
  /** The loopback address the sandbox's HTTP server listens on. */
  listen: { host: string; port: number };
}

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function defaultPort(protocol: string): number {
  return protocol === "https:" ? 443 : 80;
}

function bareHost(host: string): string {
  const h = host.trim().toLowerCase();
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
}

/**
 * Every `host:port` that reaches the sandbox itself: the host and port of `siteUrl`, and each
 * loopback name with the port the sandbox's server listens on. Host names are lower case, IPv6
 * without brackets. PHP gets this list (constant `WP_CODEBOX_SELF_HOSTS`) so its HTTP API can
 * recognise self-calls by membership alone.
 */
export function selfHostPorts(origin: SandboxOrigin): string[] {
  const site = new URL(origin.siteUrl);
  const sitePort = site.port ? Number(site.port) : defaultPort(site.protocol);
  const entries = new Set([`${bareHost(site.hostname)}:${sitePort}`]);
  for (const name of LOOPBACK_NAMES) entries.add(`${bareHost(name)}:${origin.listen.port}`);
  return [...entries];
}

/**
 * Whether a connection to `host:port` (or a URL) reaches the sandbox itself (`selfHostPorts`).
 * @param target - a URL (string or `URL`) or `{ host, port }` as a socket sees it.
 */
export function isSandboxSelf(origin: SandboxOrigin, target: string | URL | { host: string; port: number }): boolean {
  let host: string;
  let port: number;
  if (typeof target === "string" || target instanceof URL) {
    let url: URL;
    try {
      url = typeof target === "string" ? new URL(target) : target;
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    host = url.hostname;
    port = url.port ? Number(url.port) : defaultPort(url.protocol);
  } else {
    host = target.host;
    port = target.port;
  }
  return selfHostPorts(origin).includes(`${bareHost(host)}:${port}`);
}

/**
 * Where a self-call connects: the sandbox's real listener (`listen`, or `selfCallPort` on the same
 * host when the server has a separate port for calls made by PHP). Undefined when the target is
 * not the sandbox.
 */
export function selfCallTarget(origin: SandboxOrigin, host: string, port: number, selfCallPort?: number): { host: string; port: number } | undefined {
  if (!isSandboxSelf(origin, { host, port })) return undefined;
  return { host: origin.listen.host, port: selfCallPort ?? origin.listen.port };
}
