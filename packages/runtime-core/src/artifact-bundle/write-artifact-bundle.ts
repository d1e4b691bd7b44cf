/**
 * The one writer that finalises an artifact bundle v1: content files, review,
 * metadata, reference manifest, then `manifest.json`, with every text artifact redacted.
 */
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { sha256Hex } from "../digest.js";
import { WpCodeboxError } from "../errors.js";
import { createRedactor, type Redactor } from "../redaction.js";
import type { ExecutionResult, RuntimeArtifacts } from "../runtime.js";
import {
  ARTIFACT_MANIFEST_SCHEMA_ID,
  ARTIFACT_METADATA_SCHEMA_ID,
  ARTIFACT_REVIEW_SCHEMA_ID,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID,
  type ArtifactManifest,
  type ArtifactManifestFile,
  type ArtifactMetadata,
  type ArtifactReview,
  type AssertionsBlock,
  type BundleFileRef,
  type RuntimeReferenceManifest,
  type SnapshotRef,
} from "./bundle-schemas.js";
import {
  BUNDLE_KINDS,
  BUNDLE_PATHS,
  RESERVED_BUNDLE_PATHS,
  artifactName,
  bundlePathProblem,
  compareText,
  computeBundleId,
  computeReferenceManifestId,
  isTextContentType,
  isKernelPseudoPath,
} from "./bundle-layout.js";
import { verifyArtifactBundle } from "./verify-artifact-bundle.js";
import { maskBinaryContent } from "./binary-mask.js";
import { readReportPageData } from "./report-page/report-page-data.js";
import { renderReportPage } from "./report-page/render-report-page.js";

/** Status of a whole run, as written in `files/review.json`. */
export type BundleStatus = "ok" | "error" | "timed-out";

/** A snapshot to declare in the reference manifest; `artifacts` are bundle paths of written files. */
export interface SnapshotRefInput {
  id: string;
  semantics: string;
  replay: { status: string };
  artifacts: string[];
}

/** Options for `writeArtifactBundle`. */
export interface WriteArtifactBundleOptions {
  /** Review status; default derived from the results (the first non-ok result's status, else `ok`). */
  status?: BundleStatus;
  /** One-line review summary; default counts results by status. */
  summary?: string;
  /** Extra top-level fields for `metadata.json`; an `artifacts` object is merged into the artifacts map. */
  extraMetadata?: Record<string, unknown>;
  /** Extra top-level fields for `files/review.json`: e.g. `assertions` or more `evidence`. */
  extraReview?: Record<string, unknown> & { assertions?: AssertionsBlock; evidence?: Record<string, string | string[]> };
  /**
   * Episode refs for the reference manifest, as bundle paths of files in `artifacts.files`.
   * Default: `trace` = the file of kind `runtime-episode-trace`, `events` = kind `runtime-episode-events`.
   */
  referenceExtras?: { trace?: string; events?: string; snapshots?: SnapshotRefInput[] };
  /** ISO-8601 creation time written to every envelope (presentation only); default now. */
  createdAt?: string;
}

/** What `writeArtifactBundle` returns. `id`/`digest` are the bundle's (`artifact-bundle-sha256-<digest>`). */
export interface WrittenArtifactBundle {
  directory: string;
  id: string;
  digest: string;
  manifest: ArtifactManifest;
  valid: true;
}

interface PendingFile {
  path: string;
  kind: string;
  contentType: string;
  bytes: Uint8Array;
}

