/**
 * The control endpoint of `wp-codebox serve`: JSON over HTTP on 127.0.0.1 with a random bearer
 * token required on every call (protocol: `control-protocol.ts`). Each call on a sandbox runs
 * through that sandbox's serial queue, so concurrent clients are serialised, never interleaved.
 * Sessions are leases (see `control-protocol.ts`): one that sees no call and no renewal for
 * `leaseMs` after its last call ended is released as a detach would release it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes, randomUUID, timingSafeEqual, createHash } from "node:crypto";
import { WpCodeboxError, createRedactor, readArtifactFile, type Redactor, serializeError, type ArtifactFileRead, type ArtifactSpec, type ExecutionSpec, type ObservationSpec, type RuntimeArtifacts } from "@wp-codebox/runtime-core";
import { CONTROL_PREFIX, DEFAULT_POOL_WAIT_MS, DEFAULT_SESSION_LEASE_MS, RENEW_OP, SESSION_OPS, type ArtifactReadSpec, type ControlDescription, type SessionGrant, type SessionOp, type SessionRenewal } from "./control-protocol.js";
import type { PooledSandbox, SandboxPool } from "./sandbox-pool.js";
import { fromWire, toWire } from "./wire.js";
import { takeOverServer } from "./control-port.js";

/** A new random bearer token (32 bytes, base64url). */
export function newControlToken(): string {
  return randomBytes(32).toString("base64url");
}

export interface ControlServerOptions {
  pool: SandboxPool;
  /** Bearer token every call must carry. */
  token: string;
  /** Port on 127.0.0.1; 0 (default) = any free port. */
  port?: number;
  /** A server already listening (`reserveControlPort`); when given, `port` is ignored. */
  server?: Server;
  /** `GET /v1` answer. */
  describe: () => ControlDescription;
  /** Called on every authenticated call, lease renewals included (for the idle TTL). */
  onActivity?: () => void;
  /**
   * Called with session events: `session-opened`, `session-closed` (detached), `session-expired`
   * (`{ session, sandbox, leaseMs, idleMs }`: released because its lease ran out), `control-refused`,
   * and what left the server as artifact files: `session-artifacts-collected`
   * (`{ session, sandbox, files, bytes }`, a `collect-artifacts`) and `session-artifact-read`
   * (`{ session, sandbox, path, bytes }`, one `read-artifact`).
   */
  onEvent?: (type: string, data?: Record<string, unknown>) => void;
  /** How long `POST /v1/sessions` waits for a pooled sandbox to come back; default `DEFAULT_POOL_WAIT_MS` (30 s). */
  leaseWaitMs?: number;
  /**
   * Session lease in ms: a session expires this long after its last call ended (or its last renewal)
   * and is released as a detach would release it. Default `DEFAULT_SESSION_LEASE_MS`; 0 = never.
   */
  sessionLeaseMs?: number;
}

/** An open session: the sandbox it holds, its calls in flight and its expiry timer. */
interface SessionEntry {
  sandbox: PooledSandbox;
  /** Calls on this session queued or running; while above 0 the session cannot expire. */
  calls: number;
  /** Epoch ms of the last sign of life (grant, renewal, end of a call). */
  seenAt: number;
  timer?: NodeJS.Timeout;
}

/** How many expired session ids are remembered, so a late call hears "expired" rather than "unknown". */
const EXPIRED_MEMORY = 1024;

export interface ControlServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** Calls being served right now. */
  inFlight(): number;
  close(): Promise<void>;
}

