/**
 * The `wordpress.wp-cli` command line, checked without a sandbox: split into argv like a shell,
 * refused when it names a WP-CLI command that cannot work inside a PHP-wasm sandbox (those that
 * run a MySQL client binary or another process), and completed with the flags the sandbox needs.
 * Pure: no I/O, so `checkCommandInput` refuses such a command before anything boots.
 */
import { WpCodeboxError } from "./errors.js";

/** A WP-CLI command that cannot run in the sandbox, and why. */
export interface UnsupportedWpCliCommand {
  /** The command words, e.g. `["db", "query"]`. */
  words: readonly string[];
  /** Why it cannot work, in a phrase that completes "… because it …". */
  reason: string;
}

const MYSQL_CLIENT = "runs the MySQL client binary (mysql), and the sandbox has no MySQL server or client: its database is SQLite inside PHP-wasm";
const MYSQLDUMP = "runs mysqldump, and the sandbox has no MySQL server or client: its database is SQLite inside PHP-wasm";
const MYSQLCHECK = "runs mysqlcheck, and the sandbox has no MySQL server or client: its database is SQLite inside PHP-wasm";

/**
 * Every WP-CLI command refused before boot. PHP-wasm cannot start processes (`proc_open`), so a
 * command that shells out can only fail inside, with a message about a missing binary.
 */
export const UNSUPPORTED_WP_CLI_COMMANDS: readonly UnsupportedWpCliCommand[] = Object.freeze([
  { words: ["db", "query"], reason: MYSQL_CLIENT },
  { words: ["db", "cli"], reason: MYSQL_CLIENT },
  { words: ["db", "import"], reason: MYSQL_CLIENT },
  { words: ["db", "create"], reason: MYSQL_CLIENT },
  { words: ["db", "drop"], reason: MYSQL_CLIENT },
  { words: ["db", "reset"], reason: MYSQL_CLIENT },
  { words: ["db", "clean"], reason: MYSQL_CLIENT },
  { words: ["db", "export"], reason: MYSQLDUMP },
  { words: ["db", "check"], reason: MYSQLCHECK },
  { words: ["db", "optimize"], reason: MYSQLCHECK },
  { words: ["db", "repair"], reason: MYSQLCHECK },
  { words: ["shell"], reason: "is an interactive REPL that reads a terminal, and a sandbox command has no terminal" },
  { words: ["server"], reason: "starts PHP's built-in web server as a separate process, and PHP-wasm cannot start processes (the sandbox already serves the site)" },
  { words: ["cli", "update"], reason: "replaces the phar it runs from; install another version on the host with `wp-codebox wp-cli install VERSION` instead" },
]);

/** What to use instead, per first command word. */
const INSTEAD: Record<string, string> = {
  db: "Query the database with `wp eval` ($wpdb->get_results(...)) or wordpress.run-php, and move content with `wp export` / `wp import` or wordpress.state-export",
  shell: "Run PHP with `wp eval` or wordpress.run-php",
  server: "The sandbox's own site URL is already served",
  cli: "",
};

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
  if (quote) throw new WpCodeboxError("invalid-argument", `wordpress.wp-cli: unterminated ${quote} quote in command "${line}"; close the quote.`, { argument: "command", command: line });
  if (inWord) out.push(current);
  return out;
}

/**
 * Parses and checks a `wordpress.wp-cli` command line.
 * @param line - WP-CLI arguments, with or without a leading `wp` (`"post list --format=json"`).
 * @returns `argv` (the arguments without `wp`) and `words` (the positional words, flags left out,
 *   lower-cased: `["post", "list"]`).
 * @throws WpCodeboxError `missing-argument` (empty), `invalid-argument` (unterminated quote),
 *   `wp-cli-unsupported` (a command from `UNSUPPORTED_WP_CLI_COMMANDS`; data `{ argument: "command",
 *   command, reason }`).
 * @example parseWpCliCommand("wp db query 'SELECT 1'") // throws wp-cli-unsupported
 */
export function parseWpCliCommand(line: string): { argv: string[]; words: string[] } {
  const argv = splitCommandLine(line.trim());
  if (argv[0] === "wp") argv.shift();
  if (argv.length === 0) throw new WpCodeboxError("missing-argument", 'wordpress.wp-cli: command is empty; pass e.g. command="plugin list --format=json".');
  // WP-CLI takes flags only as --name or --name=value, so every other token is a word.
  const words = argv.filter((a) => !a.startsWith("-")).map((a) => a.toLowerCase());
  for (const entry of UNSUPPORTED_WP_CLI_COMMANDS) {
    if (entry.words.every((w, i) => words[i] === w)) {
      const name = `wp ${entry.words.join(" ")}`;
      const instead = INSTEAD[entry.words[0]!];
      throw new WpCodeboxError("wp-cli-unsupported", `wordpress.wp-cli: \`${name}\` cannot run in the sandbox because it ${entry.reason}.${instead ? ` ${instead}.` : ""}`, {
        argument: "command",
        command: name,
        reason: entry.reason,
      });
    }
  }
  return { argv, words };
}

/**
 * The full argv handed to WP-CLI in the sandbox: `wp`, the caller's args, then `--path`, `--url`
 * and `--no-color` unless the caller gave them (or `--color`).
 * @param argv - from `parseWpCliCommand`.
 * @param sandbox - WordPress root inside the sandbox and the site URL.
 * @example wpCliArgv(["option", "get", "home"], { path: "/wordpress", url: "http://127.0.0.1:9400" })
 *   // ["wp", "option", "get", "home", "--path=/wordpress", "--url=http://127.0.0.1:9400", "--no-color"]
 */
export function wpCliArgv(argv: readonly string[], sandbox: { path: string; url: string }): string[] {
  const has = (flag: string) => argv.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
  return [
    "wp",
    ...argv,
    ...(has("path") ? [] : [`--path=${sandbox.path}`]),
    ...(has("url") ? [] : [`--url=${sandbox.url}`]),
    ...(has("color") || has("no-color") ? [] : ["--no-color"]),
  ];
}
