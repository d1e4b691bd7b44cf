/**
 * The live control protocol, shared by the control server and the attach client. JSON over HTTP
 * on 127.0.0.1, `Authorization: Bearer <token>` on every call (wire encoding: `wire.ts`).
 *
 * - `GET  /v1`                          → `ControlDescription`
 * - `POST /v1/sessions`                 → `{ session, sandbox: { id, info } }` (takes a sandbox)
 * - `POST /v1/sessions/<id>/<op>`       → `{ value }`; op is one of `SESSION_OPS`, body `{ spec? }`
 * - `DELETE /v1/sessions/<id>`          → `{ released: true }` (detach; a pooled sandbox is recycled)
 *
 * Failures answer `{ error: { code, message, details? } }` with a 4xx/5xx status; `code` is a
 * stable wp-codebox error code (`attach-unauthorized`, `attach-session-not-found`,
 * `pool-exhausted`, or whatever the sandbox threw, e.g. `policy-denied`).
 */
import type { RuntimeInfo } from "@wp-codebox/runtime-core";

/** Protocol version segment of every path. */
export const CONTROL_PREFIX = "/v1";

/** The per-session operations, one per `Runtime` method. */
export const SESSION_OPS = ["execute", "observe", "snapshot", "restore-snapshot", "reset", "collect-artifacts", "info"] as const;
export type SessionOp = (typeof SESSION_OPS)[number];

/** What `GET /v1` answers. */
export interface ControlDescription {
  /** Id of the serve process (`live-…`). */
  id: string;
  /** Site URL of the first sandbox (what a browser on this machine opens). */
  url: string;
  /** One-click admin login URL of the first sandbox (lands in wp-admin). */
  loginUrl?: string;
  /** `shared`: one sandbox every session uses; `pool`: each session takes its own sandbox. */
  mode: "shared" | "pool";
  pool: { size: number; ready: number; leased: number; preparing: number };
  /** Idle time in ms after which the server disposes everything; 0 = never. */
  ttlMs: number;
}

/** What `POST /v1/sessions` answers. */
export interface SessionGrant {
  session: string;
  sandbox: { id: string; info: RuntimeInfo; loginUrl?: string };
}
