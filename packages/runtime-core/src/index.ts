/** Public API of @wp-codebox/runtime-core: backend-agnostic contracts and pure logic. */
export * from "./errors.js";
export * from "./digest.js";
export * from "./schema-validation.js";
export type * from "./runtime.js";
export * from "./browser-interaction-script.js";
export * from "./episode/index.js";
export * from "./defaults.js";
export * from "./durations.js";
export * from "./command-registry.js";
export * from "./policy.js";
export * from "./mounts.js";
export * from "./redaction.js";
export * from "./artifact-bundle/index.js";
export * from "./create-runtime.js";
export { DEFAULT_BROWSER_STEP_TIMEOUT_MS, DEFAULT_BROWSER_TOTAL_TIMEOUT_MS } from "./defaults.js";
export * from "./wordpress-state.js";
export * from "./runtime-snapshot.js";
