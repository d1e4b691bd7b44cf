/** The cache directory lives in runtime-core (`resolveCacheDir`): both backends share it. */
export { resolveCacheDir } from "@wp-codebox/runtime-core";
