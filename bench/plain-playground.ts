/**
 * The baseline every benchmark compares against: plain `@wp-playground/cli` `runCLI` serving a
 * WordPress tree mounted from the host, with no wp-codebox code in the path.
 */

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
  const { runCLI } = await import("@wp-playground/cli");
  return (await runCLI({
    command: "server",
    php: "8.3",
    port: 0,
    quiet: true,
    skipBrowser: true,
    // runCLI reads its options under their CLI (kebab-case) names.
    "mount-before-install": [{ hostPath: siteDir, vfsPath: "/wordpress" }],
    wordpressInstallMode: installMode,
    ...(define ? { define } : {}),
  } as never)) as unknown as PlainRunCliServer;
}
