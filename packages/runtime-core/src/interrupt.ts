/**
 * Interrupts of a session (Ctrl-C, SIGTERM): racing work against the signal, so the session can
 * write its bundle without waiting for a command that may never end.
 */
import { abortReasonText } from "./errors.js";

/** How a raced promise ended: its value, its error, or the interrupt that came first. */
export type Raced<T> = { kind: "value"; value: T } | { kind: "interrupted"; signal: string } | { kind: "failed"; thrown: unknown };

/** The signal name an interrupt carries (`"SIGINT"`, `"SIGTERM"`); `"SIGINT"` when it carries none. */
export function abortReason(signal: AbortSignal): string {
  return abortReasonText(signal, "SIGINT");
}

/** The value of `promise` when it fulfils within `graceMs` (ms), else undefined (also when it rejects). */
export async function valueWithin<T>(promise: Promise<T>, graceMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), graceMs);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Settles with the promise's value or error, or with the interrupt when `signal` aborts first. */
export function raceInterrupt<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<Raced<T>> {
  const settled = promise.then(
    (value): Raced<T> => ({ kind: "value", value }),
    (thrown: unknown): Raced<T> => ({ kind: "failed", thrown }),
  );
  if (!signal) return settled;
  if (signal.aborted) return Promise.resolve({ kind: "interrupted", signal: abortReason(signal) });
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<Raced<T>>((resolve) => {
    onAbort = () => resolve({ kind: "interrupted", signal: abortReason(signal) });
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([settled, interrupted]).finally(() => signal.removeEventListener("abort", onAbort!));
}
