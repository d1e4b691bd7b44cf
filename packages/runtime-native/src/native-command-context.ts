/**
 * The native backend's `CommandContext`: what the shared command handlers of `@wp-codebox/commands`
 * (state export, abilities, phpunit, inspect-mounted-inputs, browser actions and probes, the plugin
 * check) and the observations use of a native sandbox. A handler's
 * PHP program runs through the warm PHP server's runner as a file of its own (it loads WordPress
 * itself); its HTTP requests go to the sandbox's web server; files are read and written through
 * the binds the sandbox's PHP sees, so a sandbox path means the same file inside and out.
 */
import { dirname, join, posix } from "node:path";
import {
  WpCodeboxError,
  OBSERVATION_TYPES,
  abortReasonText,
  fatalFromPhpOutput,
  quoteValue,
  serializeError,
  type ArtifactFile,
  type DbErrorRecord,
  type ExecutionError,
  type ExecutionResult,
  type ResolvedMount,
  type RuntimeInfo,
  type RuntimePolicy,
  type TestCounts,
} from "@wp-codebox/runtime-core";
import {
  actionSummaryFile,
  assertionsBlock,
  mergeBundleFiles,
  testsBlock,
  type AssertionsBlock,
  outcomeFromRun,
  phpProgram,
  phpValue,
  withFatalRecorder,
  type Actor,
  type ActorAuth,
  type CommandContext,
  type CommandHandler,
  type CommandOutcome,
  type CappedStream,
  type PhpFatal,
  type PhpHttpResult,
  type PhpRunResult,
  type TestDatabase,
  type WpCliPharSource,
} from "@wp-codebox/commands";
import type { Bind } from "./bubblewrap.js";
import type { CapturedStream, ProcessOutcome } from "./confined-process.js";
import { SANDBOX_PATHS, giveOneToSandbox, phpBinds, type SiteLayout } from "./native-site.js";
import { startPhp, type PhpRun } from "./native-php.js";
import { SITE_DATABASE } from "./native-config.js";
import { readSandboxFile, readSandboxFile as readFileInSandbox, removeSandboxPath, writeSandboxFile as writeFileInSandbox } from "./sandbox-files.js";

/** The most a shared handler reads back of one file the sandbox wrote (bytes). */
const SANDBOX_FILE_READ_BYTES = 512 << 20;

/** The database the WordPress core test library is pointed at: WordPress's own (the sandbox's MariaDB, WordPress's account). */
export const NATIVE_TEST_DATABASE: TestDatabase = SITE_DATABASE;

/** One request to the site: absolute URL (only path and query count), lower-case header names. */
export interface NativeSiteRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** What the context uses of its `NativeRuntime` (the runtime hands over its private parts). */
export interface NativeContextHost {
  info(): RuntimeInfo;
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  cwd: string;
  layout: SiteLayout;
  treeDir: string;
  /** The caller's mounts as binds, in the array the PHP processes start with: `mountReadOnly` appends to it. */
  binds: Bind[];
  outputCapBytes: number;
  secrets: readonly string[];
  wpCli: WpCliPharSource;
  siteUrl: string;
  loopbackUrl: string;
  /**
   * Runs a PHP file of the sandbox in a confined PHP process of its own (started for it: a real
   * command line with its standard streams, which PHPUnit needs), with `env` added to the sandbox's
   * environment; killed when `signal` aborts.
   */
  runFile(file: string, capBytes: number, env: Record<string, string>, signal: AbortSignal): Promise<{ process: ProcessOutcome; stopped?: "interrupted" }>;
  /** One request to the site's web server. */
  http(request: NativeSiteRequest, options: { siteRequestLimit?: boolean }): Promise<{ status: number; headers: Record<string, string[]>; body: CappedStream; fatal?: PhpFatal; dbErrors: DbErrorRecord[] }>;
  /** The database errors the last runner run recorded, then forgets them. */
  takeDbErrors(): DbErrorRecord[];
  /** Stops the warm PHP processes so the next run starts with the binds as they are now. */
  restartPhp(): void;
  /** Kills php-cgi (every site request in it ends; the next request starts it again). */
  stopSiteRequests(): void;
  /** Next free bundle folder `files/observations/<prefix>-<0001>`. */
  nextArtifactDirectory(prefix: string): string;
  /** Screenshot names already in the bundle. */
  reservedScreenshotNames(): string[];
  /** Records an event (`php-process-killed` when a deadline stops a run). */
  event(type: string, data?: Record<string, unknown>): void;
}

