/**
 * A live WordPress Playground sandbox: a PHP worker thread with WordPress booted from the
 * installed-site cache under a copy-on-write layer of its own, a per-sandbox copy of wp-content, the
 * caller's mounts, and a loopback HTTP server. Timeouts terminate the worker and boot a replacement
 * on the same files. The site may call itself (`sandbox-origin.ts`): a command's result waits for
 * the self-calls its PHP started.
 *
 * This class only wires the parts together and holds the lock: the worker pool
 * (`php-worker-pool.ts`), boot (`sandbox-boot.ts`), command dispatch and deadlines
 * (`command-dispatch.ts`), actors and auth (`site-actors.ts`), the evidence ledger
 * (`evidence-ledger.ts`) and snapshots (`runtime-snapshots.ts`).
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import {
  DEFAULT_OUTPUT_CAP_BYTES,
  DEFAULT_SITE_REQUEST_TIMEOUT_MS,
  SELF_CALL_SETTLE_TIMEOUT_MS,
  SITE_HTTP_RESPONSE_CAP_BYTES,
  STABLE_SITE_ORIGIN,
  startSandboxHttpServer,
  type SandboxHttpServer,
  type SandboxRequestHandler,
  SerialQueue,
  WpCodeboxError,
  assertRuntimeSnapshot,
  errorMessage,
  type ArtifactSpec,
  type ExecutionResult,
  type ExecutionSpec,
  type ObservationSpec,
  type Runtime,
  OBSERVATION_TYPES,
  PLUGIN_ACTIVATION_OUTPUT_EVENT,
  type RuntimeArtifacts,
  type RuntimeInfo,
  type WordPressRuntimeSnapshot,
} from "@wp-codebox/runtime-core";
import { dispatchCommand } from "./command-dispatch.js";
import { EvidenceLedger } from "../evidence/evidence-ledger.js";
import { PhpWorkerPool } from "../worker/php-worker-pool.js";
import type { DeferredRequest, WorkerHttpResult, WorkerMount, WorkerRunResult } from "../worker/php-worker-protocol.js";
import { RuntimeLock } from "./runtime-lock.js";
import { RuntimeSnapshots } from "./sandbox-snapshots.js";
import type { RuntimeStateHost } from "./runtime-state.js";
import type { ContentSync } from "./content-sync.js";
import {
  activateInputs,
  createSandboxDir,
  fastForwardCron,
  populateSandboxDir,
  readWriteWorkerMounts,
  resetWorkspaceDir,
  sandboxContentDir,
  sandboxEvidenceDir,
  sandboxContentSync,
  sandboxCoreLayers,
  workerBootOptions,
  type PlaygroundRuntimeSetup,
} from "./sandbox-boot.js";
import { removeSandboxDir } from "./sandbox-dirs.js";
import { writeSeedPack } from "../site/opcache-seed.js";
import { PRIME_SQLITE_GRAMMAR_PHP } from "../php-source/site-php.js";
import type { SandboxOrigin } from "../worker/sandbox-origin.js";
import { SiteActors } from "./site-actors.js";
import { WorkClock } from "../worker/work-clock.js";
import { PHP_FATAL_HEADER, observeRuntime, type CommandContext, type RuntimeObservation, type TestDatabase } from "@wp-codebox/commands";

/** Every observation type this backend answers (`observeRuntime`). */
export const PLAYGROUND_OBSERVATION_TYPES = OBSERVATION_TYPES;

/**
 * What the WordPress core test library's wp-tests-config.php names: the sandbox's database is
 * SQLite through wp-content/db.php, which ignores these; they are the names the library expects.
 */
const PLAYGROUND_TEST_DATABASE: TestDatabase = Object.freeze({ name: "wordpress", user: "wordpress", password: "", host: "localhost", charset: "utf8" });

/** The page WordPress shows for a fatal error (wp_die's default message), for empty fatal responses. */
const CRITICAL_ERROR_PAGE = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>WordPress &rsaquo; Error</title></head><body><p>There has been a critical error on this website.</p></body></html>\n";

/**
 * What a site request that outlived the site request limit gets: 504, and a short text that says
 * which limit stopped it and how to change it.
 */
