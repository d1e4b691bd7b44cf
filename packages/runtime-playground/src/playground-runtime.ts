/**
 * A live WordPress Playground sandbox: a PHP worker thread with WordPress booted from the
 * installed-site cache, a per-sandbox copy of wp-content, the caller's mounts, and a loopback HTTP
 * server. Timeouts terminate the worker and boot a replacement on the same files.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import {
  DEFAULT_OUTPUT_CAP_BYTES,
  WpCodeboxError,
  assertCapability,
  getCommandDefinition,
  isBrowserCommand,
  SITE_HTTP_RESPONSE_CAP_BYTES,
  WORKER_BOOT_GRACE_MS,
  parseCommandArgs,
  serializeError,
  type ArtifactFile,
  type ArtifactSpec,
  type ExecutionResult,
  type ExecutionSpec,
  type ResolvedMount,
  type Runtime,
  type RuntimeArtifacts,
  type RuntimeEvent,
  type RuntimeInfo,
  type RuntimePolicy,
} from "@wp-codebox/runtime-core";
import { MessageChannel } from "node:worker_threads";
import { FileLockManagerInMemory, exposeSyncAPI } from "@php-wasm/universal";
import { PhpWorkerHost, WorkerGoneError } from "./php-worker-host.js";
import { removeSandboxDir, sandboxTempBase, trackSandboxDir } from "./sandbox-dirs.js";
import type { DbError, WorkerBootOptions, WorkerHttpResult, WorkerMount, WorkerRunResult } from "./php-worker-protocol.js";
import { startSandboxHttpServer, type SandboxHttpServer } from "./sandbox-http-server.js";
import type { Actor, ActorAuth, CommandContext, CommandHandler, CommandOutcome } from "./commands/command-context.js";
import { runPhp, outcomeFromRun, FATAL_RECORDER } from "./commands/run-php.js";
import { httpRequest } from "./commands/http-request.js";
import { restRequest } from "./commands/rest-request.js";
import { inspectMountedInputs } from "./commands/inspect-mounted-inputs.js";
import { browserActions, browserProbe } from "./commands/browser-actions.js";
import { stateExport } from "./commands/state-export.js";
import { RuntimeLock } from "./runtime-lock.js";
import { ContentSync } from "./content-sync.js";
import { observePlayground, type PlaygroundObservation } from "./observations.js";
import { applySnapshot, captureSnapshot, readDatabase, resetContent, type RuntimeStateHost } from "./runtime-state.js";
import { assertRuntimeSnapshot, runtimeSnapshotBundleFiles, type ObservationSpec, type WordPressRuntimeSnapshot } from "@wp-codebox/runtime-core";
import { wpCli, type WpCliPharSource } from "./commands/wp-cli.js";
import { phpunit } from "./commands/phpunit.js";
import type { TestCounts } from "@wp-codebox/runtime-core";
import { phpValue } from "./php-value.js";
import { pluginCheck } from "./commands/plugin-check.js";
import { STABLE_SITE_ORIGIN, type RuntimeDeterminism } from "@wp-codebox/runtime-core";
import { WorkClock } from "./work-clock.js";
import { PHP_FATAL_HEADER } from "./browser/browser-script-outcome.js";

/** Handlers by command id; commands in the catalog without a handler here report so. */
const HANDLERS: Record<string, CommandHandler> = {
  "wordpress.run-php": runPhp,
  "wordpress.http-request": httpRequest,
  "wordpress.rest-request": restRequest,
  "inspect-mounted-inputs": inspectMountedInputs,
  "wordpress.browser-actions": browserActions,
  "wordpress.browser-probe": browserProbe,
  "wordpress.state-export": stateExport,
  "wordpress.wp-cli": wpCli,
  "wordpress.phpunit": phpunit,
  "wordpress.check": pluginCheck,
};

/** Default wall-clock limit of a command when the caller gives none: the catalog's `defaultTimeoutMs`. */
function defaultTimeoutMs(command: string): number {
  return getCommandDefinition(command).defaultTimeoutMs;
}

/** Everything the backend resolved before boot. */
export interface PlaygroundRuntimeSetup {
  siteDir: string;
  opcacheSeedDir?: string;
  wordpressRelease: string;
  /** Set when WordPress came from a release mirror (`--wp` beyond the bundled builds). */
  wordpressSource?: { requested: string; release: string; checksum: { algorithm: string; value: string; url: string }; fetched: boolean };
  phpVersion: string;
  bootMode: "installed" | "cached";
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  plugins: string[];
  themes: string[];
  env: Record<string, string>;
  secretEnv: Record<string, string>;
  siteOptions: Record<string, string>;
  sqliteZipPath: string;
  constants: Record<string, string | number | boolean | null>;
  cwd: string;
  outputCapBytes?: number;
  /** Where `wordpress.wp-cli` looks for wp-cli.phar (flag, then env, then cache dir). */
  wpCli?: WpCliPharSource;
  /** PHP workers serving HTTP in parallel (browser traffic); 1 = a single worker (default). */
  workers?: number;
  /** Clock, seed and origin (resolved by `resolveDeterminism`); default real clock, host entropy, loopback origin. */
  determinism?: RuntimeDeterminism;
  onProgress?: (message: string) => void;
}

