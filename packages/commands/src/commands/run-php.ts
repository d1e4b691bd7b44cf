/**
 * `wordpress.run-php`: runs caller PHP with WordPress loaded (`bootstrap=wordpress`, default) or
 * bare (`bootstrap=none`), as admin (default), anonymous or a given user.
 */
import { existsSync } from "node:fs";
import { basename, resolve } from "node:path";
import { WpCodeboxError, fatalFromPhpOutput, readInputText } from "@wp-codebox/runtime-core";
import { parseJsonMaybe, text, type CommandHandler, type CommandOutcome } from "./command-context.js";
import type { PhpFatal, PhpRunResult } from "./php-results.js";
import { phpValue } from "../php-source/php-value.js";
import { phpAsset } from "../php-source/php-assets.js";
import { missingExtensionHint } from "../php-source/php-extension-hint.js";

const FATAL_MASK = 1 | 4 | 16 | 64 | 256 | 4096; // E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR

/** PHP prelude that records a fatal error's message, file and line where the runtime can read it. */
export const FATAL_RECORDER = `register_shutdown_function(static function () {
  $e = error_get_last();
  if ($e !== null && ($e['type'] & ${FATAL_MASK})) { @file_put_contents('/internal/wp-codebox/last-error.json', json_encode($e)); }
});`;

/**
 * PHP prelude that defines `STDIN`, `STDOUT` and `STDERR` as the PHP command line does. php-wasm
 * runs code through its own entry rather than the CLI's script runner, which is what defines them,
 * so `fwrite(STDERR, …)` would otherwise be a fatal "Undefined constant". Writes to them land in
 * the result's `stdout` and `stderr`.
 */
export const STDIO_CONSTANTS = `if (!defined('STDIN')) define('STDIN', fopen('php://stdin', 'r'));
if (!defined('STDOUT')) define('STDOUT', fopen('php://stdout', 'w'));
if (!defined('STDERR')) define('STDERR', fopen('php://stderr', 'w'));`;

/** The program with `FATAL_RECORDER` right after its opening `<?php` tag (for internal helpers, so a fatal is reported with file and line). */
export function withFatalRecorder(program: string): string {
  return program.replace(/^<\?php\s*/, `<?php\n${FATAL_RECORDER}\n`);
}

/**
 * Builds the PHP wrapper that defines the standard stream constants (`STDIO_CONSTANTS`), loads
 * WordPress (optionally), switches to `user` and runs `file`.
 * `user` is a user id, or `"admin"` to look the administrator up in the same request.
 */
export function phpWrapper(file: string, options: { bootstrap: "wordpress" | "none"; user: number | "admin" }): string {
  const lines = ["<?php", FATAL_RECORDER, STDIO_CONSTANTS];
  if (options.bootstrap === "wordpress") {
    // Like WP-CLI (`wp eval`), load the admin includes: the plugin API, add_settings_section(), WP_Filesystem(), dbDelta() …
    lines.push("require_once '/wordpress/wp-load.php';", "require_once ABSPATH . 'wp-admin/includes/admin.php';");
    if (options.user === "admin") lines.push(phpAsset("actors/admin-user.php").replace(/^<\?php\s*/, ""), "wp_set_current_user(wp_codebox_admin_user_id());");
    else lines.push(`wp_set_current_user(${phpValue(options.user)});`);
  }
  lines.push(`require ${phpValue(file)};`);
  return lines.join("\n");
}

/** The `php-fatal` error of a result: message with file:line, and the details as data. */
export function phpFatalError(fatal: PhpFatal, extra: Record<string, unknown> = {}): NonNullable<CommandOutcome["error"]> {
  // An uncaught exception's message already ends with " in FILE:LINE": say where once.
  const firstLine = (fatal.message.split("\n")[0] ?? fatal.message).replace(` in ${fatal.file}:${fatal.line}`, "");
  return {
    code: "php-fatal",
    message: `PHP fatal error: ${firstLine}${fatal.file ? ` (${fatal.file}:${fatal.line})` : ""}${missingExtensionHint(firstLine)}`,
    data: { message: fatal.message, file: fatal.file, line: fatal.line, type: fatal.type, ...extra },
  };
}