function siteRequestTimeoutResponse(limitMs: number): WorkerHttpResult {
  const limit = limitMs % 1000 === 0 ? `${limitMs / 1000}s` : `${limitMs}ms`;
  const text = new TextEncoder().encode(
    `wp-codebox: this request did not finish within ${limit} (the site request limit), so its PHP worker was stopped and replaced; the site keeps serving. ` +
      `Look for an endless loop or a call that waits on something that never answers. Change the limit with --site-request-timeout <duration> ("0" = none) on run, serve, check or mcp.\n`,
  );
  // What PHP's own max_execution_time (which php-wasm does not enforce) ends a request with: a
  // fatal error, so a browser step that loaded the page fails with it.
  const fatal = { message: `Maximum execution time of ${limit} exceeded: the request did not finish within the site request limit, and its PHP worker was replaced`, file: "", line: 0, type: 1 };
  return { status: 504, headers: { "content-type": ["text/plain; charset=utf-8"], "cache-control": ["no-store"] }, body: { data: text, bytes: text.byteLength, truncated: false }, fatal };
}

/** A site still being made (`PlaygroundRuntime.boot`): installed once `siteReady` resolves, its WordPress tree there once `coreReady` does. */
export interface SiteStages {
  siteReady: Promise<void>;
  coreReady?: Promise<void>;
}

export class PlaygroundRuntime implements Runtime {
  readonly id = `runtime-${randomUUID()}`;
  private readonly pool: PhpWorkerPool;
  private readonly ledger = new EvidenceLedger();
  private readonly actors: SiteActors;
  private readonly snapshots: RuntimeSnapshots;
  /** Read-write mounts every worker gets; the pool appends read-only ones added later. */
  private readonly workerMounts: WorkerMount[] = [];
  private server!: SandboxHttpServer;
  private sandboxDir!: string;
  /** Restores only the wp-content files a sandbox changed (fast `reset()`). */
  private contentSync: ContentSync | undefined;
  private disposed = false;
  private bootDurationMs = 0;
  /** The installed site's OPcache seed being written (`saveOpcacheSeed`); never rejects. */
  private seedWrite: Promise<void> | undefined;
  private warmedHttp = false;
  /** Commands and forwarded requests hold it shared; reset/snapshot/restore hold it exclusive. */
  private readonly lock = new RuntimeLock();
  /** Epoch ms of the last command or site request (for `serve --ttl`). */
  private lastActivity = Date.now();
  /** `blocking => false` self-calls handed over by a worker and not answered yet. */
  private deferredRunning = 0;
  /** Called whenever the self-calls in flight may have changed (`selfCallsSettled`). */
  private readonly settleWaiters = new Set<() => void>();

  /** Virtual clock and entropy streams of this sandbox's PHP work (inactive with host time and entropy). */
  private readonly clock: WorkClock;
  /** Where boot left the clock (`recycle()` goes back there). */
  private bootClock = { k: -1, lastEndUs: 0 };

  private constructor(private readonly setup: PlaygroundRuntimeSetup) {
    this.clock = new WorkClock(setup.determinism ?? { clock: "real", origin: "loopback" });
    this.pool = new PhpWorkerPool({
      workers: setup.workers ?? 1,
      bootOptions: () => workerBootOptions(this.setup, this.sandboxDir, { origin: this.sandboxOrigin(), selfCallPort: this.server.selfCallPort }),
      mounts: this.workerMounts,
      ...(setup.onProgress ? { onProgress: setup.onProgress } : {}),
      onNetworkDenied: (denied) =>
        // Raw PHP sockets refused by the network guard (php-network-guard.ts).
        this.ledger.event("policy-denied", { code: "policy-denied", capability: `network:${denied.host}`, host: denied.host, port: denied.port, message: `The runtime policy does not allow PHP to connect to ${denied.host}:${denied.port}; allow the host in the policy's network rule.` }),
      onEvent: (type, data) => this.ledger.event(type, data),
      onWorkerStopped: () => this.actors.forgetAuth(),
      onSelfCall: () => this.server.expectSelfCall(),
      onDeferredRequest: (request) => this.sendDeferred(request),
      clock: this.clock,
    });
    this.actors = new SiteActors({ primary: () => this.pool.primary, lock: this.lock, onEvent: (type, data) => this.ledger.event(type, data) });
    this.snapshots = new RuntimeSnapshots(() => this.stateHost());
  }

  /**
   * The site's origin as WordPress, HTTP commands and the browser see it: the stable origin
   * (mapped to the loopback server) or the loopback server's own `http://127.0.0.1:PORT`.
   */
  private get siteOrigin(): string {
    return this.setup.determinism?.origin === "stable" ? STABLE_SITE_ORIGIN : this.server.origin;
  }

  /** The sandbox's own site, for `isSandboxSelf` (sandbox-origin.ts). */
  private sandboxOrigin(): SandboxOrigin {
    return { siteUrl: this.siteOrigin, listen: { host: "127.0.0.1", port: this.server.port } };
  }

