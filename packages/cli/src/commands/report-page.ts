/** `wp-codebox report DIR [--out FILE]`: the report page of a bundle written before, outside it. */
import { existsSync, lstatSync, realpathSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import {
  BUNDLE_PATHS,
  WpCodeboxError,
  readReportPageData,
  renderReportPage,
  verifyArtifactBundle,
  type ArtifactManifestFile,
  type BundleViolation,
} from "@wp-codebox/runtime-core";

/** What `writeReportPage` did. `out` is the page written; `valid`/`violations` are the bundle's verification. */
export interface ReportPageOutcome {
  directory: string;
  out: string;
  valid: boolean;
  id?: string;
  violations: BundleViolation[];
}

/**
 * Verifies the bundle in `directory` and writes its page to `out` (default `<DIR>-report.html`
 * beside the bundle folder), with links and images relative to the page. A bundle that does not
 * verify still gets its page, which lists the violations; files a violation names are not read.
 * @param directory - bundle root, relative to `cwd`.
 * @param options - `out` (relative to `cwd`), `cwd` (default `process.cwd()`).
 * @returns `{ directory, out (absolute), valid, id?, violations }`.
 * @throws WpCodeboxError `invalid-argument` when `directory` is not a bundle folder (no
 *   `manifest.json`), or `out` is inside the bundle (writing there would break its verification)
 *   or is a folder.
 */
export async function writeReportPage(directory: string, options: { out?: string; cwd?: string } = {}): Promise<ReportPageOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const root = resolve(cwd, directory);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new WpCodeboxError("invalid-argument", `${root} is not a directory: pass the bundle directory (the one holding manifest.json).`, { directory: root });
  }
  const manifestPath = join(root, BUNDLE_PATHS.manifest);
  if (!existsSync(manifestPath) || !lstatSync(manifestPath).isFile()) {
    throw new WpCodeboxError("invalid-argument", `${root} has no manifest.json, so it is not a bundle: pass the folder a run, check, recipe or episode wrote.`, { directory: root });
  }
  const out = resolve(cwd, options.out ?? `${root.replace(/[\\/]+$/, "")}-report.html`);
  if (isInside(out, root)) {
    throw new WpCodeboxError("invalid-argument", `--out ${out} is inside the bundle ${root}: a file added there would make the bundle fail verification. Write the page outside it (default ${basename(root)}-report.html beside it).`, { out, directory: root });
  }
  if (existsSync(out) && statSync(out).isDirectory()) {
    throw new WpCodeboxError("invalid-argument", `--out ${out} is a folder: pass a file path such as ${join(out, `${basename(root)}-report.html`)}.`, { out });
  }

  const { valid, violations } = await verifyArtifactBundle(root);
  let manifest: { bundle?: { id?: unknown }; files?: unknown } = {};
  try {
    manifest = JSON.parse(await readFile(manifestPath, "utf8")) as typeof manifest;
  } catch {
    // The violations say what is wrong with it; the page then lists no files.
  }
  const named = new Set(violations.map((v) => v.path));
  const files = (Array.isArray(manifest.files) ? (manifest.files as ArtifactManifestFile[]) : []).filter(
    (f) => f && typeof f.path === "string" && typeof f.kind === "string" && typeof f.contentType === "string" && typeof f.bytes === "number" && !named.has(f.path),
  );
  const id = typeof manifest.bundle?.id === "string" ? manifest.bundle.id : undefined;
  const base = relative(dirname(out), root).split(sep).join("/");
  const data = await readReportPageData(root, files, {
    ...(id ? { bundleId: id } : {}),
    verification: { state: "verified", valid, violations: violations.map((v) => `${v.code} ${v.path}: ${v.message}`) },
    base: base ? `${base}/` : "",
  });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, renderReportPage(data));
  return { directory: root, out, valid, ...(id ? { id } : {}), violations };
}

/** True when `path` is `root` or below it, also through symlinked parents. */
function isInside(path: string, root: string): boolean {
  const real = (p: string) => {
    // The nearest existing ancestor, resolved, plus the rest.
    let head = p;
    const tail: string[] = [];
    while (!existsSync(head) && dirname(head) !== head) {
      tail.unshift(basename(head));
      head = dirname(head);
    }
    return join(realpathSync(head), ...tail);
  };
  for (const [a, b] of [[path, root], [real(path), realpathSync(root)]] as const) {
    const rel = relative(b, a);
    if (rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel))) return true;
  }
  return false;
}
