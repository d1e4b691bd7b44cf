/**
 * The live control protocol, shared by the control server and the attach client. JSON over HTTP
 * on 127.0.0.1, `Authorization: Bearer <token>` on every call (wire encoding: `wire.ts`).
 *
 * - `GET  /v1`                          → `ControlDescription`
 * - `POST /v1/sessions`                 → `SessionGrant` `{ session, leaseMs, sandbox: { id, info } }` (takes a sandbox)
 * - `POST /v1/sessions/<id>/<op>`       → `{ value }`; op is one of `SESSION_OPS`, body `{ spec? }`
 * - `POST /v1/sessions/<id>/read-artifact` with `{ spec: ArtifactReadSpec }` → `{ value: ArtifactFileRead }`
 *   (`{ path, kind, contentType, content: bytes, bytes }`): ONE file of what `collect-artifacts`
 *   would return, e.g. a screenshot a result names in `artifactRefs`, so a client does not fetch
 *   every file of the session to show one. The path is bundle-relative; anything that is not one of
 *   the session sandbox's artifact files (the files the bundle writer makes, `..`, absolute paths)
 *   is refused with `artifact-not-found`, content over `maxBytes` (at most `ARTIFACT_READ_CAP_BYTES`,
 *   5 MiB) with `artifact-too-large`. Text is redacted as in a bundle.
 * - `POST /v1/sessions/<id>/renew`      → `SessionRenewal` `{ leaseMs }` (keeps the session; never queued)
 * - `DELETE /v1/sessions/<id>`          → `{ released: true }` (detach; a pooled sandbox is recycled)
 *
 * Sessions are leases. A session the server hears nothing about for `leaseMs` (no call on it, no
 * renewal) expires: it is released exactly as a `DELETE` would release it, so a client that died
 * without detaching (kill -9, crash, a closed laptop) leaves no sandbox taken. The time counts from
 * the end of the session's last call: a call still running never lets its session expire. A client
 * keeps its session by calling `renew` every `leaseMs / 3` while it is attached; renewals skip the
 * sandbox's call queue, so they get through while a long call runs. `leaseMs` 0 means sessions never
 * expire. A call on an expired session gets `attach-session-not-found`.
 *
 * Failures answer `{ error: { code, message, details? } }` with a 4xx/5xx status; `code` is a
 * stable wp-codebox error code (`attach-unauthorized`, `attach-session-not-found`,
 * `pool-exhausted`, or whatever the sandbox threw, e.g. `policy-denied`).
 */
import type { RuntimeInfo } from "@wp-codebox/runtime-core";

/** Protocol version segment of every path. */
export const CONTROL_PREFIX = "/v1";

/**
 * How long a session lives without calls or renewals before the server releases it, in ms, when
 * `serve --session-lease` does not say otherwise.
 */
export const DEFAULT_SESSION_LEASE_MS = 60_000;

/**
 * How long `POST /v1/sessions` waits, in ms, for a pooled sandbox when every one is taken (leased,
 * booting or being reset): a session that detaches or expires meanwhile hands its sandbox to the
 * longest-waiting request. After this the request gets `pool-exhausted`.
 */
export const DEFAULT_POOL_WAIT_MS = 30_000;

/** The operation path segment of a lease renewal (`POST /v1/sessions/<id>/renew`); not a sandbox call. */
export const RENEW_OP = "renew";

/** The per-session operations: one per `Runtime` method, plus `read-artifact` (one file of `collect-artifacts`). */
export const SESSION_OPS = ["execute", "observe", "snapshot", "restore-snapshot", "reset", "collect-artifacts", "read-artifact", "info"] as const;
export type SessionOp = (typeof SESSION_OPS)[number];

/** The `spec` of `read-artifact`. */
export interface ArtifactReadSpec {
  /** Bundle-relative path, as in `ExecutionResult.artifactRefs` (`files/browser/screenshot-saved.png`). */
  path: string;
  /** Largest content to send, in bytes; default and ceiling `ARTIFACT_READ_CAP_BYTES`. */
  maxBytes?: number;
}

/** What `GET /v1` answers. */
export interface ControlDescription {
  /** Id of the serve process (`live-…`). */
  id: string;
  /** Site URL of the first sandbox (what a browser on this machine opens). */
  url: string;
  /**
   * One-click admin login URL of the sandbox (lands in wp-admin); shared mode only. In a pool each
   * session's grant has its own sandbox's link (`SessionGrant.sandbox.loginUrl`), and the first
   * sandbox's link stops working when that sandbox is recycled.
   */
  loginUrl?: string;
  /** `shared`: one sandbox every session uses; `pool`: each session takes its own sandbox. */
  mode: "shared" | "pool";
  pool: { size: number; ready: number; leased: number; preparing: number };
  /** Idle time in ms after which the server disposes everything; 0 = never. */
  ttlMs: number;
  /** Session lease in ms (see the header); 0 = sessions never expire. */
  leaseMs: number;
}

/** What `POST /v1/sessions` answers. */
export interface SessionGrant {
  session: string;
  /**
   * The session expires this many ms after its last call ends unless the client renews it
   * (`POST /v1/sessions/<id>/renew`) sooner; 0 = never expires, no renewal needed.
   */
  leaseMs: number;
  sandbox: { id: string; info: RuntimeInfo; loginUrl?: string };
}

/** What `POST /v1/sessions/<id>/renew` answers: the lease, counted again from now. */
export interface SessionRenewal {
  leaseMs: number;
}