const JSON_TYPE = "application/json";
const NDJSON_TYPE = "application/x-ndjson";
const HTML_TYPE = "text/html; charset=utf-8";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Writes and finalises an artifact bundle v1 in `directory`, then verifies it.
 * Layout: `files/commands.jsonl` (one `ExecutionResult` per line), `files/events.jsonl`, each
 * `artifacts.files` entry, `files/review.json`, `metadata.json`, `report.html` (the page for
 * people, drawn from those files), `files/runtime-reference-manifest.json`, and last `manifest.json`. Every text artifact passes
 * through a redactor built from `artifacts.secrets` (plus cookie/nonce/password patterns); the
 * review records `redaction: { applied, count, maskedFiles? }`. A binary file is masked instead:
 * each byte of a secret becomes `*`, so it keeps its size and structure (an SQLite database stays
 * one), and a zip archive's entries are inflated, masked and deflated again; `maskedFiles` lists
 * the bundle paths of the binary files that changed.
 * @param directory - created if missing; must be empty if it exists.
 * @param artifacts - what the runtime gathered; file paths must be under `files/`.
 * @returns `{ directory (absolute), id, digest, manifest, valid: true }`.
 * @throws WpCodeboxError `artifacts-dir-not-empty` (directory exists and is not empty, or is a
 *   file), `invalid-artifact-path` (a file path not under `files/`, with `..`, absolute, reserved or
 *   duplicated; a `referenceExtras`, `extraReview.evidence` or `extraMetadata.artifacts` path that
 *   is not a bundle file), `bundle-invalid` (self-check failed; a bug).
 */
