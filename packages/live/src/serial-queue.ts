/** Runs async jobs one after another, in arrival order (one sandbox never sees interleaved calls). */
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
