/**
 * Host side of a deterministic sandbox: hands each piece of PHP work (a boot, a `run`, an HTTP
 * request) the virtual instant it starts at and the key of its entropy stream. The rule depends
 * only on the order of the work, never on the host's speed:
 *
 *   work k (k = 0 for the first boot, then 1, 2, … in the order the runtime dispatches it) starts at
 *   max(T0 + k × VIRTUAL_CLOCK_STEP_US, end of the latest finished work + VIRTUAL_CLOCK_READ_US);
 *   inside it every clock read returns the current instant and advances it by VIRTUAL_CLOCK_READ_US.
 *
 * Entropy of work k is the stream SHA-256("wp-codebox-entropy:<seed>:<k>:<block>").
 */
import { VIRTUAL_CLOCK_READ_US, VIRTUAL_CLOCK_STEP_US, type RuntimeDeterminism } from "@wp-codebox/runtime-core";
import type { WorkerDeterminism, WorkMark } from "./php-determinism.js";

export class WorkClock {
  private k = -1;
  private lastEndUs = 0;
  private readonly originUs: number | undefined;

  constructor(readonly determinism: RuntimeDeterminism) {
    this.originUs = determinism.clock === "virtual" && determinism.start ? Date.parse(determinism.start) * 1000 : undefined;
  }

  /** True when the worker needs the substitutions (virtual clock or seed). */
  get active(): boolean {
    return this.originUs !== undefined || this.determinism.seed !== undefined;
  }

  /** Boot settings of a worker; undefined when nothing is substituted. */
  workerSettings(): WorkerDeterminism | undefined {
    if (!this.active) return undefined;
    return {
      readStepUs: VIRTUAL_CLOCK_READ_US,
      ...(this.originUs !== undefined ? { clockOriginUs: this.originUs } : {}),
      ...(this.determinism.seed !== undefined ? { seed: this.determinism.seed } : {}),
    };
  }

  /** The mark of the next piece of work; undefined when nothing is substituted. */
  next(): WorkMark | undefined {
    if (!this.active) return undefined;
    this.k += 1;
    const clockUs = this.originUs === undefined ? 0 : Math.max(this.originUs + this.k * VIRTUAL_CLOCK_STEP_US, this.lastEndUs + VIRTUAL_CLOCK_READ_US);
    return { clockUs, entropyKey: this.k };
  }

  /** Records where a piece of work left the clock (as reported by the worker). */
  finished(clockUs: number | undefined): void {
    if (clockUs !== undefined && clockUs > this.lastEndUs) this.lastEndUs = clockUs;
  }

  /** The virtual instant now (ms since the epoch) for the browser; undefined with host time. */
  nowMs(): number | undefined {
    if (this.originUs === undefined) return undefined;
    return Math.floor(Math.max(this.originUs + Math.max(this.k, 0) * VIRTUAL_CLOCK_STEP_US, this.lastEndUs) / 1000);
  }

  /**
   * A mark before every instant the sandbox's own work gets (1 ms before the clock's start, entropy
   * stream -1), for PHP work that is no part of it; undefined without a virtual clock.
   */
  outsideMark(): WorkMark | undefined {
    if (this.originUs === undefined) return undefined;
    return { clockUs: this.originUs - 1000, entropyKey: -1 };
  }

  /** Where the clock is now, for `rewind` (a recycled sandbox goes back to where its boot left it). */
  position(): { k: number; lastEndUs: number } {
    return { k: this.k, lastEndUs: this.lastEndUs };
  }

  /** Puts the clock back to a `position()`: the work after it gets the same instants and entropy again. */
  rewind(position: { k: number; lastEndUs: number }): void {
    this.k = position.k;
    this.lastEndUs = position.lastEndUs;
  }

  /** The count of work items so far (keys the browser's Math.random seed per command). */
  get workCount(): number {
    return this.k + 1;
  }
}
