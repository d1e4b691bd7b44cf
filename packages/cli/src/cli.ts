/**
 * Every `wp-codebox` command, registered in one place with its description and examples. Handlers
 * live in `commands/<name>.ts` as typed async functions (callable without argv) and are imported
 * lazily. `runCli` holds the one catch that turns anything thrown into `error[<code>]: <message>`
 * and an exit code: 0 ok, 1 sandbox work failed, 2 invalid input, 3 environment,
 * 70 internal bug.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { CliExitError, EXIT_CODES, bundleLostError, bundleVerifyText, describeFailure, reportPageLine, sessionExitError } from "./cli-exit-error.js";
import { processIo, type CliIo } from "./cli-io.js";
import { routeProcessWarnings } from "./process-warnings.js";
import { describeSchemaNames } from "./commands/schema.js";
import type { RunOptions, RunOutcome } from "./commands/run.js";
import { registerRecipeCommands } from "./commands/recipe-cli.js";
import { registerCheckCommand } from "./commands/check-cli.js";
import { registerBatchCommands } from "./commands/batch-cli.js";
import { addHostAccessOptions, hostAccessGrants, type HostAccessFlags } from "./host-access-flags.js";

/** Per-invocation state shared by the actions and the top-level catch. */
interface CliState {
  io: CliIo;
  /** True once a `--json` document went to stdout (the catch then adds none). */
  jsonEmitted: boolean;
  /**
   * True for `serve --json`: every stderr line is a JSON event `{"event", "at", "data"?}`
   * (progress and the final error too), so a supervisor can parse both streams.
   */
  jsonEvents: boolean;
  /** Installed by `run`; removed when it ends. */
  installSignalHandlers: (onSignal: (signal: NodeJS.Signals) => void) => () => void;
}

/** Options for `runCli`; all default to the real process. */
export interface RunCliOptions {
  io?: CliIo;
  /** Installs SIGINT/SIGTERM handlers and returns their remover; default `process.on`/`process.off`. */
  installSignalHandlers?: CliState["installSignalHandlers"];
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;
}

/** One stderr line of `serve --json`: `{"event": type, "at": ISO-8601, "data"?: {…}}`. */
function jsonEvent(io: CliIo, type: string, data?: Record<string, unknown>, at = new Date().toISOString()): void {
  io.stderr(`${JSON.stringify({ event: type, at, ...(data ? { data } : {}) })}\n`);
}

function json(state: CliState, value: unknown): void {
  state.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  state.jsonEmitted = true;
}