  /**
   * Boots a sandbox from a prepared setup.
   * @param site - given while `setup.siteDir` is still being installed (a first boot): resolves
   *   once it is; the sandbox's first PHP worker loads and starts PHP on the second core meanwhile,
   *   and the sandbox folder is filled and WordPress booted then. The setup's site fields
   *   (`siteDir`, `opcacheSeedPack`, `seedOpcache`, the WordPress release and `bootMode`) may be
   *   filled in until then: the worker is given them when the site is released. A function
   *   (a machine's first run, the WordPress tree not there yet) is called once that worker is
   *   started and starts finding the tree: its `coreReady` resolves once `setup.seedOpcache` is
   *   final, and the worker compiles core meanwhile.
   * @throws `boot-failed` (WordPress did not boot, or a `--plugin`/`--theme` failed to activate);
   *   what the site promises reject with.
   */
  static async boot(setup: PlaygroundRuntimeSetup, site?: Promise<void> | (() => SiteStages)): Promise<PlaygroundRuntime> {
    const runtime = new PlaygroundRuntime(setup);
    try {
      await runtime.start(site);
    } catch (error) {
      await runtime.dispose();
      throw error;
    }
    return runtime;
  }

  private async start(site?: Promise<void> | (() => SiteStages)): Promise<void> {
    const started = Date.now();
    this.sandboxDir = createSandboxDir();
    this.ledger.spillTo(sandboxEvidenceDir(this.sandboxDir), this.setup.evidenceMemoryBytes);
    this.workerMounts.push(...readWriteWorkerMounts(this.setup.mounts));
    const populate = (): void => {
      populateSandboxDir(this.sandboxDir, this.setup);
      this.contentSync = sandboxContentSync(this.sandboxDir, this.setup);
      this.setup.onProgress?.("Booting WordPress");
    };
    if (!site) populate();
    let coreReady: Promise<void> | undefined;
    const populated = (): Promise<void> => {
      const stages = typeof site === "function" ? site() : { siteReady: site! };
      coreReady = stages.coreReady;
      return stages.siteReady.then(populate);
    };
    this.server = await startSandboxHttpServer();
    await this.pool.start(site ? populated : undefined, {
      coreReady: () => coreReady?.then(() => this.setup.seedOpcache?.precompile),
      site: () => ({ coreDir: this.setup.siteDir, ...(this.setup.opcacheSeedPack ? { opcacheSeedPack: this.setup.opcacheSeedPack } : {}) }),
    });
    await this.saveOpcacheSeed();
    this.server.onSelfCallsChange(() => this.notifySettleWaiters());
    this.server.setHandler((request, meta) => this.forward(request, meta));
    const moved = await fastForwardCron(this.pool.primary);
    if (moved > 0) this.ledger.event("cron-fast-forwarded", { events: moved });
    if (await activateInputs(this.pool.primary, this.setup, (printed) => this.ledger.event(PLUGIN_ACTIVATION_OUTPUT_EVENT, { ...printed }))) this.ledger.event("inputs-activated", { plugins: this.setup.plugins, themes: this.setup.themes });
    await this.selfCallsSettled();
    this.snapshots.markClean();
    this.bootClock = this.clock.position();
    this.bootDurationMs = Date.now() - started;
    if (this.setup.wordpressSource) this.ledger.event("wordpress-release", { ...this.setup.wordpressSource });
    this.ledger.event("runtime-booted", {
      durationMs: this.bootDurationMs,
      bootMode: this.setup.bootMode,
      siteUrl: this.siteOrigin,
      ...(this.siteOrigin !== this.server.origin ? { loopbackUrl: this.server.origin } : {}),
      ...(this.pool.primary.prestarted ? { workerPrestarted: true } : {}),
    });
  }

