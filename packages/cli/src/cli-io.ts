/**
 * Where a CLI invocation reads and writes. Results go to `stdout`; human text, progress and errors
 * go to `stderr`. Tests and programmatic callers pass their own.
 */
export interface CliIo {
  /** Results: command output, `--json` documents. */
  stdout: (text: string) => void;
  /** Human text: progress, summaries, `error[<code>]: <message>` lines. */
  stderr: (text: string) => void;
  /** Environment `--secret-env` values are read from; default `process.env`. */
  env: NodeJS.ProcessEnv;
  /** Directory relative paths are resolved against; default `process.cwd()`. */
  cwd: string;
}

/** The process's own streams, environment and working directory. */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
  };
}
