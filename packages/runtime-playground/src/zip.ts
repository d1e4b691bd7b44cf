import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { unzipSync } from "fflate";

/**
 * Extracts every file of the zip at `zipPath` into `destination` (created if needed).
 * Entries whose path would leave `destination` (`..`, absolute) are refused.
 * @throws Error on a corrupt zip or an escaping entry.
 */
export function extractZip(zipPath: string, destination: string): number {
  const entries = unzipSync(readFileSync(zipPath));
  let count = 0;
  for (const [name, data] of Object.entries(entries)) {
    const rel = normalize(name);
    if (rel.startsWith("..") || rel.startsWith(sep) || /^[a-zA-Z]:/.test(rel)) {
      throw new Error(`zip entry escapes the destination: ${name}`);
    }
    const out = join(destination, rel);
    if (name.endsWith("/")) {
      mkdirSync(out, { recursive: true });
      continue;
    }
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, data);
    count++;
  }
  return count;
}
