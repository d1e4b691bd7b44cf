/**
 * A per-run HTTP proxy that enforces the host policy on every request Chromium makes, including
 * redirect hops, which Playwright routes never see ("The handler will only be called for the first
 * url if the response is a redirect" — Playwright `page.route` docs). Routes stay the first line
 * (they abort and record); this proxy is the backstop that keeps a redirect from leaving the box.
 */
import http from "node:http";
import net from "node:net";

/** Response header the proxy sets on a refusal, so the network log can mark the request `blocked`. */
export const BLOCKED_HEADER = "x-wp-codebox-blocked";

/** A running proxy: give `server` to the browser context's `proxy` option, `close()` when done. */
export interface EgressProxy {
  /** `http://127.0.0.1:<port>`. */
  server: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = ["proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "trailer", "upgrade"];

/**
 * Starts the proxy on 127.0.0.1 (ephemeral port).
 * @param isAllowed decides each absolute URL (`https://host:port/` for CONNECT tunnels).
 * @param upstreamFor maps an allowed URL to the one actually fetched (a stable sandbox origin to
 *   its loopback server); the request keeps its `Host` header. Default: unchanged.
 */
export async function startEgressProxy(isAllowed: (url: string) => boolean, upstreamFor: (url: string) => string = (url) => url): Promise<EgressProxy> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const url = req.url ?? "";
    if (!/^https?:\/\//.test(url) || !isAllowed(url)) {
      res.writeHead(403, { "content-type": "text/plain; charset=utf-8", [BLOCKED_HEADER]: "1" });
      res.end(`Blocked by the wp-codebox network policy: ${url}\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    const upstream = http.request(upstreamFor(url), { method: req.method, headers }, (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, upstreamRes.headers);
      upstreamRes.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
      res.end(`Upstream error: ${error.message}\n`);
    });
    req.pipe(upstream);
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? "";
    const [host, port] = splitHostPort(target);
    if (!host || !isAllowed(`https://${target}/`)) {
      client.end(`HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: 1\r\n\r\n`);
      return;
    }
    const upstream = net.connect(port, host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const drop = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on("error", drop);
    client.on("error", drop);
  });
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    server: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function splitHostPort(target: string): [string, number] {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
  return match ? [match[1]!, Number(match[2])] : [target, 443];
}
