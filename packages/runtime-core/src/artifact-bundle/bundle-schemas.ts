/**
 * Artifact bundle v1 contracts, each declared once as a TypeBox schema; the TS types
 * are derived with `Static<>`.
 */
import { Type, type Static } from "@sinclair/typebox";

export const ARTIFACT_MANIFEST_SCHEMA_ID = "wp-codebox/artifact-manifest/v1";
export const ARTIFACT_METADATA_SCHEMA_ID = "wp-codebox/artifact-metadata/v1";
export const ARTIFACT_REVIEW_SCHEMA_ID = "wp-codebox/artifact-review/v1";
export const RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID = "wp-codebox/runtime-reference-manifest/v1";

const SHA256 = Type.String({ pattern: "^[0-9a-f]{64}$" });
const BYTES = Type.Integer({ minimum: 0 });
const BUNDLE_PATH = Type.String({ minLength: 1 });

/** One file in `manifest.json`: bundle-relative path, kind, MIME type, SHA-256 (hex), size in bytes. */
export const ARTIFACT_MANIFEST_FILE_SCHEMA = Type.Object(
  { path: BUNDLE_PATH, kind: Type.String({ minLength: 1 }), contentType: Type.String({ minLength: 1 }), sha256: SHA256, bytes: BYTES },
  { additionalProperties: false },
);
export type ArtifactManifestFile = Static<typeof ARTIFACT_MANIFEST_FILE_SCHEMA>;

/** `{ id: "artifact-bundle-sha256-<digest>", digest }`. */
export const ARTIFACT_BUNDLE_ID_SCHEMA = Type.Object(
  { id: Type.String({ pattern: "^artifact-bundle-sha256-[0-9a-f]{64}$" }), digest: SHA256 },
  { additionalProperties: false },
);
export type ArtifactBundleId = Static<typeof ARTIFACT_BUNDLE_ID_SCHEMA>;

/**
 * `manifest.json`: every file of the bundle except itself, sorted by path.
 * `bundle.digest` = `domainDigest(ARTIFACT_MANIFEST_SCHEMA_ID, files)` where `files` omits the
 * entry of `files/runtime-reference-manifest.json` (that file declares the bundle id, so the id
 * cannot depend on it; it is still listed and hash-checked like any other file).
 * `createdAt` (ISO-8601) is presentation only and not covered by the digest.
 */
export const ARTIFACT_MANIFEST_SCHEMA = Type.Object(
  {
    schema: Type.Literal(ARTIFACT_MANIFEST_SCHEMA_ID),
    version: Type.Literal(1),
    createdAt: Type.String(),
    bundle: ARTIFACT_BUNDLE_ID_SCHEMA,
    files: Type.Array(ARTIFACT_MANIFEST_FILE_SCHEMA),
  },
  { additionalProperties: false, $id: ARTIFACT_MANIFEST_SCHEMA_ID },
);
export type ArtifactManifest = Static<typeof ARTIFACT_MANIFEST_SCHEMA>;

/**
 * `metadata.json`: runtime facts, versions, mounts, policy and a name → path(s) map of artifacts.
 * It carries no creation time (that lives in `manifest.json`), so the bundle id does not depend on
 * when the bundle was written.
 */
export const ARTIFACT_METADATA_SCHEMA = Type.Object(
  {
    schema: Type.Literal(ARTIFACT_METADATA_SCHEMA_ID),
    version: Type.Literal(1),
    runtime: Type.Record(Type.String(), Type.Unknown()),
    versions: Type.Object({ wordpress: Type.String(), php: Type.String(), node: Type.String() }),
    mounts: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    policy: Type.Record(Type.String(), Type.Unknown()),
    /** Artifact name (camelCase of its kind, e.g. `runtimeEpisodeTrace`) → bundle path, or paths when several share a kind. */
    artifacts: Type.Record(Type.String(), Type.Union([BUNDLE_PATH, Type.Array(BUNDLE_PATH)])),
  },
  { additionalProperties: true, $id: ARTIFACT_METADATA_SCHEMA_ID },
);
export type ArtifactMetadata = Static<typeof ARTIFACT_METADATA_SCHEMA>;

/** The assertions block repeated from browser summaries. */
export const ASSERTIONS_SCHEMA = Type.Object(
  { total: BYTES, passed: BYTES, failed: BYTES, results: Type.Array(Type.Unknown()) },
  { additionalProperties: true },
);
export type AssertionsBlock = Static<typeof ASSERTIONS_SCHEMA>;

