/**
 * The network of a native sandbox's PHP: an empty network namespace (its own loopback only) in
 * which the site's host name resolves to 127.0.0.1 (an /etc/hosts of its own) and a relay
 * (`socat`, confined with the PHP process it serves) listens on the site's port, forwarding each
 * connection to a unix socket in the sandbox's folder where the runtime's loopback front takes it
 * as a self-call. When the policy allows outbound network, a second relay port leads to the
 * policy-checking proxy on the host (`startNativeEgressProxy`); nothing else leaves the namespace.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from "node:http";
import { join, posix } from "node:path";
import { giveOneToSandbox, type SiteLayout } from "./native-site.js";
import type { Bind } from "./bubblewrap.js";

/** Where the network folder (sockets, hosts file) is bound inside the sandbox. */
export const NETWORK_DIR = "/run/wp-codebox-net";
/** The port of the policy proxy inside the sandbox's namespace (`WP_PROXY_PORT`, `http_proxy`). */
export const PROXY_PORT = 3128;

/** One relay port: connections to 127.0.0.1:`port` inside the namespace go to `socket` (a path inside the sandbox). */
export interface RelayListener {
  port: number;
  socket: string;
}

/** What a PHP process's confinement needs for its network: binds, relay ports, environment. */
export interface SandboxNetwork {
  binds: Bind[];
  listeners: RelayListener[];
  env: Record<string, string>;
}

/** Host paths of a sandbox's network folder. */
export function networkPaths(layout: SiteLayout): { dir: string; siteSocket: string; proxySocket: string; runSiteSocket: string; runProxySocket: string; hosts: string; nsswitch: string } {
  const dir = join(layout.root, "net");
  return {
    dir,
    siteSocket: join(dir, "site.sock"),
    proxySocket: join(dir, "proxy.sock"),
    runSiteSocket: join(dir, `${WARM_RELAY_PREFIX}site.sock`),
    runProxySocket: join(dir, `${WARM_RELAY_PREFIX}proxy.sock`),
    hosts: join(dir, "hosts"),
    nsswitch: join(dir, "nsswitch.conf"),
  };
}

/** Prefix of the sockets the warm PHP process's relays lead to (`run-site.sock`, `run-proxy.sock`). */
const WARM_RELAY_PREFIX = "run-";

/**
 * The same network with the relays leading to sockets of their own (`run-site.sock`,
 * `run-proxy.sock`): the warm PHP process's, so the host can count the connections that came
 * from it apart from php-cgi's.
 */
export function warmProcessNetwork(network: SandboxNetwork): SandboxNetwork {
  return {
    binds: network.binds,
    env: network.env,
    listeners: network.listeners.map((l) => ({ port: l.port, socket: posix.join(posix.dirname(l.socket), `${WARM_RELAY_PREFIX}${posix.basename(l.socket)}`) })),
  };
}

/**
 * Writes the network folder of a sandbox (hosts file naming the site's host, name lookups from
 * files only) and says how its PHP processes are confined.
 * @param siteUrl - the site's origin (`http://wp-codebox.test` or `http://127.0.0.1:PORT`).
 * @param proxy - the policy proxy listens on the proxy socket (the policy allows outbound network).
 */
export function prepareSandboxNetwork(layout: SiteLayout, siteUrl: string, proxy: boolean): SandboxNetwork {
  const paths = networkPaths(layout);
  mkdirSync(paths.dir, { recursive: true });
  giveOneToSandbox(paths.dir, layout.uid);
  const site = new URL(siteUrl);
  const names = ["localhost", ...(site.hostname !== "127.0.0.1" && site.hostname !== "localhost" ? [site.hostname] : [])];
  writeFileSync(paths.hosts, `127.0.0.1\t${names.join(" ")}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
  // Only the hosts file: there is no name server inside (the proxy resolves outside names).
  writeFileSync(paths.nsswitch, "hosts: files\n");
  const sitePort = Number(site.port || (site.protocol === "https:" ? 443 : 80));
  const listeners: RelayListener[] = [{ port: sitePort, socket: `${NETWORK_DIR}/site.sock` }];
  const env: Record<string, string> = {};
  if (proxy) {
    listeners.push({ port: PROXY_PORT, socket: `${NETWORK_DIR}/proxy.sock` });
    // curl (PHP's curl extension) reads the lower-case names; the site itself is not proxied.
    Object.assign(env, { http_proxy: `http://127.0.0.1:${PROXY_PORT}`, https_proxy: `http://127.0.0.1:${PROXY_PORT}`, no_proxy: `localhost,${site.hostname}` });
  }
  return {
    binds: [
      { source: paths.dir, target: NETWORK_DIR, readOnly: true },
      { source: paths.hosts, target: "/etc/hosts", readOnly: true },
      { source: paths.nsswitch, target: "/etc/nsswitch.conf", readOnly: true },
    ],
    listeners,
    env,
  };
}

/**
 * Listens on a unix socket of the sandbox's network folder, handing each connection to `onConnection`
 * (the relay inside the sandbox connects there as the sandbox's uid).
 * @throws the listen error.
 */
export async function listenUnix(path: string, onConnection: (socket: Socket) => void): Promise<Server> {
  rmSync(path, { force: true });
  const server = createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  // The sandbox's uid connects to it (connecting needs write permission on the socket file).
  chmodSync(path, 0o666);
  server.unref();
  return server;
}

/** A request the policy proxy refused. */
export interface ProxyDenial {
  host: string;
  url: string;
  method: string;
}

/**
 * The policy proxy behind the proxy sockets (`proxy.sock`, `run-proxy.sock`): a plain HTTP proxy
 * (absolute-URL requests, and `CONNECT` tunnels for https) that forwards a request when
 * `isAllowed(host)` and answers 403 with a `wp-codebox:` explanation otherwise, reporting each
 * refusal to `onDenied`.
 * @param sockets - where it listens, each with what to call for every connection accepted there.
 * @returns the unix servers (close them at dispose).
 * @throws the listen error.
 */
export async function startNativeEgressProxy(sockets: { path: string; onConnection?: () => void }[], isAllowed: (host: string) => boolean, onDenied: (denial: ProxyDenial) => void): Promise<Server[]> {
  const refusal = (host: string) => `wp-codebox: the runtime policy does not allow network access to ${host}; allow the host in the policy's network rule.\n`;
  const httpProxy = createHttpServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("wp-codebox: the proxy takes absolute http:// URLs\n");
      return;
    }
    if (!isAllowed(target.hostname)) {
      onDenied({ host: target.hostname, url: target.toString(), method: req.method ?? "GET" });
      res.writeHead(403, { "content-type": "text/plain", "x-wp-codebox-policy": "denied" }).end(refusal(target.hostname));
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = httpRequest(target, { method: req.method ?? "GET", headers }, (answer: IncomingMessage) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`wp-codebox: the proxy could not reach ${target.host}: ${error.message}\n`);
    });
    req.pipe(upstream);
  });
  httpProxy.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [host = "", port = "443"] = (req.url ?? "").split(/:(?=\d+$)/);
    const bare = host.replace(/^\[|\]$/g, "");
    if (!isAllowed(bare)) {
      onDenied({ host: bare, url: `https://${req.url ?? ""}`, method: "CONNECT" });
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-wp-codebox-policy: denied\r\n\r\n${refusal(bare)}`);
      return;
    }
    const upstream = connect(Number(port), bare, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  return Promise.all(
    sockets.map(({ path, onConnection }) =>
      listenUnix(path, (socket) => {
        onConnection?.();
        httpProxy.emit("connection", socket);
      }),
    ),
  );
}