export async function writeArtifactBundle(
  directory: string,
  artifacts: RuntimeArtifacts,
  options: WriteArtifactBundleOptions = {},
): Promise<WrittenArtifactBundle> {
  const root = resolve(directory);
  checkArtifactPaths(artifacts);
  checkDeclaredPaths(options.extraReview?.evidence, "extraReview.evidence", artifacts);
  checkDeclaredPaths(options.extraMetadata?.artifacts as Record<string, string | string[]> | undefined, "extraMetadata.artifacts", artifacts);
  const { trace, events } = options.referenceExtras ?? {};
  const snapshots = options.referenceExtras?.snapshots ?? artifacts.snapshots;
  checkDeclaredPaths({ ...(trace ? { trace } : {}), ...(events ? { events } : {}) }, "referenceExtras", artifacts);
  for (const s of snapshots ?? []) checkDeclaredPaths({ [s.id]: s.artifacts }, "referenceExtras.snapshots", artifacts);
  await prepareDirectory(root);

  const createdAt = options.createdAt ?? new Date().toISOString();
  const redactor = createRedactor(artifacts.secrets ?? []);
  const written: ArtifactManifestFile[] = [];
  const put = async (file: PendingFile): Promise<void> => {
    const full = join(root, ...file.path.split("/"));
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, file.bytes, { flag: "wx" });
    written.push({ path: file.path, kind: file.kind, contentType: file.contentType, sha256: sha256Hex(file.bytes), bytes: file.bytes.byteLength });
  };

  // 1. Content: commands, events, runtime files (all redacted when text).
  await put({ path: BUNDLE_PATHS.commands, kind: BUNDLE_KINDS.commands, contentType: NDJSON_TYPE, bytes: jsonLines(artifacts.results, redactor) });
  await put({ path: BUNDLE_PATHS.events, kind: BUNDLE_KINDS.events, contentType: NDJSON_TYPE, bytes: jsonLines(artifacts.events, redactor) });
  // Binary files (snapshot files: the SQLite database, wp-content files, uploads) are masked byte
  // for byte, so they keep their size and structure; the review lists the ones that changed.
  const masked: string[] = [];
  for (const file of artifacts.files) {
    const bytes = redactContent(file.content, file.contentType, redactor);
    if (typeof file.content !== "string" && !isTextContentType(file.contentType) && bytes !== file.content) masked.push(file.path);
    await put({ path: file.path, kind: file.kind, contentType: file.contentType, bytes });
  }
  const named = artifactMap(written);

  // 2. Review.
  const { assertions, evidence: extraEvidence, ...reviewRest } = { ...(artifacts.review ?? {}), ...(options.extraReview ?? {}) } as NonNullable<WriteArtifactBundleOptions["extraReview"]>;
  const reviewDraft: Omit<ArtifactReview, "redaction"> = {
    ...reviewRest,
    schema: ARTIFACT_REVIEW_SCHEMA_ID,
    version: 1 as const,
    status: options.status ?? deriveStatus(artifacts.results),
    summary: options.summary ?? summarize(artifacts.results),
    commands: artifacts.results.map(reviewCommand),
    dbErrors: artifacts.results.reduce((n, r) => n + (r.dbErrors?.length ?? 0), 0),
    backgroundErrors: artifacts.results.reduce((n, r) => n + (r.backgroundErrors?.length ?? 0), 0),
    ...(assertions ? { assertions } : {}),
    evidence: {
      ...named,
      metadata: BUNDLE_PATHS.metadata,
      runtimeReferenceManifest: BUNDLE_PATHS.referenceManifest,
      ...extraEvidence,
    },
  };
  const reviewBody = redactor.redactValue(reviewDraft);
  const review: ArtifactReview = { ...reviewBody, redaction: { applied: redactor.redactions > 0, count: redactor.redactions, ...(masked.length ? { maskedFiles: masked } : {}) } };
  await put({ path: BUNDLE_PATHS.review, kind: BUNDLE_KINDS.review, contentType: JSON_TYPE, bytes: jsonFile(review) });

  // 3. Metadata.
  const { artifacts: extraArtifacts, ...metadataRest } = (options.extraMetadata ?? {}) as { artifacts?: Record<string, string | string[]> };
  const { mounts, policy, ...runtime } = artifacts.info;
  const metadata: ArtifactMetadata = redactor.redactValue({
    ...metadataRest,
    schema: ARTIFACT_METADATA_SCHEMA_ID,
    version: 1 as const,
    runtime: runtime as Record<string, unknown>,
    versions: { wordpress: artifacts.info.wordpressVersion, php: artifacts.info.phpVersion, node: process.version },
    mounts: mounts as unknown as Record<string, unknown>[],
    policy: policy as unknown as Record<string, unknown>,
    artifacts: { ...named, review: BUNDLE_PATHS.review, runtimeReferenceManifest: BUNDLE_PATHS.referenceManifest, reportPage: BUNDLE_PATHS.report, ...extraArtifacts },
  });
  await put({ path: BUNDLE_PATHS.metadata, kind: BUNDLE_KINDS.metadata, contentType: JSON_TYPE, bytes: jsonFile(metadata) });

  // 4. report.html, drawn from the files just written (all redacted), so it shows nothing they do
  // not; one more redaction pass over the page itself costs little.
  const page = await readReportPageData(root, written, { bundleId: computeBundleId(written).id, verification: { state: "sealed-by-writer" } });
  await put({ path: BUNDLE_PATHS.report, kind: BUNDLE_KINDS.report, contentType: HTML_TYPE, bytes: encoder.encode(redactor.redact(renderReportPage(page))) });

  // 5. Reference manifest: refs to everything written so far.
  const sorted = [...written].sort((a, b) => compareText(a.path, b.path));
  const refs: BundleFileRef[] = sorted.map(toRef);
  const refFor = (path: string, what: string): BundleFileRef => {
    const ref = refs.find((r) => r.path === path);
    if (!ref) {
      throw new WpCodeboxError("invalid-artifact-path", `referenceExtras.${what} names ${path}, which is not a bundle file: add it to artifacts.files.`, { path });
    }
    return ref;
  };
  const extras = { ...(options.referenceExtras ?? {}), ...(snapshots ? { snapshots } : {}) };
  const tracePath = extras.trace ?? written.find((f) => f.kind === "runtime-episode-trace")?.path;
  const eventsPath = extras.events ?? written.find((f) => f.kind === "runtime-episode-events")?.path;
  const payload = {
    refs,
    ...(tracePath ? { trace: refFor(tracePath, "trace") } : {}),
    ...(eventsPath ? { events: refFor(eventsPath, "events") } : {}),
    ...(extras.snapshots
      ? {
          snapshots: extras.snapshots.map(
            (s): SnapshotRef => ({
              id: s.id,
              semantics: s.semantics,
              replay: { status: s.replay.status },
              artifacts: s.artifacts.map((p) => refFor(p, `snapshots[${s.id}]`)),
            }),
          ),
        }
      : {}),
  };
  const referenceId = computeReferenceManifestId(payload);
  const bundleId = computeBundleId(written);
  const referenceManifest: RuntimeReferenceManifest = {
    schema: RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID,
    version: 1,
    id: referenceId.id,
    digest: referenceId.digest,
    createdAt,
    artifactBundle: bundleId,
    ...payload,
  };
  await put({
    path: BUNDLE_PATHS.referenceManifest,
    kind: BUNDLE_KINDS.referenceManifest,
    contentType: JSON_TYPE,
    bytes: jsonFile(referenceManifest),
  });

  // 6. manifest.json, last.
  const files = [...written].sort((a, b) => compareText(a.path, b.path));
  const manifest: ArtifactManifest = {
    schema: ARTIFACT_MANIFEST_SCHEMA_ID,
    version: 1,
    createdAt,
    bundle: computeBundleId(files),
    files,
  };
  await writeFile(join(root, BUNDLE_PATHS.manifest), jsonFile(manifest), { flag: "wx" });

  const check = await verifyArtifactBundle(root);
  if (!check.valid) {
    throw new WpCodeboxError(
      "bundle-invalid",
      `The bundle written to ${root} failed its own verification (a wp-codebox bug; please report it): ${check.violations.map((v) => `${v.path}: ${v.code}: ${v.message}`).join("; ")}`,
      { violations: check.violations },
    );
  }
  return { directory: root, id: manifest.bundle.id, digest: manifest.bundle.digest, manifest, valid: true };
}

