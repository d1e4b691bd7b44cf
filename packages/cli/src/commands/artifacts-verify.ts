/** `wp-codebox artifacts verify DIR`: check an artifact bundle byte for byte. */
import { existsSync, lstatSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { WpCodeboxError, verifyArtifactBundle, type BundleViolation } from "@wp-codebox/runtime-core";

/** What `verifyArtifacts` reports. `id` is the bundle id from `manifest.json` when readable. */
export interface ArtifactsVerifyReport {
  directory: string;
  valid: boolean;
  id?: string;
  violations: BundleViolation[];
}

/**
 * Verifies the bundle in `directory`.
 * @param directory - bundle root, relative to `cwd`.
 * @param cwd - default `process.cwd()`.
 * @returns `{ directory (absolute), valid, id?, violations: [{ code, path, message }] }`.
 * @throws WpCodeboxError `invalid-argument` when `directory` does not exist or is not a directory.
 */
export async function verifyArtifacts(directory: string, cwd: string = process.cwd()): Promise<ArtifactsVerifyReport> {
  const root = resolve(cwd, directory);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new WpCodeboxError("invalid-argument", `${root} is not a directory: pass the bundle directory (the one holding manifest.json).`, {
      directory: root,
    });
  }
  const { valid, violations } = await verifyArtifactBundle(root);
  let id: string | undefined;
  try {
    // Only a regular file: the violations already name a FIFO or device there, and reading one would block.
    const path = join(root, "manifest.json");
    const manifest = (lstatSync(path).isFile() ? JSON.parse(await readFile(path, "utf8")) : {}) as { bundle?: { id?: unknown } };
    if (typeof manifest.bundle?.id === "string") id = manifest.bundle.id;
  } catch {
    // The violations already say what is wrong with the manifest.
  }
  return { directory: root, valid, ...(id ? { id } : {}), violations };
}

/** One line per violation: `code path: message`. */
export function formatViolations(report: ArtifactsVerifyReport): string {
  return report.violations.map((v) => `${v.code} ${v.path}: ${v.message}\n`).join("");
}
