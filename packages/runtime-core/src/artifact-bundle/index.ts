/** Artifact bundle v1: schemas, the single writer, the verifier, validator hooks. */
export * from "./bundle-schemas.js";
export { BUNDLE_PATHS, BUNDLE_KINDS, artifactName, bundlePathProblem, computeBundleId, computeReferenceManifestId, isKernelPseudoPath, isTextContentType } from "./bundle-layout.js";
export * from "./bundle-file-validators.js";
export * from "./write-artifact-bundle.js";
export * from "./verify-artifact-bundle.js";
export * from "./read-artifact.js";
