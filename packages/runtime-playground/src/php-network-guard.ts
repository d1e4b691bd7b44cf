/**
 * Host-side enforcement of the policy's network rule for raw PHP sockets.
 *
 * `@php-wasm/node` always enables networking: every socket PHP opens (file_get_contents('http://…'),
 * curl, fsockopen, WordPress's HTTP API) becomes a WebSocket to a per-runtime proxy server on
 * 127.0.0.1, which then opens a real TCP connection to `?host=…&port=…`. Without a guard, PHP could
 * reach the internet and every loopback service of the host. This module sits in front of that
 * proxy's `upgrade` handler and refuses every target the policy does not allow, before any TCP
 * connection is made. Source: `withNetworking` / `initOutboundWebsocketProxyServer` in
 * `@php-wasm/node` 3.1.x (the proxy is exposed as `Module.outboundNetworkProxyServer`).
 */
import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { isHostAllowed, type NetworkPolicy } from "@wp-codebox/runtime-core";

/** A refused outbound connection: the host name PHP asked for and the port. */
export interface DeniedConnection {
  host: string;
  port: number;
}

/**
 * Whether PHP may open a socket to `host:port` under `network`. `"deny"` refuses everything,
 * including loopback (the sandbox's own origin is served by the same single PHP worker, so a
 * request to it could only deadlock); `"allow"` allows everything; `{ allowHosts }` matches the
 * host name PHP asked for (before DNS) with `isHostAllowed`.
 */
export function isPhpConnectionAllowed(network: NetworkPolicy, host: string, _port: number): boolean {
  return isHostAllowed({ commands: [], network, filesystem: "readwrite-mounts", secrets: "none" }, host);
}

/**
 * Wraps the proxy's `upgrade` listeners so that denied targets get `403` and a closed socket.
 * @param server - `Module.outboundNetworkProxyServer` of one PHP runtime.
 * @param network - the policy's network rule.
 * @param onDenied - called once per refused connection (for `policy-denied` events).
 * @returns false when there was no proxy server to guard (nothing to enforce).
 */
export function guardPhpOutboundProxy(server: Server | undefined, network: NetworkPolicy, onDenied: (denied: DeniedConnection) => void): boolean {
  if (!server || typeof server.listeners !== "function") return false;
  const original = server.listeners("upgrade") as ((req: unknown, socket: Duplex, head: Buffer) => void)[];
  server.removeAllListeners("upgrade");
  server.on("upgrade", (request: { url?: string }, socket: Duplex, head: Buffer) => {
    const params = new URL(`ws://proxy${request.url ?? "/"}`).searchParams;
    const host = (params.get("host") ?? "").toLowerCase();
    const port = Number(params.get("port") ?? 0);
    if (!isPhpConnectionAllowed(network, host, port)) {
      onDenied({ host, port });
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      socket.destroy();
      return;
    }
    for (const listener of original) listener.call(server, request, socket, head);
  });
  return true;
}

/**
 * An Emscripten `preRun` hook (called with the Module) that guards the runtime's outbound proxy.
 * @param network - the policy's network rule; default `"deny"`.
 */
export function phpNetworkGuardPreRun(network: NetworkPolicy | undefined, onDenied: (denied: DeniedConnection) => void): (module: unknown) => void {
  return (module) => {
    guardPhpOutboundProxy((module as { outboundNetworkProxyServer?: Server }).outboundNetworkProxyServer, network ?? "deny", onDenied);
  };
}
