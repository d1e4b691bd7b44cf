/**
 * What every command registration shares: the option helpers (`addRuntimeOptions` and the
 * `RunOptions` they map to, `collect`, `examples`), the `serve --json` event line, and
 * `CliContext`, the one object `cli.ts` hands each `registerXCommand(program, ctx)`.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describeFailure } from "./cli-exit-error.js";
import type { CliIo } from "./cli-io.js";
import type { RunOptions } from "./commands/run.js";

/** What a command registration gets from the invocation (`runCli` builds one per call). */
export interface CliContext {
  io: CliIo;
  /** Prints a `--json` document on stdout and marks it emitted (the top-level catch then adds none). */
  printJson: (value: unknown) => void;
  /** Marks a `--json` document printed another way (serve's one-line address) as emitted. */
  markJsonEmitted: () => void;
  /** Adds the shared runtime flags (`--wp`, `--php`, `--mount`, `--policy`, `--env`, …). */
  addRuntimeOptions: (command: Command) => Command;
  /** Maps parsed runtime flags to `RunOptions` fields. */
  runtimeOptions: (opts: Record<string, unknown>) => Omit<RunOptions, "command">;
  /**
   * Runs work with SIGINT/SIGTERM turned into an abort of the signal it gets (the session then writes
   * its bundle); a second signal quits at once. `attached`: the sandbox belongs to `serve`.
   */
  withInterrupt: <T>(work: (interrupt: AbortSignal) => Promise<T>, options?: { attached?: boolean }) => Promise<T>;
  /** Exits now on a second signal, saying so first; `consequence` tells what is left undone. */
  quitAtOnce: (signal: NodeJS.Signals, consequence: string) => never;
  /** Installs SIGINT/SIGTERM handlers and returns their remover. */
  installSignalHandlers: (onSignal: (signal: NodeJS.Signals) => void) => () => void;
}

/** Commander option parser of a repeatable flag: appends each value. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The wp-codebox version from the CLI package's package.json ("0.0.0" when unreadable). */
export function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The `Examples:` block of a command's help text, one `$ line` each. */
export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;
}

/** One stderr line of `serve --json`: `{"event": type, "at": ISO-8601, "data"?: {…}}`. */
export function jsonEvent(io: CliIo, type: string, data?: Record<string, unknown>, at = new Date().toISOString()): void {
  io.stderr(`${JSON.stringify({ event: type, at, ...(data ? { data } : {}) })}\n`);
}

/** `{ code, message, data? }` of anything thrown, for `--json` output. */
export function jsonError(error: unknown): { code: string; message: string; data?: Record<string, unknown> } {
  const { code, message, data } = describeFailure(error);
  return { code, message, ...(data && Object.keys(data).length > 0 ? { data } : {}) };
}

/** The runtime flags shared by `run`, `serve`, `check` and `mcp`. */
export function addRuntimeOptions(command: Command): Command {
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
export function runtimeRunOptions(opts: Record<string, unknown>, io: CliIo): Omit<RunOptions, "command"> {
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
