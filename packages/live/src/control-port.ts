/**
 * Holding the control port before the sandbox boots: a busy `--port` is an input error found at
 * once, not after a boot of several seconds, and nothing can take the port while the boot runs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

/** A listening HTTP server whose requests answer 503 until `startControlServer` takes it over. */
export interface ReservedControlPort {
  server: Server;
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** Closes the server (when the boot failed and the control server never took it). */
  release(): Promise<void>;
}

/**
 * Listens on 127.0.0.1:`port` now; calls before the sandbox is ready get 503 `{ code: "booting" }`.
 * @param port - TCP port, 1–65535 (0 = any free port).
 * @returns the held server; pass it to `startControlServer({ server })`.
 * @throws WpCodeboxError `invalid-argument` (exit 2) when the port is in use or may not be bound.
 */
export async function reserveControlPort(port: number): Promise<ReservedControlPort> {
  const booting = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
    res.end(JSON.stringify({ error: { code: "booting", message: "The sandbox is still booting; try again in a moment." } }));
  };
  const server = createServer(booting);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? "the port is in use on 127.0.0.1" : error.code === "EACCES" ? "this user may not listen on it" : (error.code ?? error.message);
      reject(new WpCodeboxError("invalid-argument", `--port ${port}: ${why}; choose another or omit --port.`, { port }, { cause: error }));
    });
    server.listen(port, "127.0.0.1", () => resolve());
  });
  server.removeAllListeners("error");
  const address = server.address();
  return {
    server,
    port: typeof address === "object" && address ? address.port : port,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Swaps the booting answer of a reserved server for the real request handler. */
export function takeOverServer(server: Server, handler: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.removeAllListeners("request");
  server.on("request", handler);
}
