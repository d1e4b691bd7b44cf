/**
 * A lane: one long-lived sandbox that runs a batch's tasks one after another. A task whose runtime
 * key (everything its sandbox is created from: WordPress, PHP, extensions, mounts, plugins,
 * themes, policy, env and secret values, defines, site options, clock, seed, origin) equals the
 * lane's runs on the same sandbox after `recycle()` (reset to the post-boot state, plus what a
 * session leaves that a reset keeps); any other task makes the lane dispose its sandbox and boot
 * one for the new key. A sandbox a task left in doubt (the session ended with an error: a command
 * that could not run, a boot or recycle that failed) is disposed, so the next task boots afresh.
 */
import { createHash } from "node:crypto";
import { canonicalJson, type Runtime, type RuntimeBackend, type RuntimeCreateSpec } from "@wp-codebox/runtime-core";

/**
 * The runtime key of a create spec: SHA-256 hex of its canonical JSON without the per-call fields
 * (`onProgress`, `signal`). Secret values are part of it (a lane never hands one task's secrets to
 * another) but never leave it in clear.
 */
export function runtimeKey(spec: RuntimeCreateSpec): string {
  const { onProgress: _progress, signal: _signal, ...rest } = spec;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

/** What `SandboxLane.acquire` hands out: the sandbox to run on, or why none could be had. */
export type LaneSandbox = { runtime: Runtime; reused: boolean } | { bootError: unknown };

/** Counters of a lane (for the benchmark and the report notes). */
export interface LaneStats {
  /** Sandboxes booted (first task, a new runtime key, a replaced sandbox). */
  boots: number;
  /** Tasks that ran on a recycled sandbox. */
  reuses: number;
}

/** One long-lived sandbox and the key it was created for. Use one task at a time. */
export class SandboxLane {
  private current: { key: string; runtime: Runtime } | undefined;
  readonly stats: LaneStats = { boots: 0, reuses: 0 };

  /** The runtime key of the sandbox the lane holds now; undefined when it holds none. */
  get key(): string | undefined {
    return this.current?.key;
  }

  /**
   * The sandbox for a task created from `spec`: the lane's own, recycled, when its key matches and
   * the recycle succeeds; otherwise a new one from `backend.create(spec)` (the old one disposed).
   * @returns `{ runtime, reused }`, or `{ bootError }` with what `create` threw (the lane then
   *   holds no sandbox).
   */
  async acquire(backend: RuntimeBackend, spec: RuntimeCreateSpec): Promise<LaneSandbox> {
    // The same spec on another backend is another sandbox.
    const key = `${backend.kind}:${runtimeKey(spec)}`;
    const held = this.current;
    if (held && held.key === key && held.runtime.recycle) {
      try {
        await held.runtime.recycle();
        this.stats.reuses++;
        return { runtime: held.runtime, reused: true };
      } catch {
        // A sandbox that cannot be recycled is not trusted with the next task: boot a new one.
      }
    }
    await this.discard();
    try {
      const runtime = await backend.create(spec);
      this.current = { key, runtime };
      this.stats.boots++;
      return { runtime, reused: false };
    } catch (error) {
      return { bootError: error };
    }
  }

  /** Disposes the lane's sandbox (a task left it in doubt, or the lane ends). Idempotent. */
  async discard(): Promise<void> {
    const held = this.current;
    this.current = undefined;
    await held?.runtime.dispose().catch(() => undefined);
  }
}