function checkArtifactPaths(artifacts: RuntimeArtifacts): void {
  const seen = new Set<string>();
  for (const file of artifacts.files) {
    const problem = bundlePathProblem(file.path) ?? (!file.path.startsWith("files/") ? 'is not under "files/"' : undefined);
    const reserved = RESERVED_BUNDLE_PATHS.includes(file.path) ? "is reserved for the bundle writer" : undefined;
    const duplicate = seen.has(file.path) ? "is used by two artifact files" : undefined;
    const why = problem ?? reserved ?? duplicate;
    if (why) {
      throw new WpCodeboxError("invalid-artifact-path", `Artifact file path ${JSON.stringify(file.path)} ${why}: use a unique relative path under files/.`, {
        path: file.path,
      });
    }
    seen.add(file.path);
  }
}

/** Caller-declared evidence/artifact paths must name files the bundle will contain. */
function checkDeclaredPaths(map: Record<string, string | string[]> | undefined, where: string, artifacts: RuntimeArtifacts): void {
  const known = new Set([...RESERVED_BUNDLE_PATHS.filter((p) => p !== BUNDLE_PATHS.manifest), ...artifacts.files.map((f) => f.path)]);
  for (const [name, value] of Object.entries(map ?? {})) {
    for (const path of Array.isArray(value) ? value : [value]) {
      if (!known.has(path)) {
        throw new WpCodeboxError("invalid-artifact-path", `${where}.${name} names ${JSON.stringify(path)}, which is not a bundle file: add it to artifacts.files or drop the reference.`, {
          path,
        });
      }
    }
  }
}

async function prepareDirectory(root: string): Promise<void> {
  if (isKernelPseudoPath(root)) {
    throw new WpCodeboxError("artifacts-dir-invalid", `Artifacts directory ${root} is inside /${root.split("/")[1]}: choose a normal folder.`, { directory: root });
  }
  let info;
  try {
    info = await stat(root);
  } catch {
    await mkdir(root, { recursive: true });
    return;
  }
  if (!info.isDirectory() || (await readdir(root)).length > 0) {
    throw new WpCodeboxError(
      "artifacts-dir-not-empty",
      `Artifacts directory ${root} already exists and is not empty: choose a new directory or remove it.`,
      { directory: root },
    );
  }
}

