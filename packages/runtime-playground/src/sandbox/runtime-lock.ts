/**
 * A shared/exclusive lock for one sandbox: commands and forwarded HTTP requests hold it shared;
 * `reset()`, snapshots and restores hold it exclusive while they read or swap wp-content files, so
 * no PHP request sees a half-swapped database. Shared holders never wait for a queued exclusive
 * holder (a browser command's own page requests must not deadlock behind a reset it precedes).
 */
export class RuntimeLock {
  private shared = 0;
  private exclusive = false;
  private waiters: Array<() => void> = [];

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Runs `work` while no exclusive holder is active. */
  async withShared<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.shared += 1;
    try {
      return await work();
    } finally {
      this.shared -= 1;
      this.wake();
    }
  }

  /** Runs `work` once every shared and exclusive holder is done; blocks new shared holders meanwhile. */
  async withExclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive || this.shared > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.exclusive = true;
    try {
      return await work();
    } finally {
      this.exclusive = false;
      this.wake();
    }
  }
}
