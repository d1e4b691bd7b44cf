/**
 * A live native sandbox: a folder of its own in the host's temporary directory holding a copy of
 * the cached MariaDB data directory and wp-content, the sandbox's private MariaDB server on a unix
 * socket there, and a warm confined Debian PHP process that forks one child per command
 * (`php-server.ts`). A command that outlives its deadline has its PHP process killed (the next
 * command starts a new one); the database and the sandbox live on.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, posix, resolve } from "node:path";
import {
  DEFAULT_OUTPUT_CAP_BYTES,
  DEFAULT_SITE_REQUEST_TIMEOUT_MS,
  MAX_DURATION_MS,
  SITE_HTTP_RESPONSE_CAP_BYTES,
  startSandboxHttpServer,
  type SandboxHttpServer,
  PolicyDeniedError,
  PLUGIN_ACTIVATION_OUTPUT_EVENT,
  pluginActivationOutputNotice,
  pluginActivationOutputs,
  STABLE_SITE_ORIGIN,
  SerialQueue,
  WpCodeboxError,
  abortReasonText,
  assertCapability,
  assertRuntimeSnapshot,
  runtimeSnapshotBundleFiles,
  fatalFromPhpOutput,
  getCommandDefinition,
  isHostAllowed,
  parseCommandArgs,
  readInputText,
  readJsonArg,
  serializeError,
  type ArtifactSpec,
  type BackgroundErrorRecord,
  type DbErrorRecord,
  type ExecutionError,
  type ExecutionResult,
  type ExecutionSpec,
  type ObservationSpec,
  type ResolvedMount,
  type Runtime,
  type RuntimeArtifacts,
  type RuntimeEvent,
  type RuntimeInfo,
  type RuntimePolicy,
  type WpDefineValue,
  type WordPressChoiceRecord,
  type WordPressRuntimeSnapshot,
} from "@wp-codebox/runtime-core";
import { COMMAND_HANDLERS, observeRuntime, type CommandOutcome, type RuntimeObservation } from "@wp-codebox/commands";
import { applyNativeSnapshot, captureNativeSnapshot, type NativeStateHost } from "./native-snapshots.js";
import { NATIVE_SHARED_COMMANDS, NativeCommandContext, NativeCommandEvidence, runConfinedPhp, runFatal, runSharedCommand } from "./native-command-context.js";
import { pharFromSpec, runNativeWpCli, wpCliOutcome } from "./native-wp-cli.js";
import { allocateSandboxUid, type Bind } from "./bubblewrap.js";
import { HOST_STEP_DEADLINE_MS, type CapturedStream, type ProcessOutcome } from "./confined-process.js";
import { siteConstants } from "./native-config.js";
import { PhpServer, type RunCode } from "./php-server.js";
import { PhpCgi } from "./php-cgi.js";
import { SiteFiles, cgiParams, frontResponse, phpResponse, routeRequest, staticResponse, type SiteRequest, type SiteResponse } from "./native-web.js";
import { ctimeStamp, syncTree } from "./tree-sync.js";
import { listenUnix, networkPaths, prepareSandboxNetwork, startNativeEgressProxy, warmProcessNetwork, type SandboxNetwork } from "./native-network.js";
import type { Server as NetServer } from "node:net";
import { SANDBOX_DIR_PREFIX, markSandboxOwner, sweepStaleSandboxes } from "./stale-sandboxes.js";
import { makeSandboxPath, readSandboxFile, removeSandboxPath, sandboxPathExists, writeSandboxFile } from "./sandbox-files.js";
import { CLEAN_DB_SIGNATURES, readDbRootPassword } from "./native-site-cache.js";
import { saveCleanDb } from "./clean-db.js";
import { MariaDbServer, SANDBOX_PATHS, copyTree, createLayout, giveToSandbox, siteLayout, writeSiteConfig, type SiteLayout } from "./native-site.js";
import type { NativeTools } from "./native-tools.js";

/** Everything a native sandbox boots from (resolved and validated by the backend). */
export interface NativeRuntimeSetup {
  tools: NativeTools;
  /** The cached installed site this sandbox copies. */
  site: SiteLayout;
  bootMode: "installed" | "cached";
  /** Host folder of the WordPress tree (bound read-only at /wordpress). */
  treeDir: string;
  wordpressRelease: string;
  /** How the WordPress version was chosen (named, the newest release, or the offline fallback). */
  wordpressChoice?: WordPressChoiceRecord;
  phpVersion: string;
  phpExtensions: string[];
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  plugins: string[];
  themes: string[];
  env: Record<string, string>;
  secretEnv: Record<string, string>;
  siteOptions: Record<string, string>;
  defines?: Record<string, WpDefineValue>;
  cwd: string;
  outputCapBytes?: number;
  onProgress?: (message: string) => void;
  /** `stable` (default): the site is `http://wp-codebox.test`; `loopback`: the site is the loopback front's `http://127.0.0.1:PORT` (what `serve` shows a browser). */
  origin?: "stable" | "loopback";
  /** Limit of each request to the site (ms, 0 = none; default `DEFAULT_SITE_REQUEST_TIMEOUT_MS`): past it php-cgi is restarted and the request answered 504. */
  siteRequestTimeoutMs?: number;
  /** Host path of the wp-cli phar for `wordpress.wp-cli`. @throws `wp-cli-unavailable` when there is none. */
  wpCliPhar?: () => string;
}

type Outcome = Pick<ExecutionResult, "status" | "exitCode" | "stdout" | "stderr" | "stdoutBytes" | "stderrBytes" | "truncated" | "json" | "error">;

const text = (stream: CapturedStream) => stream.data.toString("utf8");

/** The page WordPress shows for a fatal error, sent instead of an empty fatal response (a browser aborts on an empty 500). */
const CRITICAL_ERROR_PAGE = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>WordPress &rsaquo; Error</title></head><body><p>There has been a critical error on this website.</p></body></html>\n";

/** Longest a command waits for the requests it set off (WP-Cron, loopbacks) after its own PHP ended (ms). */
const SELF_CALL_SETTLE_TIMEOUT_MS = 60_000;
/**
 * How long a request a page (php-cgi) or an uncounted run sent last, `blocking => false`, may take
 * to reach the relay's socket (ms): php-cgi's connections are not counted, so after a page the
 * host waits this long for one to show up.
 */
const SELF_CALL_GRACE_MS = 50;
/**
 * Longest the host waits for the connections a run's relays accepted to reach it (ms). Each one
 * takes a millisecond or so; one that never comes went to a listener of the run's own.
 */
const RELAY_ARRIVAL_TIMEOUT_MS = 2_000;

/** Path of the one-click login URL on the loopback front (as on Playground). */
const LOGIN_PATH = "/__wp-codebox/login";

/** A site request answered: the response, the database errors it caused, and whether a limit stopped it. */
export interface NativeHttpResponse extends SiteResponse {
  dbErrors: DbErrorRecord[];
  /** Set when the request was stopped: the site request limit (`site-limit`, answered 504), the caller's deadline or signal. */
  stopped?: "site-limit" | "timeout" | "interrupted";
}

let sweptStale = false;

/**
 * Exit codes the warm PHP process reports for a command's process killed by a signal (128 + its
 * number), with what that signal means in a sandbox.
 */
const SIGNAL_EXIT_CODES: Record<number, string> = {
  137: "SIGKILL: killed, e.g. by the kernel when memory ran out",
  139: "SIGSEGV: PHP crashed",
  153: "SIGXFSZ: it wrote a file over the sandbox's file size limit (1 GiB)",
};

/**
 * A file system error of the host's temporary directory (read-only, full, missing) as `boot-failed`
 * naming it and what to do, instead of an unexpected error; anything else unchanged.
 */
