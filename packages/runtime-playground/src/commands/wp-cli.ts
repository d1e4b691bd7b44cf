/**
 * `wordpress.wp-cli`: runs a WP-CLI command inside the sandbox with a wp-cli.phar from this
 * machine. The phar is resolved from `--wp-cli-phar PATH`, then `$WP_CODEBOX_WP_CLI_PHAR`, then the
 * newest phar `wp-codebox wp-cli install` cached (`<cacheDir>/wp-cli/`), then `<cacheDir>/wp-cli.phar`;
 * with none of these the command fails with `wp-cli-unavailable` (exit 3). Nothing is fetched here.
 */
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { WpCodeboxError, parseWpCliCommand, quoteValue, readInputFile, splitCommandLine, wpCliArgv } from "@wp-codebox/runtime-core";
import { phpProgram } from "../php-source/php-assets.js";
import { newestCachedWpCli } from "../site/wp-cli-releases.js";
import { type CommandHandler, type WpCliPharSource, outcomeFromRun, withFatalRecorder, phpValue } from "@wp-codebox/commands";

export type { WpCliPharSource };
/** Kept here too: the command line splitter moved to runtime-core with the other offline checks. */
export { splitCommandLine };

const SANDBOX_PHAR = "/internal/wp-codebox/wp-cli.phar";
const NO_PROCESSES =
  "(Exit 127: WP-CLI tried to start another process, such as a second WP-CLI run or a system binary, and PHP-wasm cannot start processes. What ran before that step stands; run the follow-up as its own wordpress.wp-cli command, e.g. `rewrite flush` after `rewrite structure`.)";
const HOW_TO =
  "WP-CLI is not bundled: run `wp-codebox wp-cli install` once (it fetches and checks the official phar and caches it), or pass --wp-cli-phar PATH or set WP_CODEBOX_WP_CLI_PHAR=PATH to a wp-cli.phar of your own";

/**
 * Finds the phar to use.
 * @returns `{ path, source }` with the absolute host path and which rule found it.
 * @throws WpCodeboxError `wp-cli-unavailable` naming every place checked and how to provide one;
 *   an explicit flag or env path that does not exist is reported as such (no fallback past it).
 */
export function resolveWpCliPhar(source: WpCliPharSource, cwd: string): { path: string; source: "flag" | "env" | "cache" } {
  const env = "env" in source ? source.env : process.env.WP_CODEBOX_WP_CLI_PHAR;
  const explicit: [string | undefined, "flag" | "env", string][] = [
    [source.flag, "flag", "--wp-cli-phar"],
    [env, "env", "WP_CODEBOX_WP_CLI_PHAR"],
  ];
  for (const [value, kind, label] of explicit) {
    if (!value) continue;
    const path = resolve(cwd, value);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new WpCodeboxError("wp-cli-unavailable", `${label} ${quoteValue(value)} does not exist or is not a file (resolved to ${path}). ${HOW_TO}.`, { checked: [path], source: kind });
    }
    return { path, source: kind };
  }
  const installed = source.cacheDir ? newestCachedWpCli(source.cacheDir) : undefined;
  if (installed) return { path: installed.pharPath, source: "cache" };
  const cached = source.cacheDir ? join(source.cacheDir, "wp-cli.phar") : undefined;
  if (cached && existsSync(cached)) return { path: cached, source: "cache" };
  throw new WpCodeboxError("wp-cli-unavailable", `No wp-cli.phar found (checked --wp-cli-phar, WP_CODEBOX_WP_CLI_PHAR${cached ? `, ${join(source.cacheDir!, "wp-cli")}, ${cached}` : ""}). ${HOW_TO}.`, {
    checked: cached ? [join(source.cacheDir!, "wp-cli"), cached] : [],
  });
}

export const wpCli: CommandHandler = async (ctx, args) => {
  // Checked again here for callers that reach the backend without a plan (live sessions).
  const { argv } = parseWpCliCommand(args.command ?? "");
  const phar = resolveWpCliPhar(ctx.wpCli, ctx.cwd);
  await ctx.writeSandboxFile(SANDBOX_PHAR, await readInputFile(phar.path, "wp-cli-phar"));
  const full = wpCliArgv(argv, { path: "/wordpress", url: ctx.siteUrl });
  const code = withFatalRecorder(phpProgram({ wp_codebox_argv: phpValue(full, "wp-cli command"), wp_codebox_phar: phpValue(SANDBOX_PHAR) }, "commands/wp-cli.php"));
  const outcome = outcomeFromRun(await ctx.runPhp(code));
  if (outcome.error?.code === "php-exit") {
    // 127 is what WP-CLI reports when proc_open cannot start a child (another `wp` run, a binary).
    const spawn = outcome.exitCode === 127 ? ` ${NO_PROCESSES}` : "";
    outcome.error = {
      code: "wp-cli-failed",
      message: `WP-CLI exited with code ${outcome.exitCode}: ${(outcome.stderr || outcome.stdout).trim().slice(0, 500) || "(no output)"}${spawn}`,
      data: { exitCode: outcome.exitCode, phar: phar.source, ...(spawn ? { reason: "process-unavailable" } : {}) },
    };
  }
  // `--format=json` may print a bare scalar (`option get blogname` prints "My Site"): with the
  // format asked for, any JSON value is the result, not only an object or array.
  if (outcome.status === "ok" && outcome.json === undefined && !outcome.truncated?.stdout && argv.includes("--format=json")) {
    try {
      outcome.json = JSON.parse(outcome.stdout.trim()) as unknown;
    } catch {
      // not JSON after all: stdout stays as printed
    }
  }
  return outcome;
};
