/** Public API of @wp-codebox/runtime-core: backend-agnostic contracts and pure logic. */
export * from "./errors.js";
export * from "./digest.js";
export * from "./schema-validation.js";
export type * from "./runtime.js";