/** Path of the one-click login URL on the sandbox's own origin (see `loginUrl()`). */
const LOGIN_PATH = "/__wp-codebox/login";

/** The page WordPress shows for a fatal error (wp_die's default message), for empty fatal responses. */
const CRITICAL_ERROR_PAGE = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>WordPress &rsaquo; Error</title></head><body><p>There has been a critical error on this website.</p></body></html>\n";

function nowIso(): string {
  return new Date().toISOString();
}

export class PlaygroundRuntime implements Runtime {
  readonly id = `runtime-${randomUUID()}`;
  /** Primary worker: commands, internal helpers and HTTP. */
  private host!: PhpWorkerHost;
  /** Extra workers that share HTTP traffic (joined once booted). They share one file-lock manager. */
  private readonly extraHosts: PhpWorkerHost[] = [];
  private readonly lockManager = new FileLockManagerInMemory();
  private extraWorkersStarted = false;
  private readonly bootingExtras: Promise<void>[] = [];
  private server!: SandboxHttpServer;
  private sandboxDir!: string;
  private workerMounts: WorkerMount[] = [];
  private nextProcessId = 1;
  private disposed = false;
  private bootDurationMs = 0;
  private readonly results: ExecutionResult[] = [];
  private readonly events: RuntimeEvent[] = [];
  private readonly files: ArtifactFile[] = [];
  private readonly assertions: NonNullable<CommandOutcome["assertions"]>[] = [];
  private readonly testCounts: TestCounts[] = [];
  private readonly authCache = new Map<number, ActorAuth>();
  /** Output a run had printed when its deadline killed the worker (for the timed-out result). */
  private timedOutOutput: ReturnType<PhpWorkerHost["partialOutput"]> | undefined;
  private adminUserId: number | undefined;
  private warmedHttp = false;
  /** Commands and forwarded requests hold it shared; reset/snapshot/restore hold it exclusive. */
  private readonly lock = new RuntimeLock();
  /** The database right after boot (inputs activated, site options applied): what `reset()` restores. */
  private cleanDatabase: Uint8Array | undefined;
  /** Restores only the wp-content files a sandbox changed (fast `reset()`). */
  private contentSync: ContentSync | undefined;
  private readonly artifactDirectories = new Map<string, number>();
  /** Database errors of each running command, by execution id (filled by its PHP runs and HTTP requests). */
  private readonly dbErrorsByExecution = new Map<string, DbError[]>();
  private readonly snapshots = new Map<string, WordPressRuntimeSnapshot>();
  /** Secret of the one-click admin login URL (`loginUrl()`); undefined until asked for. */
  private loginSecret: string | undefined;
  /** Epoch ms of the last command or site request (for `serve --ttl`). */
  private lastActivity = Date.now();

  /** Virtual clock and entropy streams of this sandbox's PHP work (inactive with host time and entropy). */
  private readonly clock: WorkClock;

  private constructor(private readonly setup: PlaygroundRuntimeSetup) {
    this.clock = new WorkClock(setup.determinism ?? { clock: "real", origin: "loopback" });
  }

  /**
   * The site's origin as WordPress, HTTP commands and the browser see it: the stable origin
   * (mapped to the loopback server) or the loopback server's own `http://127.0.0.1:PORT`.
   */
  private get siteOrigin(): string {
    return this.setup.determinism?.origin === "stable" ? STABLE_SITE_ORIGIN : this.server.origin;
  }

  /**
   * Boots a sandbox from a prepared setup.
   * @throws `boot-failed` (WordPress did not boot, or a `--plugin`/`--theme` failed to activate).
   */
  static async boot(setup: PlaygroundRuntimeSetup): Promise<PlaygroundRuntime> {
    const runtime = new PlaygroundRuntime(setup);
    try {
      await runtime.start();
    } catch (error) {
      await runtime.dispose();
      throw error;
    }
    return runtime;
  }

  private event(type: string, data?: Record<string, unknown>): void {
    this.events.push({ at: nowIso(), type, ...(data ? { data } : {}) });
  }

