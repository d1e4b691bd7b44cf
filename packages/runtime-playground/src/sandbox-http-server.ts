/**
 * A loopback HTTP server (127.0.0.1, random port) that serves the sandboxed WordPress: each
 * request goes to the runtime's PHP worker. Used by browsers and `serve`; nothing leaves the host.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { WorkerHttpResult } from "./php-worker-protocol.js";

/** The server's origin and a way to stop it. */
export interface SandboxHttpServer {
  origin: string;
  port: number;
  close(): Promise<void>;
  /** Plugs in the request forwarder once the runtime is ready. */
  setHandler(handler: SandboxRequestHandler): void;
}

export type SandboxRequestHandler = (request: {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}) => Promise<WorkerHttpResult>;

/** Starts listening on 127.0.0.1 (port 0 = any free port). Requests before `setHandler` get 503. */
export async function startSandboxHttpServer(port = 0): Promise<SandboxHttpServer> {
  let handler: SandboxRequestHandler | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (!handler) {
        res.writeHead(503, { "content-type": "text/plain" }).end("wp-codebox: the sandbox is still booting\n");
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      const body = chunks.length ? new Uint8Array(Buffer.concat(chunks)) : undefined;
      handler({ method: req.method ?? "GET", url: `${origin}${req.url ?? "/"}`, headers, body })
        .then((response) => {
          res.statusCode = response.status;
          for (const [k, v] of Object.entries(response.headers)) {
            try {
              res.setHeader(k, v);
            } catch {
              // Skip a header Node refuses (invalid characters); the body still goes out.
            }
          }
          res.end(Buffer.from(response.body.data.buffer, response.body.data.byteOffset, response.body.data.byteLength));
        })
        .catch((error: Error) => {
          if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
          res.end(`wp-codebox: the request failed inside the sandbox: ${error.message}\n`);
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  server.unref();
  const actualPort = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${actualPort}`;
  return {
    origin,
    port: actualPort,
    setHandler: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