/**
 * The fatal error a runner run died of: what the shutdown recorder wrote to `last-error.json`, else
 * what PHP printed (exit 255), else PHP's own "Out of memory" (the sandbox's address-space limit,
 * hit before any handler could run; exit 1).
 */
export function runFatal(internalDir: string, run: ProcessOutcome, stdout: string, stderr: string, fromOutput: (output: string) => PhpFatal | undefined): PhpFatal | undefined {
  let fatal: PhpFatal | undefined;
  try {
    // Written by the sandbox's PHP: read without following a link or waiting on a FIFO it left there.
    fatal = JSON.parse(readSandboxFile(internalDir, "last-error.json", 1 << 20)?.data.toString("utf8") ?? "") as PhpFatal;
  } catch {
    fatal = run.exitCode === 255 ? fromOutput(`${stderr}\n${stdout}`) : undefined;
  }
  if (!fatal && run.exitCode === 1 && /(?:^|\n)Out of memory\n?$/.test(stderr)) {
    fatal = { message: "Out of memory: PHP could not map more memory (the sandbox's memory limit) and stopped before any error handler ran, so there is no file and line", file: "", line: 0, type: 1 };
  }
  return fatal;
}

/**
 * Runs one confined PHP process (`startPhp`) to its end, or until `signal` aborts (it is killed).
 * @returns the outcome (what it printed until then when stopped) and `stopped` when killed.
 */
