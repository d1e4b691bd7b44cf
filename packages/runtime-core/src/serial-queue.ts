/**
 * Runs async jobs one after another, in the order `run` was called: one sandbox or episode never
 * sees interleaved calls. A job that fails does not stop the ones after it.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** Jobs queued or running. */
  get depth(): number {
    return this.pending;
  }

  run<T>(job: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const next = this.tail.then(job);
    this.tail = next.then(
      () => undefined,
      () => undefined,
    );
    return next.finally(() => {
      this.pending -= 1;
    });
  }
}
