/**
 * Serves the MCP server over stdio: stdin/stdout carry the protocol (newline-delimited JSON-RPC),
 * so everything else that would write to stdout (worker threads, libraries) is sent to stderr.
 * The sandbox is disposed when stdin closes, on SIGTERM/SIGINT, or when the transport closes.
 */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createWpCodeboxMcpServer, type WpCodeboxMcpServerOptions } from "./mcp-server.js";

/** Options of `serveMcpOverStdio`. */
export interface ServeMcpOverStdioOptions extends WpCodeboxMcpServerOptions {
  /** Boot the sandbox as soon as the server starts (default true); otherwise on the first call. */
  eagerBoot?: boolean;
  /** Default `process.stdin` / `process.stdout`; the stdout guard is only installed for `process.stdout`. */
  stdin?: Readable;
  stdout?: Writable;
  /** Signals that end the session; default SIGTERM, SIGINT, SIGHUP. */
  signals?: NodeJS.Signals[];
}

/** How the session ended. */
export interface McpStdioOutcome {
  reason: "stdin-closed" | "transport-closed" | NodeJS.Signals;
}

/**
 * Makes `process.stdout.write` write to stderr (so stray output cannot corrupt the protocol) and
 * returns a writable that still reaches the real stdout, plus a function that undoes it.
 */
function guardProcessStdout(): { protocol: Writable; restore: () => void } {
  const stdout = process.stdout;
  const realWrite = stdout.write.bind(stdout);
  stdout.write = ((chunk: unknown, ...rest: unknown[]) => (process.stderr.write as (...a: unknown[]) => boolean)(chunk, ...rest)) as typeof stdout.write;
  const protocol = {
    write: (chunk: string) => realWrite(chunk),
    once: (event: string, listener: () => void) => stdout.once(event, listener),
    on: (event: string, listener: () => void) => stdout.on(event, listener),
  } as unknown as Writable;
  return { protocol, restore: () => void (stdout.write = realWrite as typeof stdout.write) };
}

/**
 * Runs the MCP server on stdio until the client goes away or a signal arrives, then disposes the
 * sandbox and resolves. Boots the sandbox in the background right away (`eagerBoot`), so the
 * handshake and `tools/list` answer at once and the first tool call waits only for what is left
 * of the boot.
 * @returns why the session ended. Never rejects for tool failures (they are tool results).
 */
export async function serveMcpOverStdio(options: ServeMcpOverStdioOptions): Promise<McpStdioOutcome> {
  const log = options.log ?? (() => undefined);
  const stdin = options.stdin ?? process.stdin;
  const guard = options.stdout ? undefined : guardProcessStdout();
  const server = createWpCodeboxMcpServer(options);
  const transport = new StdioServerTransport(stdin, options.stdout ?? guard!.protocol);
  const signals = options.signals ?? ["SIGTERM", "SIGINT", "SIGHUP"];

  let finish!: (outcome: McpStdioOutcome) => void;
  const ended = new Promise<McpStdioOutcome>((resolve) => (finish = resolve));
  const onEnd = (): void => finish({ reason: "stdin-closed" });
  const onSignal = (signal: NodeJS.Signals): void => finish({ reason: signal });
  stdin.on("end", onEnd);
  stdin.on("close", onEnd);
  for (const s of signals) process.on(s, onSignal);
  transport.onclose = () => finish({ reason: "transport-closed" });

  try {
    await server.connect(transport);
    log("MCP server ready on stdio");
    if (options.eagerBoot !== false) {
      options.sandbox.start().catch((error: unknown) => log(`The sandbox did not boot: ${(error as Error).message} (tool calls will report it)`));
    }
    const outcome = await ended;
    log(`Shutting down (${outcome.reason})`);
    return outcome;
  } finally {
    stdin.off("end", onEnd);
    stdin.off("close", onEnd);
    // The handlers stay until the sandbox is disposed: a client that closes stdin and then sends
    // SIGTERM (the SDK's stdio client does after 2 s) would otherwise kill the process mid-disposal
    // and leave the sandbox folder behind.
    try {
      await options.sandbox.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    } finally {
      for (const s of signals) process.off(s, onSignal);
      guard?.restore();
    }
  }
}
