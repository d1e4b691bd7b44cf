/**
 * The attach client: runtime-core's `Runtime` interface over the live control protocol, so `run`,
 * `episode run`, `collect` and the MCP server drive a `wp-codebox serve` sandbox exactly like a
 * local one. `dispose()` detaches (the sandbox stays up; a pooled one is recycled for the next
 * session). While attached, the client renews its session's lease every `leaseMs / 3` on a timer
 * that never keeps the process alive, so an idle client keeps its sandbox and a dead one loses it
 * within `leaseMs`. Kept light on purpose (node:http only): it is on the CLI's `--attach` start-up path.
 */
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import {
  WpCodeboxError,
  type ArtifactFileRead,
  type ArtifactSpec,
  type ErrorCode,
  type ExecutionResult,
  type ExecutionSpec,
  type ObservationSpec,
  type Runtime,
  type RuntimeArtifacts,
  type RuntimeBackend,
  type RuntimeCreateSpec,
  type RuntimeInfo,
} from "@wp-codebox/runtime-core";
import { CONTROL_PREFIX, RENEW_OP, type ArtifactReadSpec, type ControlDescription, type SessionGrant, type SessionOp, type SessionRenewal } from "./control-protocol.js";
import { fromWire, toWire } from "./wire.js";

/** How to reach a `wp-codebox serve` control endpoint. */
export interface AttachOptions {
  /** Control URL printed by `serve` (`http://127.0.0.1:PORT`, with or without `/v1`). */
  control: string;
  /** Bearer token printed by `serve`. */
  token: string;
  /** Re-use an existing session id instead of taking a new one. */
  session?: string;
  /**
   * When serve no longer knows the session (its lease expired while this process was suspended,
   * or it was released), take a new session and run the call again, instead of failing every later
   * call with `attach-session-not-found`. `onReattach` says what happened. Default false: a short
   * client (`run --attach`) should fail rather than go on in a sandbox that may have been reset.
   */
  reattach?: boolean;
  /** Called after a transparent re-attach (`reattach`). */
  onReattach?: (event: ReattachEvent) => void;
}

/** What a transparent re-attach did. */
export interface ReattachEvent {
  previousSession: string;
  session: string;
  previousSandbox: string;
  sandbox: string;
  /** `shared`: the one sandbox of serve, state kept. `pool`: a pooled sandbox, reset when the old session was released. */
  mode: "shared" | "pool";
  /** True when the site is as the earlier session left it (shared mode); false when it is freshly reset (pool mode). */
  stateKept: boolean;
  /** The server's words on the old session (`Session … expired after 60000 ms …`). */
  reason: string;
}

/** HTTP exchanges with one control server; failures reject with a `WpCodeboxError` carrying the server's code. */
export class ControlConnection {
  readonly base: URL;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 4 });

  constructor(control: string, private readonly token: string) {
    let url: URL;
    try {
      url = new URL(control);
    } catch {
      throw new WpCodeboxError("invalid-argument", `--attach ${control} is not a URL: pass the control URL serve printed (http://127.0.0.1:PORT).`, { control });
    }
    if (url.protocol !== "http:") throw new WpCodeboxError("invalid-argument", `--attach ${control}: the control endpoint is plain http on 127.0.0.1.`, { control });
    url.pathname = url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
    this.base = url;
  }

  /**
   * One call. Never retried: a call that reached the sandbox may have done its work there.
   * @throws `attach-unreachable` (nothing listens), `attach-connection-lost` (serve closed the
   *   connection without answering: it stopped, before or during the call), `attach-protocol-error`,
   *   or the server's own error code.
   */
  call<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(toWire(body)));
    return new Promise<T>((resolve, reject) => {
      const req = httpRequest(
        new URL(`${this.base.pathname.replace(/\/+$/, "")}${CONTROL_PREFIX}${path}`, this.base.origin),
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(payload ? { "content-type": "application/json", "content-length": String(payload.byteLength) } : {}),
          },
          ...(signal ? { signal } : {}),
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            let parsed: { value?: unknown; error?: { code: string; message: string; data?: Record<string, unknown> } } & Record<string, unknown>;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
              reject(new WpCodeboxError("attach-protocol-error", `The control endpoint ${this.base.origin} answered HTTP ${res.statusCode} with a body that is not JSON: is it a wp-codebox serve endpoint?`, { status: res.statusCode }));
              return;
            }
            if ((res.statusCode ?? 500) >= 400 || parsed.error) {
              const e = parsed.error ?? { code: "attach-protocol-error", message: `HTTP ${res.statusCode}` };
              // A code this client does not know still travels as it came (a newer serve).
              reject(new WpCodeboxError(e.code as ErrorCode, e.message, e.data ?? {}));
              return;
            }
            resolve(fromWire(parsed) as T);
          });
        },
      );
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (signal?.aborted) {
          reject(error);
          return;
        }
        if (error.code === "ECONNRESET") {
          reject(
            new WpCodeboxError(
              "attach-connection-lost",
              `The control endpoint ${this.base.origin} closed the connection before answering this call (ECONNRESET): serve stopped, before or during the call, or was killed. If the call had started, what it did in the sandbox went with serve.`,
              { control: this.base.origin, cause: error.code },
            ),
          );
          return;
        }
        reject(
          new WpCodeboxError("attach-unreachable", `Cannot reach the control endpoint ${this.base.origin} (${error.code ?? error.message}): is wp-codebox serve still running? It stops after its --ttl of inactivity.`, {
            control: this.base.origin,
            cause: error.code ?? error.message,
          }),
        );
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One session as all handles on it (`fork()`) share it: the connection and the lease renewal. */
interface SessionHold {
  /** The session id; changes when the hold re-attaches. */
  session: string;
  sandboxId: string;
  refs: number;
  detached: boolean;
  connection: ControlConnection;
  /** The server's session lease in ms; 0 = the session never expires (no renewals). */
  leaseMs: number;
  /** Renewals the server accepted. */
  renewals: number;
  timer?: NodeJS.Timeout;
  renewing: boolean;
  reattach?: { onReattach?: (event: ReattachEvent) => void; inFlight?: Promise<void> };
}

