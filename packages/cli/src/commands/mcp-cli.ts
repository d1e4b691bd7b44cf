/**
 * Registers `wp-codebox mcp` (the server is in `mcp.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { addRuntimeOptions, examples, runtimeRunOptions, version, type CliContext } from "../cli-options.js";

/** Adds `wp-codebox mcp` to `program`. */
export function registerMcpCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  addRuntimeOptions(
    program
      .command("mcp")
      .description("Serve a sandbox to AI agents over the Model Context Protocol on stdio: one tool per catalog command plus reset, observe, snapshot, restore, collect_artifacts.")
      .option("--artifacts <dir>", "base directory of the bundles collect_artifacts writes (default ./wp-codebox-artifacts); each server session writes into a fresh mcp-<UTC time>-<random> folder there")
      .option("--lazy-boot", "boot the sandbox on the first tool call instead of at start")
      .option("--backend <name>", "playground (default) or native (Debian's PHP and a private MariaDB under bubblewrap: only the tools it runs are available, see docs/native-backend.md)")
      .option("--attach <control-url>", "drive a live sandbox of wp-codebox serve instead of booting one (no runtime flags then; its state is kept)")
      .option("--token <token>", "control token for --attach (default $WP_CODEBOX_TOKEN)"),
  )
    .addHelpText(
      "after",
      `\nstdout carries the MCP protocol; progress and logs go to stderr. The default policy grants every runnable command (no page JavaScript, no network); tools the policy does not grant are listed as UNAVAILABLE and refused with policy-denied.` +
        `\nThe sandbox boots in the background at start and is disposed when stdin closes or on SIGTERM/SIGINT.` +
        examples([
          "wp-codebox mcp --plugin ./my-plugin",
          `wp-codebox mcp --policy '{"commands":["wordpress.run-php","wordpress.rest-request"]}' --artifacts ./agent-bundles`,
          "WP_CODEBOX_TOKEN=T wp-codebox mcp --attach http://127.0.0.1:PORT",
        ]),
    )
    .action(async (opts: Record<string, unknown>) => {
      if (opts.attach !== undefined) {
        const { assertNoRuntimeFlags } = await import("./attach.js");
        assertNoRuntimeFlags(opts);
      }
      const { runMcpServer } = await import("./mcp.js");
      await runMcpServer({
        ...runtimeRunOptions(opts, io),
        ...(opts.attach !== undefined ? { attach: opts.attach as string } : {}),
        ...(opts.token !== undefined ? { token: opts.token as string } : {}),
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts as string } : {}),
        ...(opts.backend !== undefined ? { backendName: opts.backend as string } : {}),
        lazyBoot: opts.lazyBoot === true,
        version: version(),
        log: (message) => io.stderr(`wp-codebox mcp: ${message}\n`),
      });
    });
}