export async function runConfinedPhp(run: PhpRun, signal: AbortSignal): Promise<{ process: ProcessOutcome; stopped?: "interrupted" }> {
  const child = startPhp(run);
  let stopped: "interrupted" | undefined;
  const onAbort = () => {
    stopped = "interrupted";
    child.kill();
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  try {
    const done = await child.done;
    return { process: stopped ? { ...done, ...child.partial() } : done, ...(stopped ? { stopped } : {}) };
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** How long a stopped command's handler may take to end before its sandbox's PHP processes are stopped (ms). */
export const STOP_GRACE_MS = 5_000;

/** True when `promise` settles (either way) within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Thrown into a handler whose command was stopped (deadline, interrupt): nothing more runs for it. */
export class CommandStoppedError extends Error {
  constructor() {
    super("The command was stopped; its PHP runs were killed.");
  }
}

/**
 * One execution's context. `stop()` kills the run in flight and refuses any later one, so a
 * handler past its deadline cannot go on in the background.
 */
export class NativeCommandContext implements CommandContext {
  readonly policy: RuntimePolicy;
  readonly mounts: ResolvedMount[];
  readonly cwd: string;
  readonly wpCli: WpCliPharSource;
  readonly updateBaselines = false;
  readonly outputCapBytes: number;
  readonly siteUrl: string;
  readonly secrets: readonly string[];
  readonly testDatabase = NATIVE_TEST_DATABASE;
  /** Database errors of every run and request this execution made, in order. */
  readonly dbErrors: DbErrorRecord[] = [];
  private readonly stopper = new AbortController();
  private adminUserId: number | undefined;
  private readonly authCache = new Map<number, ActorAuth>();
  private clockKey = 0;
  private running: Promise<unknown> = Promise.resolve();
  /** Aborts the run in flight (a `withDeadline` limit). */
  private current: AbortController | undefined;
  /** Set while a `withDeadline` limit that passed waits for its work to end: its runs are refused. */
  private windowClosed = false;
  /** The run in flight (for a deadline's partial output). */
  private partial: { stdout: CapturedStream; stderr: CapturedStream } | undefined;

  constructor(private readonly host: NativeContextHost, readonly executionId: string) {
    this.policy = host.policy;
    this.mounts = host.mounts;
    this.cwd = host.cwd;
    this.wpCli = host.wpCli;
    this.outputCapBytes = host.outputCapBytes;
    this.siteUrl = host.siteUrl;
    this.secrets = host.secrets;
  }

  info(): RuntimeInfo {
    return this.host.info();
  }

  get loopbackUrl(): string {
    return this.host.loopbackUrl;
  }

  /**
   * Kills the run in flight and refuses later ones; resolves when the killed run has ended, or
   * after `STOP_GRACE_MS`, when every PHP process of the sandbox (warm server, php-cgi) is stopped.
   */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.current?.abort();
    if (!(await settlesWithin(this.running, STOP_GRACE_MS))) {
      this.host.restartPhp();
      this.host.stopSiteRequests();
    }
  }

  /** What the run in flight (or the last one) printed, for a result stopped at its deadline. */
  printed(): { stdout: CapturedStream; stderr: CapturedStream } | undefined {
    return this.partial;
  }

  private assertRunning(): void {
    if (this.stopper.signal.aborted || this.windowClosed) throw new CommandStoppedError();
  }

  /**
   * Runs a whole PHP program (it starts with `<?php` and loads WordPress itself when it needs it)
   * as a file of the sandbox, in a PHP process of its own; `env` is added to its environment.
   * @throws CommandStoppedError once the command was stopped.
   */
  async runPhp(code: string, options: { env?: Record<string, string> } = {}): Promise<PhpRunResult> {
    this.assertRunning();
    const name = `ctx-${this.executionId}.php`;
    const file = `${SANDBOX_PATHS.internal}/code/${name}`;
    await this.writeSandboxFile(file, code);
    // Stopped while the file was written: the abort listener below would never fire.
    this.assertRunning();
    removeSandboxPath(this.host.layout.internal, "last-error.json");
    const controller = new AbortController();
    this.current = controller;
    const onStop = () => controller.abort();
    this.stopper.signal.addEventListener("abort", onStop, { once: true });
    const ran = this.host.runFile(file, this.outputCapBytes, options.env ?? {}, controller.signal);
    this.running = ran;
    try {
      const { process: run, stopped } = await ran;
      this.partial = { stdout: run.stdout, stderr: run.stderr };
      const dbErrors = this.host.takeDbErrors();
      this.dbErrors.push(...dbErrors);
      if (stopped) {
        this.host.event("php-process-killed", { reason: stopped });
        throw new CommandStoppedError();
      }
      const stdout = run.stdout.data.toString("utf8");
      const stderr = run.stderr.data.toString("utf8");
      const fatal = runFatal(this.host.layout.internal, run, stdout, stderr, fatalFromPhpOutput);
      // A run killed by a signal (the file size limit) is an exit PHP never reported: 128 as the CLI says.
      const exitCode = run.signal && !fatal ? 128 : run.exitCode;
      return { exitCode, stdout: run.stdout, stderr: run.stderr, ...(fatal ? { fatal } : {}), ...(dbErrors.length ? { dbErrors } : {}) };
    } finally {
      this.stopper.signal.removeEventListener("abort", onStop);
      removeSandboxPath(this.host.layout.internal, `code/${name}`);
    }
  }

  /** One request to the site's web server (php-cgi); `siteRequestLimit` applies the site request limit. */
  async http(request: NativeSiteRequest, options: { siteRequestLimit?: boolean } = {}): Promise<PhpHttpResult> {
    this.assertRunning();
    const response = await this.host.http(request, { siteRequestLimit: options.siteRequestLimit === true });
    this.dbErrors.push(...response.dbErrors);
    return { status: response.status, headers: response.headers, body: response.body, ...(response.fatal ? { fatal: response.fatal } : {}), ...(response.dbErrors.length ? { dbErrors: response.dbErrors } : {}) };
  }

  /**
   * One request to the site, like `http` (php-cgi serves requests side by side). Past `deadlineMs`
   * php-cgi is killed (the requests in it end; the next one starts it again) and the answer is
   * given up.
   * @throws WpCodeboxError `timeout`.
   */
  async httpParallel(request: NativeSiteRequest, options: { deadlineMs: number }): Promise<PhpHttpResult> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.host.stopSiteRequests();
        reject(new WpCodeboxError("timeout", `${request.method} ${request.url}: no answer within ${options.deadlineMs} ms.`, { timeoutMs: options.deadlineMs }));
      }, options.deadlineMs);
    });
    try {
      return await Promise.race([this.http(request), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** php-cgi runs requests side by side already: no extra workers to boot. @returns `total`. */
  parallelWorkers(total: number): number {
    return Math.max(1, total);
  }

  /** Runs an internal helper program (fatal recorder added) and returns the JSON it printed. @throws `php-error`. */
  private async phpJson(program: string): Promise<unknown> {
    const outcome = outcomeFromRun(await this.runPhp(withFatalRecorder(program)));
    if (outcome.status !== "ok" || outcome.json === undefined) {
      throw new WpCodeboxError("php-error", `Internal PHP helper failed: ${outcome.error?.message ?? outcome.stdout.slice(0, 300)}`);
    }
    return outcome.json;
  }

  /** The id of the administrator (`ref` null), of user id `ref` (digits) or of login `ref`; 0 when there is none. */
  private async userId(ref: string | null): Promise<number> {
    return ((await this.phpJson(phpProgram({ wp_codebox_user_ref: phpValue(ref, "as=user:") }, "actors/admin-user.php", "actors/resolve-user.php"))) as { id: number }).id;
  }

  /**
   * `admin` (default: the `admin` user, else the first administrator), `anonymous` (user 0),
   * `user:<id>` or `user:<login>`.
   * @throws `invalid-argument` for another form or a user that does not exist.
   */
  async resolveActor(as: string | undefined): Promise<Actor> {
    const value = as ?? "admin";
    if (value === "anonymous") return { userId: 0, label: "anonymous" };
    if (value === "admin") {
      this.adminUserId ??= await this.userId(null);
      return { userId: this.adminUserId, label: "admin" };
    }
    const m = value.includes("\0") ? null : /^user:(.+)$/.exec(value);
    if (!m) throw new WpCodeboxError("invalid-argument", `as=${quoteValue(value)} is not valid: use admin, anonymous, user:<id> or user:<login>.`);
    const id = await this.userId(m[1]!);
    if (!id) throw new WpCodeboxError("invalid-argument", `as=${quoteValue(value)}: no such WordPress user. Create it first (wp_insert_user) or use as=admin.`);
    return { userId: id, label: value };
  }

  /** Auth cookies and a `wp_rest` nonce for `actor` (a new session token; cached for this execution). */
  async authFor(actor: Actor): Promise<ActorAuth> {
    const cached = this.authCache.get(actor.userId);
    if (cached) return cached;
    const auth = (await this.phpJson(phpProgram({ wp_codebox_user_id: phpValue(actor.userId) }, "actors/auth-cookies.php"))) as ActorAuth;
    this.authCache.set(actor.userId, auth);
    return auth;
  }

  /** The user `phpWrapper` switches to: `"admin"` (looked up by the wrapper itself) or an id. */
  async wrapperUser(as: string | undefined): Promise<number | "admin"> {
    const value = as ?? "admin";
    if (value === "admin") return this.adminUserId ?? "admin";
    return (await this.resolveActor(value)).userId;
  }

  /**
   * Runs `work` against a limit in ms (0 = none): past it the PHP run in flight is killed and
   * `{ done: false }` comes back; the sandbox lives on.
   */
  async withDeadline<T>(timeoutMs: number, work: () => Promise<T>): Promise<{ done: true; value: T } | { done: false }> {
    if (timeoutMs <= 0) return { done: true, value: await work() };
    let timer: NodeJS.Timeout | undefined;
    let passed = false;
    const limit = new Promise<"passed">((resolve) => {
      timer = setTimeout(() => {
        passed = true;
        resolve("passed");
      }, timeoutMs);
    });
    const running = work();
    try {
      const winner = await Promise.race([running.then((value) => ({ value })), limit]);
      if (winner !== "passed") return { done: true, value: winner.value };
      // Kill what runs now (a PHP run, or the site requests in php-cgi) and refuse the work's next
      // runs: its promise ends with CommandStoppedError or the killed request's failure.
      this.windowClosed = true;
      this.current?.abort();
      this.host.stopSiteRequests();
      try {
        await running.catch(() => undefined);
      } finally {
        this.windowClosed = false;
      }
      return { done: false };
    } catch (error) {
      if (passed) return { done: false };
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The host path of a sandbox path: through the caller's mounts and what `mountReadOnly` added
   * (the deepest target that holds it), then the sandbox's own binds (wp-content, internal files,
   * WordPress read-only).
   * @returns `{ hostPath, root (the bind's host folder), relative (below it), readOnly }`, or undefined for a path no bind holds.
   */
  private hostPathOf(path: string): { hostPath: string; root: string; relative: string; readOnly: boolean } | undefined {
    const normal = posix.normalize(path);
    if (!normal.startsWith("/") || normal.split("/").includes("..")) return undefined;
    const binds = [...this.host.binds, ...phpBinds(this.host.layout, this.host.treeDir)];
    let best: Bind | undefined;
    for (const bind of binds) {
      if (normal !== bind.target && !normal.startsWith(`${bind.target.replace(/\/$/, "")}/`)) continue;
      if (!best || bind.target.length > best.target.length) best = bind;
    }
    if (!best) return undefined;
    return { hostPath: normal === best.target ? best.source : join(best.source, posix.relative(best.target, normal)), root: best.source, relative: posix.relative(best.target, normal), readOnly: best.readOnly };
  }

  /**
   * Writes a file of the sandbox (folders made as needed, owned by the sandbox's user).
   * @throws WpCodeboxError `invalid-argument` for a path outside the sandbox's writable binds.
   */
  async writeSandboxFile(path: string, data: string | Uint8Array): Promise<void> {
    const target = this.hostPathOf(path);
    if (!target || target.readOnly || target.relative === "") throw new WpCodeboxError("invalid-argument", `${path} is not a writable path of the native sandbox (wp-content, ${SANDBOX_PATHS.internal}, read-write mounts).`, { path });
    // The sandbox's PHP may have left links or FIFOs on the way: written without following any
    // (folders made here belong to the sandbox's user, as the files PHP itself makes).
    writeFileInSandbox(target.root, target.relative, data, this.host.layout.uid);
  }

  /** Reads a regular file of the sandbox (never through a link the sandbox left; at most 512 MiB); null when there is none (or no bind holds it). */
  async readSandboxFile(path: string): Promise<Uint8Array | null> {
    const target = this.hostPathOf(path);
    if (!target || target.relative === "") return null;
    try {
      return readFileInSandbox(target.root, target.relative, SANDBOX_FILE_READ_BYTES)?.data ?? null;
    } catch {
      return null;
    }
  }

  /**
   * Makes a host folder readable at `vfsPath` for the rest of this runtime's life: a read-only
   * bind that the PHP processes started from now on get (the warm ones are restarted). Binding
   * the same `vfsPath` again is a no-op.
   */
  async mountReadOnly(hostPath: string, vfsPath: string): Promise<void> {
    if (this.host.binds.some((b) => b.target === vfsPath)) return;
    this.host.binds.push({ source: hostPath, target: vfsPath, readOnly: true });
    this.host.restartPhp();
  }

  /** Host time: the native backend has no virtual clock or seed. */
  browserClock(): { nowMs?: number; seed?: number; key: number } {
    return { key: ++this.clockKey };
  }

  reservedScreenshotNames(): string[] {
    return this.host.reservedScreenshotNames();
  }

  nextArtifactDirectory(prefix: string): string {
    return this.host.nextArtifactDirectory(prefix);
  }
}

/**
 * The shared catalog commands that run on the native backend through this context (for the rest of
 * `COMMAND_HANDLERS` it has its own: run-php, http-request, rest-request; wp-cli is not shared).
 */
export const NATIVE_SHARED_COMMANDS: readonly string[] = Object.freeze(["wordpress.state-export", "inspect-mounted-inputs", "wordpress.ability", "wordpress.phpunit", "wordpress.browser-probe", "wordpress.browser-actions", "wordpress.check"]);

/** Observation types the native runtime answers: all of them (`observeRuntime`, shared with Playground). */
export const NATIVE_OBSERVATION_TYPES: readonly string[] = OBSERVATION_TYPES;

/** What the shared commands and observations added to a native runtime's bundle, by execution id. */
export class NativeCommandEvidence {
  private readonly byExecution = new Map<string, { files: ArtifactFile[]; tests?: TestCounts; assertions?: AssertionsBlock }>();
  private readonly observationFiles: ArtifactFile[] = [];
  private readonly directories = new Map<string, number>();

  /** Keeps a command's files, test counts and browser assertions. */
  record(executionId: string, outcome: CommandOutcome): void {
    if (!outcome.files?.length && !outcome.tests && !outcome.assertions) return;
    this.byExecution.set(executionId, { files: outcome.files ?? [], ...(outcome.tests ? { tests: outcome.tests } : {}), ...(outcome.assertions ? { assertions: outcome.assertions } : {}) });
  }

  /** Keeps files an observation wrote (WordPress state sections). */
  addObservationFiles(files: readonly ArtifactFile[]): void {
    this.observationFiles.push(...files);
  }

  /** Next free bundle folder `files/observations/<prefix>-<0001>`. */
  nextDirectory(prefix: string): string {
    const n = (this.directories.get(prefix) ?? 0) + 1;
    this.directories.set(prefix, n);
    return `files/observations/${prefix}-${String(n).padStart(4, "0")}`;
  }

  /** Screenshot names already used (none is overwritten). */
  screenshotNames(): string[] {
    return [...this.byExecution.values()].flatMap((e) => e.files).filter((f) => f.kind === "browser-screenshot").map((f) => f.path.replace(/^files\/browser\/screenshot-/, "").replace(/\.png$/, ""));
  }

  /** The files one execution wrote. */
  filesOf(executionId: string): ArtifactFile[] {
    return this.byExecution.get(executionId)?.files ?? [];
  }

  /**
   * The bundle's part of `results` (every command's, or a selection's): their files (a `.jsonl`
   * several wrote appended to; with no selection, the observations' files too), with browser
   * assertions the action summary, and the review blocks.
   */
  collect(results: readonly ExecutionResult[], selection: boolean): { files: ArtifactFile[]; review?: { assertions?: AssertionsBlock; tests?: TestCounts } } {
    const files: ArtifactFile[] = [];
    const assertionList: AssertionsBlock[] = [];
    const testList: TestCounts[] = [];
    for (const result of results) {
      const added = this.byExecution.get(result.id);
      if (!added) continue;
      mergeBundleFiles(files, added.files);
      if (added.assertions) assertionList.push(added.assertions);
      if (added.tests) testList.push(added.tests);
    }
    if (!selection) mergeBundleFiles(files, this.observationFiles);
    const assertions = assertionsBlock(assertionList);
    if (assertions) files.push(actionSummaryFile(results, assertions));
    const tests = testsBlock(testList);
    return { files, ...(assertions || tests ? { review: { ...(assertions ? { assertions } : {}), ...(tests ? { tests } : {}) } } : {}) };
  }
}

/**
 * Runs a shared handler against the command's deadline (ms, 0 = none) and the caller's signal.
 * Either one stops it: the PHP run in flight is killed, later ones are refused, and the result is
 * `timed-out` (exit 124, error `timeout` or `interrupted`) with what that run had printed.
 * @returns the outcome and the database errors of every run and request the handler made.
 * @throws the handler's WpCodeboxError (contract misuse: nothing or part of it ran).
 */
export async function runSharedCommand(
  ctx: NativeCommandContext,
  handler: CommandHandler,
  command: string,
  args: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<{ outcome: CommandOutcome | (Omit<CommandOutcome, "status"> & { status: "timed-out" }); dbErrors: DbErrorRecord[] }> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let stopped: "timeout" | "interrupted" | undefined;
  const stop = new Promise<"stopped">((resolve) => {
    if (timeoutMs > 0) timer = setTimeout(() => { stopped ??= "timeout"; resolve("stopped"); }, timeoutMs);
    if (signal) {
      onAbort = () => { stopped ??= "interrupted"; resolve("stopped"); };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  const work = handler(ctx, args).then((outcome) => ({ outcome }), (error: unknown) => ({ error }));
  try {
    const winner = await Promise.race([work, stop]);
    if (winner === "stopped") {
      await ctx.stop();
      // Its next PHP run is refused; a handler waiting on something else gets a grace period, not forever.
      await settlesWithin(work, STOP_GRACE_MS);
      const printed = ctx.printed();
      const out = (s: CapturedStream | undefined) => (s ? s.data.toString("utf8") : "");
      const error: ExecutionError = stopped === "interrupted"
        ? { code: "interrupted", message: `${command}: stopped by the caller before it finished (${abortReasonText(signal)}). Its PHP process was killed; the sandbox keeps running.`, data: { reason: abortReasonText(signal) } }
        : { code: "timeout", message: `${command}: Timeout ${timeoutMs}ms exceeded. Its PHP process was killed; the sandbox keeps running. Raise --timeout if the work needs longer.`, data: { timeoutMs } };
      return { outcome: { status: "timed-out", exitCode: 124, stdout: out(printed?.stdout), stderr: out(printed?.stderr), stdoutBytes: printed?.stdout.bytes ?? 0, stderrBytes: printed?.stderr.bytes ?? 0, error }, dbErrors: ctx.dbErrors };
    }
    if ("error" in winner) {
      if (winner.error instanceof WpCodeboxError) throw winner.error;
      const serialized = serializeError(winner.error);
      return { outcome: { status: "error", exitCode: 1, stdout: "", stderr: "", error: { code: serialized.code, message: serialized.message } }, dbErrors: ctx.dbErrors };
    }
    return { outcome: winner.outcome, dbErrors: ctx.dbErrors };
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