/** Converts a worker run into a command outcome: fatal → `php-fatal`, non-zero exit → `php-exit`. */
export function outcomeFromRun(run: PhpRunResult): CommandOutcome {
  const stdout = text(run.stdout.data);
  const stderr = text(run.stderr.data);
  const base = {
    stdout,
    stderr,
    stdoutBytes: run.stdout.bytes,
    stderrBytes: run.stderr.bytes,
    truncated: { stdout: run.stdout.truncated, stderr: run.stderr.truncated },
  };
  // A fatal the shutdown recorder could not write (it died too) is still in PHP's own output.
  const fatal = run.fatal ?? (run.exitCode === 255 ? fatalFromPhpOutput(`${stderr}\n${stdout}`) : undefined);
  if (fatal) {
    return {
      ...base,
      status: "error",
      exitCode: run.exitCode || 255,
      stderr: stderr || `PHP Fatal error: ${fatal.message} in ${fatal.file} on line ${fatal.line}\n`,
      error: phpFatalError(fatal),
    };
  }
  if (run.exitCode !== 0) {
    return {
      ...base,
      status: "error",
      exitCode: run.exitCode,
      error: {
        code: "php-exit",
        message: `PHP exited with code ${run.exitCode}.${stderr ? ` stderr: ${stderr.slice(0, 500)}` : ""}`,
        data: { exitCode: run.exitCode },
      },
    };
  }
  const json = run.stdout.truncated ? undefined : parseJsonMaybe(stdout);
  return { ...base, status: "ok", exitCode: 0, ...(json !== undefined ? { json } : {}) };
}

/**
 * A script's `#!` first line, removed. PHP's command line skips that line only in the script it
 * starts with; the sandbox includes the file, where the line would be printed (and a
 * `declare(strict_types=1)` after it would be a fatal error). When the next line opens with
 * `<?php`, the tag moves up to line 1 so every later line keeps its number in errors.
 * @example withoutShebang("#!/usr/bin/env php\n<?php echo 1;") // "<?php\n echo 1;"
 */
export function withoutShebang(source: string): string {
  if (!source.startsWith("#!")) return source;
  const nl = source.indexOf("\n");
  if (nl < 0) return "";
  const rest = source.slice(nl + 1);
  // The user's own source, re-joined (not a value spliced into a template).
  return rest.startsWith("<?php") ? "<?php\n" + rest.slice(5) : rest;
}

export const runPhp: CommandHandler = async (ctx, args) => {
  let source: string;
  let file: string;
  if (args["code-file"] !== undefined) {
    const path = resolve(ctx.cwd, args["code-file"]);
    if (!existsSync(path)) {
      throw new WpCodeboxError("invalid-argument", `code-file ${args["code-file"]} does not exist (resolved to ${path}).`, { path });
    }
    source = await readInputText(path, "code-file");
    file = `/internal/wp-codebox/code/${basename(path)}`;
  } else {
    source = args.code ?? "";
    file = "/internal/wp-codebox/code/code.php";
  }
  source = withoutShebang(source);
  // Bare statements are accepted too: `echo 1;` runs as `<?php echo 1;`.
  if (!/^\s*<\?(php|=)?/.test(source)) source = `<?php\n${source}`;
  const bootstrap = args.bootstrap === "none" ? "none" : "wordpress";
  const user = bootstrap === "wordpress" ? await ctx.wrapperUser(args.as) : 0;
  await ctx.writeSandboxFile(file, source);
  const run = await ctx.runPhp(phpWrapper(file, { bootstrap, user }));
  return outcomeFromRun(run);
};