function defaultSignalHandlers(onSignal: (signal: NodeJS.Signals) => void): () => void {
  const handler = (signal: NodeJS.Signals): void => onSignal(signal);
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** The runtime flags shared by `run`, `serve`, `check` and `mcp`. */
function addRuntimeOptions(command: Command): Command {
  return command
    .option("--wp <version>", "WordPress X.Y[.Z] or latest: a bundled build (offline; default newest bundled), else a release fetched once from $WP_CODEBOX_WORDPRESS_MIRROR (default https://wordpress.org/), checksum-verified and cached; WP_CODEBOX_OFFLINE=1 never fetches")
    .option("--wordpress <path>", "your own WordPress build, a zip or a directory (instead of --wp)")
    .option("--php <version>", "PHP version X.Y (default: 8.3; wp-codebox doctor lists the available ones)")
    .option("--php-extension <name>", "load a PHP extension the PHP build ships, e.g. intl (repeatable; default intl; see wp-codebox doctor; none = load none)", collect)
    .option("--mount <src:target[:ro]>", "mount a host path at a sandbox path under /wordpress/wp-content/ or /workspace/ (repeatable; :ro = read-only copy)", collect)
    .option("--plugin <path>", "mount a plugin folder at wp-content/plugins/<name> and activate it (repeatable)", collect)
    .option("--theme <path>", "mount a theme folder at wp-content/themes/<name> and activate it (repeatable)", collect)
    .option("--policy <file|json>", 'runtime policy, a JSON file or inline JSON (default for run: {"commands":["<the command>"]})')
    .option("--env <name=value>", "runtime environment variable visible to PHP through getenv() (repeatable)", collect)
    .option("--secret-env <name>", "pass the caller's environment variable NAME into the sandbox, redacted from every artifact (repeatable)", collect)
    .option("--wp-cli-phar <path>", "wp-cli.phar for wordpress.wp-cli (default $WP_CODEBOX_WP_CLI_PHAR, then <cache>/wp-cli.phar)")
    .option("--clock <iso|real>", 'start the sandbox clock at this ISO-8601 instant (virtual: it advances only with work done) or "real" (default: real)')
    .option("--seed <n>", "seed every source of randomness (PHP entropy, page Math.random); refused with a policy that allows outbound network")
    .option("--define <NAME=VALUE>", "set or override a wp-config.php constant (repeatable); VALUE is true, false, null, a number, a \"JSON string\" or plain text; DB_*, ABSPATH, WP_HOME, WP_SITEURL and other names the sandbox owns are refused", collect)
    .option("--site-request-timeout <duration>", 'limit of each request to the site (a browser page load or REST call, an http-request command, PHP calling its own site): one that takes longer gets a 504 and its PHP worker is replaced, e.g. 2m; "0" = none (default 30s)');
}

/** The flags `addRuntimeOptions` adds, as `RunOptions` fields (with the invocation's cwd, env and progress). */
function runtimeRunOptions(opts: Record<string, unknown>, io: CliIo): Omit<RunOptions, "command"> {
  return {
    ...(opts.wp !== undefined ? { wp: opts.wp as string } : {}),
    ...(opts.wordpress !== undefined ? { wordpressPath: opts.wordpress as string } : {}),
    ...(opts.php !== undefined ? { php: opts.php as string } : {}),
    ...(opts.phpExtension !== undefined ? { phpExtensions: opts.phpExtension as string[] } : {}),
    mounts: (opts.mount as string[] | undefined) ?? [],
    plugins: (opts.plugin as string[] | undefined) ?? [],
    themes: (opts.theme as string[] | undefined) ?? [],
    ...(opts.policy !== undefined ? { policy: opts.policy as string } : {}),
    env: (opts.env as string[] | undefined) ?? [],
    secretEnv: (opts.secretEnv as string[] | undefined) ?? [],
    ...(opts.wpCliPhar !== undefined ? { wpCliPhar: opts.wpCliPhar as string } : {}),
    ...(opts.clock !== undefined ? { clock: opts.clock as string } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed as string } : {}),
    ...(opts.siteRequestTimeout !== undefined ? { siteRequestTimeout: opts.siteRequestTimeout as string } : {}),
    ...(opts.define !== undefined ? { defines: opts.define as string[] } : {}),
    cwd: io.cwd,
    processEnv: io.env,
    onProgress: (message) => io.stderr(`wp-codebox: ${message}\n`),
  };
}

/**
 * Exits now on a second SIGINT/SIGTERM, saying so first (an `error` event under `serve --json`):
 * work in progress, such as a bundle being written, stops where it is. The exit handlers still
 * remove the sandboxes' temporary folders.
 */
function quitAtOnce(state: CliState, signal: NodeJS.Signals, consequence: string): never {
  const exitCode = signal === "SIGTERM" ? EXIT_CODES.sigterm : EXIT_CODES.sigint;
  const message = `Second ${signal}: quitting at once; ${consequence}.`;
  if (state.jsonEvents) jsonEvent(state.io, "error", { code: "interrupted", message, data: { signal }, exitCode });
  else state.io.stderr(`\nerror[interrupted]: ${message}\n`);
  process.exit(exitCode);
}

/**
 * Runs `work` with SIGINT/SIGTERM turned into an abort of the signal it gets: the session then
 * writes its bundle and disposes the sandbox. A second signal leaves at once.
 */
async function withInterrupt<T>(state: CliState, work: (interrupt: AbortSignal) => Promise<T>, options: { attached?: boolean } = {}): Promise<T> {
  const controller = new AbortController();
  const doing = options.attached
    ? "stopping the command in the attached sandbox, writing the bundle and detaching (wp-codebox serve keeps the sandbox)"
    : "writing the bundle and disposing the sandbox";
  const removeHandlers = state.installSignalHandlers((signal) => {
    // Second signal: the user insists; leave now.
    if (controller.signal.aborted) quitAtOnce(state, signal, "the bundle may be incomplete (wp-codebox artifacts verify tells)");
    state.io.stderr(`\nwp-codebox: ${signal} received: ${doing} (send it again to quit at once)\n`);
    controller.abort(signal);
  });
  try {
    return await work(controller.signal);
  } finally {
    removeHandlers();
  }
}