  private async start(): Promise<void> {
    const started = Date.now();
    this.sandboxDir = mkdtempSync(join(sandboxTempBase(), "wp-codebox-"));
    trackSandboxDir(this.sandboxDir);
    const contentDir = join(this.sandboxDir, "wp-content");
    const workspaceDir = join(this.sandboxDir, "workspace");
    cpSync(join(this.setup.siteDir, "wp-content"), contentDir, { recursive: true });
    mkdirSync(workspaceDir, { recursive: true });
    // Read-only mounts are private copies: the sandbox may change them, the host never sees it.
    for (const mount of this.setup.mounts) {
      const hostTarget = this.hostPathFor(mount.target, contentDir, workspaceDir);
      if (mount.mode === "readonly") {
        cpSync(mount.source, hostTarget, { recursive: true, dereference: false });
      } else {
        if (mount.kind === "directory") mkdirSync(hostTarget, { recursive: true });
        this.workerMounts.push({ hostPath: mount.source, vfsPath: mount.target });
      }
    }
    const inContent = (target: string) => target.startsWith("/wordpress/wp-content/");
    const rel = (target: string) => target.slice("/wordpress/wp-content/".length);
    this.contentSync = new ContentSync(
      contentDir,
      [{ source: join(this.setup.siteDir, "wp-content"), target: "" }, ...this.setup.mounts.filter((m) => m.mode === "readonly" && inContent(m.target)).map((m) => ({ source: m.source, target: rel(m.target) }))],
      this.setup.mounts.filter((m) => m.mode !== "readonly" && m.kind === "directory" && inContent(m.target)).map((m) => ({ target: rel(m.target) })),
    );
    this.contentSync.stampNow();
    this.server = await startSandboxHttpServer();
    this.setup.onProgress?.("Booting WordPress");
    this.host = await this.spawnWorker();
    await this.host.ready;
    this.server.setHandler((request) => this.forward(request));
    await this.afterBoot();
    this.cleanDatabase = readDatabase(this.stateHost());
    this.bootDurationMs = Date.now() - started;
    if (this.setup.wordpressSource) this.event("wordpress-release", { ...this.setup.wordpressSource });
    this.event("runtime-booted", { durationMs: this.bootDurationMs, bootMode: this.setup.bootMode, siteUrl: this.siteOrigin, ...(this.siteOrigin !== this.server.origin ? { loopbackUrl: this.server.origin } : {}) });
  }

  private hostPathFor(target: string, contentDir: string, workspaceDir: string): string {
    if (target.startsWith("/wordpress/wp-content/")) return join(contentDir, target.slice("/wordpress/wp-content/".length));
    return join(workspaceDir, target.slice("/workspace".length));
  }

  private workerOptions(): WorkerBootOptions {
    const contentDir = join(this.sandboxDir, "wp-content");
    const workspaceDir = join(this.sandboxDir, "workspace");
    const env = { ...this.setup.env, ...this.setup.secretEnv };
    const muPlugin = Object.keys(env).length
      ? `<?php\nforeach (${phpValue(env, "environment")} as $k => $v) { putenv($k . '=' . $v); $_ENV[$k] = $v; }\n`
      : undefined;
    return {
      phpVersion: this.setup.phpVersion,
      siteUrl: this.siteOrigin,
      coreDir: this.setup.siteDir,
      contentDir,
      workspaceDir,
      opcacheSeedDir: this.setup.opcacheSeedDir,
      mounts: this.workerMounts,
      installMode: "do-not-attempt-installing",
      sqliteZipPath: this.setup.sqliteZipPath,
      constants: this.setup.constants,
      muPlugin,
      processId: this.nextProcessId++,
      network: this.setup.policy.network,
    };
  }

  private async spawnWorker(): Promise<PhpWorkerHost> {
    const options = this.workerOptions();
    const owned: { close(): void }[] = [];
    if ((this.setup.workers ?? 1) > 1) {
      // One lock manager for every worker: SQLite's file locks then hold across threads.
      const { port1, port2 } = new MessageChannel();
      await exposeSyncAPI(this.lockManager, port1 as never);
      options.lockPort = port2;
      owned.push(port1);
    }
    return new PhpWorkerHost(
      options,
      this.setup.onProgress,
      (denied) =>
        // Raw PHP sockets refused by the network guard (php-network-guard.ts).
        this.event("policy-denied", { code: "policy-denied", capability: `network:${denied.host}`, host: denied.host, port: denied.port, message: `The runtime policy does not allow PHP to connect to ${denied.host}:${denied.port}; allow the host in the policy's network rule.` }),
      owned,
      this.clock,
    );
  }

  /**
   * Boots the extra HTTP workers in the background; each joins the pool when ready. Called on the
   * first loopback HTTP request (a browser), so command-only runs never pay for them.
   */
  private startExtraWorkers(): void {
    if (this.extraWorkersStarted) return;
    this.extraWorkersStarted = true;
    const count = Math.max(0, (this.setup.workers ?? 1) - 1);
    for (let i = 0; i < count; i++) {
      const booting = this.spawnWorker().then(async (host) => {
        try {
          await host.ready;
        } catch (error) {
          this.event("php-worker-failed", { message: (error as Error).message });
          await host.terminate();
          return;
        }
        // Terminated only after its boot handshake finished: a worker killed mid-handshake
        // leaves the lock channel's ports open and the process could not exit.
        if (this.disposed) return host.terminate();
        this.extraHosts.push(host);
        this.event("php-worker-joined", { workers: 1 + this.extraHosts.length });
      });
      this.bootingExtras.push(booting.catch(() => undefined));
    }
  }

