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

/** Writes `text` unless the stream is already closed (its reader went away): output nobody reads is dropped. */
function writeOpen(stream: NodeJS.WriteStream, text: string): void {
  if (stream.destroyed || stream.writableEnded) return;
  stream.write(text);
}

/** The process's own streams, environment and working directory. */
export function processIo(): CliIo {
  return {
    stdout: (text) => writeOpen(process.stdout, text),
    stderr: (text) => writeOpen(process.stderr, text),
    env: process.env,
    cwd: process.cwd(),
  };
}

/**
 * Makes a reader that stops reading (`wp-codebox schema policy | head -1`) a non-event, as for a
 * Unix filter: the write fails with EPIPE, the stream is closed, later output to it is dropped,
 * and the command finishes with its own exit code, printing nothing about it. Without this, Node
 * reports the EPIPE as an unhandled `error` event with a stack trace on stderr. Other stream
 * errors are still thrown.
 */
export function dropOutputToClosedPipes(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") {
        stream.destroy();
        return;
      }
      throw error;
    });
  }
}