/**
 * Starts renewing a session's lease every `leaseMs / 3`. The timer is `unref()`ed: renewing never
 * keeps a finished CLI process alive. A renewal that fails because the server no longer knows the
 * session (it expired while this process was suspended, or serve restarted) stops the renewals; the
 * next call then fails with the server's `attach-session-not-found`. Other failures (serve briefly
 * unreachable) are retried on the next tick.
 */
function startRenewing(hold: SessionHold): void {
  if (hold.leaseMs <= 0) return;
  const session = hold.session;
  const every = Math.max(1, Math.floor(hold.leaseMs / 3));
  hold.timer = setInterval(() => {
    if (hold.renewing || hold.detached) return;
    hold.renewing = true;
    hold.connection
      .call<SessionRenewal>("POST", `/sessions/${encodeURIComponent(session)}/${RENEW_OP}`, {}, AbortSignal.timeout(hold.leaseMs))
      .then(
        () => {
          hold.renewals += 1;
        },
        (error: unknown) => {
          if (error instanceof WpCodeboxError && error.code === "attach-session-not-found" && hold.session === session) stopRenewing(hold);
        },
      )
      .finally(() => {
        hold.renewing = false;
      });
  }, every);
  hold.timer.unref();
}

function stopRenewing(hold: SessionHold): void {
  if (hold.timer) clearInterval(hold.timer);
  hold.timer = undefined;
}

/**
 * A sandbox of a `serve` process, driven over HTTP. Every method maps to one control call; calls of
 * concurrent clients on one sandbox are serialised by the server. The session's lease is renewed in
 * the background until the last handle on it is disposed.
 */
export class AttachedRuntime implements Runtime {
  private cachedInfo: RuntimeInfo;
  private readonly shared: SessionHold;
  private disposed = false;

  /**
   * Use `attachRuntime()`; this wraps a session that already exists and starts renewing its lease.
   * @param leaseMs - the session lease the server granted, in ms (0 = never expires, no renewals).
   */
  constructor(connection: ControlConnection, session: string, sandboxId: string, info: RuntimeInfo, readonly loginUrl?: string, leaseMs = 0, shared?: SessionHold, reattach?: Pick<AttachOptions, "onReattach">) {
    this.cachedInfo = info;
    if (shared) this.shared = shared;
    else {
      this.shared = { session, sandboxId, refs: 0, detached: false, connection, leaseMs, renewals: 0, renewing: false, ...(reattach ? { reattach: { ...(reattach.onReattach ? { onReattach: reattach.onReattach } : {}) } } : {}) };
      startRenewing(this.shared);
    }
    this.shared.refs += 1;
  }

  /** The session id (a new one after a transparent re-attach). */
  get session(): string {
    return this.shared.session;
  }