  /**
   * Saves the primary worker's OPcache as the installed site's seed when the site has none
   * (`setup.seedOpcache`): core compiled from the release while the site installed, and the
   * integration and preload scripts under `/internal/shared` (the environment's must-use plugin is
   * never cached), with the SQLite integration's MySQL grammar built (sqlite-grammar-preload.php
   * keeps it in OPcache's folder; `prime_grammar` builds it without loading WordPress).
   * It runs right after the worker booted, before the caller's inputs are activated or any command
   * runs, and runs no WordPress load (which would run the site's drop-ins, such as a mounted
   * `object-cache.php`), so no code of the caller's has run in the worker: the seed holds only
   * what came from the release and this package.
   * A seed that cannot be saved is not an error: later boots compile core themselves, and save it then.
   * The worker hands over its cache packed; writing it (~28 MB) happens while the sandbox goes on
   * (`seedWrite`, awaited by `dispose`).
   */
  private async saveOpcacheSeed(): Promise<void> {
    const seed = this.setup.seedOpcache;
    if (!seed) return;
    delete this.setup.seedOpcache;
    if (existsSync(seed.pack)) {
      this.setup.opcacheSeedPack = seed.pack;
      return;
    }
    let pack: Uint8Array;
    try {
      // Its outcome does not matter: without the grammar (a site with its own db.php) the seed lacks only it.
      await this.pool.primary.call({ op: "run", code: PRIME_SQLITE_GRAMMAR_PHP, capBytes: 1 << 16 }, { partOfBoot: true });
      ({ pack } = await this.pool.primary.call<{ pack: Uint8Array }>({ op: "export-opcache", compileDirs: ["/internal/shared"] }));
    } catch {
      return;
    }
    // Workers booted later (for HTTP, or to replace one) start from it once it is written; until
    // then they compile core themselves.
    this.seedWrite = writeSeedPack(pack, seed.pack).then(
      () => {
        this.setup.opcacheSeedPack = seed.pack;
      },
      () => undefined,
    );
  }

  /**
   * Serves a loopback HTTP request on an idle worker (`PhpWorkerPool.serveHttp`): from a browser,
   * or from PHP calling its own site (`meta.fromSandbox`; one whose caller waits gets a worker of
   * its own when none is idle).
   */
  private async forward(request: Parameters<SandboxRequestHandler>[0], meta: Parameters<SandboxRequestHandler>[1]): Promise<WorkerHttpResult> {
    this.lastActivity = Date.now();
    if (this.actors.isLoginRequest(request.url, this.server.origin)) return this.actors.login(request.url, this.server.origin);
    // The loopback server names requests by its own origin; WordPress knows the site by siteOrigin.
    const url = request.url.startsWith(this.server.origin) ? `${this.siteOrigin}${request.url.slice(this.server.origin.length)}` : request.url;
    return this.serveLoopback({ ...request, url }, { fromSandbox: meta.fromSandbox, waitingSelfCall: () => meta.fromSandbox && !meta.clientGone() });
  }

  private async serveLoopback(request: { method: string; url: string; headers: Record<string, string>; body?: Uint8Array }, options: { fromSandbox: boolean; waitingSelfCall: () => boolean }): Promise<WorkerHttpResult> {
    const limitMs = this.setup.siteRequestTimeoutMs ?? DEFAULT_SITE_REQUEST_TIMEOUT_MS;
    const response = await this.pool.serveHttp(
      (target) =>
        this.lock.withShared(async () => {
          const call = () => target.call<WorkerHttpResult>({ op: "http", ...request, capBytes: SITE_HTTP_RESPONSE_CAP_BYTES });
          if (limitMs <= 0) return call();
          const outcome = await this.pool.withDeadline(target, limitMs, call, () => this.actors.forgetAuth());
          if (outcome.done) return outcome.value;
          this.siteRequestTimedOut(request, limitMs, options.fromSandbox);
          return siteRequestTimeoutResponse(limitMs);
        }),
      options,
    );
    // Loopback traffic (a browser) belongs to the commands running now.
    this.ledger.addDbErrorsToRunning(response.dbErrors);
    if (response.fatal) {
      this.ledger.event("php-fatal", { url: request.url, status: response.status, message: response.fatal.message, file: response.fatal.file, line: response.fatal.line });
      // A request PHP made to its own site (WP-Cron, a loopback) belongs to the commands running now.
      if (options.fromSandbox) {
        this.ledger.background.addToRunning({ kind: "php-fatal", message: response.fatal.message, file: response.fatal.file, line: response.fatal.line, method: request.method, url: request.url, status: response.status });
      }
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

  /** Records a site request stopped at the site request limit (its worker was replaced). */
  private siteRequestTimedOut(request: { method: string; url: string }, limitMs: number, fromSandbox: boolean): void {
    this.ledger.event("site-request-timeout", { method: request.method, url: request.url, limitMs, fromSandbox });
    this.ledger.event("php-worker-replaced", { reason: "site-request-timeout" });
  }

  /**
   * Queues a `blocking => false` request PHP made to its own site (WP-Cron's spawn): the worker
   * handed it over when the PHP work that made it ended. Nobody waits for the answer, so it never
   * gets a worker of its own; it runs on the next idle one, and `selfCallsSettled()` waits for it.
   */
  private sendDeferred(deferred: DeferredRequest): void {
    let url: URL;
    try {
      url = new URL(deferred.url);
    } catch {
      this.ledger.event("deferred-request", { method: deferred.method, url: deferred.url.slice(0, 500), error: "not a URL" });
      return;
    }
    this.deferredRunning += 1;
    const path = `${url.pathname}${url.search}`;
    const request = { method: deferred.method, url: `${this.siteOrigin}${path}`, headers: deferred.headers, ...(deferred.body ? { body: deferred.body } : {}) };
    // Recorded either way: a background request that silently did not run is what this evidence is for.
    this.serveLoopback(request, { fromSandbox: true, waitingSelfCall: () => false })
      .then(
        (response) => this.ledger.event("deferred-request", { method: deferred.method, path, status: response.status }),
        (error: unknown) => this.ledger.event("deferred-request", { method: deferred.method, path, error: errorMessage(error) }),
      )
      .finally(() => {
        this.deferredRunning -= 1;
        this.notifySettleWaiters();
      });
  }

  private notifySettleWaiters(): void {
    for (const waiter of [...this.settleWaiters]) waiter();
  }

  /**
   * Resolves once the self-calls PHP started have finished (a WP-Cron run spawned by a page load,
   * Site Health's loopback test), or after `timeoutMs` (default `SELF_CALL_SETTLE_TIMEOUT_MS`,
   * recording a `self-calls-unsettled` event). A command's result is returned only then, so the
   * next command sees what they did.
   */
  private selfCallsSettled(timeoutMs: number = SELF_CALL_SETTLE_TIMEOUT_MS): Promise<void> {
    const settled = () => this.disposed || (this.deferredRunning === 0 && this.server.selfCallsSettled());
    if (settled()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const check = () => {
        if (!settled()) return;
        clearTimeout(timer);
        this.settleWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.settleWaiters.delete(check);
        // The result goes back with background work still running: say so in the evidence.
        this.ledger.event("self-calls-unsettled", { waitedMs: timeoutMs, deferredRunning: this.deferredRunning });
        resolve();
      }, timeoutMs);
      this.settleWaiters.add(check);
    });
  }

