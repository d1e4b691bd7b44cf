/** Public API of @wp-codebox/runtime-native: Debian's PHP and a private MariaDB per sandbox, under bubblewrap. */
export { NATIVE_SUPPORT, createNativeBackend } from "./native-backend.js";
export type { NativeBackendOptions, WordPressTreeSource } from "./native-backend.js";
export { NativeRuntime } from "./native-runtime.js";
export type { NativeHttpResponse } from "./native-runtime.js";
export type { PageFatal, SiteRequest, SiteResponse } from "./native-web.js";
export { DEFAULT_NATIVE_TOOLS, NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "./native-tools.js";
export type { NativeTools, NativeToolsStatus } from "./native-tools.js";
export { PHP_LIMITS, MARIADB_LIMITS } from "./bubblewrap.js";
export type { ResourceLimits } from "./bubblewrap.js";