  /** The sandbox the session holds (another one after a re-attach to a pool may be handed out). */
  get sandboxId(): string {
    return this.shared.sandboxId;
  }

  /** The session lease the server granted, in ms (0 = never expires). */
  get leaseMs(): number {
    return this.shared.leaseMs;
  }

  /** Lease renewals the server accepted so far for this session (all handles together). */
  get renewals(): number {
    return this.shared.renewals;
  }

  /** The control URL this client talks to. */
  get control(): string {
    return this.shared.connection.base.origin;
  }

  private async op<T>(op: SessionOp, spec?: unknown, signal?: AbortSignal): Promise<T> {
    if (this.disposed || this.shared.detached) throw new WpCodeboxError("runtime-disposed", "This attached runtime was detached; attach again (wp-codebox serve keeps the sandbox).");
    const send = () => this.shared.connection.call<{ value: T }>("POST", `/sessions/${encodeURIComponent(this.shared.session)}/${op}`, spec === undefined ? {} : { spec }, signal).then((r) => r.value);
    const tried = this.shared.session;
    try {
      return await send();
    } catch (error) {
      // The server answers this before running anything, so the call is safe to send again.
      if (!(this.shared.reattach && error instanceof WpCodeboxError && error.code === "attach-session-not-found") || this.shared.detached) throw error;
      await this.reattach(tried, error.message);
      return send();
    }
  }

  /** Takes a new session for every handle of this one (once, however many calls failed together). */
  private reattach(lost: string, reason: string): Promise<void> {
    const hold = this.shared;
    if (hold.session !== lost) return hold.reattach?.inFlight ?? Promise.resolve();
    hold.reattach!.inFlight ??= (async () => {
      try {
        stopRenewing(hold);
        const [grant, description] = await Promise.all([
          hold.connection.call<SessionGrant>("POST", "/sessions", {}),
          hold.connection.call<ControlDescription>("GET", ""),
        ]);
        const event: ReattachEvent = {
          previousSession: lost,
          session: grant.session,
          previousSandbox: hold.sandboxId,
          sandbox: grant.sandbox.id,
          mode: description.mode,
          stateKept: description.mode === "shared",
          reason,
        };
        hold.session = grant.session;
        hold.sandboxId = grant.sandbox.id;
        hold.leaseMs = grant.leaseMs;
        this.cachedInfo = grant.sandbox.info;
        startRenewing(hold);
        hold.reattach?.onReattach?.(event);
      } finally {
        delete hold.reattach!.inFlight;
      }
    })();
    return hold.reattach!.inFlight!;
  }

  /** Facts about the sandbox as of the last call (synchronous, like a local runtime). */
  info(): RuntimeInfo {
    return this.cachedInfo;
  }

  /** Fetches fresh facts from the server (and caches them for `info()`). */
  async refreshInfo(): Promise<RuntimeInfo> {
    this.cachedInfo = await this.op<RuntimeInfo>("info");
    return this.cachedInfo;
  }

  /**
   * Runs one catalog command in the sandbox under the policy serve started it with. Aborting
   * `spec.signal` drops the HTTP request; the server then stops the command (recorded as timed-out).
   * @throws what the sandbox throws (`policy-denied`, `unknown-command`, `invalid-argument`, …), or
   *   `attach-unreachable`, `attach-session-not-found`, `attach-unauthorized`.
   */
  execute(spec: ExecutionSpec): Promise<ExecutionResult> {
    const { signal, ...plain } = spec;
    return this.op<ExecutionResult>("execute", plain, signal);
  }

  observe(spec: ObservationSpec): Promise<unknown> {
    return this.op("observe", spec);
  }

  snapshot(options?: Record<string, unknown>): Promise<unknown> {
    return this.op("snapshot", options ?? {});
  }

  /** Makes the sandbox equal to a snapshot taken earlier (hashes verified by the sandbox). */
  async restoreSnapshot(snapshot: unknown): Promise<void> {
    await this.op("restore-snapshot", snapshot);
  }

  /** Returns the sandbox to its state right after boot (fast: no re-boot). */
  async reset(): Promise<void> {
    await this.op("reset");
  }

  /** Everything done in the sandbox so far, for `writeArtifactBundle`. */
  collectArtifacts(spec?: ArtifactSpec): Promise<RuntimeArtifacts> {
    return this.op<RuntimeArtifacts>("collect-artifacts", spec ?? {});
  }

