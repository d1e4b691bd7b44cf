import type { ArtifactFile, ExecutionResult, ResolvedMount, RuntimeArtifacts, RuntimeInfo, RuntimePolicy, TestCounts } from "@wp-codebox/runtime-core";
import type { PhpHttpResult, PhpRunResult } from "./php-results.js";

/** Where `wordpress.wp-cli` looks for wp-cli.phar, in this order: the flag, the env variable, the cache. */
export interface WpCliPharSource {
  /** `--wp-cli-phar PATH` (or `RuntimeCreateSpec.wpCliPhar`). */
  flag?: string;
  /** Value of `WP_CODEBOX_WP_CLI_PHAR`; default read from `process.env` at execution time. */
  env?: string;
  /** The wp-codebox cache directory. */
  cacheDir?: string;
}

/** Who a command acts as: a WordPress user id (0 = anonymous). */
export type Actor = { userId: number; label: string };

/** WordPress auth for an actor: cookies for the sandbox origin plus a `wp_rest` nonce. */
export interface ActorAuth {
  cookies: { name: string; value: string }[];
  restNonce: string;
}

/** The database `wp-tests-config.php` names for the WordPress core test library (its `DB_*` constants). */
export interface TestDatabase {
  name: string;
  user: string;
  password: string;
  /** `DB_HOST`: a host, or `localhost:/path/to/socket`. */
  host: string;
  charset: string;
}

/** What a command handler may use; implemented by each backend (Playground, native). */
export interface CommandContext {
  info(): RuntimeInfo;
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  cwd: string;
  /** Where `wordpress.wp-cli` looks for wp-cli.phar. */
  wpCli: WpCliPharSource;
  /** `--update-baselines`: screenshot steps with `compare` write their baseline instead of comparing. */
  updateBaselines: boolean;
  outputCapBytes: number;
  /**
   * The database `wordpress.phpunit` points the WordPress core test library at: the sandbox's own
   * (Playground's SQLite ignores the names; the native backend's MariaDB is reached over its socket).
   */
  testDatabase: TestDatabase;
  runPhp(code: string, options?: { env?: Record<string, string> }): Promise<PhpRunResult>;
  /**
   * One HTTP request served by the primary worker. With `siteRequestLimit`, the site request limit
   * applies (as to a browser's request): past it the worker is replaced and the answer is a 504
   * with a fatal error that names the limit. Without it only the command's own deadline applies
   * (`wordpress.check` times its surfaces itself).
   */
  http(request: { method: string; url: string; headers: Record<string, string>; body?: Uint8Array }, options?: { siteRequestLimit?: boolean }): Promise<PhpHttpResult>;
  /**
   * One HTTP request served by whichever PHP worker is idle, so requests a command makes at the
   * same time run in parallel on the workers `parallelWorkers` booted (on the primary alone until
   * they joined). Unlike `http`, it does not wait for the background requests of earlier work:
   * the caller settles before a batch (any `runPhp` does). Past `deadlineMs` (ms) the worker
   * serving it is stopped and replaced on the same files.
   * @throws WpCodeboxError `timeout` when the deadline passed.
   */
  httpParallel(request: { method: string; url: string; headers: Record<string, string>; body?: Uint8Array }, options: { deadlineMs: number }): Promise<PhpHttpResult>;
  /**
   * Boots extra PHP workers in the background (about 150 MB each) so that `total` workers, the
   * primary included, serve `httpParallel`; capped at the machine's available cores.
   * @returns how many workers will serve (1 on a one-core machine).
   */
  parallelWorkers(total: number): number;
  /** Resolves `admin` / `anonymous` / `user:<id|login>` to a user id. @throws invalid-argument */
  resolveActor(as: string | undefined): Promise<Actor>;
  authFor(actor: Actor): Promise<ActorAuth>;
  /** What `phpWrapper` takes as `user` for `as`: a user id, or "admin" when the wrapper can look the administrator up itself. @throws invalid-argument */
  wrapperUser(as: string | undefined): Promise<number | "admin">;
  /**
   * Runs `work` (PHP requests) against a limit in ms. When it passes, the primary PHP worker is
   * stopped and replaced on the same files (PHP cannot be interrupted from inside), the call in
   * flight fails, and `{ done: false }` comes back; the runtime goes on with the new worker.
   * @throws what `work` throws before the limit.
   */
  withDeadline<T>(timeoutMs: number, work: () => Promise<T>): Promise<{ done: true; value: T } | { done: false }>;
  writeSandboxFile(path: string, data: string | Uint8Array): Promise<void>;
  /** Reads a file of the sandbox's filesystem; null when it does not exist. */
  readSandboxFile(path: string): Promise<Uint8Array | null>;
  /**
   * Makes a host folder readable (never writable) at `vfsPath` for the rest of this runtime's life,
   * also in workers booted later. Mounting the same `vfsPath` again is a no-op.
   */
  mountReadOnly(hostPath: string, vfsPath: string): Promise<void>;
  /** The site's origin as WordPress knows it (stable `http://wp-codebox.test` or the loopback origin). */
  siteUrl: string;
  /** The loopback server (`http://127.0.0.1:PORT`) that serves `siteUrl`; equal to it with the loopback origin. */
  loopbackUrl: string;
  /** Virtual time now (ms; undefined with host time), the seed, and a per-command key for page `Math.random`. */
  browserClock(): { nowMs?: number; seed?: number; key: number };
  /** Id of the execution this handler serves (`exec-…`). */
  executionId: string;
  /** Screenshot names already used in this runtime's bundle (never overwritten). */
  reservedScreenshotNames(): string[];
  /** Secret values of this runtime (to redact from files a command writes before hashing them). */
  secrets: readonly string[];
  /** Next free bundle folder `files/observations/<prefix>-<0001>` for a command's artifacts. */
  nextArtifactDirectory(prefix: string): string;
}

/**
 * What a handler returns: the output fields of an `ExecutionResult` (the runtime adds ids, timing
 * and the command echo), plus bundle files and browser assertions.
 */
export type CommandOutcome = Pick<ExecutionResult, "exitCode" | "stdout" | "stderr" | "stdoutBytes" | "stderrBytes" | "truncated" | "json" | "error"> & {
  status: "ok" | "error";
  files?: ArtifactFile[];
  /** Browser assertions of this command, aggregated into the bundle's review. */
  assertions?: NonNullable<RuntimeArtifacts["review"]>["assertions"];
  /** Test counts of this command (wordpress.phpunit), summed into the bundle's review. */
  tests?: TestCounts;
};

export type CommandHandler = (ctx: CommandContext, args: Record<string, string>) => Promise<CommandOutcome>;

const decoder = new TextDecoder();
/**
 * Decodes captured bytes as UTF-8. Capped output already ends at a complete character (the worker
 * cuts it there), so U+FFFD only stands for bytes the program printed that are not UTF-8.
 */
export function text(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Parses text as JSON when it is a JSON object or array; otherwise undefined. */
export function parseJsonMaybe(value: string): unknown {
  const t = value.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}
