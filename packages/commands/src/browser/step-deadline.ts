/**
 * Time limits for one step: the Playwright timeout to pass, and a timer backstop.
 */
import { WpCodeboxError } from "@wp-codebox/runtime-core";

/**
 * Resolves with `promise`, or rejects with `onTimeout()` once `ms` elapse (`Infinity` = never).
 * The losing promise's rejection is swallowed so a step that ends late never surfaces as an
 * unhandled rejection.
 */
export function raceDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  promise.catch(() => undefined);
  if (!Number.isFinite(ms)) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** True for Playwright's `TimeoutError` (matched by name: it crosses module copies) and our `timeout` errors. */
export function isTimeoutError(error: unknown): boolean {
  if (error instanceof WpCodeboxError) return error.code === "timeout";
  return error instanceof Error && error.name === "TimeoutError";
}
