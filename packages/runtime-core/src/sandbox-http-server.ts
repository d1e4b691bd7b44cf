/**
 * A loopback HTTP server (127.0.0.1, random port) that serves a sandboxed WordPress: each request
 * goes to the runtime's handler (Playground: a PHP worker; native: static files and php-cgi). Used
 * by browsers and `serve`; nothing leaves the host.
 * A second listener (`selfCallPort`) takes the requests PHP makes to its own site (the network
 * guard sends them there), so the runtime can tell them apart: they may need a free worker while
 * the one that made them waits, and a command is finished only once the requests it made are.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What a handler answers: status, headers (each name's values, lower-case names), the body. */
export interface SandboxHttpResponse {
  status: number;
  headers: Record<string, string[]>;
  body: { data: Uint8Array };
}

/** Largest request body the server reads by default (bytes): a larger one is answered 413. */
export const SANDBOX_HTTP_MAX_BODY_BYTES = 512 * 1024 * 1024;

/** The server's origin and a way to stop it. */
export interface SandboxHttpServer {
  origin: string;
  port: number;
  /** Listener for PHP's requests to its own site. */
  selfCallPort: number;
  /**
   * Takes a self-call connection that arrived elsewhere (native: the relay's unix socket in the
   * sandbox folder): served and counted like one on `selfCallPort`.
   */
  acceptSelfCall(socket: Socket): void;
  /** Counts a connection PHP announced to its own site (from the worker's network guard). */
  expectSelfCall(): void;
  /**
   * True when every self-call PHP announced has connected, and every self-call connection and
   * request is finished (PHP's `blocking => false` requests included).
   */
  selfCallsSettled(): boolean;
  /** Called whenever `selfCallsSettled()` may have changed. */
  onSelfCallsChange(listener: () => void): void;
  close(): Promise<void>;
  /** Plugs in the request forwarder once the runtime is ready. */
  setHandler(handler: SandboxRequestHandler): void;
}

export type SandboxRequestHandler = (
  request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: Uint8Array;
  },
  /** `fromSandbox`: PHP made it (self-call); `clientGone()`: the caller hung up (a `blocking => false` request). */
  meta: { fromSandbox: boolean; clientGone: () => boolean },
) => Promise<SandboxHttpResponse>;

/**
 * Starts listening on 127.0.0.1 (port 0 = any free port). Requests before `setHandler` get 503; a
 * request body over `maxBodyBytes` (default `SANDBOX_HTTP_MAX_BODY_BYTES`) gets 413 unread.
 * @throws the listen error (`EADDRINUSE` for a taken port).
 */
export async function startSandboxHttpServer(port = 0, options: { maxBodyBytes?: number } = {}): Promise<SandboxHttpServer> {
  const maxBodyBytes = options.maxBodyBytes ?? SANDBOX_HTTP_MAX_BODY_BYTES;
  let handler: SandboxRequestHandler | undefined;
  const self = { announced: 0, accepted: 0, open: 0, running: 0 };
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const l of listeners) l();
  };
  const serve = (fromSandbox: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    let gone = false;
    const onSocketClose = () => {
      gone = true;
    };
    // The socket outlives the request on a keep-alive connection (a browser sends many requests
    // over one): its listener goes when the response does, or every request would add one.
    req.socket.on("close", onSocketClose);
    res.on("close", () => {
      gone = true;
      req.socket.off("close", onSocketClose);
    });
    const chunks: Buffer[] = [];
    let received = 0;
    let tooLarge = Number(req.headers["content-length"] ?? 0) > maxBodyBytes;
    const refuse = () => {
      res.writeHead(413, { "content-type": "text/plain", connection: "close" }).end(`wp-codebox: the request body is over ${maxBodyBytes} bytes\n`);
      req.socket.destroySoon();
    };
    if (tooLarge) return refuse();
    req.on("data", (c: Buffer) => {
      received += c.length;
      if (received > maxBodyBytes) {
        if (!tooLarge) refuse();
        tooLarge = true;
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (tooLarge) return;
      if (!handler) {
        res.writeHead(503, { "content-type": "text/plain" }).end("wp-codebox: the sandbox is still booting\n");
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      const body = chunks.length ? new Uint8Array(Buffer.concat(chunks)) : undefined;
      if (fromSandbox) self.running += 1;
      handler({ method: req.method ?? "GET", url: `${origin}${req.url ?? "/"}`, headers, body }, { fromSandbox, clientGone: () => gone })
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
        })
        .finally(() => {
          if (fromSandbox) {
            self.running -= 1;
            changed();
          }
        });
    });
  };
  const server: Server = createServer(serve(false));
  const selfServer: Server = createServer(serve(true));
  selfServer.on("connection", (socket) => {
    self.accepted += 1;
    self.open += 1;
    socket.on("close", () => {
      self.open -= 1;
      changed();
    });
    changed();
  });
  const listen = (s: Server, p: number) =>
    new Promise<number>((resolve, reject) => {
      s.once("error", reject);
      s.listen(p, "127.0.0.1", () => resolve((s.address() as AddressInfo).port));
    });
  const actualPort = await listen(server, port);
  const selfCallPort = await listen(selfServer, 0);
  server.unref();
  selfServer.unref();
  const origin = `http://127.0.0.1:${actualPort}`;
  const close = (s: Server) =>
    new Promise<void>((resolve) => {
      s.closeAllConnections?.();
      s.close(() => resolve());
    });
  return {
    origin,
    port: actualPort,
    selfCallPort,
    acceptSelfCall: (socket) => {
      selfServer.emit("connection", socket);
    },
    expectSelfCall: () => {
      self.announced += 1;
    },
    selfCallsSettled: () => self.accepted >= self.announced && self.open === 0 && self.running === 0,
    onSelfCallsChange: (listener) => {
      listeners.push(listener);
    },
    setHandler: (h) => {
      handler = h;
    },
    close: async () => {
      await Promise.all([close(server), close(selfServer)]);
    },
  };
}
