/**
 * What a report page is drawn from: the bundle's own (already redacted) files, read back from
 * disk, so the page written with a bundle and the one `wp-codebox report` writes later are the
 * same function of the same bytes.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { BUNDLE_KINDS, BUNDLE_PATHS, compareText, isTextContentType } from "../bundle-layout.js";
import type { ArtifactManifestFile } from "../bundle-schemas.js";

/** Bundle-relative path of the page at the root of every bundle (kind `report-page`). */
export const REPORT_PAGE_PATH = BUNDLE_PATHS.report;
/** Manifest kind of `report.html`. */
export const REPORT_PAGE_KIND = BUNDLE_KINDS.report;
/** Bundle path of the check's source excerpts (kind `check-sources`), read by the page. */
export const CHECK_SOURCES_PATH = "files/check/sources.json";

/** Most bytes of one bundle file the page reads (larger files are linked, not read). */
export const REPORT_PAGE_READ_LIMIT_BYTES = 16 * 1024 * 1024;

/** Kinds of text files the page reads (everything else is listed and linked). */
const READ_KINDS = new Set([
  "commands",
  "review",
  "metadata",
  "browser-steps",
  "browser-console",
  "browser-network",
  "browser-action-summary",
  "check-report",
  "check-sources",
  "recipe-report",
  "recipe-plan",
  "runtime-episode-trace",
  "phpunit-results",
  "episode-replay-report",
]);

/** Whether the bundle was verified, as the page states it. */
export type ReportPageVerification =
  /** Written by the bundle writer, which verifies every bundle it seals (the page is part of it). */
  | { state: "sealed-by-writer" }
  /** Checked by `verifyArtifactBundle` when the page was written. */
  | { state: "verified"; valid: boolean; violations: string[] };

/**
 * Everything one bundle page shows.
 * - `bundle.id`: the bundle id (`artifact-bundle-sha256-…`), when known.
 * - `files`: every manifest entry (`path, kind, contentType, bytes`).
 * - `texts`: bundle path → text of the files of the kinds the page reads (at most
 *   `REPORT_PAGE_READ_LIMIT_BYTES` each; bigger files are left out and only linked).
 * - `base`: relative folder from the page to the bundle root (`""` at the root, else `/`-ended).
 */
export interface ReportPageData {
  bundle: { id?: string; verification: ReportPageVerification };
  files: Pick<ArtifactManifestFile, "path" | "kind" | "contentType" | "bytes">[];
  texts: Record<string, string>;
  base: string;
}

/**
 * Reads the files a page needs from a bundle folder.
 * @param root - the bundle folder (absolute).
 * @param files - its file entries (the manifest's, or what the writer has written so far).
 * @param options - `bundleId`, `verification`, `base` (see `ReportPageData`).
 * @returns the page data; a file that cannot be read is left out of `texts` (the page then says so).
 */
export async function readReportPageData(
  root: string,
  files: readonly Pick<ArtifactManifestFile, "path" | "kind" | "contentType" | "bytes">[],
  options: { bundleId?: string; verification: ReportPageVerification; base?: string },
): Promise<ReportPageData> {
  const texts: Record<string, string> = {};
  for (const file of files) {
    const wanted = READ_KINDS.has(file.kind) || file.path === BUNDLE_PATHS.review || file.path === BUNDLE_PATHS.metadata;
    if (!wanted || !isTextContentType(file.contentType) || file.bytes > REPORT_PAGE_READ_LIMIT_BYTES) continue;
    const text = await readCapped(join(root, ...file.path.split("/")), REPORT_PAGE_READ_LIMIT_BYTES);
    if (text !== undefined) texts[file.path] = text;
  }
  return {
    bundle: { ...(options.bundleId ? { id: options.bundleId } : {}), verification: options.verification },
    // In path order, as in the manifest, so the page does not depend on the order files were written.
    files: files.map((f) => ({ path: f.path, kind: f.kind, contentType: f.contentType, bytes: f.bytes })).sort((a, b) => compareText(a.path, b.path)),
    texts,
    base: options.base ?? "",
  };
}

/** At most `limit` bytes of a regular file as UTF-8, or undefined when it cannot be read. */
async function readCapped(path: string, limit: number): Promise<string | undefined> {
  let handle;
  try {
    // Never through a symlink: a bundle read back may come from anyone.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const buffer = Buffer.alloc(Math.min(info.size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}