function jsonLines(values: readonly unknown[], redactor: Redactor): Uint8Array {
  return encoder.encode(values.map((v) => redactor.redactJson(v) + "\n").join(""));
}

function jsonFile(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A text file redacted as text (`[REDACTED]`); a binary file masked byte for byte (`redactBytes`),
 * a zip archive entry by entry (`maskBinaryContent`). Returns `content` itself when unchanged.
 */
function redactContent(content: Uint8Array | string, contentType: string, redactor: Redactor): Uint8Array {
  if (typeof content !== "string" && !isTextContentType(contentType)) return maskBinaryContent(content, redactor);
  return encoder.encode(redactText(typeof content === "string" ? content : decoder.decode(content), contentType, redactor));
}

/**
 * Redacts a text file. A JSON (or JSON-lines) file that parsed before and would not after (a secret
 * that matched a number or JSON punctuation) is redacted value by value instead, so it stays JSON.
 */
function redactText(text: string, contentType: string, redactor: Redactor): string {
  if (contentType === NDJSON_TYPE) return text.split("\n").map((line) => redactJsonText(line, redactor)).join("\n");
  if (contentType === JSON_TYPE) return redactJsonText(text, redactor, 2);
  return redactor.redact(text);
}

/** One JSON document as text, redacted; re-serialised value by value (`space`) only when the plain redaction broke it (its count then includes both passes). */
function redactJsonText(text: string, redactor: Redactor, space?: number): string {
  const redacted = redactor.redact(text);
  if (text.trim() === "" || parses(redacted) || !parses(text)) return redacted;
  return redactor.redactJson(JSON.parse(text), space) + (text.endsWith("\n") ? "\n" : "");
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Name → path (or paths, when several files share a kind), named by `artifactName(kind)`. */
function artifactMap(files: readonly ArtifactManifestFile[]): Record<string, string | string[]> {
  const map: Record<string, string | string[]> = {};
  for (const file of files) {
    const name = artifactName(file.kind);
    const existing = map[name];
    map[name] = existing === undefined ? file.path : [...(Array.isArray(existing) ? existing : [existing]), file.path];
  }
  return map;
}

function toRef(file: ArtifactManifestFile): BundleFileRef {
  return { path: file.path, kind: file.kind, sha256: file.sha256, bytes: file.bytes };
}

/** The first non-ok result's status (the first failure is usually the cause), else `ok`. */
export function deriveBundleStatus(results: readonly ExecutionResult[]): BundleStatus {
  return results.find((r) => r.status !== "ok")?.status ?? "ok";
}
const deriveStatus = deriveBundleStatus;

function summarize(results: readonly ExecutionResult[]): string {
  if (results.length === 0) return "No commands ran.";
  const count = (s: string) => results.filter((r) => r.status === s).length;
  const parts = [`${count("ok")} ok`];
  if (count("error")) parts.push(`${count("error")} error`);
  if (count("timed-out")) parts.push(`${count("timed-out")} timed out`);
  return `${results.length} command${results.length === 1 ? "" : "s"}: ${parts.join(", ")}.`;
}

function reviewCommand(r: ExecutionResult): ArtifactReview["commands"][number] {
  return {
    id: r.id,
    command: r.command,
    status: r.status,
    exitCode: r.exitCode,
    durationMs: r.durationMs,
    ...(r.error ? { error: { code: r.error.code, message: r.error.message } } : {}),
    ...(r.dbErrors?.length ? { dbErrors: r.dbErrors.length } : {}),
    ...(r.backgroundErrors?.length ? { backgroundErrors: r.backgroundErrors.length } : {}),
  };
}