  /** Activates `--plugin`/`--theme` inputs and applies site options. */
  private async afterBoot(): Promise<void> {
    const { plugins, themes, siteOptions } = this.setup;
    if (!plugins.length && !themes.length && !Object.keys(siteOptions).length) return;
    this.setup.onProgress?.("Activating plugins and themes");
    const code = `<?php
require_once '/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
$out = ['plugins' => [], 'themes' => []];
foreach (${phpValue(plugins, "plugins")} as $dir) {
  $found = null;
  if (substr($dir, -4) === '.php') { $found = $dir; }
  else { foreach (get_plugins('/' . $dir) as $file => $data) { $found = $dir . '/' . $file; break; } }
  if ($found === null) { $out['plugins'][] = ['dir' => $dir, 'error' => 'no plugin header found in wp-content/plugins/' . $dir]; continue; }
  $r = activate_plugin($found);
  $out['plugins'][] = ['dir' => $dir, 'file' => $found, 'error' => is_wp_error($r) ? $r->get_error_message() : null];
}
foreach (${phpValue(themes, "themes")} as $dir) {
  $theme = wp_get_theme($dir);
  if (!$theme->exists() || $theme->errors()) { $out['themes'][] = ['dir' => $dir, 'error' => $theme->errors() ? $theme->errors()->get_error_message() : 'theme not found']; continue; }
  switch_theme($dir);
  $out['themes'][] = ['dir' => $dir, 'error' => null];
}
foreach (${phpValue(siteOptions, "site options")} as $k => $v) { update_option($k, $v); }
echo json_encode($out);`;
    const outcome = outcomeFromRun(await this.host.call<WorkerRunResult>({ op: "run", code: code.replace("<?php", `<?php\n${FATAL_RECORDER}`), capBytes: 1 << 20 }));
    if (outcome.status !== "ok") {
      throw new WpCodeboxError("boot-failed", `Activating plugins/themes failed: ${outcome.error?.message ?? outcome.stderr}`, { error: outcome.error });
    }
    const report = outcome.json as { plugins: { dir: string; error: string | null }[]; themes: { dir: string; error: string | null }[] };
    const failed = [...report.plugins, ...report.themes].filter((r) => r.error);
    if (failed.length) {
      throw new WpCodeboxError(
        "boot-failed",
        `Could not activate: ${failed.map((f) => `${f.dir} (${f.error})`).join("; ")}. Check the plugin/theme header and that it loads without a fatal error.`,
        { failed },
      );
    }
    this.event("inputs-activated", { plugins, themes });
  }

  /** Serves a loopback HTTP request on the least busy worker. */
  private async forward(request: { method: string; url: string; headers: Record<string, string>; body?: Uint8Array }): Promise<WorkerHttpResult> {
    this.lastActivity = Date.now();
    if (this.loginSecret !== undefined && request.url.startsWith(`${this.server.origin}${LOGIN_PATH}`)) return this.login(request.url);
    this.startExtraWorkers();
    let target = this.host;
    for (const extra of this.extraHosts) if (extra.inFlight < target.inFlight) target = extra;
    // The loopback server names requests by its own origin; WordPress knows the site by siteOrigin.
    const url = request.url.startsWith(this.server.origin) ? `${this.siteOrigin}${request.url.slice(this.server.origin.length)}` : request.url;
    const response = await this.lock.withShared(() => target.call<WorkerHttpResult>({ op: "http", ...request, url, capBytes: SITE_HTTP_RESPONSE_CAP_BYTES }));
    // Loopback traffic (a browser) belongs to the commands running now.
    if (response.dbErrors?.length) for (const list of this.dbErrorsByExecution.values()) list.push(...response.dbErrors);
    if (response.fatal) {
      this.event("php-fatal", { url: request.url, status: response.status, message: response.fatal.message, file: response.fatal.file, line: response.fatal.line });
      // Tells the browser runner which page load died, so it records the fatal against its step.
      response.headers = { ...response.headers, [PHP_FATAL_HEADER]: [Buffer.from(JSON.stringify(response.fatal)).toString("base64")] };
      if (response.body.bytes === 0) {
        // An empty error response makes Chromium abort the navigation; send WordPress's own words.
        const page = new TextEncoder().encode(CRITICAL_ERROR_PAGE);
        response.body = { data: page, bytes: page.byteLength, truncated: false };
        response.headers["content-type"] = ["text/html; charset=utf-8"];
      }
    }
    return response;
  }

  /**
   * A one-click administrator login for a browser on this machine: `<site>/__wp-codebox/login?key=…`
   * sets WordPress's auth cookies for the `admin` user and redirects to `/wp-admin/`. The key is
   * random per runtime (256 bits) and compared in constant time; the URL works until disposal.
   * @returns the login URL.
   */
  async loginUrl(): Promise<string> {
    this.assertLive();
    this.loginSecret ??= randomBytes(32).toString("base64url");
    return `${this.server.origin}${LOGIN_PATH}?key=${this.loginSecret}`;
  }

  private async login(url: string): Promise<WorkerHttpResult> {
    const key = new URL(url).searchParams.get("key") ?? "";
    const expected = createHash("sha256").update(this.loginSecret ?? "").digest();
    const text = (status: number, message: string, headers: Record<string, string[]> = {}): WorkerHttpResult => {
      const data = new TextEncoder().encode(message);
      return { status, headers: { "content-type": ["text/plain; charset=utf-8"], "cache-control": ["no-store"], ...headers }, body: { data, bytes: data.byteLength, truncated: false } };
    };
    if (!timingSafeEqual(createHash("sha256").update(key).digest(), expected)) return text(403, "wp-codebox: this login link is not valid for this sandbox.\n");
    const auth = await this.lock.withShared(async () => this.authFor(await this.resolveActor("admin")));
    const cookies = auth.cookies.map((c) => `${c.name}=${encodeURIComponent(c.value)}; Path=/; HttpOnly; SameSite=Lax`);
    this.event("admin-login", {});
    return text(302, "Logged in: continue to /wp-admin/\n", { location: [`${this.server.origin}/wp-admin/`], "set-cookie": cookies });
  }