  /**
   * One artifact file of the sandbox (`read-artifact`): what `collectArtifacts()` would return at
   * `spec.path`, without transferring the other files. Text is redacted as in a bundle.
   * @throws `artifact-not-found` (not one of the sandbox's artifact files, or an unsafe path),
   *   `artifact-too-large` (over `spec.maxBytes`, at most `ARTIFACT_READ_CAP_BYTES`), and the attach codes.
   * @example (await runtime.readArtifact({ path: "files/browser/screenshot-saved.png" })).content // PNG bytes
   */
  readArtifact(spec: ArtifactReadSpec): Promise<ArtifactFileRead> {
    return this.op<ArtifactFileRead>("read-artifact", spec);
  }

  /** A second handle on the same session; the session is released when the last handle is disposed. */
  fork(): AttachedRuntime {
    return new AttachedRuntime(this.shared.connection, this.shared.session, this.shared.sandboxId, this.cachedInfo, this.loginUrl, this.shared.leaseMs, this.shared);
  }

  /** Detaches: stops the lease renewals and releases the session (the sandbox stays up; a pooled one is recycled). Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.shared.refs -= 1;
    if (this.shared.refs > 0 || this.shared.detached) return;
    this.shared.detached = true;
    stopRenewing(this.shared);
    try {
      await this.shared.connection.call("DELETE", `/sessions/${encodeURIComponent(this.shared.session)}`);
    } catch {
      // The server may be gone already (TTL, Ctrl-C): nothing is left to release.
    } finally {
      this.shared.connection.close();
    }
  }
}

/** `GET /v1`: what a serve process offers (URL, login URL, pool state). */
export async function describeControl(options: Omit<AttachOptions, "session">): Promise<ControlDescription> {
  const connection = new ControlConnection(options.control, options.token);
  try {
    return await connection.call<ControlDescription>("GET", "");
  } finally {
    connection.close();
  }
}

/**
 * Attaches to a `wp-codebox serve` sandbox: takes a session (a pooled server hands out a sandbox
 * of its own; a single-sandbox server shares its one sandbox) and returns it as a `Runtime`. Its
 * lease is renewed in the background until `dispose()`; a process that exits without disposing
 * leaves the session to expire on the server after its lease.
 * @throws `attach-unreachable` (nothing listens), `attach-unauthorized` (wrong token),
 *   `pool-exhausted` (every pooled sandbox is taken), `attach-session-not-found` (`session` given
 *   and unknown), `invalid-argument` (not a URL).
 * @example
 * const runtime = await attachRuntime({ control: "http://127.0.0.1:41234", token });
 * const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo 1;"] });
 * await runtime.dispose(); // detach
 */
export async function attachRuntime(options: AttachOptions): Promise<AttachedRuntime> {
  const connection = new ControlConnection(options.control, options.token);
  try {
    if (options.session !== undefined) {
      // Renewing first tells the lease (and that the session is still open).
      const renewal = await connection.call<SessionRenewal>("POST", `/sessions/${encodeURIComponent(options.session)}/${RENEW_OP}`, {});
      const info = await connection.call<{ value: RuntimeInfo }>("POST", `/sessions/${encodeURIComponent(options.session)}/info`, {});
      return new AttachedRuntime(connection, options.session, info.value.id, info.value, undefined, renewal.leaseMs);
    }
    const grant = await connection.call<SessionGrant>("POST", "/sessions", {});
    const reattach = options.reattach ? { ...(options.onReattach ? { onReattach: options.onReattach } : {}) } : undefined;
    return new AttachedRuntime(connection, grant.session, grant.sandbox.id, grant.sandbox.info, grant.sandbox.loginUrl, grant.leaseMs, undefined, reattach);
  } catch (error) {
    connection.close();
    throw error;
  }
}

/**
 * A `RuntimeBackend` over one attached runtime, for code written against backends (episodes):
 * `create` hands out a handle on the attached sandbox (resetting it first when `resetOnCreate`),
 * `restore` restores a snapshot into the same sandbox. The spec passed to `create` is ignored:
 * the sandbox runs with what `serve` was started with.
 */
export function attachedBackend(runtime: AttachedRuntime, options: { resetOnCreate?: boolean } = {}): RuntimeBackend {
  return {
    kind: "attached",
    async create(_spec: RuntimeCreateSpec): Promise<Runtime> {
      const handle = runtime.fork();
      if (options.resetOnCreate) await handle.reset();
      return handle;
    },
    async restore(snapshot: unknown): Promise<Runtime> {
      const handle = runtime.fork();
      await handle.restoreSnapshot(snapshot);
      return handle;
    },
  };
}
