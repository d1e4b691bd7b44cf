/**
 * Every `wp-codebox` command, registered in one place: each command's flags, help and action live
 * in `commands/<name>-cli.ts` (`registerXCommand(program, ctx)`), its work in `commands/<name>.ts`
 * as typed async functions (callable without argv), imported lazily. `runCli` holds the one catch that turns anything thrown into `error[<code>]: <message>`
 * and an exit code: 0 ok, 1 sandbox work failed, 2 invalid input, 3 environment,
 * 70 internal bug.
 */
import { Command, CommanderError } from "commander";
import { CliExitError, EXIT_CODES, describeFailure } from "./cli-exit-error.js";
import { processIo, type CliIo } from "./cli-io.js";
import { addRuntimeOptions, examples, jsonError, jsonEvent, runtimeRunOptions, version, type CliContext } from "./cli-options.js";
import { registerRunCommand } from "./commands/run-cli.js";
import { registerServeCommand } from "./commands/serve-cli.js";
import { registerCollectCommand } from "./commands/collect-cli.js";
import { registerMcpCommand } from "./commands/mcp-cli.js";
import { registerCommandsCommand } from "./commands/commands-cli.js";
import { registerSchemaCommand } from "./commands/schema-cli.js";
import { registerArtifactsCommands } from "./commands/artifacts-cli.js";
import { registerReportCommand } from "./commands/report-cli.js";
import { registerCheckCommand } from "./commands/check-cli.js";
import { registerRecipeCommands } from "./commands/recipe-cli.js";
import { registerBatchCommands } from "./commands/batch-cli.js";
import { registerEpisodeCommands } from "./commands/episode-cli.js";
import { registerWpCliCommands } from "./commands/wp-cli-install-cli.js";
import { registerDoctorCommand } from "./commands/doctor-cli.js";

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

  const ctx: CliContext = {
    io,
    printJson: (value) => json(state, value),
    markJsonEmitted: () => {
      state.jsonEmitted = true;
    },
    addRuntimeOptions,
    runtimeOptions: (opts) => runtimeRunOptions(opts, io),
    withInterrupt: (work, options) => withInterrupt(state, work, options),
    quitAtOnce: (signal, consequence) => quitAtOnce(state, signal, consequence),
    installSignalHandlers: state.installSignalHandlers,
  };
  // The order here is the order of `wp-codebox --help`.
  registerRunCommand(program, ctx);
  registerServeCommand(program, ctx);
  registerCollectCommand(program, ctx);
  registerMcpCommand(program, ctx);
  registerCommandsCommand(program, ctx);
  registerSchemaCommand(program, ctx);
  registerArtifactsCommands(program, ctx);
  registerReportCommand(program, ctx);
  registerCheckCommand(program, ctx);
  registerRecipeCommands(program, ctx);
  registerBatchCommands(program, ctx);
  registerEpisodeCommands(program, ctx);
  registerWpCliCommands(program, ctx);
  registerDoctorCommand(program, ctx);

  return program;
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
