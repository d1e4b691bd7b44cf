/**
 * `startLiveServer`: what `wp-codebox serve` runs. Boots one sandbox (or a pool of N), starts the
 * control server with a fresh token, and disposes everything on `close()` or after `ttlMs` without
 * activity (control calls and site requests both count; a running call always does). Lease
 * renewals count too: a client that renews is attached and alive (an agent thinking between calls,
 * a developer's script between steps), so serve stays up for it; once it stops renewing, its
 * session expires after `sessionLeaseMs` and the TTL counts from its last sign of life.
 */
import { randomUUID } from "node:crypto";
import { WpCodeboxError, type RuntimeBackend, type RuntimeCreateSpec } from "@wp-codebox/runtime-core";
import { DEFAULT_SESSION_LEASE_MS, type ControlDescription } from "./control-protocol.js";
import { newControlToken, startControlServer, type ControlServer } from "./control-server.js";
import type { LiveRuntime } from "./live-runtime.js";
import { SandboxPool } from "./sandbox-pool.js";
import { reserveControlPort } from "./control-port.js";

/** A lifecycle event of the live server: `{ at (ISO-8601), type, data? }`. */
export interface LiveEvent {
  at: string;
  type: string;
  data?: Record<string, unknown>;
}

export interface LiveServerOptions {
  backend: RuntimeBackend;
  spec: RuntimeCreateSpec;
  /** Pooled sandboxes; 0/absent = one shared sandbox. */
  pool?: number;
  /** Control port on 127.0.0.1; default any free port. */
  port?: number;
  /** Idle time in ms before everything is disposed; 0/absent = never. */
  ttlMs?: number;
  /** Bearer token; default a fresh random one. */
  token?: string;
  /** How long taking a session waits for a pooled sandbox to come back; default `DEFAULT_POOL_WAIT_MS` (30 s). */
  leaseWaitMs?: number;
  /**
   * Session lease in ms: a session without calls or renewals for this long after its last call
   * ended is released as a detach would release it (event `session-expired`). Default
   * `DEFAULT_SESSION_LEASE_MS` (60 s); 0 = sessions never expire.
   */
  sessionLeaseMs?: number;
  /**
   * Aborting it while the first sandbox boots stops the start: what booted is disposed and
   * `startLiveServer` throws `interrupted` (data.signal: the abort reason, e.g. "SIGTERM").
   * Aborting later does nothing; call `close()`.
   */
  signal?: AbortSignal;
  onEvent?: (event: LiveEvent) => void;
}

/** What `serve` prints: `{ url, loginUrl, control, token, id }`. */
export interface LiveServerAddress {
  id: string;
  /** Site URL of the first sandbox, `http://127.0.0.1:PORT` (open it in a browser on this machine). */
  url: string;
  /** One-click administrator login (lands in wp-admin); absent when the backend cannot make one. */
  loginUrl?: string;
  /** Control endpoint for `--attach`. */
  control: string;
  token: string;
}

export interface LiveServer extends LiveServerAddress {
  pool: SandboxPool;
  /** Resolves once everything is disposed (by `close()` or the TTL), with the reason. */
  closed: Promise<"closed" | "ttl-expired">;
  /** Disposes every sandbox and stops the control server. Idempotent. */
  close(reason?: string): Promise<void>;
}

/**
 * Boots and serves. Resolves when the first sandbox is ready (its URL serves the site).
 * @throws WpCodeboxError `invalid-argument` before any boot when `port` is busy; what the backend
 *   throws on the first boot (`boot-failed`, `mount-*`, …) — nothing is left running then.
 */
export async function startLiveServer(options: LiveServerOptions): Promise<LiveServer> {
  const id = `live-${randomUUID()}`;
  // A busy --port is refused before the boot, and the port stays ours while it runs.
  const reserved = options.port !== undefined ? await reserveControlPort(options.port) : undefined;
  const event = (type: string, data?: Record<string, unknown>): void => options.onEvent?.({ at: new Date().toISOString(), type, ...(data ? { data } : {}) });
  const pool = new SandboxPool({
    create: () => options.backend.create(options.spec) as Promise<LiveRuntime>,
    size: options.pool ?? 0,
    onEvent: (e) => event(e.type, e.data),
  });
  let control: ControlServer | undefined;
  let lastActivity = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let resolveClosed!: (reason: "closed" | "ttl-expired") => void;
  const closed = new Promise<"closed" | "ttl-expired">((r) => (resolveClosed = r));
  let closing: Promise<void> | undefined;

  const close = (reason = "closed"): Promise<void> => {
    closing ??= (async () => {
      if (timer) clearInterval(timer);
      event("live-closing", { reason });
      await control?.close();
      await pool.dispose();
      event("live-disposed", { reason });
      resolveClosed(reason === "ttl-expired" ? "ttl-expired" : "closed");
    })();
    return closing;
  };

  let primaryLogin: string | undefined;
  const abortReason = () => (typeof options.signal?.reason === "string" ? options.signal.reason : "SIGINT");
  // A signal while booting: the pool disposes the sandbox as soon as its boot returns.
  const onAbort = () => void close(abortReason());
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const first = await pool.start();
    if (options.signal?.aborted) throw new WpCodeboxError("runtime-disposed", "Stopped while booting.");
    primaryLogin = first.runtime.loginUrl ? await first.runtime.loginUrl() : undefined;
    const token = options.token ?? newControlToken();
    const ttlMs = options.ttlMs ?? 0;
    const leaseMs = options.sessionLeaseMs ?? DEFAULT_SESSION_LEASE_MS;
    const describe = (): ControlDescription => ({
      id,
      url: first.runtime.info().siteUrl,
      // In a pool the first sandbox's link gets a new key at its first recycle: each session's
      // grant carries the link of its own sandbox instead.
      ...(primaryLogin && pool.mode === "shared" ? { loginUrl: primaryLogin } : {}),
      mode: pool.mode,
      pool: pool.counts(),
      ttlMs,
      leaseMs,
    });
    control = await startControlServer({
      pool,
      token,
      ...(reserved ? { server: reserved.server } : {}),
      describe,
      ...(options.leaseWaitMs !== undefined ? { leaseWaitMs: options.leaseWaitMs } : {}),
      sessionLeaseMs: leaseMs,
      onActivity: () => {
        lastActivity = Date.now();
      },
      onEvent: (type, data) => event(type, data),
    });
    if (ttlMs > 0) {
      const every = Math.max(50, Math.min(1_000, Math.floor(ttlMs / 4)));
      timer = setInterval(() => {
        if (control!.inFlight() > 0 || pool.busy()) {
          lastActivity = Date.now();
          return;
        }
        const idleSince = Math.max(lastActivity, pool.lastActivityAt());
        if (Date.now() - idleSince >= ttlMs) {
          event("ttl-expired", { ttlMs, idleMs: Date.now() - idleSince });
          void close("ttl-expired");
        }
      }, every);
      timer.unref();
    }
    const address: LiveServerAddress = { id, url: first.runtime.info().siteUrl, ...(primaryLogin ? { loginUrl: primaryLogin } : {}), control: control.url, token };
    event("live-ready", { id, url: address.url, control: address.control, mode: pool.mode, pool: pool.size, ttlMs, leaseMs });
    return { ...address, pool, closed, close };
  } catch (error) {
    await close("boot-failed");
    if (!control) await reserved?.release();
    if (options.signal?.aborted) {
      const signal = abortReason();
      throw new WpCodeboxError("interrupted", `Interrupted by ${signal} while the sandbox booted: it was disposed, and nothing is left behind.`, { signal });
    }
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}
