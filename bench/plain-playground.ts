/**
 * The baseline every benchmark compares against: plain `@wp-playground/cli` `runCLI` serving a
 * WordPress tree mounted from the host, with no wp-codebox code in the path (plain-runcli.mjs).
 */
import { startPlainRunCli as start } from "./plain-runcli.mjs";

/** What the benchmarks use of a runCLI server. */
export interface PlainRunCliServer {
  serverUrl: string;
  playground: { run(options: { code: string }): Promise<{ text: string }> };
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts `runCLI({ command: "server" })` on PHP 8.3 over `siteDir` (mounted at /wordpress before
 * install). `define` adds wp-config constants.
 */
export async function startPlainRunCli(siteDir: string, installMode: string, define?: Record<string, string>): Promise<PlainRunCliServer> {
  return (await start(siteDir, installMode, define)) as unknown as PlainRunCliServer;
}