/** HTTP status for a stable error code. */
function statusFor(code: string): number {
  switch (code) {
    case "attach-unauthorized":
      return 401;
    case "attach-session-not-found":
    case "attach-not-found":
    case "artifact-not-found":
      return 404;
    case "pool-exhausted":
    case "runtime-disposed":
      return 503;
    case "policy-denied":
      return 403;
    case "internal-error":
      return 500;
    default:
      return 400;
  }
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Starts the control server; resolves once it listens. */
export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const expected = digest(`Bearer ${options.token}`);
  const sessions = new Map<string, SessionEntry>();
  const expired = new Map<string, number>();
  const leaseMs = options.sessionLeaseMs ?? DEFAULT_SESSION_LEASE_MS;
  let inFlight = 0;
  let closing = false;
  const authorized = new WeakSet<ServerResponse>();

  const send = (res: ServerResponse, status: number, body: unknown): void => {
    if (res.writableEnded || res.destroyed) return;
    const payload = JSON.stringify(toWire(body));
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(payload) });
    res.end(payload);
  };
  const fail = (res: ServerResponse, error: unknown): void => {
    const serialized = serializeError(error);
    send(res, statusFor(serialized.code), { error: serialized });
  };

  const readBody = (req: IncomingMessage): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("error", reject);
      req.on("end", () => {
        if (chunks.length === 0) return resolve({});
        try {
          const parsed = fromWire(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          resolve(parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {});
        } catch {
          reject(new WpCodeboxError("invalid-argument", "The request body is not JSON.", {}));
        }
      });
    });

  // Results and observations leave serve redacted the way the sandbox's bundle is (every encoded
  // form of its secret values): a client such as an attached MCP server shows them to an agent.
  const redactors = new WeakMap<object, Promise<Redactor | undefined>>();
  const redacted = async <T>(runtime: PooledSandbox["runtime"], value: T): Promise<T> => {
    let redactor = redactors.get(runtime);
    if (!redactor) {
      // The sandbox's secret values, asked once (a pooled sandbox keeps its runtime when recycled).
      redactor = runtime.collectArtifacts({ includeRuntimeSnapshotBundles: false }).then((a) => (a.secrets?.length ? createRedactor(a.secrets) : undefined));
      redactors.set(runtime, redactor);
    }
    const r = await redactor;
    return r ? r.redactValue(value) : value;
  };
  const sessionOp = async (sandbox: PooledSandbox, op: SessionOp, spec: unknown, signal: AbortSignal): Promise<unknown> => {
    const runtime = sandbox.runtime;
    switch (op) {
      case "info":
        return runtime.info();
      case "execute":
        return redacted(runtime, await runtime.execute({ ...(spec as ExecutionSpec), signal }));
      case "observe":
        if (!runtime.observe) throw new WpCodeboxError("observation-unsupported", `The ${runtime.info().backend} runtime has no observe().`);
        return redacted(runtime, await runtime.observe(spec as ObservationSpec));
      case "snapshot":
        if (!runtime.snapshot) throw new WpCodeboxError("snapshot-unsupported", `The ${runtime.info().backend} runtime cannot take snapshots.`);
        return runtime.snapshot((spec ?? {}) as Record<string, unknown>);
      case "restore-snapshot":
        if (!runtime.restoreSnapshot) throw new WpCodeboxError("snapshot-unsupported", `The ${runtime.info().backend} runtime cannot restore snapshots.`);
        await runtime.restoreSnapshot(spec);
        return null;
      case "reset":
        if (!runtime.reset) throw new WpCodeboxError("snapshot-unsupported", `The ${runtime.info().backend} runtime cannot reset in place.`);
        await runtime.reset();
        return null;
      case "collect-artifacts":
        return runtime.collectArtifacts((spec ?? {}) as ArtifactSpec);
      case "read-artifact": {
        const { path, maxBytes } = (spec ?? {}) as Partial<ArtifactReadSpec>;
        if (typeof path !== "string") throw new WpCodeboxError("missing-argument", 'read-artifact: give spec.path, a bundle-relative path such as "files/browser/screenshot-saved.png".', { argument: "path" });
        if (maxBytes !== undefined && !(Number.isInteger(maxBytes) && maxBytes >= 0)) throw new WpCodeboxError("invalid-argument", "read-artifact: spec.maxBytes must be a non-negative integer.", { argument: "maxBytes" });
        // Gathered in this process (in memory); only the one file crosses the wire.
        return readArtifactFile(await runtime.collectArtifacts(), path, maxBytes === undefined ? {} : { maxBytes });
      }
    }
  };

  /** The event that says which artifact files a call sent, if it sent any. */
  const artifactEvent = (session: string, sandbox: PooledSandbox, op: SessionOp, value: unknown): void => {
    if (op === "collect-artifacts") {
      const files = (value as RuntimeArtifacts).files;
      const bytes = files.reduce((sum, f) => sum + (typeof f.content === "string" ? Buffer.byteLength(f.content) : f.content.byteLength), 0);
      options.onEvent?.("session-artifacts-collected", { session, sandbox: sandbox.id, files: files.length, bytes });
    } else if (op === "read-artifact") {
      const file = value as ArtifactFileRead;
      options.onEvent?.("session-artifact-read", { session, sandbox: sandbox.id, path: file.path, bytes: file.bytes });
    }
  };

  // The lease: (re)started on every sign of life, suspended while a call is in flight.
  const schedule = (session: string, entry: SessionEntry, delayMs: number): void => {
    if (entry.timer) clearTimeout(entry.timer);
    // Checked after the poll phase (setImmediate): if this process was blocked past the deadline,
    // renewals that arrived meanwhile are read first and count.
    entry.timer = setTimeout(() => setImmediate(() => expire(session, entry)), delayMs);
    // The listening server keeps the process up; a lease timer must never do so on its own.
    entry.timer.unref();
  };
  const arm = (session: string, entry: SessionEntry): void => {
    entry.seenAt = Date.now();
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (leaseMs <= 0 || entry.calls > 0 || closing) return;
    schedule(session, entry, leaseMs);
  };
  const expire = (session: string, entry: SessionEntry): void => {
    if (sessions.get(session) !== entry || entry.calls > 0 || closing) return;
    const left = leaseMs - (Date.now() - entry.seenAt);
    // A timer may fire a millisecond early by the wall clock, or a sign of life came after it was set.
    if (left > 0) return schedule(session, entry, left);
    sessions.delete(session);
    expired.set(session, leaseMs);
    if (expired.size > EXPIRED_MEMORY) expired.delete(expired.keys().next().value!);
    options.pool.release(entry.sandbox);
    options.onEvent?.("session-expired", { session, sandbox: entry.sandbox.id, leaseMs, idleMs: Date.now() - entry.seenAt });
  };
  const openSession = (id: string | undefined): SessionEntry => {
    const entry = sessions.get(id ?? "");
    if (entry) return entry;
    const expiredAfter = expired.get(id ?? "");
    if (expiredAfter !== undefined) {
      throw new WpCodeboxError(
        "attach-session-not-found",
        `Session ${id} expired after ${expiredAfter} ms without calls or lease renewals (its client stopped renewing: it exited without detaching, crashed or was suspended), and its sandbox was released: attach again.`,
        { session: id, expired: true, leaseMs: expiredAfter },
      );
    }
    throw new WpCodeboxError("attach-session-not-found", `Session ${id} is not open on this server (detached, or the server restarted): attach again.`, { session: id });
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const given = digest(req.headers.authorization ?? "");
    if (!timingSafeEqual(given, expected)) {
      options.onEvent?.("control-refused", { reason: req.headers.authorization ? "wrong-token" : "no-token" });
      throw new WpCodeboxError("attach-unauthorized", "The control endpoint refused the call: wrong or missing bearer token. Use the token wp-codebox serve printed (--token or $WP_CODEBOX_TOKEN).");
    }
    authorized.add(res);
    options.onActivity?.();
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname.startsWith(CONTROL_PREFIX) ? url.pathname.slice(CONTROL_PREFIX.length) : null;
    if (path === null) throw new WpCodeboxError("attach-not-found", `No such control path ${url.pathname}; the protocol lives under ${CONTROL_PREFIX}.`);
    if (closing) throw new WpCodeboxError("runtime-disposed", "The live server is shutting down.");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);

    if (parts.length === 0 && req.method === "GET") return send(res, 200, options.describe());
    if (parts[0] !== "sessions") throw new WpCodeboxError("attach-not-found", `No such control path ${url.pathname}.`);

    if (parts.length === 1 && req.method === "POST") {
      await readBody(req);
      // A client that gives up while its request waits for a pooled sandbox leaves the queue.
      const gone = new AbortController();
      res.on("close", () => {
        if (!res.writableFinished) gone.abort(new WpCodeboxError("interrupted", "The client went away while waiting for a pooled sandbox."));
      });
      const sandbox = await options.pool.lease(options.leaseWaitMs ?? DEFAULT_POOL_WAIT_MS, gone.signal).catch((error: unknown) => {
        if (error instanceof WpCodeboxError && error.code === "pool-exhausted" && leaseMs > 0) {
          throw new WpCodeboxError("pool-exhausted", `${error.message} A session whose client went away without detaching is released ${leaseMs} ms after its last call.`, { ...error.data, leaseMs });
        }
        throw error;
      });
      const session = `session-${randomUUID()}`;
      const entry: SessionEntry = { sandbox, calls: 0, seenAt: Date.now() };
      sessions.set(session, entry);
      arm(session, entry);
      options.onEvent?.("session-opened", { session, sandbox: sandbox.id, leaseMs });
      const loginUrl = sandbox.runtime.loginUrl ? await sandbox.runtime.loginUrl() : undefined;
      const grant: SessionGrant = { session, leaseMs, sandbox: { id: sandbox.id, info: sandbox.runtime.info(), ...(loginUrl ? { loginUrl } : {}) } };
      return send(res, 200, grant);
    }
    const session = parts[1] ?? "";
    const entry = openSession(session);
    const sandbox = entry.sandbox;
    // Any call naming the session is a sign of life, counted as soon as its headers are read.
    arm(session, entry);
    if (parts.length === 2 && req.method === "DELETE") {
      if (entry.timer) clearTimeout(entry.timer);
      sessions.delete(session);
      options.pool.release(sandbox);
      options.onEvent?.("session-closed", { session, sandbox: sandbox.id });
      return send(res, 200, { released: true });
    }
    if (parts.length === 3 && req.method === "POST" && parts[2] === RENEW_OP) {
      await readBody(req);
      const renewal: SessionRenewal = { leaseMs };
      return send(res, 200, renewal);
    }
    const op = parts[2] as SessionOp;
    if (parts.length === 3 && req.method === "POST" && (SESSION_OPS as readonly string[]).includes(op)) {
      // In flight from here: the lease waits for the call (queued or running) to end.
      entry.calls += 1;
      arm(session, entry);
      try {
        const body = await readBody(req);
        // A client that goes away (Ctrl-C, aborted signal) stops its command: the sandbox records it as timed out.
        const controller = new AbortController();
        res.on("close", () => {
          if (!res.writableFinished) controller.abort("client-gone");
        });
        const value = await sandbox.queue.run(() => (controller.signal.aborted ? Promise.reject(new WpCodeboxError("runtime-disposed", "The client went away before its call ran.")) : sessionOp(sandbox, op, body.spec, controller.signal)));
        artifactEvent(session, sandbox, op, value);
        return send(res, 200, { value: value ?? null });
      } finally {
        entry.calls -= 1;
        // Counted from the end of the call, and only while the session is still open.
        if (sessions.get(session) === entry) arm(session, entry);
      }
    }
    throw new WpCodeboxError("attach-not-found", `No such control call: ${req.method} ${url.pathname}. Operations: ${[...SESSION_OPS, RENEW_OP].join(", ")}.`);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight += 1;
    route(req, res)
      .catch((error: unknown) => fail(res, error))
      .finally(() => {
        inFlight -= 1;
        if (authorized.has(res)) options.onActivity?.();
      });
  };
  const server: Server = options.server ?? createServer(handle);
  if (options.server) takeOverServer(server, handle);
  server.keepAliveTimeout = 5_000;
  if (!options.server) await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(error.code === "EADDRINUSE" ? new WpCodeboxError("invalid-argument", `--port ${options.port}: the port is in use on 127.0.0.1; choose another or omit --port.`, { port: options.port }) : error),
    );
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    inFlight: () => inFlight,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const entry of sessions.values()) if (entry.timer) clearTimeout(entry.timer);
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