  /** Epoch ms of the last command or site request (site traffic is activity for `serve --ttl`). */
  lastActivityAt(): number {
    return this.lastActivity;
  }

  info(): RuntimeInfo {
    return {
      id: this.id,
      backend: "playground",
      wordpressVersion: this.setup.wordpressRelease,
      phpVersion: this.setup.phpVersion,
      siteUrl: this.server ? this.siteOrigin : "",
      bootMode: this.setup.bootMode,
      bootDurationMs: this.bootDurationMs,
      mounts: this.setup.mounts,
      policy: this.setup.policy,
      plugins: this.setup.plugins,
      themes: this.setup.themes,
      determinism: this.setup.determinism ?? { clock: "real", origin: "loopback" },
    };
  }

  /** The site's origin: `http://wp-codebox.test` (stable origin) or `http://127.0.0.1:PORT`. */
  get siteUrl(): string {
    return this.siteOrigin;
  }

  /** The loopback server (`http://127.0.0.1:PORT`): the URL a browser on this machine can open. */
  get loopbackUrl(): string {
    return this.server.origin;
  }

  /**
   * Runs one command. Failures come back as results (`status: "error"` / `"timed-out"`).
   * @throws `runtime-disposed`, `unknown-command`, `policy-denied`, `invalid-argument`,
   *   `missing-argument` (contract misuse; nothing ran).
   */
  async execute(spec: ExecutionSpec): Promise<ExecutionResult> {
    this.lastActivity = Date.now();
    return this.lock.withShared(() => this.executeNow(spec));
  }

  private async executeNow(spec: ExecutionSpec): Promise<ExecutionResult> {
    if (this.disposed) throw new WpCodeboxError("runtime-disposed", "This runtime was disposed; create a new one.");
    const definition = getCommandDefinition(spec.command);
    if (!definition.runnable) {
      throw new WpCodeboxError("unknown-command", `${spec.command} is a policy capability, not a runnable command.`);
    }
    assertCapability(this.setup.policy, definition.capability);
    const args = parseCommandArgs(spec.command, spec.args);
    const handler = HANDLERS[spec.command];
    const id = `exec-${randomUUID()}`;
    const startedAt = nowIso();
    const started = Date.now();
    const timeoutMs = spec.timeoutMs ?? defaultTimeoutMs(spec.command);
    this.event("command-started", { id, command: spec.command });
    const dbErrors: DbError[] = [];
    this.dbErrorsByExecution.set(id, dbErrors);
    let outcome: CommandOutcome | "timed-out";
    if (!handler) {
      outcome = {
        status: "error",
        exitCode: 1,
        stdout: "",
        stderr: "",
        error: { code: "not-implemented", message: `${spec.command} is in the catalog but this backend does not run it yet.` },
      };
    } else {
      outcome = await this.runWithDeadline(handler, args, timeoutMs, spec.signal, id);
    }
    const finished = Date.now();
    const result: ExecutionResult =
      outcome === "timed-out"
        ? {
            id,
            command: spec.command,
            args: spec.args,
            status: "timed-out",
            exitCode: 124,
            stdout: this.timedOutOutput?.stdout ?? "",
            stderr: this.timedOutOutput?.stderr ?? "",
            stdoutBytes: this.timedOutOutput?.stdoutBytes ?? 0,
            stderrBytes: this.timedOutOutput?.stderrBytes ?? 0,
            error: {
              code: "timeout",
              message: `${spec.command}: Timeout ${timeoutMs}ms exceeded. The PHP worker was stopped and replaced; raise --timeout if the work needs longer.`,
              data: { timeoutMs },
            },
            startedAt,
            finishedAt: nowIso(),
            durationMs: finished - started,
          }
        : {
            id,
            command: spec.command,
            args: spec.args,
            status: outcome.status,
            exitCode: outcome.exitCode,
            stdout: outcome.stdout,
            stderr: outcome.stderr,
            ...(outcome.stdoutBytes !== undefined ? { stdoutBytes: outcome.stdoutBytes, stderrBytes: outcome.stderrBytes ?? 0 } : {}),
            ...(outcome.truncated ? { truncated: outcome.truncated } : {}),
            ...(outcome.json !== undefined ? { json: outcome.json } : {}),
            ...(outcome.error ? { error: outcome.error } : {}),
            startedAt,
            finishedAt: nowIso(),
            durationMs: finished - started,
            ...(outcome.files?.length ? { artifactRefs: outcome.files.map((f) => ({ path: f.path, kind: f.kind })) } : {}),
          };
    this.dbErrorsByExecution.delete(id);
    if (dbErrors.length) result.dbErrors = dbErrors;
    if (outcome !== "timed-out") {
      if (outcome.files) this.addFiles(outcome.files);
      if (outcome.assertions) this.assertions.push(outcome.assertions);
      if (outcome.tests) this.testCounts.push(outcome.tests);
    }
    this.results.push(result);
    this.event("command-finished", { id, command: spec.command, status: result.status, durationMs: result.durationMs });
    return result;
  }

