/**
 * Which command lines boot a sandbox in this process, so that the executable can start a PHP
 * worker thread before it loads the rest of the CLI (`prestartPhpWorker`): the thread then
 * imports php-wasm on the second core while this one loads and plans the run.
 */

/** `[command, subcommand?]` pairs that boot a local sandbox (a subcommand of `*` = any). */
const BOOTING: ReadonlyArray<readonly [string, string?]> = [["run"], ["serve"], ["check"], ["mcp"], ["episode", "run"], ["episode", "replay"], ["recipe", "run"]];

/** The value of `--php X.Y` or `--php=X.Y` in `argv`, if any (the thread's stack size follows it). */
export function phpVersionArg(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--php") return argv[i + 1];
    if (a.startsWith("--php=")) return a.slice("--php=".length);
  }
  return undefined;
}

/**
 * True when `argv` (without node and the script) names a command that boots a sandbox here: not
 * one attached to a `serve` (`--attach`), not `mcp --lazy-boot` (it boots on the first call, maybe
 * never), and not a request for help. A wrong guess costs one idle thread's module loading.
 */
export function bootsLocalSandbox(argv: readonly string[]): boolean {
  if (argv.some((a) => a === "--help" || a === "-h" || a === "--attach" || a.startsWith("--attach=") || a === "--lazy-boot")) return false;
  const words = argv.filter((a) => !a.startsWith("-"));
  return BOOTING.some(([command, sub]) => words[0] === command && (sub === undefined || words[1] === sub));
}
