// The baseline every benchmark compares against, as a plain ES module (bench children that run
// without a TypeScript loader use it too): plain `@wp-playground/cli` `runCLI` serving a WordPress
// tree mounted from the host, with no wp-codebox code in the path.

/**
 * Starts `runCLI({ command: "server" })` on PHP 8.3 over `siteDir` (mounted at /wordpress before
 * install), with `installMode` as Playground's `wordpressInstallMode`.
 * @param {string} siteDir
 * @param {string} installMode
 * @param {Record<string, string>} [define] - wp-config constants to add.
 * @returns the runCLI server (`playground.run({ code })`, `serverUrl`, `[Symbol.asyncDispose]()`).
 */
export async function startPlainRunCli(siteDir, installMode, define) {
  const { runCLI } = await import("@wp-playground/cli");
  return runCLI({
    command: "server",
    php: "8.3",
    port: 0,
    quiet: true,
    skipBrowser: true,
    // runCLI reads its options under their CLI (kebab-case) names.
    "mount-before-install": [{ hostPath: siteDir, vfsPath: "/wordpress" }],
    wordpressInstallMode: installMode,
    ...(define ? { define } : {}),
  });
}
