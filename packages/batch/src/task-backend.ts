/**
 * The backend a name (`--backend`, `runtime.backend`, a batch task's `runtime.backend`) stands
 * for. The native backend boots the same WordPress trees as Playground (bundled builds, mirror
 * releases, your own build), resolved by the Playground package's `resolveWordPressTree`.
 */
import { BACKEND_NAMES, WpCodeboxError, resolveCacheDir, type RuntimeBackend, type RuntimePreflight } from "@wp-codebox/runtime-core";
import { createNativeBackend } from "@wp-codebox/runtime-native";
import { createPlaygroundBackend, resolveWordPressTree, resolveWpCliPhar } from "@wp-codebox/runtime-playground";

/** Options every backend takes. */
export interface BackendOptions {
  cwd: string;
  cacheDir?: string;
  offline?: boolean;
}

/**
 * Creates the backend `name` names (default `playground`).
 * @throws `invalid-argument` for a name that is not in `BACKEND_NAMES`.
 */
export function createNamedBackend(name: string | undefined, options: BackendOptions): RuntimeBackend {
  const backend = name ?? "playground";
  const playground = () => createPlaygroundBackend({ cwd: options.cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}), ...(options.offline !== undefined ? { offline: options.offline } : {}) });
  if (backend === "playground") return playground();
  if (backend === "native") {
    const source = playground();
    return createNativeBackend({
      cwd: options.cwd,
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      // The same phar as on Playground: --wp-cli-phar, $WP_CODEBOX_WP_CLI_PHAR, then `wp-codebox wp-cli install`'s cache.
      wpCliPhar: (spec) => resolveWpCliPhar({ ...(spec.wpCliPhar !== undefined ? { flag: spec.wpCliPhar } : {}), cacheDir: resolveCacheDir(options.cacheDir) }, options.cwd).path,
      wordpress: {
        preflight: (spec) => (source.preflight!(spec.wordpress ? { wordpress: spec.wordpress } : {}) as RuntimePreflight).wordpressVersion!,
        tree: (spec) =>
          resolveWordPressTree(spec, {
            cwd: options.cwd,
            cacheDir: resolveCacheDir(options.cacheDir),
            ...(options.offline !== undefined ? { offline: options.offline } : {}),
            ...(spec.onProgress ? { onProgress: spec.onProgress } : {}),
            ...(spec.signal ? { signal: spec.signal } : {}),
          }),
      },
    });
  }
  throw new WpCodeboxError("invalid-argument", `--backend ${JSON.stringify(backend)} is not a backend: use ${BACKEND_NAMES.join(" or ")}.`, { option: "backend", value: backend, allowed: [...BACKEND_NAMES] });
}
