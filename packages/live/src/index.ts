/** Public API of @wp-codebox/live: `serve`'s live server, its warm pool, and the attach client. */
export { startLiveServer } from "./live-server.js";
export type { LiveServer, LiveServerAddress, LiveServerOptions, LiveEvent } from "./live-server.js";
export { startControlServer, newControlToken } from "./control-server.js";
export type { ControlServer, ControlServerOptions } from "./control-server.js";
export { SandboxPool } from "./sandbox-pool.js";
export type { PooledSandbox, PoolEvent, SandboxPoolOptions } from "./sandbox-pool.js";
export type { LiveRuntime } from "./live-runtime.js";
export { attachRuntime, attachedBackend, describeControl, AttachedRuntime, ControlConnection } from "./attach-client.js";
export type { AttachOptions, ReattachEvent } from "./attach-client.js";
export { CONTROL_PREFIX, DEFAULT_POOL_WAIT_MS, DEFAULT_SESSION_LEASE_MS, RENEW_OP, SESSION_OPS } from "./control-protocol.js";
export type { ArtifactReadSpec, ControlDescription, SessionGrant, SessionOp, SessionRenewal } from "./control-protocol.js";
export { toWire, fromWire } from "./wire.js";