/** Builds the commander program for one invocation. */
function buildProgram(state: CliState): Command {
  const { io } = state;
  const program = new Command();
  program
    .name("wp-codebox")
    .description("A disposable, offline WordPress runtime (WordPress Playground) that runs commands and writes verifiable artifact bundles.")
    .version(version(), "-V, --version", "print the wp-codebox version")
    .exitOverride()
    // A stray word (a flag value without its flag, a mistyped option) is refused, not ignored.
    .allowExcessArguments(false)
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: () => undefined, // the top-level catch prints error[<code>]: <message>
    })
    .addHelpText(
      "after",
      `\nResults go to stdout, progress and errors to stderr. Exit codes: 0 ok, 1 the sandbox work failed, 2 invalid input, 3 environment problem, 70 internal bug.` +
        examples([
          "wp-codebox doctor",
          "wp-codebox commands",
          `wp-codebox run --command wordpress.run-php --arg 'code=<?php echo get_bloginfo("version");'`,
          "wp-codebox artifacts verify ./wp-codebox-artifacts/<run id>",
        ]),
    );

  // run
  addRuntimeOptions(
    program
      .command("run")
      .description("Boot a sandbox, run one command, write the artifact bundle, dispose the sandbox.")
      .requiredOption("--command <id>", "command id (see wp-codebox commands)")
      .option("--arg <key=value>", "command argument (repeatable); *-json args take inline JSON or @file", collect)
      .option("--timeout <duration>", 'wall-clock limit of the command, e.g. 30s, 500ms, 2m ("0" = none; default 60s)')
      .option("--artifacts <dir>", "bundle directory, created; refused if it exists and is not empty (default ./wp-codebox-artifacts/<run id>)")
      .option("--json", 'print {"result": ExecutionResult, "bundle": {"directory", "id", "valid"}} on stdout')
      .option("--backend <name>", "playground (default: PHP in WebAssembly, SQLite) or native (Debian's PHP and a private MariaDB under bubblewrap; runs wordpress.run-php, wordpress.wp-cli and wordpress.rest-request so far; see docs/native-backend.md)")
      .option("--attach <control-url>", "run in a live sandbox of wp-codebox serve instead of booting one (no runtime flags then)")
      .option("--token <token>", "control token of the serve sandbox (default $WP_CODEBOX_TOKEN)")
      .option("--update-baselines", "browser scripts: write each compared screenshot as its baseline (the compare path, inside the script's folder) instead of comparing"),
  )
    .addHelpText(
      "after",
      `\nThe command's stdout goes to stdout, a summary (status, duration, bundle, verification) to stderr.` +
        `\nExit codes: 0 status ok; 1 status error or timed-out (or a policy denial); 2 invalid input (checked before boot); 3 environment.` +
        examples([
          `wp-codebox run --command wordpress.run-php --arg 'code=<?php echo get_bloginfo("version");'`,
          "wp-codebox run --command wordpress.run-php --arg code-file=./probe.php --plugin ./my-plugin --timeout 30s",
          "wp-codebox run --command wordpress.rest-request --arg route=/wp/v2/posts --json",
          "wp-codebox run --command inspect-mounted-inputs --mount ./data:/workspace/data:ro --artifacts ./out",
          "API_TOKEN=... wp-codebox run --command wordpress.run-php --secret-env API_TOKEN --arg 'code=<?php echo strlen(getenv(\"API_TOKEN\"));'",
        ]),
    )
    .action(async (opts: Record<string, unknown>) => {
      if (opts.attach !== undefined) {
        const { assertNoRuntimeFlags } = await import("./commands/attach.js");
        assertNoRuntimeFlags(opts);
        if (opts.updateBaselines === true) {
          // The serve sandbox was created without it and would compare instead of writing.
          const { WpCodeboxError } = await import("@wp-codebox/runtime-core");
          throw new WpCodeboxError("invalid-argument", "--update-baselines cannot be used with --attach: run the script in its own sandbox (without --attach) to write baselines.", { flags: ["--update-baselines"] });
        }
      }
      const runOptions: RunOptions = {
        command: opts.command as string,
        args: (opts.arg as string[] | undefined) ?? [],
        ...(opts.timeout !== undefined ? { timeout: opts.timeout as string } : {}),
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts as string } : {}),
        ...(opts.updateBaselines === true ? { updateBaselines: true } : {}),
        ...(opts.backend !== undefined ? { backendName: opts.backend as string } : {}),
        ...runtimeRunOptions(opts, io),
      };
      const outcome: RunOutcome = await withInterrupt(state, async (interrupt) => {
        if (opts.attach !== undefined) {
          const { runAttached } = await import("./commands/attach.js");
          return runAttached({ ...runOptions, interrupt, control: opts.attach as string, ...(opts.token !== undefined ? { token: opts.token as string } : {}), processEnv: io.env });
        }
        const { runCommand } = await import("./commands/run.js");
        return runCommand({ ...runOptions, interrupt });
      }, { attached: opts.attach !== undefined });
      printRunOutcome(state, outcome, opts.json === true);
      const lost = bundleLostError(outcome.bundle);
      if (lost) throw lost;
      if (outcome.error) throw outcome.error;
      if (outcome.result.status !== "ok") {
        const error = outcome.result.error ?? { code: outcome.result.status === "timed-out" ? "timeout" : "internal-error", message: `${outcome.result.command} ended with status ${outcome.result.status}.` };
        throw new CliExitError(error.code, error.message, EXIT_CODES.sandboxFailed);
      }
      if (!outcome.bundle.valid) {
        throw new CliExitError("bundle-invalid", `The bundle in ${outcome.bundle.directory} failed verification (a wp-codebox bug; please report it).`, EXIT_CODES.internal);
      }
    });

  // serve
  addRuntimeOptions(
    program
      .command("serve")
      .option("--allow-path <dir>", "let the --recipe file name host paths under DIR besides its own folder (repeatable; symlinks are followed before checking)", (v: string, p: string[] | undefined) => [...(p ?? []), v])
      .description("Boot a sandbox and keep it up: site URL, one-click admin login, and a control endpoint for --attach.")
      .option("--recipe <file>", "take the runtime and inputs (plugins, themes, mounts, env, secret env) of a workspace recipe; flags add to it")
      .option("--port <n>", "control endpoint port on 127.0.0.1 (default: any free port)")
      .option("--ttl <duration>", 'dispose everything after this long without activity (control calls or site requests), e.g. 30m, 90s; "0" = never (default 30m)')
      .option("--pool <n>", "keep N sandboxes booted from the same spec; each --attach session takes one, a returned one is reset in the background (default: one shared sandbox)")
      .option("--backend <name>", "playground (default); native is refused before boot: it has no web server yet (see docs/native-backend.md)")
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
      const { assertCliBackend } = await import("./commands/backends.js");
      assertCliBackend("serve", opts.backend as string | undefined, { cwd: io.cwd });
      const { startServe, formatServeAddress, prepareServe } = await import("./commands/serve.js");
      const asJson = opts.json === true;
      const serveOptions = {
        ...runtimeRunOptions(opts, io),
        // Boot progress as events too: with --json nothing on stderr is plain text.
        ...(asJson ? { onProgress: (message: string) => jsonEvent(io, "progress", { message }) } : {}),
        ...(opts.recipe !== undefined ? { recipe: opts.recipe as string } : {}),
        ...(opts.allowPath !== undefined ? { allowPaths: opts.allowPath as string[] } : {}),
        ...(opts.port !== undefined ? { port: opts.port as string } : {}),
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
      const removeHandlers = state.installSignalHandlers((signal) => {
        if (signalled) quitAtOnce(state, signal, "serve stops without disposing its sandboxes in order (their temporary folders are still removed)");
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
          state.jsonEmitted = true;
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

  // collect --attach
  program
    .command("collect")
    .description("Write the artifact bundle of everything done so far in a live (serve) sandbox; the sandbox keeps running.")
    .requiredOption("--attach <control-url>", "control endpoint printed by wp-codebox serve")
    .option("--token <token>", "control token (default $WP_CODEBOX_TOKEN)")
    .option("--artifacts <dir>", "bundle directory, created; refused if not empty (default ./wp-codebox-artifacts/collect-<id>)")
    .option("--include-snapshots", "also write the runtime snapshots taken in the sandbox into the bundle")
    .option("--json", 'print {"bundle": {"directory", "id", "valid"}, "results"} on stdout')
    .addHelpText("after", "\nWith serve --pool each session has its own sandbox, so a separate collect sees a fresh one: run --attach already writes the bundle of its session." + "\nExit codes: 0 bundle written and valid; 2 invalid input or wrong token; 3 serve not reachable." + examples(["WP_CODEBOX_TOKEN=T wp-codebox collect --attach http://127.0.0.1:PORT --artifacts ./out"]))
    .action(async (opts: { attach: string; token?: string; artifacts?: string; includeSnapshots?: boolean; json?: boolean }) => {
      const { collectAttached } = await import("./commands/attach.js");
      const outcome = await collectAttached({
        control: opts.attach,
        ...(opts.token !== undefined ? { token: opts.token } : {}),
        processEnv: io.env,
        cwd: io.cwd,
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts } : {}),
        ...(opts.includeSnapshots ? { includeSnapshots: true } : {}),
        onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`),
      });
      if (opts.json) json(state, { bundle: { directory: outcome.bundle.directory, id: outcome.bundle.id, valid: outcome.bundle.valid }, results: outcome.results });
      io.stderr(`results:  ${outcome.results} command(s) from ${outcome.siteUrl}\nbundle:   ${outcome.bundle.directory}\nid:       ${outcome.bundle.id}\nverify:   ${outcome.bundle.valid ? "valid" : "INVALID"}\n${reportPageLine(outcome.bundle)}`);
      if (!outcome.bundle.valid) throw new CliExitError("bundle-invalid", `The bundle in ${outcome.bundle.directory} failed verification (a wp-codebox bug; please report it).`, EXIT_CODES.internal);
    });

  // mcp (commands/mcp.ts)
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
        const { assertNoRuntimeFlags } = await import("./commands/attach.js");
        assertNoRuntimeFlags(opts);
      }
      const { runMcpServer } = await import("./commands/mcp.js");
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

  // commands
  program
    .command("commands")
    .description("List the commands a sandbox can run, with their arguments (the command catalog).")
    .option("--json", "print the catalog (wp-codebox/command-catalog/v1) on stdout")
    .addHelpText("after", examples(["wp-codebox commands", "wp-codebox commands --json | jq '.commands[].id'"]))
    .action(async (opts: { json?: boolean }) => {
      const { listCommands, formatCommandCatalog } = await import("./commands/commands.js");
      const catalog = await listCommands();
      if (opts.json) json(state, catalog);
      else io.stdout(formatCommandCatalog(catalog));
    });

  // schema
  program
    .command("schema")
    .description("Print the JSON Schema of a wp-codebox contract.")
    .argument("<name>", "schema name (see below)")
    .option("--json", "accepted for symmetry: the output is always JSON")
    .addHelpText("after", () => `\nSchema names:\n${describeSchemaNames()}\n${examples(["wp-codebox schema policy", "wp-codebox schema browser-script > browser-script.schema.json"])}`)
    .action(async (name: string) => {
      const { getSchema } = await import("./commands/schema.js");
      json(state, await getSchema(name));
    });

  // artifacts verify
  const artifacts = program.command("artifacts").description("Work with artifact bundles.").addHelpText("after", examples(["wp-codebox artifacts verify ./wp-codebox-artifacts/<run id>"]));
  artifacts
    .command("verify")
    .description("Verify an artifact bundle byte for byte: manifest, hashes, sizes, ids, references.")
    .argument("<dir>", "bundle directory (holding manifest.json)")
    .option("--json", 'print {"directory", "valid", "id", "violations": [{"code", "path", "message"}]} on stdout')
    .addHelpText(
      "after",
      "\nPrints each violation as `code path: message`. Exit codes: 0 valid, 1 invalid, 2 not a directory." +
        examples(["wp-codebox artifacts verify ./wp-codebox-artifacts/run-20250131-142501-a1b2c3", "wp-codebox artifacts verify ./out --json"]),
    )
    .action(async (dir: string, opts: { json?: boolean }) => {
      const { verifyArtifacts, formatViolations } = await import("./commands/artifacts-verify.js");
      const report = await verifyArtifacts(dir, io.cwd);
      if (opts.json) json(state, report);
      else {
        io.stdout(formatViolations(report));
        if (report.valid) io.stderr(`valid: ${report.directory}${report.id ? ` (${report.id})` : ""}\n`);
      }
      if (!report.valid) {
        throw new CliExitError(
          "bundle-invalid",
          `${report.directory} is not a valid bundle: ${report.violations.length} violation(s)${opts.json ? "" : " listed above"}. The bundle was changed after it was written, or is incomplete.`,
          EXIT_CODES.sandboxFailed,
          { violations: report.violations.length },
        );
      }
    });

  // report DIR
  program
    .command("report")
    .description("Write the report page (report.html) of a bundle made before, outside the bundle so it still verifies.")
    .argument("<dir>", "bundle directory (holding manifest.json)")
    .option("--out <file>", "where the page goes (default <dir>-report.html beside the bundle); refused inside the bundle")
    .option("--json", 'print {"directory", "out", "valid", "id", "violations"} on stdout')
    .addHelpText(
      "after",
      "\nEvery bundle already holds its own report.html; this writes one for a bundle from an older version, or one to keep elsewhere. The page links to the bundle's files." +
        "\nExit codes: 0 page written, bundle valid; 1 page written, bundle invalid (the page lists the violations); 2 not a bundle, or --out inside it." +
        examples(["wp-codebox report ./wp-codebox-artifacts/run-20250131-142501-a1b2c3", "wp-codebox report ./out --out ./out-report.html"]),
    )
    .action(async (dir: string, opts: { out?: string; json?: boolean }) => {
      const { writeReportPage } = await import("./commands/report-page.js");
      const outcome = await writeReportPage(dir, { cwd: io.cwd, ...(opts.out !== undefined ? { out: opts.out } : {}) });
      if (opts.json) json(state, outcome);
      io.stderr(`bundle:   ${outcome.directory}\nverify:   ${outcome.valid ? "valid" : `INVALID (${outcome.violations.length} violation(s), listed on the page)`}\nreport:   ${outcome.out}\n`);
      if (!outcome.valid) {
        throw new CliExitError("bundle-invalid", `${outcome.directory} is not a valid bundle: the page ${outcome.out} lists its ${outcome.violations.length} violation(s).`, EXIT_CODES.sandboxFailed, {
          violations: outcome.violations.length,
        });
      }
    });

  // check PLUGIN (commands/check-cli.ts)
  registerCheckCommand(program, { io, printJson: (value) => json(state, value), addRuntimeOptions, runtimeOptions: (opts) => runtimeRunOptions(opts, io), withInterrupt: (work) => withInterrupt(state, work) });

  // recipe validate|plan|run (commands/recipe-cli.ts)
  registerRecipeCommands(program, { io, printJson: (value) => json(state, value), withInterrupt: (work) => withInterrupt(state, work) });

  // batch, worker (commands/batch-cli.ts)
  registerBatchCommands(program, { io, printJson: (value) => json(state, value), installSignalHandlers: state.installSignalHandlers });

  // episode run | replay
  const episode = program.command("episode").description("Run stateful episodes and replay their traces.").addHelpText("after", examples(["wp-codebox episode run examples/episodes/seed-and-snapshot.json --artifacts out-episode", "wp-codebox episode replay out-episode"]));
  addHostAccessOptions(episode
    .command("run"), "the script")
    .description("Run an episode script (wp-codebox/episode-script/v1) and write its bundle: trace, events, observations, snapshots.")
    .argument("<script>", "episode script JSON file; relative paths in it resolve against its folder")
    .option("--artifacts <dir>", "bundle directory, created; refused if not empty (default: the script's artifacts.directory, else ./wp-codebox-artifacts/<episode id>)")
    .option("--json", 'print {"trace": {"id", "digest"}, "steps", "bundle": {"directory", "id", "valid"}} on stdout')
    .option("--clock <iso|real>", 'virtual clock start (ISO-8601 instant) or "real"; overrides runtime.clock (episode default: 2025-01-01T00:00:00Z)')
    .option("--seed <n>", "seed of every source of randomness; overrides runtime.seed (episode default: 0; refused with outbound network)")
    .option("--backend <name>", "playground or native (Debian's PHP and a private MariaDB under bubblewrap; no virtual clock or seed, wordpress.run-php, wordpress.wp-cli and wordpress.rest-request actions only); overrides runtime.backend (default playground)")
    .option("--attach <control-url>", "drive a live sandbox of wp-codebox serve (reset first; the script's runtime, inputs and policy are not used)")
    .option("--token <token>", "control token (default $WP_CODEBOX_TOKEN)")
    .addHelpText("after", "\nA failing step is recorded, not fatal. Exit codes: 0 every step ok; 1 a step failed or timed out (the bundle is still written); 2 invalid script (every issue listed)." + examples(["wp-codebox episode run episode.json --artifacts out-episode --json"]))
    .action(async (script: string, opts: { artifacts?: string; json?: boolean; attach?: string; token?: string; clock?: string; seed?: string; backend?: string } & HostAccessFlags) => {
      const { runEpisode, formatEpisodeOutcome } = await import("./commands/episode-run.js");
      const attached = opts.attach !== undefined ? await (await import("./commands/attach.js")).attach({ control: opts.attach, ...(opts.token !== undefined ? { token: opts.token } : {}), processEnv: io.env }) : undefined;
      let outcome: Awaited<ReturnType<typeof runEpisode>>;
      try {
        const backend = attached ? (await import("@wp-codebox/live/client")).attachedBackend(attached, { resetOnCreate: true }) : undefined;
        outcome = await withInterrupt(state, (interrupt) =>
          runEpisode({
            script,
            ...(opts.artifacts ? { artifactsDir: opts.artifacts } : {}),
            ...(opts.clock !== undefined ? { clock: opts.clock } : {}),
            ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
            ...(opts.backend !== undefined ? { backendName: opts.backend } : {}),
            ...hostAccessGrants(opts),
            cwd: io.cwd,
            processEnv: io.env,
            interrupt,
            onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`),
            ...(backend ? { backend } : {}),
          }),
          { attached: backend !== undefined },
        );
      } finally {
        await attached?.dispose();
      }
      const trace = outcome.episode?.trace;
      if (opts.json) {
        json(state, {
          ...(trace ? { trace: { id: trace.id, digest: trace.digest } } : {}),
          steps: outcome.episode?.steps ?? [],
          bundle: { directory: outcome.bundle.directory, id: outcome.bundle.id, valid: outcome.bundle.valid, ...(outcome.bundle.written === false ? { written: false, error: outcome.bundle.error } : {}) },
          ...(outcome.error ? { error: outcome.error } : {}),
        });
      }
      io.stderr(formatEpisodeOutcome(outcome));
      const exit = sessionExitError(outcome, { code: "episode-step-failed", message: "At least one episode step failed or timed out; it is recorded in the trace. See the step list above." });
      if (exit) throw exit;
    });
  episode
    .command("replay")
    .description("Re-execute a bundle's episode trace in a fresh sandbox and report per step whether the digests match.")
    .argument("<bundle>", "bundle directory written by episode run")
    .option("--json", "print the replay report (per-step digests, declared volatile fields) on stdout")
    .addHelpText("after", "\nReplay boots with the clock, seed and origin the trace recorded. Volatile fields (host timings and ids only) are declared in EPISODE_REPLAY_VOLATILE_FIELDS and listed in the --json report. Exit codes: 0 every deterministic step matches; 1 a mismatch; 2 not an episode bundle." + examples(["wp-codebox episode replay out-episode", "wp-codebox episode replay out-episode --json"]))
    .action(async (bundle: string, opts: { json?: boolean }) => {
      const { replayEpisode, formatReplayReport } = await import("./commands/episode-replay.js");
      const report = await replayEpisode({ bundle, cwd: io.cwd, onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`) });
      if (opts.json) json(state, report);
      else io.stdout(formatReplayReport(report));
      if (!report.ok) throw new CliExitError("replay-mismatch", `${report.summary.mismatched} deterministic step(s) did not reproduce; the report lists the differing fields.`, EXIT_CODES.sandboxFailed);
    });

  // wp-cli install (commands/wp-cli-install.ts)
  const wpCliCommand = program.command("wp-cli").description("Manage the WP-CLI phar that wordpress.wp-cli runs.");
  wpCliCommand
    .command("install")
    .description("Fetch WP-CLI's release phar once, check its published SHA-512 and cache it; wordpress.wp-cli then uses the newest cached phar by default.")
    .argument("[version]", 'a WP-CLI release such as 2.10.0, or "latest"', "latest")
    .option("--json", "print {version, pharPath, sha512, url, fetchedAt, fetched} on stdout")
    .addHelpText(
      "after",
      "\nFetched from $WP_CODEBOX_WP_CLI_MIRROR (default https://github.com/wp-cli/wp-cli/releases/) into <cache dir>/wp-cli/; WP_CODEBOX_OFFLINE=1 never fetches.\nExit codes: 0 installed (or already cached), 2 not a version, 3 wp-cli-download-failed or wp-cli-checksum-mismatch." +
        examples(["wp-codebox wp-cli install", "wp-codebox wp-cli install 2.10.0 --json"]),
    )
    .action(async (version: string, opts: { json?: boolean }) => {
      const { runWpCliInstall } = await import("./commands/wp-cli-install.js");
      const report = await runWpCliInstall({ version, env: io.env, onProgress: (m) => io.stderr(`wp-codebox: ${m}\n`) });
      if (opts.json) json(state, report);
      else io.stdout(`WP-CLI ${report.version} ${report.fetched ? "installed" : "already cached"}: ${report.pharPath} (sha512 ${report.sha512.slice(0, 16)}…)\n`);
    });

  // doctor
  program
    .command("doctor")
    .description("Check this machine: Node, offline WordPress builds, cache, installed site, Chromium, WP-CLI.")
    .option("--json", "print the report (wp-codebox/doctor-report/v1) on stdout")
    .addHelpText("after", "\nExit codes: 0 ready (Chromium and WP-CLI are optional), 3 a required piece is missing." + examples(["wp-codebox doctor", "wp-codebox doctor --json"]))
    .action(async (opts: { json?: boolean }) => {
      const { runDoctor, formatDoctorReport } = await import("./commands/doctor.js");
      const report = await runDoctor({ env: io.env });
      if (opts.json) json(state, report);
      else io.stdout(formatDoctorReport(report));
      if (!report.ok) {
        const missing = report.checks.filter((c) => c.required && c.status !== "ok").map((c) => c.id);
        throw new CliExitError("environment-incomplete", `Required pieces are missing: ${missing.join(", ")}. Fix them as described${opts.json ? " in the report" : " above"}.`, EXIT_CODES.environment, { missing });
      }
    });

  return program;
}

/** `{ code, message, data? }` of anything thrown, for `--json` output. */
function jsonError(error: unknown): { code: string; message: string; data?: Record<string, unknown> } {
  const { code, message, data } = describeFailure(error);
  return { code, message, ...(data && Object.keys(data).length > 0 ? { data } : {}) };
}

/** Human output of `run`: command stdout to stdout; stderr, summary and verification to stderr. */
function printRunOutcome(state: CliState, outcome: RunOutcome, asJson: boolean): void {
  const { io } = state;
  const { result, bundle } = outcome;
  if (asJson) {
    json(state, {
      result,
      bundle: { directory: bundle.directory, id: bundle.id, valid: bundle.valid, ...(bundle.written === false ? { written: false, error: bundle.error } : {}) },
      ...(outcome.error ? { error: jsonError(outcome.error) } : {}),
    });
  } else {
    if (result.stdout) io.stdout(result.stdout);
    else if (result.json !== undefined) io.stdout(`${JSON.stringify(result.json, null, 2)}\n`);
    if (result.stderr) io.stderr(result.stderr.endsWith("\n") ? result.stderr : `${result.stderr}\n`);
  }
  const lines = [
    "",
    // A command that never ran or was cut off (no boot, an interrupt) has no exit code of its own.
    outcome.error && result.error?.code === outcome.error.code
      ? `status:   ${result.status} (no exit code: error[${outcome.error.code}]) in ${result.durationMs} ms — ${result.command}`
      : `status:   ${result.status} (command exit code ${result.exitCode}) in ${result.durationMs} ms — ${result.command}`,
    `bundle:   ${bundle.directory}`,
    `id:       ${bundle.id}`,
    `verify:   ${bundle.written === false ? bundleVerifyText(bundle) : bundle.valid ? "valid" : `INVALID (${bundle.violations.map((v) => `${v.code} ${v.path}`).join("; ")})`}`,
  ];
  io.stderr(`${lines.join("\n")}\n${reportPageLine(bundle)}`);
}

function commanderUsage(error: CommanderError, argv: readonly string[], program: Command): CliExitError | undefined {
  if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return undefined;
  if (error.code === "commander.help" || error.code === "commander.executeSubCommandAsync") {
    return new CliExitError("invalid-usage", "No command given: see the list above.", EXIT_CODES.invalidInput);
  }
  // The help of the deepest command the words name (`episode run --help`, not `episode --help`).
  const path: string[] = [];
  let command = program;
  for (const word of argv.filter((a) => !a.startsWith("-"))) {
    const next = command.commands.find((c) => c.name() === word);
    if (!next) break;
    path.push(word);
    command = next;
  }
  const hint = `wp-codebox ${[...path, "--help"].join(" ")}`;
  const message = error.message.replace(/^error: /, "");
  return new CliExitError("invalid-usage", `${message}${/[.?]$/.test(message) ? "" : "."} Run "${hint}" for usage.`, EXIT_CODES.invalidInput, {
    commanderCode: error.code,
  });
}

/**
 * Runs one CLI invocation and returns its exit code; the only place errors are turned into
 * `error[<code>]: <message>` lines (and, with `--json`, an `{"error": …}` document on stdout).
 * @param argv - arguments after the executable and script (`process.argv.slice(2)`).
 * @returns 0 ok, 1 sandbox work failed, 2 invalid input, 3 environment, 70 internal bug,
 *   130/143 interrupted by SIGINT/SIGTERM.
 */
export async function runCli(argv: readonly string[], options: RunCliOptions = {}): Promise<number> {
  const state: CliState = {
    io: options.io ?? processIo(),
    jsonEmitted: false,
    // Decided from argv, so a usage error before the action runs is an event line too.
    jsonEvents: argv[0] === "serve" && argv.includes("--json"),
    installSignalHandlers: options.installSignalHandlers ?? defaultSignalHandlers,
  };
  const { io } = state;
  const wantsJson = argv.includes("--json");
  const program = buildProgram(state);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return EXIT_CODES.ok;
  } catch (thrown) {
    let error: unknown = thrown;
    if (thrown instanceof CommanderError) {
      const usage = commanderUsage(thrown, argv, program);
      if (!usage) return thrown.exitCode;
      error = usage;
    }
    const failure = describeFailure(error);
    if (state.jsonEvents) {
      const { code, message, data } = jsonError(error);
      jsonEvent(io, "error", { code, message, ...(data ? { data } : {}), exitCode: failure.exitCode });
    } else io.stderr(`error[${failure.code}]: ${failure.message}\n`);
    if (failure.exitCode === EXIT_CODES.internal && !state.jsonEvents) {
      io.stderr(
        "This is a bug in wp-codebox, not in your input: please report it with the command you ran and this output." +
          (io.env.WP_CODEBOX_DEBUG && error instanceof Error && error.stack ? `\n${error.stack}` : " (Set WP_CODEBOX_DEBUG=1 for a stack trace.)") +
          "\n",
      );
    }
    if (wantsJson && !state.jsonEmitted) {
      json(state, { error: jsonError(error) });
    }
    return failure.exitCode;
  }
}
