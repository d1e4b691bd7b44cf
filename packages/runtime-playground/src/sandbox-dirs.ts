/**
 * Sandbox temp directories still in use. If the process exits without disposing its runtimes
 * (a second Ctrl-C, `process.exit` in a caller), they are removed synchronously on exit, so no
 * `wp-codebox-*` folder is left in the temp directory.
 */
import { rmSync } from "node:fs";

const live = new Set<string>();
let hooked = false;

/** Records a sandbox directory to remove on process exit. */
export function trackSandboxDir(dir: string): void {
  live.add(dir);
  if (!hooked) {
    hooked = true;
    process.once("exit", () => {
      for (const d of live) rmSync(d, { recursive: true, force: true });
    });
  }
}

/** Removes a sandbox directory now and stops tracking it. */
export function removeSandboxDir(dir: string): void {
  live.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}