  private async runWithDeadline(handler: CommandHandler, args: Record<string, string>, timeoutMs: number, signal: AbortSignal | undefined, executionId: string): Promise<CommandOutcome | "timed-out"> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<"timed-out">((resolve) => {
      if (timeoutMs > 0) timer = setTimeout(() => resolve("timed-out"), timeoutMs);
      if (signal) {
        onAbort = () => resolve("timed-out");
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }
    });
    const work = handler(this.context(executionId), args).catch((error: unknown) => {
      if (error instanceof WorkerGoneError) return "timed-out" as const;
      if (error instanceof WpCodeboxError) throw error;
      const serialized = serializeError(error);
      return { status: "error", exitCode: 1, stdout: "", stderr: "", error: { code: serialized.code, message: serialized.message } } satisfies CommandOutcome;
    });
    try {
      const winner = await Promise.race([work, deadline]);
      if (winner === "timed-out") {
        // Keep what the run printed before its deadline: it is the evidence of a hang.
        try {
          this.timedOutOutput = this.host.partialOutput();
        } catch {
          this.timedOutOutput = undefined; // never let evidence-gathering block the replacement
        }
        // PHP cannot be interrupted from inside: kill the thread, boot a replacement on the same files.
        await this.replaceWorker("timeout");
      }
      return winner;
    } finally {
      if (timer) clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  private async replaceWorker(reason: string): Promise<void> {
    const old = this.host;
    await old.terminate();
    this.lockManager.releaseLocksForProcess(old.processId);
    this.authCache.clear();
    this.host = await this.spawnWorker();
    this.event("php-worker-replaced", { reason });
  }

  private context(executionId: string): CommandContext {
    return {
      executionId,
      reservedScreenshotNames: () =>
        this.files.filter((f) => f.kind === "browser-screenshot").map((f) => f.path.replace(/^files\/browser\/screenshot-/, "").replace(/\.png$/, "")),
      info: () => this.info(),
      policy: this.setup.policy,
      mounts: this.setup.mounts,
      cwd: this.setup.cwd,
      wpCli: this.setup.wpCli ?? {},
      outputCapBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      siteUrl: this.siteOrigin,
      loopbackUrl: this.server.origin,
      browserClock: () => ({ nowMs: this.clock.nowMs(), seed: this.setup.determinism?.seed, key: this.clock.workCount }),
      runPhp: async (code, options) => {
        const run = await this.host.call<WorkerRunResult>({
          op: "run",
          code,
          env: { ...this.setup.env, ...this.setup.secretEnv, ...(options?.env ?? {}) },
          capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
        });
        if (run.dbErrors?.length) this.dbErrorsByExecution.get(executionId)?.push(...run.dbErrors);
        return run;
      },
      http: async (request) => {
        if (!this.warmedHttp) {
          // The first request after boot is answered with a redirect to itself.
          this.warmedHttp = true;
          await this.host.call<WorkerHttpResult>({ op: "http", method: "GET", url: `${this.siteOrigin}/`, headers: {}, capBytes: 0 });
        }
        const response = await this.host.call<WorkerHttpResult>({ op: "http", ...request, capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES });
        if (response.dbErrors?.length) this.dbErrorsByExecution.get(executionId)?.push(...response.dbErrors);
        return response;
      },
      resolveActor: (as) => this.resolveActor(as),
      authFor: (actor) => this.authFor(actor),
      writeSandboxFile: async (path, data) => {
        await this.host.call({ op: "write-file", path, data });
      },
      readSandboxFile: async (path) => {
        const data = await this.host.call<Uint8Array | null>({ op: "read-file", path });
        return data ? new Uint8Array(data) : null;
      },
      mountReadOnly: async (hostPath, vfsPath) => {
        if (this.workerMounts.some((m) => m.vfsPath === vfsPath)) return;
        const mount = { hostPath, vfsPath, readOnly: true };
        // Recorded first: a worker booted later (timeout replacement, extra HTTP worker) mounts it too.
        this.workerMounts.push(mount);
        await Promise.all([this.host, ...this.extraHosts].map((h) => h.call({ op: "mount", mount })));
      },
      secrets: this.secretValues(),
      nextArtifactDirectory: (prefix) => this.nextArtifactDirectory(prefix),
    };
  }

  private secretValues(): string[] {
    return Object.values(this.setup.secretEnv).filter((v) => v.length > 0);
  }

  private nextArtifactDirectory(prefix: string): string {
    const n = (this.artifactDirectories.get(prefix) ?? 0) + 1;
    this.artifactDirectories.set(prefix, n);
    return `files/observations/${prefix}-${String(n).padStart(4, "0")}`;
  }

  private stateHost(): RuntimeStateHost {
    return {
      siteDir: this.setup.siteDir,
      contentDir: join(this.sandboxDir, "wp-content"),
      mounts: this.setup.mounts,
      backend: "playground",
      wordpressVersion: this.setup.wordpressRelease,
      phpVersion: this.setup.phpVersion,
      runPhp: (code) => this.host.call<WorkerRunResult>({ op: "run", code, capBytes: 64 << 20 }),
      ...(this.contentSync ? { contentSync: this.contentSync } : {}),
    };
  }

  private assertLive(): void {
    if (this.disposed) throw new WpCodeboxError("runtime-disposed", "This runtime was disposed; create a new one.");
  }

  /**
   * Observes the runtime; see `observePlayground` for the types and their data.
   * Section files of a `wordpress-state` observation join this runtime's bundle files.
   * @returns `{ type, data, artifactRefs? }`.
   * @throws `runtime-disposed`, `observation-unsupported`, `invalid-state-request`, `state-export-failed`.
   */
  async observe(spec: ObservationSpec): Promise<Omit<PlaygroundObservation, "files">> {
    this.assertLive();
    return this.lock.withShared(async () => {
      const { files, ...observation } = await observePlayground(
        {
          info: () => this.info(),
          results: () => this.results,
          events: () => this.events,
          secrets: this.secretValues(),
          runPhp: (code) => this.host.call<WorkerRunResult>({ op: "run", code, capBytes: 64 << 20 }),
          context: () => this.context(`observe-${randomUUID()}`),
          nextDirectory: (prefix) => this.nextArtifactDirectory(prefix),
        },
        spec,
      );
      if (files) this.addFiles(files);
      return observation;
    });
  }

  /**
   * Captures a `wp-codebox/wordpress-runtime-snapshot/v1` snapshot while no command runs.
   * @returns `{ schema, id, semantics: "runtime-state-artifact", …, files (with contents), sha256 }`.
   */
  async snapshot(): Promise<WordPressRuntimeSnapshot> {
    this.assertLive();
    const snapshot = await this.lock.withExclusive(() => captureSnapshot(this.stateHost()));
    this.snapshots.set(snapshot.id, snapshot);
    this.event("snapshot-taken", { id: snapshot.id, sha256: snapshot.sha256, files: snapshot.files.length });
    return snapshot;
  }

  /**
   * Makes this runtime's state equal to a snapshot, after verifying its hashes (used by the
   * backend's `restore` on a fresh runtime).
   * @throws `invalid-snapshot`, `snapshot-tampered`, `snapshot-incompatible`.
   */
  async restoreSnapshot(snapshot: unknown): Promise<void> {
    this.assertLive();
    assertRuntimeSnapshot(snapshot);
    await this.lock.withExclusive(async () => {
      applySnapshot(this.stateHost(), snapshot);
      this.authCache.clear();
    });
    this.event("snapshot-restored", { id: snapshot.id, sha256: snapshot.sha256 });
  }

  /**
   * Returns the sandbox to its state right after boot without booting: wp-content is
   * rebuilt from the installed site, the read-only mounts and the post-boot database. Waits for
   * running commands. Read-write mounts are host folders and keep their content.
   */
  async reset(): Promise<void> {
    this.assertLive();
    const started = Date.now();
    await this.lock.withExclusive(async () => {
      resetContent(this.stateHost(), this.cleanDatabase!);
      this.authCache.clear();
    });
    this.event("runtime-reset", { durationMs: Date.now() - started });
  }

  /**
   * `reset()` plus forgetting everything recorded (results, events, files, snapshots, browser
   * assertions): the sandbox is as good as freshly booted, for the next session of a warm pool.
   * Keeps the boot event so a bundle still says how the site started.
   */
  async recycle(): Promise<void> {
    await this.reset();
    const boot = this.events.find((e) => e.type === "runtime-booted");
    const resetEvent = this.events[this.events.length - 1];
    this.results.length = 0;
    this.events.length = 0;
    if (boot) this.events.push(boot);
    this.files.length = 0;
    this.assertions.length = 0;
    this.snapshots.clear();
    this.artifactDirectories.clear();
    this.event("runtime-recycled", { resetMs: (resetEvent?.data?.durationMs as number | undefined) ?? null });
  }

  private async phpJsonCall(code: string): Promise<unknown> {
    const run = await this.host.call<WorkerRunResult>({ op: "run", code: `<?php\n${FATAL_RECORDER}\n${code}`, capBytes: 1 << 20 });
    const outcome = outcomeFromRun(run);
    if (outcome.status !== "ok" || outcome.json === undefined) {
      throw new WpCodeboxError("php-error", `Internal PHP helper failed: ${outcome.error?.message ?? outcome.stdout.slice(0, 300)}`);
    }
    return outcome.json;
  }

  private async resolveActor(as: string | undefined): Promise<Actor> {
    const value = as ?? "admin";
    if (value === "anonymous") return { userId: 0, label: "anonymous" };
    if (value === "admin") {
      if (this.adminUserId === undefined) {
        const r = (await this.phpJsonCall(
          "require_once '/wordpress/wp-load.php'; $u = get_user_by('login', 'admin'); if (!$u) { $ids = get_users(['role' => 'administrator', 'fields' => 'ID', 'number' => 1]); $u = $ids ? get_user_by('id', $ids[0]) : null; } echo json_encode(['id' => $u ? (int) $u->ID : 0]);",
        )) as { id: number };
        this.adminUserId = r.id;
      }
      return { userId: this.adminUserId, label: "admin" };
    }
    const m = /^user:(.+)$/.exec(value);
    if (!m) throw new WpCodeboxError("invalid-argument", `as=${value} is not valid: use admin, anonymous, user:<id> or user:<login>.`);
    const ref = m[1]!;
    const r = (await this.phpJsonCall(
      `require_once '/wordpress/wp-load.php'; $ref = ${phpValue(ref, "as=user:")}; $u = ctype_digit($ref) ? get_user_by('id', (int) $ref) : get_user_by('login', $ref); echo json_encode(['id' => $u ? (int) $u->ID : 0]);`,
    )) as { id: number };
    if (!r.id) throw new WpCodeboxError("invalid-argument", `as=${value}: no such WordPress user. Create it first (wp_insert_user) or use as=admin.`);
    return { userId: r.id, label: value };
  }

  private async authFor(actor: Actor): Promise<ActorAuth> {
    const cached = this.authCache.get(actor.userId);
    if (cached) return cached;
    const auth = (await this.phpJsonCall(`require_once '/wordpress/wp-load.php';
$uid = ${phpValue(actor.userId)};
$expiration = time() + DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance($uid)->create($expiration);
$auth = wp_generate_auth_cookie($uid, $expiration, 'auth', $token);
$logged = wp_generate_auth_cookie($uid, $expiration, 'logged_in', $token);
$_COOKIE[LOGGED_IN_COOKIE] = $logged;
wp_set_current_user($uid);
echo json_encode(['cookies' => [['name' => AUTH_COOKIE, 'value' => $auth], ['name' => SECURE_AUTH_COOKIE, 'value' => $auth], ['name' => LOGGED_IN_COOKIE, 'value' => $logged]], 'restNonce' => wp_create_nonce('wp_rest')]);`)) as ActorAuth;
    this.authCache.set(actor.userId, auth);
    return auth;
  }

  /** Adds command files; a `.jsonl` file that exists already is appended to (browser steps.jsonl across commands). */
  private addFiles(files: ArtifactFile[]): void {
    for (const file of files) {
      const existing = this.files.findIndex((f) => f.path === file.path);
      if (existing >= 0 && file.path.endsWith(".jsonl")) {
        const before = this.files[existing]!;
        this.files[existing] = { ...before, content: `${String(before.content)}${String(file.content)}` };
      } else if (existing >= 0) {
        this.files[existing] = file;
      } else {
        this.files.push(file);
      }
    }
  }

  /** The browser assertions of every command so far, as one block. */
  private assertionsBlock(): NonNullable<CommandOutcome["assertions"]> | undefined {
    if (this.assertions.length === 0) return undefined;
    return {
      total: this.assertions.reduce((n, a) => n + a.total, 0),
      passed: this.assertions.reduce((n, a) => n + a.passed, 0),
      failed: this.assertions.reduce((n, a) => n + a.failed, 0),
      results: this.assertions.flatMap((a) => a.results),
    };
  }

  /** The test counts of every wordpress.phpunit command so far, summed (review.json `tests`). */
  private testsBlock(): TestCounts | undefined {
    if (this.testCounts.length === 0) return undefined;
    const sum = (key: keyof TestCounts) => this.testCounts.reduce((n, c) => n + c[key], 0);
    return {
      tests: sum("tests"),
      assertions: sum("assertions"),
      failures: sum("failures"),
      errors: sum("errors"),
      skipped: sum("skipped"),
      incomplete: sum("incomplete"),
      warnings: sum("warnings"),
      risky: sum("risky"),
      passed: sum("passed"),
    };
  }

  /** Everything gathered so far, for `writeArtifactBundle`. */
  async collectArtifacts(spec?: ArtifactSpec): Promise<RuntimeArtifacts> {
    const assertions = this.assertionsBlock();
    const files = [...this.files];
    const snapshotRefs = spec?.includeRuntimeSnapshotBundles
      ? [...this.snapshots.values()].map((snapshot) => {
          const bundled = runtimeSnapshotBundleFiles(snapshot);
          files.push(...bundled.files);
          return bundled.ref;
        })
      : [];
    if (assertions) {
      const browserResults = this.results.filter((r) => isBrowserCommand(r.command));
      files.push({
        path: "files/browser/action-summary.json",
        kind: "browser-action-summary",
        contentType: "application/json",
        content: `${JSON.stringify({ executions: browserResults.map((r) => ({ id: r.id, command: r.command, status: r.status, ...(r.error ? { error: r.error } : {}) })), assertions }, null, 2)}\n`,
      });
    }
    const tests = this.testsBlock();
    return {
      info: this.info(),
      results: [...this.results],
      events: [...this.events],
      files,
      secrets: Object.values(this.setup.secretEnv).filter((v) => v.length > 0),
      ...(assertions || tests ? { review: { ...(assertions ? { assertions } : {}), ...(tests ? { tests } : {}) } } : {}),
      ...(snapshotRefs.length ? { snapshots: snapshotRefs } : {}),
    };
  }

  /** Stops the worker and the server and deletes the sandbox's temporary files. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.event("runtime-disposed");
    await this.host?.terminate().catch(() => undefined);
    await Promise.all(this.extraHosts.map((h) => h.terminate().catch(() => undefined)));
    // Extra workers still booting terminate themselves once booted (bounded wait).
    await Promise.race([Promise.all(this.bootingExtras), new Promise((r) => setTimeout(r, WORKER_BOOT_GRACE_MS).unref())]);
    await this.server?.close().catch(() => undefined);
    if (this.sandboxDir) removeSandboxDir(this.sandboxDir);
  }
}
