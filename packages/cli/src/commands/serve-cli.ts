/**
 * Registers `wp-codebox serve` (the work is in `serve.ts`);
 * handlers are imported lazily so the CLI starts fast.
 */
import type { Command } from "commander";
import { CliExitError, EXIT_CODES, describeFailure } from "../cli-exit-error.js";
import { addRuntimeOptions, examples, jsonEvent, runtimeRunOptions, type CliContext } from "../cli-options.js";
import { routeProcessWarnings } from "../process-warnings.js";

/** Adds `wp-codebox serve` to `program`. */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  addRuntimeOptions(
    program
      .command("serve")
      .option("--allow-path <dir>", "let the --recipe file name host paths under DIR besides its own folder (repeatable; symlinks are followed before checking)", (v: string, p: string[] | undefined) => [...(p ?? []), v])
      .description("Boot a sandbox and keep it up: site URL, one-click admin login, and a control endpoint for --attach.")
      .option("--recipe <file>", "take the runtime and inputs (plugins, themes, mounts, env, secret env) of a workspace recipe; flags add to it")
      .option("--port <n>", "control endpoint port on 127.0.0.1 (default: any free port)")
      .option("--ttl <duration>", 'dispose everything after this long without activity (control calls or site requests), e.g. 30m, 90s; "0" = never (default 30m)')
      .option("--pool <n>", "keep N sandboxes booted from the same spec; each --attach session takes one, a returned one is reset in the background (default: one shared sandbox)")
      .option("--backend <name>", "playground (default) or native (Debian's PHP behind php-cgi and a private MariaDB under bubblewrap; the site is served on the loopback origin; see docs/native-backend.md)")
      .option("--session-lease <duration>", 'release an --attach session whose client sent no call and no lease renewal for this long after its last call (a killed client), e.g. 30s, 2m; at least 1s; "0" = never (default 60s)')
      .option("--json", 'print one JSON line {"url", "loginUrl", "control", "token", "id"} on stdout once the site is ready; stderr then carries only JSON lines {"event", "at", "data"}: events, progress, the error'),
  )
    .addHelpText(
      "after",
      "\nThe control endpoint listens on 127.0.0.1 only and needs the printed token on every call. Without --policy the sandbox may run every catalog command (page JavaScript excluded)." +
        "\nExit codes: 0 stopped by Ctrl-C, SIGTERM or the TTL; 2 invalid input; 3 environment; 1 the sandbox did not boot." +
        examples([
          "wp-codebox serve --plugin ./my-plugin",
          "wp-codebox serve --json --ttl 10m",
          "wp-codebox serve --pool 2 --json",
          `WP_CODEBOX_TOKEN=T wp-codebox run --attach http://127.0.0.1:PORT --command wordpress.run-php --arg 'code=<?php echo home_url();'`,
        ]),
    )
    .action(async (opts: Record<string, unknown>) => {
      const { assertCliBackend } = await import("./backends.js");
      assertCliBackend("serve", opts.backend as string | undefined, { cwd: io.cwd });
      const { startServe, formatServeAddress, prepareServe } = await import("./serve.js");
      const asJson = opts.json === true;
      const serveOptions = {
        ...runtimeRunOptions(opts, io),
        // Boot progress as events too: with --json nothing on stderr is plain text.
        ...(asJson ? { onProgress: (message: string) => jsonEvent(io, "progress", { message }) } : {}),
        ...(opts.recipe !== undefined ? { recipe: opts.recipe as string } : {}),
        ...(opts.allowPath !== undefined ? { allowPaths: opts.allowPath as string[] } : {}),
        ...(opts.port !== undefined ? { port: opts.port as string } : {}),
        ...(opts.backend !== undefined ? { backendName: opts.backend as string } : {}),
        ...(opts.ttl !== undefined ? { ttl: opts.ttl as string } : {}),
        ...(opts.pool !== undefined ? { pool: opts.pool as string } : {}),
        ...(opts.sessionLease !== undefined ? { sessionLease: opts.sessionLease as string } : {}),
        onEvent: (event: { at: string; type: string; data?: Record<string, unknown> }) => {
          if (asJson) jsonEvent(io, event.type, event.data, event.at);
          // Routine session events stay quiet; an expired one is worth a line (a client died holding a sandbox).
          else if (!event.type.startsWith("sandbox-lease") && (!event.type.startsWith("session-") || event.type === "session-expired")) io.stderr(`wp-codebox: ${event.type}${event.data ? ` ${JSON.stringify(event.data)}` : ""}\n`);
        },
      };
      const { ttlMs } = await prepareServe(serveOptions);
      // Node prints its own warnings (a deprecation, a listener leak) as plain stderr lines: with
      // --json they become events too, for as long as serve runs.
      const restoreWarnings = asJson ? routeProcessWarnings((warning) => jsonEvent(io, "warning", { name: warning.name, message: warning.message })) : () => undefined;
      // Installed before the boot: a signal while the sandbox boots disposes it (exit 130/143,
      // `interrupted`), one after it is ready stops serve (exit 0). A second one leaves at once.
      const booting = new AbortController();
      let live: Awaited<ReturnType<typeof startServe>> | undefined;
      let signalled = false;
      const removeHandlers = ctx.installSignalHandlers((signal) => {
        if (signalled) ctx.quitAtOnce(signal, "serve stops without disposing its sandboxes in order (their temporary folders are still removed)");
        signalled = true;
        if (asJson) jsonEvent(io, "signal", { signal });
        else io.stderr(`\nwp-codebox: ${signal} received: ${live ? "disposing the sandbox" : "stopping the boot and disposing the sandbox"} (send it again to quit at once)\n`);
        if (live) void live.close(signal);
        else booting.abort(signal);
      });
      try {
        live = await startServe({ ...serveOptions, signal: booting.signal });
      } catch (error) {
        removeHandlers();
        restoreWarnings();
        const failure = describeFailure(error);
        if (failure.code === "interrupted") {
          throw new CliExitError(failure.code, failure.message, failure.data?.signal === "SIGTERM" ? EXIT_CODES.sigterm : EXIT_CODES.sigint, failure.data ?? {});
        }
        throw error;
      }
      try {
        if (asJson) {
          io.stdout(`${JSON.stringify({ url: live.url, loginUrl: live.loginUrl ?? null, control: live.control, token: live.token, id: live.id })}\n`);
          ctx.markJsonEmitted();
        } else io.stdout(formatServeAddress(live, ttlMs));
        await live.closed;
      } finally {
        // Handlers stay while the sandbox is disposed: a signal then must not kill the process
        // before the sandbox folder is gone (a second one still quits at once, through exit handlers).
        try {
          await live.close();
        } finally {
          removeHandlers();
          restoreWarnings();
        }
      }
    });
}
