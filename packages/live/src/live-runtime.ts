/**
 * What the live server needs from a sandbox beyond runtime-core's `Runtime`. Every extra is
 * optional and detected at run time, so any backend works; the Playground runtime has them all.
 */
import type { Runtime } from "@wp-codebox/runtime-core";

export interface LiveRuntime extends Runtime {
  /** A URL that logs a browser in as the site's administrator and lands in wp-admin. */
  loginUrl?(): Promise<string>;
  /** Epoch ms of the last command or site request (site traffic counts as activity for `--ttl`). */
  lastActivityAt?(): number;
  /** Makes the sandbox equal to a snapshot (hashes verified). */
  restoreSnapshot?(snapshot: unknown): Promise<void>;
}
