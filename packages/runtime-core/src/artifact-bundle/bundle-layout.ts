/**
 * Fixed paths, kinds and path rules of artifact bundle v1, plus the two digest
 * computations shared by the writer and the verifier.
 */
import { domainDigest } from "../digest.js";
import {
  ARTIFACT_MANIFEST_SCHEMA_ID,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID,
  type ArtifactBundleId,
  type ArtifactManifestFile,
  type RuntimeReferenceDigestPayload,
} from "./bundle-schemas.js";

/** Bundle-relative paths of the files every bundle has, with their kinds. */
export const BUNDLE_PATHS = {
  manifest: "manifest.json",
  metadata: "metadata.json",
  review: "files/review.json",
  referenceManifest: "files/runtime-reference-manifest.json",
  commands: "files/commands.jsonl",
  events: "files/events.jsonl",
  /** The page for people (kind `report-page`), drawn from the other files; it shows the bundle id, so the id does not cover it. */
  report: "report.html",
  /** Written only by episodes (kind `runtime-episode-trace`). */
  runtimeEpisodeTrace: "files/runtime-episode-trace.json",
} as const;

export const BUNDLE_KINDS = {
  metadata: "metadata",
  review: "review",
  referenceManifest: "runtime-reference-manifest",
  commands: "commands",
  events: "events",
  report: "report-page",
} as const;

/** Paths a runtime's `ArtifactFile` may not use (the writer owns them). */
export const RESERVED_BUNDLE_PATHS: readonly string[] = [
  BUNDLE_PATHS.manifest,
  BUNDLE_PATHS.metadata,
  BUNDLE_PATHS.review,
  BUNDLE_PATHS.referenceManifest,
  BUNDLE_PATHS.commands,
  BUNDLE_PATHS.events,
  BUNDLE_PATHS.report,
];

/**
 * Why a bundle-relative path is unsafe, or `undefined` when it is fine: it must be relative,
 * `/`-separated, without `.`/`..`/empty segments, backslashes or NUL.
 */
export function bundlePathProblem(path: string): string | undefined {
  if (typeof path !== "string" || path === "") return "is empty";
  if (path.startsWith("/") || /^[a-zA-Z]:/.test(path)) return "is absolute";
  if (path.includes("\\") || path.includes("\0")) return "contains a backslash or NUL";
  const segments = path.split("/");
  if (segments.includes("..")) return 'contains a ".." segment';
  if (segments.some((s) => s === "" || s === ".")) return 'contains an empty or "." segment';
  return undefined;
}

/** True for MIME types whose content is text and therefore passes through the redactor. */
export function isTextContentType(contentType: string): boolean {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return (
    type.startsWith("text/") ||
    type === "application/json" ||
    type === "application/x-ndjson" ||
    type === "application/jsonl" ||
    type.endsWith("+json") ||
    type === "application/javascript" ||
    type === "application/xml" ||
    type.endsWith("+xml") ||
    type === "application/x-php" ||
    type === "image/svg+xml"
  );
}

/** `runtime-episode-trace` → `runtimeEpisodeTrace` (the name used in `metadata.artifacts`/`review.evidence`). */
export function artifactName(kind: string): string {
  return kind.replace(/[-_.\s]+([a-zA-Z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/[^a-zA-Z0-9]/g, "");
}

/**
 * The artifact bundle digest: `domainDigest("wp-codebox/artifact-manifest/v1", files)` over the
 * manifest's file entries, sorted by path, excluding `files/runtime-reference-manifest.json`
 * (which declares this id) and `report.html` (which shows it; its SHA-256 is still in the manifest
 * and the reference manifest, so `verifyArtifactBundle` checks it like any file).
 */
export function computeBundleId(files: readonly ArtifactManifestFile[]): ArtifactBundleId {
  const covered = files
    .filter((f) => f.path !== BUNDLE_PATHS.referenceManifest && f.path !== BUNDLE_PATHS.report)
    .map((f) => ({ path: f.path, kind: f.kind, contentType: f.contentType, sha256: f.sha256, bytes: f.bytes }))
    .sort((a, b) => compareText(a.path, b.path));
  const digest = domainDigest(ARTIFACT_MANIFEST_SCHEMA_ID, covered);
  return { id: `artifact-bundle-sha256-${digest}`, digest };
}

/** The reference manifest digest over its declared refs only; returns `{ id, digest }`. */
export function computeReferenceManifestId(payload: RuntimeReferenceDigestPayload): { id: string; digest: string } {
  const covered: Record<string, unknown> = { refs: payload.refs };
  if (payload.trace) covered.trace = payload.trace;
  if (payload.events) covered.events = payload.events;
  if (payload.snapshots) covered.snapshots = payload.snapshots;
  const digest = domainDigest(RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID, covered);
  return { id: `runtime-reference-manifest-sha256-${digest}`, digest };
}

/** Code-unit string order (locale-independent, so digests are stable everywhere). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * True for paths inside kernel pseudo-filesystems (`/proc`, `/sys`, `/dev`): no bundle belongs
 * there, and a recursive mkdir under them can hang Node forever.
 */
export function isKernelPseudoPath(absolutePath: string): boolean {
  return /^\/(proc|sys|dev)(\/|$)/.test(absolutePath);
}
