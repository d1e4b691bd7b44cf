/**
 * Node's own process warnings (a deprecation, an EventEmitter listener leak) are printed by a
 * default `warning` listener as plain text on stderr. A command whose stderr must stay
 * machine-readable (`serve --json`: one JSON event per line) takes them over for its lifetime.
 */

/**
 * Sends the process's warnings to `onWarning` instead of the listeners it had (Node's default
 * printer among them) until the returned function puts those back.
 * @returns the function that restores the previous listeners (idempotent).
 */
export function routeProcessWarnings(onWarning: (warning: Error) => void): () => void {
  const previous = process.listeners("warning");
  process.removeAllListeners("warning");
  process.on("warning", onWarning);
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    process.off("warning", onWarning);
    for (const listener of previous) process.on("warning", listener);
  };
}
