/** Public API of @wp-codebox/runtime-playground: the WordPress Playground backend. */
export { createPlaygroundBackend, defaultPolicy, SUPPORTED_PHP_VERSIONS, DEFAULT_PHP_VERSION } from "./playground-backend.js";
export type { PlaygroundBackendOptions } from "./playground-backend.js";
export { PlaygroundRuntime } from "./playground-runtime.js";
export { listWordPressBuilds, findWordPressBuild } from "./wordpress-builds.js";
export type { WordPressBuild } from "./wordpress-builds.js";
export { resolveCacheDir } from "./cache-dir.js";