/** `files/review.json`: what a reviewer reads first. */
export const ARTIFACT_REVIEW_SCHEMA = Type.Object(
  {
    schema: Type.Literal(ARTIFACT_REVIEW_SCHEMA_ID),
    version: Type.Literal(1),
    status: Type.Union([Type.Literal("ok"), Type.Literal("error"), Type.Literal("timed-out")]),
    summary: Type.String(),
    commands: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          command: Type.String(),
          status: Type.Union([Type.Literal("ok"), Type.Literal("error"), Type.Literal("timed-out")]),
          exitCode: Type.Integer(),
          durationMs: Type.Number({ minimum: 0 }),
          error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true })),
          dbErrors: Type.Optional(Type.Integer({ minimum: 1, description: "Database errors this command caused (absent when none)." })),
          backgroundErrors: Type.Optional(Type.Integer({ minimum: 1, description: "PHP fatals in background requests this command set off (WP-Cron, loopbacks); absent when none." })),
        },
        { additionalProperties: false },
      ),
    ),
    assertions: Type.Optional(ASSERTIONS_SCHEMA),
    /** Database errors of all commands together (each listed in commands.jsonl as `dbErrors`). */
    dbErrors: Type.Optional(Type.Integer({ minimum: 0 })),
    /** PHP fatals in background requests of all commands together (each listed in commands.jsonl as `backgroundErrors`). */
    backgroundErrors: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Evidence name → bundle path, or paths. */
    evidence: Type.Record(Type.String(), Type.Union([BUNDLE_PATH, Type.Array(BUNDLE_PATH)])),
    redaction: Type.Object({ applied: Type.Boolean(), count: BYTES }, { additionalProperties: true }),
  },
  { additionalProperties: true, $id: ARTIFACT_REVIEW_SCHEMA_ID },
);
export type ArtifactReview = Static<typeof ARTIFACT_REVIEW_SCHEMA>;

/** A bundle-relative file reference with its SHA-256 (hex) and size in bytes. */
export const BUNDLE_FILE_REF_SCHEMA = Type.Object(
  { path: BUNDLE_PATH, kind: Type.String({ minLength: 1 }), sha256: SHA256, bytes: BYTES },
  { additionalProperties: false },
);
export type BundleFileRef = Static<typeof BUNDLE_FILE_REF_SCHEMA>;

/** A snapshot declared in the reference manifest. */
export const SNAPSHOT_REF_SCHEMA = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    semantics: Type.String({ minLength: 1 }),
    replay: Type.Object({ status: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
    artifacts: Type.Array(BUNDLE_FILE_REF_SCHEMA),
  },
  { additionalProperties: false },
);
export type SnapshotRef = Static<typeof SNAPSHOT_REF_SCHEMA>;

/**
 * `files/runtime-reference-manifest.json`. `digest` = `domainDigest(RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID,
 * { refs, trace?, events?, snapshots? })` (declared refs only, never `createdAt`, `id` or
 * `artifactBundle`); `id` = `runtime-reference-manifest-sha256-<digest>`. `refs` covers every
 * bundle file except itself and `manifest.json`, sorted by path.
 */
export const RUNTIME_REFERENCE_MANIFEST_SCHEMA = Type.Object(
  {
    schema: Type.Literal(RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID),
    version: Type.Literal(1),
    id: Type.String({ pattern: "^runtime-reference-manifest-sha256-[0-9a-f]{64}$" }),
    digest: SHA256,
    createdAt: Type.String(),
    artifactBundle: ARTIFACT_BUNDLE_ID_SCHEMA,
    refs: Type.Array(BUNDLE_FILE_REF_SCHEMA),
    trace: Type.Optional(BUNDLE_FILE_REF_SCHEMA),
    events: Type.Optional(BUNDLE_FILE_REF_SCHEMA),
    snapshots: Type.Optional(Type.Array(SNAPSHOT_REF_SCHEMA)),
  },
  { additionalProperties: false, $id: RUNTIME_REFERENCE_MANIFEST_SCHEMA_ID },
);
export type RuntimeReferenceManifest = Static<typeof RUNTIME_REFERENCE_MANIFEST_SCHEMA>;

/** The part of the reference manifest its digest covers. */
export type RuntimeReferenceDigestPayload = Pick<RuntimeReferenceManifest, "refs" | "trace" | "events" | "snapshots">;
