/**
 * `wordpress.wp-cli`: runs a WP-CLI command inside the sandbox with a caller-supplied wp-cli.phar.
 * No registry this project can reach ships WP-CLI, so nothing is downloaded: the phar is resolved
 * from `--wp-cli-phar PATH`, then `$WP_CODEBOX_WP_CLI_PHAR`, then `<cacheDir>/wp-cli.phar`
 *; with none of these the command fails with `wp-cli-unavailable` (exit 3).
 */
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { WpCodeboxError, quoteValue, readInputFile } from "@wp-codebox/runtime-core";
import type { CommandHandler, WpCliPharSource } from "./command-context.js";
import { outcomeFromRun, withFatalRecorder } from "./run-php.js";
import { phpProgram } from "../php-assets.js";
import { phpValue } from "../php-value.js";

export type { WpCliPharSource };

const SANDBOX_PHAR = "/internal/wp-codebox/wp-cli.phar";
const HOW_TO =
  "WP-CLI is not bundled: download wp-cli.phar yourself (https://wp-cli.org/#installing) and pass --wp-cli-phar PATH, set WP_CODEBOX_WP_CLI_PHAR=PATH, or copy it to <cache dir>/wp-cli.phar";

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
  const cached = source.cacheDir ? join(source.cacheDir, "wp-cli.phar") : undefined;
  if (cached && existsSync(cached)) return { path: cached, source: "cache" };
  throw new WpCodeboxError("wp-cli-unavailable", `No wp-cli.phar found (checked --wp-cli-phar, WP_CODEBOX_WP_CLI_PHAR${cached ? `, ${cached}` : ""}). ${HOW_TO}.`, {
    checked: cached ? [cached] : [],
  });
}

/**
 * Splits a WP-CLI command line into argv like a POSIX shell would for plain words, '…' and "…"
 * quotes and backslash escapes (no variables, globs or substitutions).
 * @throws WpCodeboxError `invalid-argument` for an unterminated quote.
 * @example splitCommandLine(`post create --post_title="Hello world"`) // ["post", "create", "--post_title=Hello world"]
 */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let current = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === "\\" && quote === '"' && (line[i + 1] === '"' || line[i + 1] === "\\")) current += line[++i];
      else current += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(current);
      current = "";
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) throw new WpCodeboxError("invalid-argument", `wordpress.wp-cli: unterminated ${quote} quote in command "${line}"; close the quote.`, { command: line });
  if (inWord) out.push(current);
  return out;
}

export const wpCli: CommandHandler = async (ctx, args) => {
  const line = (args.command ?? "").trim().replace(/^wp\s+/, "");
  const argv = splitCommandLine(line);
  if (argv.length === 0) throw new WpCodeboxError("missing-argument", 'wordpress.wp-cli: command is empty; pass e.g. command="plugin list --format=json".');
  const phar = resolveWpCliPhar(ctx.wpCli, ctx.cwd);
  await ctx.writeSandboxFile(SANDBOX_PHAR, await readInputFile(phar.path, "wp-cli-phar"));
  const has = (flag: string) => argv.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
  const full = ["wp", ...argv, ...(has("path") ? [] : ["--path=/wordpress"]), ...(has("url") ? [] : [`--url=${ctx.siteUrl}`])];
  const code = withFatalRecorder(phpProgram({ wp_codebox_argv: phpValue(full, "wp-cli command"), wp_codebox_phar: phpValue(SANDBOX_PHAR) }, "commands/wp-cli.php"));
  const outcome = outcomeFromRun(await ctx.runPhp(code));
  if (outcome.error?.code === "php-exit") {
    outcome.error = {
      code: "wp-cli-failed",
      message: `WP-CLI exited with code ${outcome.exitCode}: ${(outcome.stderr || outcome.stdout).trim().slice(0, 500) || "(no output)"}`,
      data: { exitCode: outcome.exitCode, phar: phar.source },
    };
  }
  return outcome;
};
