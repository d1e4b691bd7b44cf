/**
 * What a backend reports of one PHP run or one HTTP request it served: the shapes command handlers
 * read through `CommandContext`. Each backend's own results (Playground's worker results, the
 * native backend's confined processes) satisfy them.
 */

/** Captured output of a stream, capped at a size in bytes; `bytes` is the total written. */
export interface CappedStream {
  data: Uint8Array;
  bytes: number;
  truncated: boolean;
}

/** A database error WordPress recorded during a request (`$EZSQL_ERROR`), message as plain text. */
export interface DbError {
  query: string;
  message: string;
}

/** A fatal error as `error_get_last()` gives it. */
export interface PhpFatal {
  type: number;
  message: string;
  file: string;
  line: number;
}

/** One PHP program run to its end. */
export interface PhpRunResult {
  exitCode: number;
  stdout: CappedStream;
  stderr: CappedStream;
  /** `error_get_last()` of a fatal error, when the script died of one. */
  fatal?: PhpFatal;
  /** Database errors the script caused, in order. */
  dbErrors?: DbError[];
}

/** One HTTP request served by the site. */
export interface PhpHttpResult {
  status: number;
  /** Response headers, lower-case names, each with its values in order. */
  headers: Record<string, string[]>;
  body: CappedStream;
  /** The fatal error the request died of, if any (the status is then 500 when nothing was sent yet). */
  fatal?: PhpFatal;
  /** Database errors the request caused, in order. */
  dbErrors?: DbError[];
}