function hostFolderError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (error instanceof WpCodeboxError || !code || !["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "ENOENT", "ENOTDIR"].includes(code)) return error;
  const why = code === "ENOSPC" || code === "EDQUOT" ? "is full" : code === "ENOENT" || code === "ENOTDIR" ? "does not exist" : "cannot be written";
  return new WpCodeboxError("boot-failed", `The host's temporary directory ${tmpdir()} ${why} (${(error as Error).message}); a native sandbox needs about 60 MB there. Set TMPDIR to a writable folder with room.`, { tmpdir: tmpdir(), errno: code });
}

/** Database errors read per run at most (bytes of `db-errors.jsonl`; a line cut there is dropped). */
const DB_ERRORS_BYTES = 8 << 20;

export class NativeRuntime implements Runtime {
  readonly id = `runtime-${randomUUID()}`;
  private readonly layout: SiteLayout;
  private readonly binds: Bind[];
  private server: MariaDbServer | undefined;
  private readonly results: ExecutionResult[] = [];
  private readonly events: RuntimeEvent[] = [];
  private readonly order = new SerialQueue();
  /** The warm PHP process that runs every command (killed at a deadline, started again for the next). */
  private php!: PhpServer;
  private disposed = false;
  private bootDurationMs = 0;
  /**
   * When wp-content was last made equal to the cache's (ns, the file system's clock): an entry whose
   * ctime is later changed since, whatever its size and mtime say.
   */
  private contentCleanAtNs: bigint | undefined;
  /** The clean copy's table signatures (JSON), kept by the host and handed to each restore. */
  private cleanSignatures: Buffer | undefined;
  /** Password of MariaDB's root in this sandbox (the cache entry's): only the host's own steps use it. */
  private readonly dbRootPassword: string;
  /** Snapshots taken, for the bundle (`includeRuntimeSnapshotBundles`). */
  private readonly taken = new Map<string, WordPressRuntimeSnapshot>();
  /** The sandbox's web server: php-cgi (started on the first PHP request), the path router, the loopback front. */
  private readonly cgi: PhpCgi;
  private readonly files: SiteFiles;
  private front: SandboxHttpServer | undefined;
  private origin: string = STABLE_SITE_ORIGIN;
  /** A page ran since the warm server preloaded WordPress: the preloaded child may hold options read before its writes. */
  private pagesSincePreload = false;
  private lastActivity = Date.now();
  /** PHP's network: hosts file, relay ports, proxy environment (filled at boot, read when PHP starts). */
  private readonly net: SandboxNetwork = { binds: [], listeners: [], env: {} };
  /** The warm PHP process's: the same, its relays leading to sockets of their own (`warmProcessNetwork`). */
  private readonly warmNet: SandboxNetwork = { binds: [], listeners: [], env: {} };
  /** Connections that came from the warm process's relays (site and proxy), since boot. */
  private warmRelayAccepted = 0;
  /** How many of them the runs so far reported (the count `selfCallsSettled` waits for). */
  private warmRelayExpected = 0;
  /** `warmRelayExpected` when the last settling ended (what came since is the next one's). */
  private warmRelaySettled = 0;
  /**
   * Something may have sent a request the host cannot count yet (a page of php-cgi, a run whose
   * connections were not counted): `selfCallsSettled` waits `SELF_CALL_GRACE_MS` for it.
   */
  private graceDue = false;
  /** The unix sockets of the relay (the site, the policy proxy). */
  private readonly netServers: NetServer[] = [];
  /** PHP fatals of requests PHP made to its own site (WP-Cron, loopbacks) since the current command started. */
  private background: BackgroundErrorRecord[] = [];
  /** Waits for the self-calls to settle (`selfCallsSettled`). */
  private readonly settleWaiters = new Set<() => void>();
  /** Requests PHP made to its own site since the current command started. */
  private selfCalls = 0;
  /** Secret of the one-click admin login URL (`loginUrl()`); undefined until asked for. */
  private loginSecret: string | undefined;
  /** Files and test counts of the shared commands and observations (`native-command-context.ts`). */
  private readonly evidence = new NativeCommandEvidence();

  private constructor(private readonly setup: NativeRuntimeSetup) {
    this.layout = siteLayout(mkdtempSync(join(tmpdir(), SANDBOX_DIR_PREFIX)), allocateSandboxUid());
    markSandboxOwner(this.layout.root);
    this.dbRootPassword = readDbRootPassword(setup.site);
    this.binds = setup.mounts.map((m) => ({ source: m.source, target: m.target, readOnly: m.mode === "readonly" }));
    this.php = new PhpServer({ tools: setup.tools, layout: this.layout, treeDir: setup.treeDir, extraBinds: this.binds, env: { ...setup.env, ...setup.secretEnv }, network: this.warmNet });
    this.cgi = new PhpCgi({ tools: setup.tools, layout: this.layout, treeDir: setup.treeDir, extraBinds: this.binds, env: { ...setup.env, ...setup.secretEnv }, network: this.net });
    this.files = new SiteFiles(setup.treeDir, this.layout.content, setup.mounts);
  }

  /**
   * Boots a sandbox: copies the cached site, starts its MariaDB server, activates the inputs.
   * @throws `boot-failed` (MariaDB did not start, or activating a plugin/theme failed).
   */
  static async boot(setup: NativeRuntimeSetup): Promise<NativeRuntime> {
    let runtime: NativeRuntime;
    try {
      runtime = new NativeRuntime(setup);
    } catch (error) {
      throw hostFolderError(error);
    }
    try {
      await runtime.start();
    } catch (error) {
      await runtime.dispose();
      throw hostFolderError(error);
    }
    return runtime;
  }

  private async start(): Promise<void> {
    const started = Date.now();
    this.setup.onProgress?.("Booting WordPress (native)");
    // Once per process: folders of sandboxes whose process was killed before it could remove them.
    if (!sweptStale) {
      sweptStale = true;
      sweepStaleSandboxes(tmpdir());
    }
    createLayout(this.layout);
    // The front listens from boot (it costs a socket); php-cgi starts on the first PHP request.
    this.front = await startSandboxHttpServer(0);
    this.front.setHandler((request, meta) => this.serveFront(request, meta.fromSandbox));
    this.origin = this.setup.origin === "loopback" ? this.front.origin : STABLE_SITE_ORIGIN;
    await this.startNetwork(this.front);
    writeSiteConfig(this.layout, siteConstants({ policy: this.setup.policy, siteUrl: this.origin, ...(this.setup.defines ? { defines: this.setup.defines } : {}) }));
    await this.restoreSite();
    await this.saveCleanDatabase();
    this.bootDurationMs = Date.now() - started;
    this.event("runtime-booted", { durationMs: this.bootDurationMs, bootMode: this.setup.bootMode, siteUrl: this.info().siteUrl, backend: "native" });
  }

  /**
   * PHP's network: the site's host name and port lead to the loopback front through the relay's
   * unix socket; with a policy that allows outbound network, the proxy port leads to the policy
   * proxy, which records each refusal as event `network-denied` `{ host, url, method }`. The warm
   * PHP process's relays lead to sockets of their own, where the host counts what arrives.
   */
  private async startNetwork(front: SandboxHttpServer): Promise<void> {
    const network = this.setup.policy.network ?? "deny";
    const proxy = network !== "deny";
    Object.assign(this.net, prepareSandboxNetwork(this.layout, this.origin, proxy));
    Object.assign(this.warmNet, warmProcessNetwork(this.net));
    const paths = networkPaths(this.layout);
    const fromWarm = () => {
      this.warmRelayAccepted += 1;
      this.settleChanged();
    };
    this.netServers.push(await listenUnix(paths.siteSocket, (socket) => front.acceptSelfCall(socket)));
    // Counted once the front counts it as open: a waiter then sees it unsettled.
    this.netServers.push(await listenUnix(paths.runSiteSocket, (socket) => { front.acceptSelfCall(socket); fromWarm(); }));
    // One listener for the runtime's life: each wait adds a waiter here, not a listener there.
    front.onSelfCallsChange(() => this.settleChanged());
    if (proxy) {
      const site = new URL(this.origin).hostname;
      this.netServers.push(
        ...(await startNativeEgressProxy(
          [{ path: paths.proxySocket }, { path: paths.runProxySocket, onConnection: fromWarm }],
          (host) => host !== site && isHostAllowed(this.setup.policy, host) && (!isLoopbackHost(host) || listsHost(this.setup.policy, host)),
          (denial) => this.event("network-denied", { ...denial }),
        )),
      );
    }
  }

  /** Wakes the waits of `selfCallsSettled` (each checks its own condition). */
  private settleChanged(): void {
    for (const check of [...this.settleWaiters]) check();
  }

  /** Resolves once `ready()` holds (checked at each change of the self-calls) or after `ms`. */
  private settleWait(ready: () => boolean, ms: number): Promise<void> {
    if (ready() || ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const check = () => {
        if (ready()) done();
      };
      const done = () => {
        clearTimeout(timer);
        this.settleWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.settleWaiters.add(check);
    });
  }

  /**
   * Waits until the requests PHP made to its own site (WP-Cron, loopbacks, `blocking => false`
   * ones included) have ended, or `SELF_CALL_SETTLE_TIMEOUT_MS` passed, so no background request
   * races the next command, `reset()` or a snapshot.
   *
   * A request sent just before a run ended may still be on its way through the relay, unseen by
   * the front. The warm process counts the connections its relays accepted during each run
   * (`php/server.php`): the host waits until that many have arrived, then for them to end. A run
   * that made no connection waits for nothing. php-cgi's connections are not counted: after a page
   * (or a run that could not count) the host gives a request `SELF_CALL_GRACE_MS` to show up, again
   * after each page that ends meanwhile (a cron run a loopback page set off).
   * Event `self-calls-awaited` `{ relayed, graces, durationMs }` when there was anything to wait
   * for: `relayed` connections of the warm process's relays, `graces` waits for uncounted ones.
   */
  private async selfCallsSettled(): Promise<void> {
    const front = this.front;
    if (!front) return;
    const started = Date.now();
    const deadline = started + SELF_CALL_SETTLE_TIMEOUT_MS;
    const arrived = () => this.warmRelayAccepted >= this.warmRelayExpected;
    let graces = 0;
    let waited = !front.selfCallsSettled();
    for (;;) {
      if (!arrived()) {
        waited = true;
        await this.settleWait(arrived, Math.min(RELAY_ARRIVAL_TIMEOUT_MS, deadline - Date.now()));
        // Never coming (a connection to a listener the run opened itself): not waited for again.
        this.warmRelayExpected = Math.min(this.warmRelayExpected, this.warmRelayAccepted);
      }
      if (this.graceDue) {
        this.graceDue = false;
        graces += 1;
        await new Promise((resolve) => setTimeout(resolve, SELF_CALL_GRACE_MS));
      }
      await this.settleWait(() => front.selfCallsSettled(), deadline - Date.now());
      if ((!this.graceDue && arrived() && front.selfCallsSettled()) || Date.now() >= deadline) break;
    }
    const relayed = this.warmRelayExpected - this.warmRelaySettled;
    this.warmRelaySettled = this.warmRelayExpected;
    if (waited || relayed > 0 || graces > 0) this.event("self-calls-awaited", { relayed, graces, durationMs: Date.now() - started });
  }

  /** Copies the cached database and wp-content, starts MariaDB, activates inputs and site options. */
  private async restoreSite(): Promise<void> {
    this.php.kill();
    this.cgi.kill();
    this.server?.kill();
    await this.server?.exited;
    this.server = undefined;
    copyTree(this.setup.site.data, this.layout.data);
    // The cache's files belong to the uid that built it; this sandbox's processes run as their own.
    giveToSandbox(this.layout.data, this.layout.uid);
    rmSync(join(this.layout.run, "mysqld.sock"), { force: true });
    // PHP starts while MariaDB does: both take a few hundred ms, mostly waiting.
    const starting = MariaDbServer.start(this.setup.tools, this.layout);
    starting.catch(() => undefined);
    copyTree(this.setup.site.content, this.layout.content);
    giveToSandbox(this.layout.content, this.layout.uid);
    this.createMountPoints();
    this.contentCleanAtNs = ctimeStamp(this.layout.root);
    // Read by the warm server as it starts: the WordPress tree less these never changes, so a
    // preloaded WordPress does not look at its files again (php/server.php).
    this.writeInternal("mount-targets.json", JSON.stringify(this.setup.mounts.map((m) => m.target)));
    this.php.warm();
    this.server = await starting;
    if (this.activates()) {
      this.writeInternal("activate.json", JSON.stringify({ plugins: this.setup.plugins, themes: this.setup.themes, siteOptions: this.setup.siteOptions }));
      // Nothing preloaded after it: the clean copy saved next is the database as activation left it.
      const run = await this.runPhpFile(`${SANDBOX_PATHS.programs}/activate.php`, "wordpress", "admin", 64 << 10, HOST_STEP_DEADLINE_MS, undefined, "none");
      const outcome = this.outcome(run.process);
      if (outcome.status !== "ok") {
        throw new WpCodeboxError("boot-failed", `Activating the plugins and themes failed: ${outcome.error?.message ?? outcome.stderr.slice(0, 800)}`);
      }
      // A plugin that printed while it was activated: active, as in WordPress (activate.php).
      const lines = outcome.stdout.split("\n").flatMap((line) => {
        try {
          return [JSON.parse(line) as unknown];
        } catch {
          return [];
        }
      });
      for (const printed of pluginActivationOutputs(lines)) {
        this.setup.onProgress?.(pluginActivationOutputNotice(printed));
        this.event(PLUGIN_ACTIVATION_OUTPUT_EVENT, { ...printed });
      }
    }
  }

  /** True when boot activates plugins or themes or sets site options (the database then differs from the cache's). */
  private activates(): boolean {
    return this.setup.plugins.length > 0 || this.setup.themes.length > 0 || Object.keys(this.setup.siteOptions).length > 0;
  }

  /**
   * The clean copy reset() restores from: the cache's own (made when the site was installed) when
   * boot changed nothing in the database, else saved now.
   */
  private async saveCleanDatabase(): Promise<void> {
    const cached = join(this.setup.site.root, CLEAN_DB_SIGNATURES);
    if (!this.activates() && existsSync(cached)) {
      this.cleanSignatures = readFileSync(cached);
      return;
    }
    await this.cleanDatabase("save");
  }

  /**
   * Saves the database as it is after boot into the server's `wp_codebox_clean` database (as
   * MariaDB's root, in a process of its own: `clean-db.ts`), or puts it back from there (in the
   * warm process, as WordPress's account: `php/clean-db.php`). First the warm process drops what it
   * preloaded and kills every process of the sandbox, so no PHP of the sandbox runs SQL or changes
   * the handed-over files meanwhile.
   * @throws `boot-failed` with what PHP printed when that fails.
   */
  private async cleanDatabase(action: "save" | "restore"): Promise<{ restored: string[]; dropped: string[] }> {
    await this.dropPreloadedWordPress();
    if (action === "save") {
      this.cleanSignatures = await saveCleanDb(this.setup.tools, this.layout, this.setup.treeDir, this.dbRootPassword);
      return { restored: [], dropped: [] };
    }
    if (!this.cleanSignatures) throw new WpCodeboxError("boot-failed", "The sandbox's clean database was never saved.");
    this.writeInternal("clean-db.json", JSON.stringify({ action }));
    this.writeInternal(CLEAN_DB_SIGNATURES, this.cleanSignatures);
    // No WordPress preloaded after it: loading writes to the database (WP-Cron's schedule), which
    // must wait for a command that loads WordPress, so the state right after reset() is the clean one.
    const run = await this.runPhpFile(`${SANDBOX_PATHS.programs}/clean-db.php`, "none", 0, 64 << 10, HOST_STEP_DEADLINE_MS);
    const outcome = this.outcome(run.process);
    if (outcome.status !== "ok") throw new WpCodeboxError("boot-failed", `The sandbox's database could not be restored: ${outcome.error?.message ?? ""} ${outcome.stderr.slice(0, 800)}`.trim());
    const done = outcome.json as { restored?: string[]; dropped?: string[] } | undefined;
    return { restored: done?.restored ?? [], dropped: done?.dropped ?? [] };
  }

  /** The caller's mount targets under wp-content, relative to it (`plugins/mine`). */
  private contentMountPaths(): string[] {
    return this.setup.mounts.filter((m) => m.target.startsWith(`${SANDBOX_PATHS.content}/`)).map((m) => posix.relative(SANDBOX_PATHS.content, m.target));
  }

  /**
   * Mount targets under wp-content exist in the sandbox's copy before bubblewrap binds over them.
   * wp-content is the sandbox's: a link (or anything else) the sandbox left on the way or at the
   * mount point is replaced, never followed (a dangling link there would have the host create the
   * file it points at).
   * @returns how many folders or files were made (none when every mount point was in place).
   */
  private createMountPoints(): number {
    let made = 0;
    for (const mount of this.setup.mounts) {
      if (!mount.target.startsWith(`${SANDBOX_PATHS.content}/`)) continue;
      // Only what is made here is given to the uid: the copied wp-content already is the sandbox's.
      made += makeSandboxPath(this.layout.content, posix.relative(SANDBOX_PATHS.content, mount.target), mount.kind === "file" ? "file" : "dir", this.layout.uid);
    }
    return made;
  }

  info(): RuntimeInfo {
    return {
      id: this.id,
      backend: "native",
      wordpressVersion: this.setup.wordpressRelease,
      ...(this.setup.wordpressChoice ? { wordpress: this.setup.wordpressChoice } : {}),
      phpVersion: this.setup.phpVersion,
      phpExtensions: [...this.setup.phpExtensions],
      siteUrl: this.origin,
      bootMode: this.setup.bootMode,
      bootDurationMs: this.bootDurationMs,
      mounts: this.setup.mounts,
      policy: this.setup.policy,
      plugins: this.setup.plugins,
      themes: this.setup.themes,
      determinism: { clock: "real", origin: this.setup.origin ?? "stable" },
      ...(this.setup.defines ? { defines: { ...this.setup.defines } } : {}),
    };
  }

  /**
   * Runs one command, after the ones called before it. Only `wordpress.run-php`, `wordpress.wp-cli`,
   * `wordpress.rest-request` and `wordpress.http-request` run on this backend yet; other catalog commands give an `error`
   * result with code `not-implemented`.
   * @throws `runtime-disposed`, `unknown-command`, `policy-denied`, `invalid-argument`, `missing-argument`.
   */
  async execute(spec: ExecutionSpec): Promise<ExecutionResult> {
    this.assertLive();
    return this.order.run(async () => {
      this.assertLive();
      const definition = getCommandDefinition(spec.command);
      if (!definition.runnable) throw new WpCodeboxError("unknown-command", `${spec.command} is a policy capability, not a runnable command.`);
      assertCapability(this.setup.policy, definition.capability);
      const args = parseCommandArgs(spec.command, spec.args);
      if (spec.timeoutMs !== undefined && !(Number.isInteger(spec.timeoutMs) && spec.timeoutMs >= 0 && spec.timeoutMs <= MAX_DURATION_MS)) {
        throw new WpCodeboxError("invalid-argument", `${spec.command}: timeoutMs must be a whole number of milliseconds from 0 (no limit) to ${MAX_DURATION_MS} (got ${String(spec.timeoutMs)}).`, { command: spec.command, timeoutMs: spec.timeoutMs });
      }
      const timeoutMs = spec.timeoutMs ?? definition.defaultTimeoutMs;
      const id = `exec-${randomUUID()}`;
      const startedAt = new Date().toISOString();
      const started = Date.now();
      this.event("command-started", { id, command: spec.command });
      let outcome: Outcome;
      let dbErrors: DbErrorRecord[] = [];
      this.background = [];
      this.selfCalls = 0;
      let wroteFiles = false;
      const shared = NATIVE_SHARED_COMMANDS.includes(spec.command) ? COMMAND_HANDLERS[spec.command] : undefined;
      if (shared) {
        // One implementation for both backends (@wp-codebox/commands), through this runtime's context.
        const ran = await runSharedCommand(this.commandContext(id), shared, spec.command, args, timeoutMs, spec.signal);
        const { files: written, tests: _tests, assertions: _assertions, ...rest } = ran.outcome;
        outcome = rest;
        dbErrors = ran.dbErrors;
        if (ran.outcome.status !== "timed-out") this.evidence.record(id, ran.outcome as CommandOutcome);
        wroteFiles = (written?.length ?? 0) > 0;
      } else if (spec.command !== "wordpress.run-php" && spec.command !== "wordpress.wp-cli" && spec.command !== "wordpress.rest-request" && spec.command !== "wordpress.http-request") {
        outcome = { status: "error", exitCode: 1, stdout: "", stderr: "", error: { code: "not-implemented", message: `${spec.command} does not run on the native backend yet (only wordpress.run-php, wordpress.wp-cli, wordpress.rest-request and wordpress.http-request do); use --backend playground.` } };
      } else {
        try {
          const ran = spec.command === "wordpress.wp-cli"
            ? await this.runWpCliCommand(args, timeoutMs, spec.signal)
            : spec.command === "wordpress.rest-request"
              ? await this.restRequestCommand(args, timeoutMs, spec.signal)
              : spec.command === "wordpress.http-request"
                ? await this.httpRequestCommand(args, timeoutMs, spec.signal)
                : await this.runPhpCommand(args, timeoutMs, spec.signal);
          outcome = ran.outcome;
          dbErrors = ran.dbErrors;
        } catch (error) {
          if (error instanceof WpCodeboxError && error.code !== "boot-failed") throw error;
          const serialized = serializeError(error);
          outcome = { status: "error", exitCode: 1, stdout: "", stderr: "", error: { code: serialized.code, message: serialized.message } };
        }
      }
      await this.selfCallsSettled();
      if (this.selfCalls > 0 && this.pagesSincePreload) {
        // The command's WP-Cron run or loopback wrote to the database after WordPress was preloaded
        // for the next command: load it again now, while nobody waits for it.
        this.pagesSincePreload = false;
        await this.runPhpFile(`${SANDBOX_PATHS.programs}/noop.php`, "none", 0, 1024, 0, undefined, "wordpress");
      }
      const background = this.background;
      this.background = [];
      if (background.length) outcome = withBackgroundErrors(spec.command, outcome, background, args["background-errors"] === "record" ? "record" : "fail");
      const result: ExecutionResult = {
        id,
        command: spec.command,
        args: spec.args,
        ...outcome,
        startedAt,
        finishedAt: new Date().toISOString(),
        durationMs: Date.now() - started,
        ...(dbErrors.length ? { dbErrors } : {}),
        ...(wroteFiles ? { artifactRefs: this.evidence.filesOf(id).map((f) => ({ path: f.path, kind: f.kind })) } : {}),
      };
      this.results.push(result);
      this.event("command-finished", { id, command: spec.command, status: result.status, durationMs: result.durationMs });
      return result;
    });
  }

  /** `wordpress.run-php`: the caller's code in a file of the sandbox, run by the runner with its deadline. */
  private async runPhpCommand(args: Record<string, string>, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ outcome: Outcome; dbErrors: DbErrorRecord[] }> {
    let source: string;
    let name = "code.php";
    if (args["code-file"] !== undefined) {
      const path = resolve(this.setup.cwd, args["code-file"]);
      if (!existsSync(path)) throw new WpCodeboxError("invalid-argument", `code-file ${args["code-file"]} does not exist (resolved to ${path}).`, { path });
      source = await readInputText(path, "code-file");
      name = basename(path);
    } else {
      source = args.code ?? "";
    }
    if (source.startsWith("#!")) {
      // PHP's command line skips a shebang only in the script it starts with; this file is included.
      const nl = source.indexOf("\n");
      const rest = nl < 0 ? "" : source.slice(nl + 1);
      source = rest.startsWith("<?php") ? "<?php\n" + rest.slice(5) : rest;
    }
    if (!/^\s*<\?(php|=)?/.test(source)) source = `<?php\n${source}`;
    const bootstrap = args.bootstrap === "none" ? "none" : "wordpress";
    // The warm server writes the code file (php-server.ts): no file of the sandbox is touched from the host.
    return this.runCommandFile(posix.join(SANDBOX_PATHS.internal, "code", name), "wordpress.run-php", this.actor(args.as), timeoutMs, signal, bootstrap, bootstrap, { name, source });
  }

  /**
   * Runs a command's PHP file with the command's deadline: a stopped run is `timed-out` (deadline or
   * interrupt). `code`: the caller's code, written as `code/<name>` of the internal folder first.
   */
  private async runCommandFile(file: string, command: string, user: number | "admin", timeoutMs: number, signal: AbortSignal | undefined, bootstrap: "wordpress" | "none" = "wordpress", next: "wordpress" | "none" = bootstrap, code?: RunCode): Promise<{ outcome: Outcome; dbErrors: DbErrorRecord[] }> {
    const run = await this.runPhpFile(file, bootstrap, user, this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES, timeoutMs, signal, next, code);
    const dbErrors = this.takeDbErrors();
    // Only a run as a user id can miss its user (the runner then leaves this file).
    if (typeof user === "number" && user !== 0 && sandboxPathExists(this.layout.internal, "actor-missing")) {
      removeSandboxPath(this.layout.internal, "actor-missing");
      throw new WpCodeboxError("invalid-argument", `as=user:${String(user)}: no such WordPress user. Create it first (wp_insert_user) or use as=admin.`, { as: `user:${String(user)}` });
    }
    if (run.stopped) {
      const partial = run.process.partial;
      const error: ExecutionError = run.stopped === "interrupted"
        ? { code: "interrupted", message: `${command}: stopped by the caller before it finished (${abortReasonText(signal)}). Its PHP process was killed; the sandbox keeps running.`, data: { reason: abortReasonText(signal) } }
        : { code: "timeout", message: `${command}: Timeout ${timeoutMs}ms exceeded. Its PHP process was killed; the sandbox keeps running. Raise --timeout if the work needs longer.`, data: { timeoutMs } };
      this.event("php-process-killed", { reason: run.stopped });
      return { outcome: { status: "timed-out", exitCode: 124, stdout: text(partial.stdout), stderr: text(partial.stderr), stdoutBytes: partial.stdout.bytes, stderrBytes: partial.stderr.bytes, error }, dbErrors };
    }
    return { outcome: this.outcome(run.process), dbErrors };
  }

  /** `wordpress.wp-cli`: the real phar on Debian's PHP, confined like every command (`native-wp-cli.ts`). */
  private async runWpCliCommand(args: Record<string, string>, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ outcome: Outcome; dbErrors: DbErrorRecord[] }> {
    let phar: string;
    try {
      phar = this.setup.wpCliPhar ? this.setup.wpCliPhar() : pharFromSpec(undefined, this.setup.cwd);
    } catch (error) {
      // No phar is the command's failure (a result, exit 3 from the CLI), not a misuse of the runtime.
      if (!(error instanceof WpCodeboxError)) throw error;
      return { outcome: { status: "error", exitCode: 1, stdout: "", stderr: "", error: { code: error.code, message: error.message, data: error.data } }, dbErrors: [] };
    }
    removeSandboxPath(this.layout.internal, "last-error.json");
    const run = await runNativeWpCli({
      tools: this.setup.tools,
      layout: this.layout,
      treeDir: this.setup.treeDir,
      binds: this.binds,
      env: { ...this.setup.env, ...this.setup.secretEnv },
      phar,
      command: args.command ?? "",
      capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      timeoutMs,
      ...(signal ? { signal } : {}),
    });
    // WP-CLI is a process of its own: what it wrote is not in the child preloaded before it.
    await this.dropPreloadedWordPress();
    const dbErrors = this.takeDbErrors();
    if (run.stopped) {
      const partial = run.process.partial;
      const error: ExecutionError = run.stopped === "interrupted"
        ? { code: "interrupted", message: `wordpress.wp-cli: stopped by the caller before it finished (${abortReasonText(signal)}). Its PHP process was killed; the sandbox keeps running.`, data: { reason: abortReasonText(signal) } }
        : { code: "timeout", message: `wordpress.wp-cli: Timeout ${timeoutMs}ms exceeded. Its PHP process was killed; the sandbox keeps running. Raise --timeout if the work needs longer.`, data: { timeoutMs } };
      return { outcome: { status: "timed-out", exitCode: 124, stdout: text(partial.stdout), stderr: text(partial.stderr), stdoutBytes: partial.stdout.bytes, stderrBytes: partial.stderr.bytes, error }, dbErrors };
    }
    return { outcome: wpCliOutcome(this.outcome(run.process), run.argv), dbErrors };
  }

  /**
   * `wordpress.rest-request`: `php/rest-request.php` dispatches the request in WordPress
   * (rest_do_request) as the actor; a status of 400 or more is an `http-error` result.
   * @throws `invalid-argument` (a route not starting with "/"), `invalid-json-arg` (params-json not an object).
   */
  private async restRequestCommand(args: Record<string, string>, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ outcome: Outcome; dbErrors: DbErrorRecord[] }> {
    const method = (args.method ?? "GET").toUpperCase();
    const route = args.route;
    if (!route || !route.startsWith("/")) {
      throw new WpCodeboxError("invalid-argument", `route must be a REST route starting with "/", e.g. route=/wp/v2/posts (got "${route ?? ""}").`);
    }
    const params = args["params-json"] !== undefined ? readJsonArg(args["params-json"], this.setup.cwd) : {};
    const body = args["body-json"] !== undefined ? readJsonArg(args["body-json"], this.setup.cwd) : null;
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      throw new WpCodeboxError("invalid-json-arg", "params-json must be a JSON object of query parameters.");
    }
    this.writeInternal("rest-request.json", JSON.stringify({ method, route, params, body }));
    const ran = await this.runCommandFile(`${SANDBOX_PATHS.programs}/rest-request.php`, "wordpress.rest-request", this.actor(args.as), timeoutMs, signal);
    const { outcome } = ran;
    if (outcome.status !== "ok") return ran;
    const status = (outcome.json as { status?: unknown } | undefined)?.status;
    if (typeof status !== "number") {
      return { ...ran, outcome: { ...outcome, status: "error", exitCode: 1, error: { code: "php-error", message: "The REST dispatch printed something other than its JSON result; a plugin may echo output during REST requests." } } };
    }
    if (status >= 400) {
      return { ...ran, outcome: { ...outcome, status: "error", exitCode: 1, error: { code: "http-error", message: `${method} ${route}: HTTP ${status}.`, data: { status } } } };
    }
    return ran;
  }

  /**
   * Drops the child the warm server preloaded WordPress in (a run without WordPress does that), for
   * when the database changed from outside the server (WP-CLI, a snapshot restored): that child
   * holds options and caches read before the change.
   */
  private async dropPreloadedWordPress(): Promise<void> {
    await this.runPhpFile(`${SANDBOX_PATHS.programs}/noop.php`, "none", 0, 1024, HOST_STEP_DEADLINE_MS, undefined, "none");
  }

  /** The site's origin: `http://wp-codebox.test`, or the loopback front's with `origin: "loopback"`. */
  get siteUrl(): string {
    return this.origin;
  }

  /** The loopback front's origin (`http://127.0.0.1:PORT`), which serves the site to a browser on this host. */
  get loopbackUrl(): string {
    if (!this.front) throw new WpCodeboxError("runtime-disposed", "This runtime is not running; create a new one.");
    return this.front.origin;
  }

  /** Epoch ms of the last command or site request (for `serve --ttl`). */
  lastActivityAt(): number {
    return this.lastActivity;
  }

  /**
   * Sends one request to the site through its web server (static files, php-cgi), as a browser's
   * would go: the shape of Playground's command context `http()`. Not queued behind commands.
   * @param request - `url` on any origin (only its path and query are used), lower-case header names.
   * @param options.siteRequestLimit - apply the site request limit (default true): past it php-cgi
   *   is restarted and the answer is 504 with `fatal` set.
   * @param options.capBytes - body bytes kept (default `SITE_HTTP_RESPONSE_CAP_BYTES`).
   * @returns status, headers (lower-case names, each with its values), body `{ data, bytes, truncated }`,
   *   PHP's error log (`stderr`), `fatal` (file:line) when the page died of one, `dbErrors`.
   * @throws `runtime-disposed`; Error when php-cgi cannot start.
   */
  async http(request: SiteRequest, options: { siteRequestLimit?: boolean; capBytes?: number } = {}): Promise<NativeHttpResponse> {
    this.assertLive();
    const limit = options.siteRequestLimit === false ? 0 : (this.setup.siteRequestTimeoutMs ?? DEFAULT_SITE_REQUEST_TIMEOUT_MS);
    return this.siteRequest(request, { capBytes: options.capBytes ?? SITE_HTTP_RESPONSE_CAP_BYTES, siteLimitMs: limit });
  }

  /**
   * A one-click administrator login for a browser on this machine: `<loopback>/__wp-codebox/login?key=…`
   * sets WordPress's auth cookies for the administrator and redirects to `/wp-admin/`. The key is
   * random per runtime (256 bits), compared in constant time; `recycle()` makes a new one.
   * @returns the login URL.
   * @throws `runtime-disposed`.
   */
  async loginUrl(): Promise<string> {
    this.assertLive();
    this.loginSecret ??= randomBytes(32).toString("base64url");
    return `${this.loopbackUrl}${LOGIN_PATH}?key=${this.loginSecret}`;
  }

  /** Answers the login URL: 302 to `/wp-admin/` with the administrator's cookies, or 403 for a wrong key. */
  private async login(url: URL): Promise<SiteResponse> {
    const key = url.searchParams.get("key") ?? "";
    const expected = createHash("sha256").update(this.loginSecret ?? "").digest();
    if (this.loginSecret === undefined || !timingSafeEqual(createHash("sha256").update(key).digest(), expected)) return frontResponse(403, "wp-codebox: this login link is not valid for this sandbox.\n");
    const run = await this.order.run(() => this.runCommandFile(`${SANDBOX_PATHS.programs}/auth-cookies.php`, "login", "admin", 30_000, undefined, "wordpress"));
    const auth = run.outcome.json as { cookies?: { name: string; value: string }[] } | undefined;
    if (run.outcome.status !== "ok" || !auth?.cookies?.length) return frontResponse(500, `wp-codebox: the login failed: ${run.outcome.error?.message ?? run.outcome.stderr.slice(0, 300)}\n`);
    const cookies = auth.cookies.map((c) => `${c.name}=${encodeURIComponent(c.value)}; Path=/; HttpOnly; SameSite=Lax`);
    this.event("admin-login", {});
    return frontResponse(302, "Logged in: continue to /wp-admin/\n", { location: [`${this.loopbackUrl}/wp-admin/`], "set-cookie": cookies });
  }

  /**
   * Makes the sandbox ready for another session of a `serve --pool`: `reset()`, a new login key
   * (the earlier session's link stops working), and what was recorded (results, events but the
   * boot event, snapshots) forgotten. Event `runtime-recycled` `{ durationMs }`.
   * @throws `runtime-disposed`, and what `reset()` throws.
   */
  async recycle(): Promise<void> {
    const started = Date.now();
    await this.reset();
    this.loginSecret = undefined;
    this.results.length = 0;
    this.events.splice(0, this.events.length, ...this.events.filter((e) => e.type === "runtime-booted"));
    this.taken.clear();
    this.event("runtime-recycled", { durationMs: Date.now() - started });
  }

  /** A request from the loopback front (a browser): a fatal page with no body gets WordPress's error page. */
  private async serveFront(request: SiteRequest, fromSandbox = false): Promise<SiteResponse> {
    if (this.disposed) return frontResponse(503, "wp-codebox: this sandbox was disposed\n");
    try {
      const url = new URL(request.url);
      if (this.loginSecret !== undefined && url.pathname === LOGIN_PATH) return await this.login(url);
      if (fromSandbox) this.selfCalls += 1;
      const response = await this.http(request);
      if (fromSandbox && response.fatal) {
        const url = new URL(request.url);
        this.background.push({ kind: "php-fatal", message: response.fatal.message, file: response.fatal.file, line: response.fatal.line, method: request.method.toUpperCase(), url: `${url.pathname}${url.search}`, status: response.status });
      }
      if (response.fatal && response.body.bytes === 0) {
        const page = new TextEncoder().encode(CRITICAL_ERROR_PAGE);
        return { ...response, headers: { ...response.headers, "content-type": ["text/html; charset=utf-8"] }, body: { data: page, bytes: page.length, truncated: false } };
      }
      return response;
    } catch (error) {
      return frontResponse(502, `wp-codebox: the request failed inside the sandbox: ${(error as Error).message}\n`);
    }
  }

  /**
   * Routes one request (`native-web.ts`) and answers it: a static file from the host, PHP through
   * php-cgi. A PHP request past `siteLimitMs` (0 = none) or `deadlineMs`, or whose `signal`
   * aborts, has php-cgi killed (every request in it ends; the next one starts it again).
   */
  private async siteRequest(request: SiteRequest, options: { capBytes: number; siteLimitMs: number; deadlineMs?: number; signal?: AbortSignal }): Promise<NativeHttpResponse> {
    this.lastActivity = Date.now();
    const url = new URL(request.url);
    const query = url.search.replace(/^\?/, "");
    const route = routeRequest(this.files, url.pathname, query);
    if (route.kind === "refuse") return { ...frontResponse(route.status, `wp-codebox: ${route.status === 400 ? "bad request path" : route.status === 403 ? "forbidden" : "not found"}\n`), dbErrors: [] };
    if (route.kind === "redirect") return { ...frontResponse(301, "", { location: [route.location] }), dbErrors: [] };
    if (route.kind === "static") return { ...staticResponse(route, request.method.toUpperCase(), options.capBytes), dbErrors: [] };
    const id = randomUUID();
    const body = request.body ?? new Uint8Array(0);
    const params = { ...cgiParams({ method: request.method.toUpperCase(), rawPath: url.pathname, query, headers: request.headers, bodyBytes: body.length }, route, this.origin), WP_CODEBOX_REQUEST: id };
    const controller = new AbortController();
    let stopped: NativeHttpResponse["stopped"];
    const stop = (why: NonNullable<NativeHttpResponse["stopped"]>) => {
      stopped ??= why;
      controller.abort();
    };
    const timers = [
      options.siteLimitMs > 0 ? setTimeout(() => stop("site-limit"), options.siteLimitMs) : undefined,
      options.deadlineMs !== undefined && options.deadlineMs > 0 ? setTimeout(() => stop("timeout"), options.deadlineMs) : undefined,
    ];
    const onAbort = () => stop("interrupted");
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    this.pagesSincePreload = true;
    const cgiWasRunning = this.cgi.running;
    try {
      const answer = await this.cgi.request({ params, body }, { capBytes: options.capBytes, signal: controller.signal });
      if (!cgiWasRunning) this.event("php-cgi-started", { durationMs: this.cgi.lastStartMs });
      const response = phpResponse(answer);
      if (response.fatal) this.event("php-fatal", { url: `${url.pathname}${url.search}`, status: response.status, message: response.fatal.message, file: response.fatal.file, line: response.fatal.line });
      return { ...response, dbErrors: this.takeDbErrors(id) };
    } catch (error) {
      if (!stopped) throw error;
      // The PHP child running it cannot be told from its siblings: all of php-cgi goes.
      this.cgi.kill();
      this.event("site-request-stopped", { method: request.method, url: `${url.pathname}${url.search}`, reason: stopped, ...(stopped === "site-limit" ? { limitMs: options.siteLimitMs } : {}) });
      const dbErrors = this.takeDbErrors(id);
      if (stopped !== "site-limit") return { ...frontResponse(504, "wp-codebox: the request was stopped\n"), dbErrors, stopped };
      const limit = options.siteLimitMs % 1000 === 0 ? `${options.siteLimitMs / 1000}s` : `${options.siteLimitMs}ms`;
      const response = frontResponse(504, `wp-codebox: this request did not finish within ${limit} (the site request limit), so the sandbox's PHP was stopped and restarted; the site keeps serving. Look for an endless loop or a call that waits on something that never answers. Change the limit with --site-request-timeout <duration> ("0" = none).\n`);
      const fatal = { type: 1, message: `Maximum execution time of ${limit} exceeded: the request did not finish within the site request limit, and the sandbox's PHP was restarted`, file: "", line: 0 };
      return { ...response, fatal, dbErrors, stopped };
    } finally {
      for (const t of timers) if (t) clearTimeout(t);
      options.signal?.removeEventListener("abort", onAbort);
      // The page may have sent a request (WP-Cron) the host cannot count: settling waits for it.
      this.graceDue = true;
    }
  }

  /**
   * `wordpress.http-request`: the request goes through the sandbox's web server (`http()`), so the
   * status and every header the page sent are real. A signed-in actor first gets a session:
   * `php/auth-cookies.php` (a run as the actor) makes its auth and logged-in cookies and a wp_rest
   * nonce, sent as the `cookie` and `x-wp-nonce` headers (the caller's own ones win for the nonce).
   * The result is Playground's: the body is stdout, `json` is `{ status, headers (values joined
   * with ", "), body (parsed JSON or null), bodyBytes, timingMs }` (ms); redirects are not followed;
   * a status of 400 or more (or other than `expect-status`) is `http-error`; a fatal error in the
   * page is `php-fatal` with its file and line; past the command's deadline `timed-out`.
   * @throws `policy-denied` (another origin the policy does not allow), `invalid-argument` (another
   * origin: the command reaches only the sandbox; a bad `expect-status`), `invalid-json-arg` (headers-json).
   */
  private async httpRequestCommand(args: Record<string, string>, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ outcome: Outcome; dbErrors: DbErrorRecord[] }> {
    const started = Date.now();
    const method = (args.method ?? "GET").toUpperCase();
    if (args.path === undefined && args.url === undefined) {
      throw new WpCodeboxError("missing-argument", "wordpress.http-request needs path=/some/path or url=http://…; add one.");
    }
    const origin = new URL(this.origin);
    const target = args.url !== undefined ? new URL(args.url) : new URL(args.path!.startsWith("/") ? args.path! : `/${args.path}`, origin);
    // The site answers on its own origin and on the loopback front's.
    if (target.origin !== origin.origin && target.origin !== this.front?.origin) {
      if (!isHostAllowed(this.setup.policy, target.hostname)) throw new PolicyDeniedError(`network:${target.hostname}`, `The runtime policy does not allow network access to ${target.hostname}. Use a sandbox path (path=/…) or allow the host in the policy's network rule.`);
      throw new WpCodeboxError("invalid-argument", `wordpress.http-request only reaches the sandbox (${origin.origin}); ${target.origin} is outside it (PHP's own requests reach the origins the policy allows, through the policy proxy).`);
    }
    const expected = args["expect-status"];
    if (expected !== undefined && !Number.isInteger(Number(expected))) throw new WpCodeboxError("invalid-argument", `expect-status must be an HTTP status code such as 200, got "${expected}".`);
    const headers: Record<string, string> = {};
    if (args["headers-json"] !== undefined) {
      const parsed = readJsonArg(args["headers-json"], this.setup.cwd);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new WpCodeboxError("invalid-json-arg", "headers-json must be a JSON object of header names to string values.");
      for (const [k, v] of Object.entries(parsed)) headers[k.toLowerCase()] = String(v);
    }
    let body = Buffer.alloc(0);
    if (args["body-json"] !== undefined) {
      body = Buffer.from(JSON.stringify(readJsonArg(args["body-json"], this.setup.cwd)));
      headers["content-type"] ??= "application/json";
    } else if (args.body !== undefined) {
      body = Buffer.from(args.body);
      headers["content-type"] ??= "application/x-www-form-urlencoded";
    }
    const actor = this.actor(args.as);
    const left = () => (timeoutMs > 0 ? Math.max(1, timeoutMs - (Date.now() - started)) : 0);
    let dbErrors: DbErrorRecord[] = [];
    if (actor !== 0) {
      const login = await this.runCommandFile(`${SANDBOX_PATHS.programs}/auth-cookies.php`, "wordpress.http-request", actor, left(), signal, "wordpress");
      dbErrors = login.dbErrors;
      if (login.outcome.status !== "ok") return login;
      const auth = login.outcome.json as { cookies?: { name: string; value: string }[]; restNonce?: string } | undefined;
      const cookies = (auth?.cookies ?? []).map((c) => `${c.name}=${c.value}`).join("; ");
      if (cookies) headers.cookie = headers.cookie ? `${headers.cookie}; ${cookies}` : cookies;
      if (auth?.restNonce) headers["x-wp-nonce"] ??= auth.restNonce;
    }
    const where = `${method} ${target.pathname}${target.search}`;
    const limit = this.setup.siteRequestTimeoutMs ?? DEFAULT_SITE_REQUEST_TIMEOUT_MS;
    const response = await this.siteRequest(
      { method, url: target.toString(), headers, body },
      { capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES, siteLimitMs: limit, ...(timeoutMs > 0 ? { deadlineMs: left() } : {}), ...(signal ? { signal } : {}) },
    );
    dbErrors = [...dbErrors, ...response.dbErrors];
    const bodyText = Buffer.from(response.body.data).toString("utf8");
    const base = { stdout: bodyText, stderr: response.stderr, stdoutBytes: response.body.bytes, stderrBytes: Buffer.byteLength(response.stderr), truncated: { stdout: response.body.truncated, stderr: false } };
    if (response.stopped === "timeout" || response.stopped === "interrupted") {
      const error: ExecutionError = response.stopped === "interrupted"
        ? { code: "interrupted", message: `wordpress.http-request: stopped by the caller before it finished (${abortReasonText(signal)}). The sandbox's PHP was restarted; the sandbox keeps running.`, data: { reason: abortReasonText(signal) } }
        : { code: "timeout", message: `wordpress.http-request: Timeout ${timeoutMs}ms exceeded. The sandbox's PHP was restarted; the sandbox keeps running. Raise --timeout if the work needs longer.`, data: { timeoutMs } };
      return { outcome: { ...base, status: "timed-out", exitCode: 124, error }, dbErrors };
    }
    let parsedBody: unknown = null;
    if (!response.body.truncated && /^\s*[[{]/.test(bodyText)) {
      try {
        parsedBody = JSON.parse(bodyText);
      } catch {
        parsedBody = null;
      }
    }
    const flatHeaders = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, v.join(", ")]));
    const json = { status: response.status, headers: flatHeaders, body: parsedBody, bodyBytes: response.body.bytes, timingMs: Date.now() - started };
    if (response.fatal) {
      const fatal = response.fatal;
      const firstLine = (fatal.message.split("\n")[0] ?? fatal.message).replace(` in ${fatal.file}:${fatal.line}`, "");
      const error: ExecutionError = { code: "php-fatal", message: `PHP fatal error: ${firstLine}${fatal.file ? ` (${fatal.file}:${fatal.line})` : ""}`, data: { message: fatal.message, file: fatal.file, line: fatal.line, type: fatal.type, status: response.status, url: `${target.pathname}${target.search}` } };
      return { outcome: { ...base, status: "error", exitCode: 1, json, error }, dbErrors };
    }
    const ok = expected !== undefined ? response.status === Number(expected) : response.status < 400;
    if (!ok) {
      const why = expected !== undefined ? `expected HTTP ${Number(expected)}, got ${response.status}` : `HTTP ${response.status}`;
      return { outcome: { ...base, status: "error", exitCode: 1, json, error: { code: "http-error", message: `${where}: ${why}.`, data: { status: response.status } } }, dbErrors };
    }
    return { outcome: { ...base, status: "ok", exitCode: 0, json }, dbErrors };
  }

  /** The shared handlers' view of this sandbox for one execution (`native-command-context.ts`). */
  private commandContext(executionId: string): NativeCommandContext {
    const runtime = this;
    return new NativeCommandContext(
      {
        info: () => this.info(),
        policy: this.setup.policy,
        mounts: this.setup.mounts,
        cwd: this.setup.cwd,
        layout: this.layout,
        treeDir: this.setup.treeDir,
        binds: this.binds,
        outputCapBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
        secrets: Object.values(this.setup.secretEnv).filter((v) => v.length > 0),
        // wordpress.wp-cli is this backend's own (native-wp-cli.ts); the shared handlers do not use it.
        wpCli: {},
        siteUrl: this.siteUrl,
        get loopbackUrl() {
          return runtime.loopbackUrl;
        },
        runFile: (file, capBytes, env, signal) => {
          // The warm server's preloaded WordPress may hold options read before this run's writes.
          this.pagesSincePreload = true;
          return runConfinedPhp({ tools: this.setup.tools, layout: this.layout, treeDir: this.setup.treeDir, extraBinds: this.binds, script: file, env: { ...this.setup.env, ...this.setup.secretEnv, ...env }, capBytes }, signal);
        },
        http: (request, options) => this.http(request, options),
        takeDbErrors: () => this.takeDbErrors(),
        restartPhp: () => {
          this.php.kill();
          this.cgi.kill();
        },
        stopSiteRequests: () => this.cgi.kill(),
        nextArtifactDirectory: (prefix) => this.evidence.nextDirectory(prefix),
        reservedScreenshotNames: () => this.evidence.screenshotNames(),
        event: (type, data) => this.event(type, data),
      },
      executionId,
    );
  }

  /**
   * Answers an observation after the commands called before it, as Playground does
   * (`observeRuntime` of @wp-codebox/commands: runtime-info, mounts, command-result,
   * wordpress-state, http-response, browser-result, runtime-events, runtime-logs, abilities).
   * Section files of a `wordpress-state` observation join this runtime's bundle files.
   * @returns `{ type, data, artifactRefs? }`.
   * @throws `runtime-disposed`, `observation-unsupported`, `invalid-state-request`, `state-export-failed`.
   */
  async observe(spec: ObservationSpec): Promise<Omit<RuntimeObservation, "files">> {
    this.assertLive();
    return this.order.run(async () => {
      this.assertLive();
      const ctx = this.commandContext(`observe-${randomUUID()}`);
      const { files, ...observation } = await observeRuntime(
        {
          info: () => this.info(),
          results: () => this.results,
          events: () => this.events,
          secrets: ctx.secrets,
          runPhp: (code) => ctx.runPhp(code),
          context: () => ctx,
          nextDirectory: (prefix) => this.evidence.nextDirectory(prefix),
        },
        spec,
      );
      if (files) this.evidence.addObservationFiles(files);
      return observation;
    });
  }

  /** `as=`: admin (default), anonymous, or `user:<id>`. */
  private actor(as: string | undefined): number | "admin" {
    if (as === undefined || as === "admin") return "admin";
    if (as === "anonymous") return 0;
    const id = /^user:(\d+)$/.exec(as)?.[1];
    if (id !== undefined) return Number(id);
    throw new WpCodeboxError("invalid-argument", `as=${as}: the native backend takes as=admin, as=anonymous or as=user:<id> (a numeric id) so far.`, { as });
  }

  /**
   * Runs a PHP file through the runner, confined, until it ends, its deadline passes (`timeoutMs`,
   * 0 = none) or `signal` aborts; the last two kill it.
   */
  private async runPhpFile(
    file: string,
    bootstrap: "wordpress" | "none",
    user: number | "admin",
    capBytes: number,
    timeoutMs = 0,
    signal?: AbortSignal,
    next: "wordpress" | "none" = bootstrap,
    code?: RunCode,
  ): Promise<{ process: ProcessOutcome & { partial: { stdout: CapturedStream; stderr: CapturedStream } }; stopped?: "timeout" | "interrupted" }> {
    this.lastActivity = Date.now();
    if (this.pagesSincePreload && bootstrap === "wordpress") {
      // A page served since WordPress was preloaded may have written to the database.
      this.pagesSincePreload = false;
      await this.dropPreloadedWordPress();
    }
    const relayedBefore = this.warmRelayAccepted;
    const child = this.php.run(capBytes, { file, bootstrap, user }, next, code);
    let stopped: "timeout" | "interrupted" | undefined;
    const timer = timeoutMs > 0 ? setTimeout(() => { stopped ??= "timeout"; child.kill(); }, timeoutMs) : undefined;
    const onAbort = () => { stopped ??= "interrupted"; child.kill(); };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const done = await child.done;
      if (done.connections) {
        this.warmRelayExpected = Math.max(this.warmRelayExpected, relayedBefore + done.connections.accepted);
        // A connect that no listener accepted (refused, or cut short) may yet reach one: the grace.
        if (done.connections.attempted > done.connections.accepted) this.graceDue = true;
      } else {
        // The process died under the run: what it sent last was not counted.
        this.graceDue = true;
      }
      return { process: { ...done, partial: child.partial() }, ...(stopped ? { stopped } : {}) };
    } finally {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** A finished PHP run as a result: fatal → `php-fatal` with file:line, non-zero exit → `php-exit`. */
  private outcome(run: ProcessOutcome): Outcome {
    const stdout = text(run.stdout);
    const stderr = text(run.stderr);
    const base = { stdout, stderr, stdoutBytes: run.stdout.bytes, stderrBytes: run.stderr.bytes, truncated: { stdout: run.stdout.truncated, stderr: run.stderr.truncated } };
    const fatal = runFatal(this.layout.internal, run, stdout, stderr, fatalFromPhpOutput);
    if (fatal) {
      const firstLine = (fatal.message.split("\n")[0] ?? fatal.message).replace(` in ${fatal.file}:${fatal.line}`, "");
      return {
        ...base,
        status: "error",
        exitCode: run.exitCode || 255,
        error: { code: "php-fatal", message: `PHP fatal error: ${firstLine}${fatal.file ? ` (${fatal.file}:${fatal.line})` : ""}`, data: { message: fatal.message, file: fatal.file, line: fatal.line, type: fatal.type } },
      };
    }
    if (run.signal) {
      const why = run.signal === "SIGXFSZ" ? " (it wrote a file over the sandbox's file size limit)" : "";
      return { ...base, status: "error", exitCode: 128, error: { code: "php-exit", message: `PHP was killed by ${run.signal}${why}.`, data: { signal: run.signal } } };
    }
    if (run.exitCode !== 0) {
      const killedBy = SIGNAL_EXIT_CODES[run.exitCode];
      return { ...base, status: "error", exitCode: run.exitCode, error: { code: "php-exit", message: `PHP exited with code ${run.exitCode}${killedBy ? ` (${killedBy}, unless the code itself exited with it)` : ""}.${stderr ? ` stderr: ${stderr.slice(0, 500)}` : ""}`, data: { exitCode: run.exitCode, ...(killedBy ? { signal: killedBy.split(":")[0] } : {}) } } };
    }
    let json: unknown;
    if (!run.stdout.truncated && /^\s*[[{]/.test(stdout)) {
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
    }
    return { ...base, status: "ok", exitCode: 0, ...(json !== undefined ? { json } : {}) };
  }

  /** The database errors the last run (or the web request `requestId`) recorded (db.php drop-in), then forgets them. */
  private takeDbErrors(requestId?: string): DbErrorRecord[] {
    const name = requestId ? `db-errors-${requestId}.jsonl` : "db-errors.jsonl";
    const read = readSandboxFile(this.layout.internal, name, DB_ERRORS_BYTES);
    removeSandboxPath(this.layout.internal, name);
    if (!read) return [];
    const lines = read.data.toString("utf8").split("\n").filter(Boolean);
    const records: DbErrorRecord[] = [];
    for (const line of lines) {
      try {
        const r = JSON.parse(line) as { query?: unknown; message?: unknown };
        records.push({ query: String(r.query ?? ""), message: String(r.message ?? "") });
      } catch {
        // A line cut by a killed process.
      }
    }
    return records;
  }

  /**
   * Back to the state right after boot: the tables that changed (or were created) since are copied
   * back from the clean copy boot saved, or dropped (no server restart), and the wp-content entries
   * that differ from the cache's are copied again or removed (read-write mounts are host folders and
   * keep their content). When that fails (MariaDB died), the sandbox's site is made again from the
   * cache and MariaDB restarted.
   * Event `runtime-reset` `{ durationMs, how: "tables" | "restarted" }`, with "tables" also
   * `tablesRestored`, `tablesDropped`, `filesCopied`, `filesRemoved` (counts).
   */
  async reset(): Promise<void> {
    this.assertLive();
    await this.order.run(async () => {
      this.assertLive();
      // A background request (a WP-Cron run a page set off) must not write after the restore.
      await this.selfCallsSettled();
      const started = Date.now();
      let how: "tables" | "restarted" = "tables";
      let changed: Record<string, number> = {};
      try {
        // The database first: that run leaves no process of the sandbox behind (nothing preloaded
        // after it), so no PHP of the sandbox changes wp-content while the host, as root, syncs it.
        // php-cgi stays stopped for the whole restore (a page from the loopback front is not queued
        // behind reset()), and starts afresh after it: no page runs on the half-restored site.
        const { tables, files } = await this.cgi.whileStopped(async () => {
          const tables = await this.cleanDatabase("restore");
          // Only what differs: the warm PHP process keeps wp-content (and the mounts in it) bound.
          const synced = syncTree(this.setup.site.content, this.layout.content, { protect: this.contentMountPaths(), onCopied: (path) => giveToSandbox(path, this.layout.uid), changedSinceNs: this.contentCleanAtNs });
          // A mount point made again: the sandbox moved the folder holding it (its mount went along,
          // in the warm PHP process's view). A new PHP process binds the mounts where they belong.
          if (this.createMountPoints() > 0) this.php.kill();
          this.contentCleanAtNs = ctimeStamp(this.layout.root);
          return { tables, files: synced };
        });
        changed = { tablesRestored: tables.restored.length, tablesDropped: tables.dropped.length, filesCopied: files.copied.length, filesRemoved: files.removed.length };
      } catch {
        how = "restarted";
        await this.cgi.whileStopped(() => this.restoreSite());
        await this.saveCleanDatabase();
      }
      this.event("runtime-reset", { durationMs: Date.now() - started, how, ...changed });
    });
  }

  /**
   * Captures a `wp-codebox/wordpress-runtime-snapshot/v1` snapshot (`database.engine: "mariadb"`,
   * the database as `database/wordpress.sql`) after the commands called before it.
   * Event `snapshot-taken` `{ id, sha256, files }`.
   * @throws `runtime-disposed`, `state-export-failed`.
   */
  async snapshot(): Promise<WordPressRuntimeSnapshot> {
    this.assertLive();
    return this.order.run(async () => {
      this.assertLive();
      await this.selfCallsSettled();
      // No process of the sandbox may change wp-content or the dump while the host reads them.
      await this.dropPreloadedWordPress();
      const snapshot = await captureNativeSnapshot(this.stateHost());
      this.taken.set(snapshot.id, snapshot);
      this.event("snapshot-taken", { id: snapshot.id, sha256: snapshot.sha256, files: snapshot.files.length });
      return snapshot;
    });
  }

  /**
   * Makes this sandbox's database and wp-content equal to a snapshot taken on the native backend,
   * after verifying its hashes (the backend's `restore` calls it on a fresh sandbox).
   * Event `snapshot-restored` `{ id, sha256 }`.
   * @throws `invalid-snapshot`, `snapshot-tampered`, `snapshot-incompatible`, `state-export-failed`.
   */
  async restoreSnapshot(snapshot: unknown): Promise<void> {
    this.assertLive();
    assertRuntimeSnapshot(snapshot);
    await this.order.run(async () => {
      this.assertLive();
      // No process of the sandbox may run meanwhile: the dump is loaded as MariaDB's root.
      await this.dropPreloadedWordPress();
      await applyNativeSnapshot(this.stateHost(), snapshot);
      await this.dropPreloadedWordPress();
      this.event("snapshot-restored", { id: snapshot.id, sha256: snapshot.sha256 });
    });
  }

  private stateHost(): NativeStateHost {
    return { tools: this.setup.tools, layout: this.layout, treeDir: this.setup.treeDir, baseContent: this.setup.site.content, mounts: this.setup.mounts, dbRootPassword: this.dbRootPassword, wordpressVersion: this.setup.wordpressRelease, phpVersion: this.setup.phpVersion };
  }

  async collectArtifacts(spec?: ArtifactSpec): Promise<RuntimeArtifacts> {
    const wanted = spec?.executions ? new Set(spec.executions) : undefined;
    const bundled = spec?.includeRuntimeSnapshotBundles && !wanted ? [...this.taken.values()].map((s) => runtimeSnapshotBundleFiles(s)) : [];
    const results = wanted ? this.results.filter((r) => wanted.has(r.id)) : [...this.results];
    const gathered = this.evidence.collect(results, wanted !== undefined);
    return {
      info: this.info(),
      results,
      events: [...this.events],
      files: [...gathered.files, ...bundled.flatMap((b) => b.files)],
      secrets: Object.values(this.setup.secretEnv).filter((v) => v.length > 0),
      ...(gathered.review ? { review: gathered.review } : {}),
      ...(bundled.length ? { snapshots: bundled.map((b) => b.ref) } : {}),
    };
  }

  /** Kills the running PHP process and MariaDB and deletes the sandbox's folder. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.event("runtime-disposed");
    this.php.kill();
    this.cgi.kill();
    await this.front?.close();
    for (const server of this.netServers) server.close();
    this.server?.kill();
    await this.server?.exited;
    rmSync(this.layout.root, { recursive: true, force: true });
  }

  /**
   * Writes a file the sandbox's PHP reads into its internal folder, never through a link, FIFO or
   * folder the sandbox left at that name (`sandbox-files.ts`); the file is the sandbox uid's.
   */
  private writeInternal(relative: string, content: string | Uint8Array): void {
    writeSandboxFile(this.layout.internal, relative, content, this.layout.uid);
  }

  /** A file the sandbox's PHP wrote into its internal folder, as text, if it is a regular file (at most `maxBytes` read). */
  private readInternal(relative: string, maxBytes: number): string | undefined {
    return readSandboxFile(this.layout.internal, relative, maxBytes)?.data.toString("utf8");
  }

  private assertLive(): void {
    if (this.disposed) throw new WpCodeboxError("runtime-disposed", "This runtime was disposed; create a new one.");
  }

  private event(type: string, data?: Record<string, unknown>): void {
    this.events.push({ at: new Date().toISOString(), type, ...(data ? { data } : {}) });
  }
}

/** The host's own loopback names: `network: "allow"` does not open the host's local services to PHP. */
function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127\./.test(h) || h === "0.0.0.0";
}

/** True when the policy's allow-list names `host` itself. */
function listsHost(policy: RuntimePolicy, host: string): boolean {
  const network = policy.network;
  return typeof network === "object" && network.allowHosts.some((h) => h.toLowerCase() === host.toLowerCase());
}

/**
 * A command's outcome with the PHP fatals of the background requests it set off: with mode `fail`
 * an `ok` outcome becomes `php-fatal` naming the first one's message, file:line and request
 * (`data: { background: true, url, file, line, count }`), as on Playground; an outcome that
 * already failed keeps its own error. The records go in the result's `backgroundErrors`.
 */
function withBackgroundErrors(command: string, outcome: Outcome, errors: BackgroundErrorRecord[], mode: "fail" | "record"): Outcome & { backgroundErrors: BackgroundErrorRecord[] } {
  const listed = { ...outcome, backgroundErrors: errors };
  if (mode === "record" || outcome.status !== "ok") return listed;
  const first = errors[0]!;
  const firstLine = (first.message.split("\n")[0] ?? first.message).replace(` in ${first.file}:${first.line}`, "");
  const where = first.file ? ` (${first.file}:${first.line})` : "";
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more; see backgroundErrors)` : "";
  return {
    ...listed,
    status: "error",
    exitCode: 1,
    error: {
      code: "php-fatal",
      message: `${command}: a background request it set off (${first.method} ${first.url}) ended in a PHP fatal error: ${firstLine}${where}${more}. Fix the code, or pass background-errors=record to only list it.`,
      data: { background: true, url: first.url, file: first.file, line: first.line, count: errors.length },
    },
  };
}