  /**
   * A one-click administrator login for a browser on this machine: `<site>/__wp-codebox/login?key=…`
   * sets WordPress's auth cookies for the `admin` user and redirects to `/wp-admin/`. The key is
   * random per runtime (256 bits) and compared in constant time; the URL works until disposal,
   * or in a warm pool until the sandbox is recycled for another session (`recycle()` makes a new key).
   * @returns the login URL.
   */
  async loginUrl(): Promise<string> {
    this.assertLive();
    return this.actors.loginUrl(this.server.origin);
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
      ...(this.setup.wordpress ? { wordpress: { ...this.setup.wordpress } } : {}),
      phpVersion: this.setup.phpVersion,
      phpExtensions: [...this.setup.phpExtensions],
      siteUrl: this.server ? this.siteOrigin : "",
      bootMode: this.setup.bootMode,
      bootDurationMs: this.bootDurationMs,
      mounts: this.setup.mounts,
      policy: this.setup.policy,
      plugins: this.setup.plugins,
      themes: this.setup.themes,
      determinism: this.setup.determinism ?? { clock: "real", origin: "loopback" },
      ...(this.setup.defines ? { defines: { ...this.setup.defines } } : {}),
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
   * Commands run one at a time, in the order `execute` was called, with `reset`, `snapshot`,
   * `restoreSnapshot` and `recycle` in the same line (`order`); each deadline starts when its
   * command starts.
   * @throws `runtime-disposed`, `unknown-command`, `policy-denied`, `invalid-argument`,
   *   `missing-argument` (contract misuse; nothing ran).
   */
  async execute(spec: ExecutionSpec): Promise<ExecutionResult> {
    this.lastActivity = Date.now();
    return this.order.run(() => this.lock.withShared(async () => {
      this.assertLive();
      return dispatchCommand(
        {
          policy: this.setup.policy,
          ledger: this.ledger,
          context: (executionId) => this.context(executionId),
          primary: () => this.pool.primary,
          replaceWorker: (reason) => this.replaceWorker(reason),
          selfCallsSettled: () => this.selfCallsSettled(),
          disposed: () => this.disposed,
        },
        spec,
      );
    }));
  }

  /**
   * Commands and the calls that change the whole sandbox (reset, snapshots, recycle), one at a time
   * in call order. Commands share the primary PHP worker and its scratch files (run-php's
   * `/internal/wp-codebox/code/code.php`): two at once ran each other's code. A reset called after
   * a command must not run before it (it did when the command was still waiting for its turn).
   * Observations and requests to the site are not in this line.
   */
  private readonly order = new SerialQueue();

  private async replaceWorker(reason: string): Promise<void> {
    await this.pool.replace(this.pool.primary, () => this.actors.forgetAuth());
    this.ledger.event("php-worker-replaced", { reason });
  }

  private context(executionId: string): CommandContext {
    // The waits before each piece of this command's PHP work share one budget: a plugin whose
    // background requests chain without end (a queue runner re-spawning itself) costs the command
    // at most SELF_CALL_SETTLE_TIMEOUT_MS in all, not that much per request.
    let settleLeftMs = SELF_CALL_SETTLE_TIMEOUT_MS;
    const settleFirst = async (): Promise<void> => {
      if (settleLeftMs <= 0) return;
      const started = Date.now();
      await this.selfCallsSettled(settleLeftMs);
      settleLeftMs -= Date.now() - started;
    };
    const ctx: CommandContext = {
      executionId,
      reservedScreenshotNames: () => this.ledger.reservedScreenshotNames(),
      info: () => this.info(),
      policy: this.setup.policy,
      mounts: this.setup.mounts,
      cwd: this.setup.cwd,
      wpCli: this.setup.wpCli ?? {},
      updateBaselines: this.setup.updateBaselines ?? false,
      outputCapBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      testDatabase: PLAYGROUND_TEST_DATABASE,
      siteUrl: this.siteOrigin,
      loopbackUrl: this.server.origin,
      browserClock: () => ({ nowMs: this.clock.nowMs(), seed: this.setup.determinism?.seed, key: this.clock.workCount }),
      // Each piece of a command's PHP work waits for the background requests of the pieces before
      // it. A WP-Cron run spawned by one page load otherwise runs on a second worker while the
      // command's next request runs on the primary: two PHPs writing the same SQLite rows lost
      // cron updates and left the cron lock behind, at random.
      runPhp: async (code, options) => {
        await settleFirst();
        const run = await this.pool.primary.call<WorkerRunResult>({
          op: "run",
          code,
          env: { ...this.setup.env, ...this.setup.secretEnv, ...(options?.env ?? {}) },
          capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
        });
        this.ledger.addDbErrors(executionId, run.dbErrors);
        return run;
      },
      http: async (request, options) => {
        await settleFirst();
        if (!this.warmedHttp) {
          // The first request after boot is answered with a redirect to itself.
          this.warmedHttp = true;
          await this.pool.primary.call<WorkerHttpResult>({ op: "http", method: "GET", url: `${this.siteOrigin}/`, headers: {}, capBytes: 0 });
          // The warm-up is a page load too: the WP-Cron it spawned runs before the real request.
          await settleFirst();
        }
        const target = this.pool.primary;
        const call = () => target.call<WorkerHttpResult>({ op: "http", ...request, capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES });
        const limitMs = this.setup.siteRequestTimeoutMs ?? DEFAULT_SITE_REQUEST_TIMEOUT_MS;
        if (!options?.siteRequestLimit || limitMs <= 0) {
          const response = await call();
          this.ledger.addDbErrors(executionId, response.dbErrors);
          return response;
        }
        const outcome = await this.pool.withDeadline(target, limitMs, call, () => this.actors.forgetAuth());
        if (outcome.done) {
          this.ledger.addDbErrors(executionId, outcome.value.dbErrors);
          return outcome.value;
        }
        this.siteRequestTimedOut(request, limitMs, false);
        return siteRequestTimeoutResponse(limitMs);
      },
      httpParallel: async (request, options) => {
        if (!this.warmedHttp) await ctx.http({ method: "GET", url: `${this.siteOrigin}/`, headers: {} });
        // fromSandbox: a command's own request does not start the browser's extra workers.
        const response = await this.pool.serveHttp(
          async (target) => {
            // Dispatched at once (before any await), so the pool sees this worker busy.
            const call = () => target.call<WorkerHttpResult>({ op: "http", ...request, capBytes: this.setup.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES });
            const outcome = await this.pool.withDeadline(target, options.deadlineMs, call, () => this.actors.forgetAuth());
            if (outcome.done) return outcome.value;
            this.ledger.event("php-worker-replaced", { reason: "deadline" });
            throw new WpCodeboxError("timeout", `${request.method} ${request.url} did not finish within ${options.deadlineMs} ms: its PHP worker was stopped and replaced.`, { limitMs: options.deadlineMs });
          },
          { fromSandbox: true, waitingSelfCall: () => false },
        );
        this.ledger.addDbErrors(executionId, response.dbErrors);
        return response;
      },
      parallelWorkers: (total) => {
        const workers = Math.max(1, Math.min(total, availableParallelism()));
        this.pool.addHttpWorkers(workers);
        return workers;
      },
      resolveActor: async (as) => {
        await settleFirst();
        return this.actors.resolveActor(as);
      },
      authFor: async (actor) => {
        await settleFirst();
        return this.actors.authFor(actor);
      },
      wrapperUser: async (as) => {
        await settleFirst();
        return this.actors.wrapperUser(as);
      },
      withDeadline: async <T>(timeoutMs: number, work: () => Promise<T>) => {
        const outcome = await this.pool.withDeadline(this.pool.primary, timeoutMs, work, () => this.actors.forgetAuth());
        if (!outcome.done) this.ledger.event("php-worker-replaced", { reason: "deadline" });
        return outcome;
      },
      writeSandboxFile: (path, data) => this.pool.writeFile(path, data),
      readSandboxFile: async (path) => {
        const data = await this.pool.primary.call<Uint8Array | null>({ op: "read-file", path });
        return data ? new Uint8Array(data) : null;
      },
      mountReadOnly: (hostPath, vfsPath) => this.pool.mountEverywhere({ hostPath, vfsPath, readOnly: true }),
      secrets: this.secretValues(),
      nextArtifactDirectory: (prefix) => this.ledger.nextArtifactDirectory(prefix),
    };
    return ctx;
  }

  /** Non-empty secret values: redacted from every artifact. */
  private secretValues(): string[] {
    return Object.values(this.setup.secretEnv).filter((v) => v.length > 0);
  }

  private stateHost(): RuntimeStateHost {
    return {
      siteDir: this.setup.siteDir,
      contentDir: sandboxContentDir(this.sandboxDir),
      coreLayers: sandboxCoreLayers(this.sandboxDir),
      mounts: this.setup.mounts,
      backend: "playground",
      wordpressVersion: this.setup.wordpressRelease,
      phpVersion: this.setup.phpVersion,
      runPhp: (code) => this.pool.primary.call<WorkerRunResult>({ op: "run", code, capBytes: 64 << 20 }),
      ...(this.contentSync ? { contentSync: this.contentSync } : {}),
    };
  }

  private assertLive(): void {
    if (this.disposed) throw new WpCodeboxError("runtime-disposed", "This runtime was disposed; create a new one.");
  }

  /**
   * Observes the runtime; see `observeRuntime` (@wp-codebox/commands) for the types and their data.
   * Section files of a `wordpress-state` observation join this runtime's bundle files.
   * @returns `{ type, data, artifactRefs? }`.
   * @throws `runtime-disposed`, `observation-unsupported`, `invalid-state-request`, `state-export-failed`.
   */
  async observe(spec: ObservationSpec): Promise<Omit<RuntimeObservation, "files">> {
    this.assertLive();
    return this.lock.withShared(async () => {
      const { files, ...observation } = await observeRuntime(
        {
          info: () => this.info(),
          results: () => this.ledger.results,
          events: () => this.ledger.events,
          secrets: this.secretValues(),
          runPhp: (code) => this.pool.primary.call<WorkerRunResult>({ op: "run", code, capBytes: 64 << 20 }),
          context: () => this.context(`observe-${randomUUID()}`),
          nextDirectory: (prefix) => this.ledger.nextArtifactDirectory(prefix),
        },
        spec,
      );
      if (files) this.ledger.addFiles(files);
      return observation;
    });
  }

  /**
   * Captures a `wp-codebox/wordpress-runtime-snapshot/v1` snapshot while no command runs.
   * @returns `{ schema, id, semantics: "runtime-state-artifact", …, files (with contents), sha256 }`.
   */
  async snapshot(): Promise<WordPressRuntimeSnapshot> {
    this.assertLive();
    return this.order.run(async () => {
      this.assertLive();
      const snapshot = await this.lock.withExclusive(() => this.snapshots.capture());
      this.snapshots.remember(snapshot);
      this.ledger.event("snapshot-taken", { id: snapshot.id, sha256: snapshot.sha256, files: snapshot.files.length });
      return snapshot;
    });
  }

  /**
   * Makes this runtime's state equal to a snapshot, after verifying its hashes (used by the
   * backend's `restore` on a fresh runtime).
   * @throws `invalid-snapshot`, `snapshot-tampered`, `snapshot-incompatible`.
   */
  async restoreSnapshot(snapshot: unknown): Promise<void> {
    this.assertLive();
    assertRuntimeSnapshot(snapshot);
    await this.order.run(async () => {
      this.assertLive();
      await this.lock.withExclusive(async () => {
        this.snapshots.apply(snapshot);
        await this.forgetCachedFiles();
        this.actors.forgetAuth();
      });
      this.ledger.event("snapshot-restored", { id: snapshot.id, sha256: snapshot.sha256 });
    });
  }

  /**
   * Returns the sandbox to its state right after boot without booting: wp-content is
   * rebuilt from the installed site, the read-only mounts and the post-boot database. Waits for
   * running commands. Read-write mounts are host folders and keep their content.
   */
  async reset(): Promise<void> {
    this.assertLive();
    await this.order.run(async () => {
      this.assertLive();
      const started = Date.now();
      await this.lock.withExclusive(async () => {
        this.snapshots.resetToClean();
        await this.forgetCachedFiles();
        this.actors.forgetAuth();
      });
      this.ledger.event("runtime-reset", { durationMs: Date.now() - started });
    });
  }

  /**
   * Makes the sandbox as good as freshly booted, for the next session of a warm pool: `reset()`
   * (database, wp-content, core), plus what a session could leave behind that `reset()` keeps
   * within a session. The PHP workers' in-memory file system (`/tmp`, and any path outside the host
   * mounts) goes back to what it held at boot: what a session created there is deleted, with
   * PHP's compiled copies of it; if a session changed something that was there at boot, the
   * workers are replaced instead (slower: a boot). Extra HTTP workers stop. `/workspace` is emptied
   * and its read-only mounts copied again; cached logins are dropped; a virtual clock and seeded
   * entropy go back to where boot left them; everything recorded (results, events, files,
   * snapshots, browser assertions, PHPUnit test counts) is forgotten, except the boot event, so a
   * bundle still says how the site started.
   * Event `runtime-recycled` `{ durationMs, workers: "restored" | "restarted", restartReason? }`.
   * @throws `boot-failed` when a replacement worker does not boot (the pool then re-boots the sandbox).
   */
  async recycle(): Promise<void> {
    this.assertLive();
    await this.order.run(() => this.recycleNow());
  }

  private async recycleNow(): Promise<void> {
    this.assertLive();
    const started = Date.now();
    const workers = await this.lock.withExclusive(async () => {
      this.snapshots.resetToClean();
      const how = await this.pool.recycleAll(() => {
        this.actors.forgetAuth();
        // The earlier session's one-click login link must not log into the next session's site.
        this.actors.forgetLoginUrl();
        resetWorkspaceDir(this.sandboxDir, this.setup);
      }, ["/wordpress", "/workspace"]);
      await this.forgetLastUniqid();
      this.clock.rewind(this.bootClock);
      this.warmedHttp = false;
      return how;
    });
    this.ledger.forget();
    this.snapshots.forget();
    this.ledger.event("runtime-recycled", { durationMs: Date.now() - started, workers: workers.how, ...(workers.how === "restarted" ? { restartReason: workers.reason } : {}) });
  }

  /**
   * PHP's uniqid() keeps, for the life of the process, the instant of its last call, and reads the
   * clock again until the instant differs. A recycled sandbox replays the instants of the sessions
   * before it, so its first uniqid() could meet the last one of the previous session and read the
   * clock once more than a fresh worker does, moving every later instant by 1 µs. One call at an
   * instant no session reaches leaves that instant out of the way.
   */
  private async forgetLastUniqid(): Promise<void> {
    const mark = this.clock.outsideMark();
    if (!mark) return;
    await this.pool.primary.call<WorkerRunResult>({ op: "run", code: "<?php uniqid();", capBytes: 1024 }, { mark }).catch(() => undefined);
  }

  /** Every worker re-reads `/wordpress` from the host after the host changed it (reset, restore). */
  private async forgetCachedFiles(): Promise<void> {
    await Promise.all(this.pool.all().map((h) => h.call({ op: "forget-cached-files", vfsPath: "/wordpress" })));
  }

  /** Everything gathered so far, for `writeArtifactBundle`. */
  async collectArtifacts(spec?: ArtifactSpec): Promise<RuntimeArtifacts> {
    return this.ledger.collect(this.info(), this.secretValues(), this.snapshots.all(), spec);
  }

  /** Stops the worker and the server and deletes the sandbox's temporary files. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.ledger.event("runtime-disposed");
    this.notifySettleWaiters();
    await this.pool.dispose();
    await this.server?.close().catch(() => undefined);
    // The installed site's seed, still being written when the caller was done with the sandbox.
    await this.seedWrite;
    if (this.sandboxDir) removeSandboxDir(this.sandboxDir);
  }
}
