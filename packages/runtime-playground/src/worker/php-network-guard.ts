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
import { selfCallTarget, type SandboxOrigin } from "./sandbox-origin.js";

/** A refused outbound connection: the host name PHP asked for and the port. */
export interface DeniedConnection {
  host: string;
  port: number;
}

/**
 * Whether PHP may open a socket to `host:port` outside the sandbox under `network`. `"deny"`
 * refuses everything (loopback services of the host included); `"allow"` allows everything;
 * `{ allowHosts }` matches the host name PHP asked for (before DNS) with `isHostAllowed`. The
 * sandbox's own site is decided before this (`isSandboxSelf`) and is always allowed.
 */
export function isPhpConnectionAllowed(network: NetworkPolicy, host: string, _port: number): boolean {
  return isHostAllowed({ commands: [], network, filesystem: "readwrite-mounts", secrets: "none" }, host);
}

/** How the guard treats connections to the sandbox's own site. */
export interface SelfCallRoute {
  origin: SandboxOrigin;
  /** Port of the sandbox server's listener for calls made by PHP (so they are told apart from browsers). */
  selfCallPort?: number;
  /** Called when PHP opens a connection to its own site (before it is connected). */
  onOpen?: () => void;
}

/**
 * Wraps the proxy's `upgrade` listeners: a connection to the sandbox itself is sent to the
 * sandbox's own listener whatever the policy says; any other target the policy does not allow gets
 * `403` and a closed socket.
 * @param server - `Module.outboundNetworkProxyServer` of one PHP runtime.
 * @param network - the policy's network rule.
 * @param onDenied - called once per refused connection (for `policy-denied` events).
 * @param self - the sandbox's origin; without it no target counts as the sandbox itself.
 * @returns false when there was no proxy server to guard (nothing to enforce).
 */
export function guardPhpOutboundProxy(server: Server | undefined, network: NetworkPolicy, onDenied: (denied: DeniedConnection) => void, self?: SelfCallRoute): boolean {
  if (!server || typeof server.listeners !== "function") return false;
  const original = server.listeners("upgrade") as ((req: unknown, socket: Duplex, head: Buffer) => void)[];
  server.removeAllListeners("upgrade");
  server.on("upgrade", (request: { url?: string }, socket: Duplex, head: Buffer) => {
    const params = new URL(`ws://proxy${request.url ?? "/"}`).searchParams;
    const host = (params.get("host") ?? "").toLowerCase();
    const port = Number(params.get("port") ?? 0);
    const selfTarget = self ? selfCallTarget(self.origin, host, port, self.selfCallPort) : undefined;
    if (selfTarget) {
      // The proxy connects to whatever the URL names: point it at the sandbox's own listener.
      params.set("host", selfTarget.host);
      params.set("port", String(selfTarget.port));
      request.url = `/?${params.toString()}`;
      self!.onOpen?.();
      for (const listener of original) listener.call(server, request, socket, head);
      return;
    }
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
 * @param self - the sandbox's origin and where its self-calls go.
 */
export function phpNetworkGuardPreRun(network: NetworkPolicy | undefined, onDenied: (denied: DeniedConnection) => void, self?: SelfCallRoute): (module: unknown) => void {
  return (module) => {
    guardPhpOutboundProxy((module as { outboundNetworkProxyServer?: Server }).outboundNetworkProxyServer, network ?? "deny", onDenied, self);
  };
}
