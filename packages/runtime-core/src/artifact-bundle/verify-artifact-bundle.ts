/**
 * Verifies an artifact bundle v1 byte for byte. Never throws for a bad bundle: every
 * problem is a violation `{ code, path, message }` with a bundle-relative `path`.
 */
import { lstat, readFile, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { sha256Hex } from "../digest.js";
import { parseJsonText } from "../json-syntax.js";
import { validateAgainstSchema } from "../schema-validation.js";
import {
  ARTIFACT_MANIFEST_SCHEMA,
  ARTIFACT_METADATA_SCHEMA,
  ARTIFACT_REVIEW_SCHEMA,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA,
  type ArtifactManifest,
  type ArtifactManifestFile,
  type ArtifactMetadata,
  type ArtifactReview,
  type BundleFileRef,
  type RuntimeReferenceManifest,
} from "./bundle-schemas.js";
import { BUNDLE_PATHS, bundlePathProblem, compareText, computeBundleId, computeReferenceManifestId } from "./bundle-layout.js";
import { getBundleFileValidator } from "./bundle-file-validators.js";

/**
 * Violation codes: `bundle-missing`, `manifest-invalid`, `path-escape`, `file-missing`,
 * `size-mismatch`, `digest-mismatch`, `file-unlisted`, `symlink`, `hard-link`, `not-a-file`,
 * `bundle-digest-mismatch`, `reference-manifest-invalid`, `reference-manifest-mismatch`,
 * `metadata-invalid`, `review-invalid`, `dangling-reference`, `file-invalid` (a registered
 * validator's default).
 */
export interface BundleViolation {
  code: string;
  path: string;
  message: string;
}

/** `valid` is true exactly when `violations` is empty. */
export interface BundleVerification {
  valid: boolean;
  violations: BundleViolation[];
}

interface FoundEntry {
  isFile: boolean;
  isSymlink: boolean;
  isDirectory: boolean;
  nlink: number;
}

/**
 * Checks a bundle directory: manifest shape; every listed file exists with the listed SHA-256 and
 * byte count; no unlisted files, symlinks, hard links or `..`/absolute paths; the bundle id/digest;
 * the reference manifest (shape, refs equal to the manifest and the files, id/digest pairing,
 * bundle id); metadata/review shape and that their references point at listed files; and files of
 * any kind with a registered validator (`registerBundleFileValidator`).
 * @param directory - bundle root.
 * @returns `{ valid, violations }`; a missing directory is a `bundle-missing` violation.
 */
export async function verifyArtifactBundle(directory: string): Promise<BundleVerification> {
  const root = resolve(directory);
  const violations: BundleViolation[] = [];
  const add = (code: string, path: string, message: string) => violations.push({ code, path, message });

  try {
    const info = await lstat(root);
    if (!info.isDirectory()) {
      add("bundle-missing", ".", `${root} is not a directory.`);
      return { valid: false, violations };
    }
  } catch {
    add("bundle-missing", ".", `Bundle directory ${root} does not exist.`);
    return { valid: false, violations };
  }

  // Without a manifest this is not a bundle: say so at once rather than walk an arbitrary tree.
  try {
    await lstat(join(root, BUNDLE_PATHS.manifest));
  } catch {
    add("file-missing", BUNDLE_PATHS.manifest, `manifest.json is missing in ${root}; this is not an artifact bundle (or it was not finished).`);
    return { valid: false, violations };
  }

  // Everything on disk, with lstat facts (symlinks are never followed).
  const found = new Map<string, FoundEntry>();
  await walk(root, "", found);
  for (const [path, entry] of found) {
    if (entry.isSymlink) add("symlink", path, `${path} is a symbolic link; bundles contain regular files only.`);
    else if (entry.isFile && entry.nlink > 1) add("hard-link", path, `${path} has ${entry.nlink} hard links; bundle files must not share storage with other files.`);
    else if (!entry.isFile && !entry.isDirectory) add("not-a-file", path, `${path} is not a regular file.`);
  }

  // manifest.json
  const manifestEntry = found.get(BUNDLE_PATHS.manifest);
  if (!manifestEntry) {
    add("file-missing", BUNDLE_PATHS.manifest, "manifest.json is missing; the bundle cannot be verified.");
    return { valid: false, violations };
  }
  const manifest = await readJson<ArtifactManifest>(root, BUNDLE_PATHS.manifest, manifestEntry, "manifest-invalid", add);
  if (!manifest) return { valid: false, violations };
  const manifestIssues = validateAgainstSchema(ARTIFACT_MANIFEST_SCHEMA, manifest);
  for (const issue of manifestIssues) add("manifest-invalid", `${BUNDLE_PATHS.manifest}#${issue.path}`, issue.message);
  if (manifestIssues.length > 0 && !Array.isArray((manifest as { files?: unknown }).files)) return { valid: false, violations };

  // Listed files.
  const listed = new Map<string, ArtifactManifestFile>();
  const contents = new Map<string, Uint8Array>();
  for (const file of manifest.files) {
    if (typeof file?.path !== "string") continue;
    const problem = bundlePathProblem(file.path);
    if (problem) {
      add("path-escape", file.path, `Manifest path ${JSON.stringify(file.path)} ${problem}.`);
      continue;
    }
    if (file.path === BUNDLE_PATHS.manifest) {
      add("manifest-invalid", file.path, "manifest.json must not list itself.");
      continue;
    }
    if (listed.has(file.path)) {
      add("manifest-invalid", file.path, `${file.path} is listed more than once.`);
      continue;
    }
    listed.set(file.path, file);
    const entry = found.get(file.path);
    if (!entry) {
      add("file-missing", file.path, `${file.path} is listed in manifest.json but does not exist.`);
      continue;
    }
    if (entry.isSymlink || !entry.isFile) continue; // already reported
    const bytes = await readFile(join(root, ...file.path.split("/")));
    contents.set(file.path, bytes);
    if (bytes.byteLength !== file.bytes) {
      add("size-mismatch", file.path, `${file.path} has ${bytes.byteLength} bytes; manifest.json says ${file.bytes}.`);
    }
    const actual = sha256Hex(bytes);
    if (actual !== file.sha256) {
      add("digest-mismatch", file.path, `${file.path} has SHA-256 ${actual}; manifest.json says ${file.sha256}.`);
    }
  }
  for (const [path, entry] of found) {
    if (entry.isDirectory || path === BUNDLE_PATHS.manifest || listed.has(path)) continue;
    if (entry.isSymlink) continue; // reported as symlink
    add("file-unlisted", path, `${path} exists but is not listed in manifest.json.`);
  }
  for (const required of [BUNDLE_PATHS.metadata, BUNDLE_PATHS.review, BUNDLE_PATHS.referenceManifest, BUNDLE_PATHS.commands, BUNDLE_PATHS.events]) {
    if (!listed.has(required) && !violations.some((v) => v.path === required)) {
      add("file-missing", required, `${required} is required in every bundle but is not listed in manifest.json.`);
    }
  }

  // Bundle id/digest.
  if (manifestIssues.length === 0) {
    const expected = computeBundleId(manifest.files);
    if (manifest.bundle.digest !== expected.digest || manifest.bundle.id !== expected.id) {
      add(
        "bundle-digest-mismatch",
        BUNDLE_PATHS.manifest,
        `Bundle id/digest do not match the listed files: expected ${expected.id}, manifest says ${manifest.bundle.id} (digest ${manifest.bundle.digest}).`,
      );
    }
  }

  // Reference manifest.
  const refBytes = contents.get(BUNDLE_PATHS.referenceManifest);
  if (refBytes) {
    const reference = parseJson<RuntimeReferenceManifest>(refBytes, BUNDLE_PATHS.referenceManifest, "reference-manifest-invalid", add);
    if (reference !== undefined) checkReferenceManifest(reference, manifest, listed, add);
  }

  // Metadata and review references.
  const metadataBytes = contents.get(BUNDLE_PATHS.metadata);
  if (metadataBytes) {
    const metadata = parseJson<ArtifactMetadata>(metadataBytes, BUNDLE_PATHS.metadata, "metadata-invalid", add);
    if (metadata !== undefined) {
      const issues = validateAgainstSchema(ARTIFACT_METADATA_SCHEMA, metadata);
      for (const issue of issues) add("metadata-invalid", `${BUNDLE_PATHS.metadata}#${issue.path}`, issue.message);
      if (issues.length === 0) checkReferences(metadata.artifacts, BUNDLE_PATHS.metadata, "/artifacts", listed, add);
    }
  }
  const reviewBytes = contents.get(BUNDLE_PATHS.review);
  if (reviewBytes) {
    const review = parseJson<ArtifactReview>(reviewBytes, BUNDLE_PATHS.review, "review-invalid", add);
    if (review !== undefined) {
      const issues = validateAgainstSchema(ARTIFACT_REVIEW_SCHEMA, review);
      for (const issue of issues) add("review-invalid", `${BUNDLE_PATHS.review}#${issue.path}`, issue.message);
      if (issues.length === 0) checkReferences(review.evidence, BUNDLE_PATHS.review, "/evidence", listed, add);
    }
  }

  // Registered validators (e.g. the episode trace).
  for (const [path, file] of listed) {
    const validator = getBundleFileValidator(file.kind);
    const bytes = contents.get(path);
    if (!validator || !bytes) continue;
    try {
      const issues = await validator({
        directory: root,
        path,
        kind: file.kind,
        bytes,
        text: new TextDecoder().decode(bytes),
        readFile: async (p: string) => {
          const known = contents.get(p);
          if (known) return known;
          throw new Error(`${p} is not a listed, readable bundle file`);
        },
      });
      for (const issue of issues) add(issue.code ?? "file-invalid", issue.path ?? path, issue.message);
    } catch (error) {
      add("file-invalid", path, `Validator for kind "${file.kind}" failed: ${(error as Error).message}`);
    }
  }

  return { valid: violations.length === 0, violations };
}

async function walk(root: string, prefix: string, found: Map<string, FoundEntry>): Promise<void> {
  const dir = prefix ? join(root, ...prefix.split("/")) : root;
  for (const name of (await readdir(dir)).sort(compareText)) {
    const path = prefix ? `${prefix}/${name}` : name;
    const info = await lstat(join(dir, name));
    found.set(path, {
      isFile: info.isFile(),
      isSymlink: info.isSymbolicLink(),
      isDirectory: info.isDirectory(),
      nlink: info.nlink,
    });
    if (info.isDirectory()) await walk(root, path, found);
  }
}

type Add = (code: string, path: string, message: string) => void;

async function readJson<T>(root: string, path: string, entry: FoundEntry, code: string, add: Add): Promise<T | undefined> {
  if (entry.isSymlink || !entry.isFile) return undefined;
  return parseJson<T>(await readFile(join(root, path)), path, code, add);
}

function parseJson<T>(bytes: Uint8Array, path: string, code: string, add: Add): T | undefined {
  try {
    return parseJsonText(new TextDecoder().decode(bytes)) as T;
  } catch (error) {
    add(code, path, `${path} is not valid JSON: ${(error as Error).message}`);
    return undefined;
  }
}

function checkReferences(
  map: Record<string, string | string[]>,
  file: string,
  pointer: string,
  listed: Map<string, ArtifactManifestFile>,
  add: Add,
): void {
  for (const [name, value] of Object.entries(map)) {
    const paths = Array.isArray(value) ? value : [value];
    paths.forEach((p, i) => {
      if (!listed.has(p)) {
        const where = Array.isArray(value) ? `${pointer}/${name}/${i}` : `${pointer}/${name}`;
        add("dangling-reference", `${file}#${where}`, `${file} references ${p}, which is not listed in manifest.json.`);
      }
    });
  }
}

function checkReferenceManifest(
  reference: RuntimeReferenceManifest,
  manifest: ArtifactManifest,
  listed: Map<string, ArtifactManifestFile>,
  add: Add,
): void {
  const where = BUNDLE_PATHS.referenceManifest;
  const issues = validateAgainstSchema(RUNTIME_REFERENCE_MANIFEST_SCHEMA, reference);
  for (const issue of issues) add("reference-manifest-invalid", `${where}#${issue.path}`, issue.message);
  if (issues.length > 0) return;

  const mismatch = (pointer: string, message: string) => add("reference-manifest-mismatch", `${where}#${pointer}`, message);
  const expected = computeReferenceManifestId(reference);
  if (reference.digest !== expected.digest) {
    mismatch("/digest", `Reference manifest digest ${reference.digest} does not match its declared refs (expected ${expected.digest}).`);
  }
  if (reference.id !== `runtime-reference-manifest-sha256-${reference.digest}`) {
    mismatch("/id", `Reference manifest id ${reference.id} does not pair with its digest ${reference.digest}.`);
  }
  if (reference.artifactBundle.id !== manifest.bundle.id || reference.artifactBundle.digest !== manifest.bundle.digest) {
    // Name the half that differs: an edited digest alone left two identical ids in the message.
    const [field, ours, theirs] = reference.artifactBundle.id !== manifest.bundle.id ? ["id", reference.artifactBundle.id, manifest.bundle.id] : ["digest", reference.artifactBundle.digest, manifest.bundle.digest];
    mismatch("/artifactBundle", `Reference manifest names bundle ${field} ${ours}; manifest.json says ${theirs}.`);
  }
  const checkRef = (ref: BundleFileRef, pointer: string) => {
    const file = listed.get(ref.path);
    if (!file) {
      mismatch(pointer, `Ref ${ref.path} is not listed in manifest.json.`);
    } else if (file.sha256 !== ref.sha256 || file.bytes !== ref.bytes || file.kind !== ref.kind) {
      mismatch(pointer, `Ref ${ref.path} (sha256 ${ref.sha256}, ${ref.bytes} bytes, kind ${ref.kind}) differs from manifest.json (sha256 ${file.sha256}, ${file.bytes} bytes, kind ${file.kind}).`);
    }
  };
  reference.refs.forEach((ref, i) => checkRef(ref, `/refs/${i}`));
  if (reference.trace) checkRef(reference.trace, "/trace");
  if (reference.events) checkRef(reference.events, "/events");
  reference.snapshots?.forEach((s, i) => s.artifacts.forEach((ref, j) => checkRef(ref, `/snapshots/${i}/artifacts/${j}`)));
  const declared = new Set(reference.refs.map((r) => r.path));
  for (const path of listed.keys()) {
    if (path !== BUNDLE_PATHS.referenceManifest && !declared.has(path)) {
      mismatch("/refs", `${path} is listed in manifest.json but has no ref in the reference manifest.`);
    }
  }
}
