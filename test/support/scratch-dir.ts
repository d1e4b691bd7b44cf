/**
 * Scratch folders for tests: created under the system temp folder and removed when the test
 * process exits, passed or failed, so a suite run leaves nothing behind in /tmp.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];
process.once("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * A new empty folder `<tmp>/<prefix>XXXXXX`, removed at process exit.
 * @param prefix - e.g. `"wp-codebox-recipe-"`.
 * @returns its absolute path.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
