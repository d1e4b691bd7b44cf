/**
 * `--backend playground|native`: the backend a CLI command boots its sandboxes with. The native
 * backend boots the same WordPress trees as Playground (bundled builds, mirror releases, your own
 * build), resolved by the Playground package's `resolveWordPressTree`.
 */
import { BACKEND_NAMES, WpCodeboxError, resolveCacheDir, type RuntimeBackend, type RuntimePreflight } from "@wp-codebox/runtime-core";
import { createNativeBackend } from "@wp-codebox/runtime-native";
import { createPlaygroundBackend, resolveWordPressTree } from "@wp-codebox/runtime-playground";

/** Options every backend takes from the CLI. */
export interface BackendOptions {
  cwd: string;
  cacheDir?: string;
  offline?: boolean;
}

/**
 * Creates the backend `name` names (default `playground`).
 * @throws `invalid-argument` for a name that is not in `BACKEND_NAMES`.
 */
export function createBackend(name: string | undefined, options: BackendOptions): RuntimeBackend {
  const backend = name ?? "playground";
  const playground = () => createPlaygroundBackend({ cwd: options.cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}), ...(options.offline !== undefined ? { offline: options.offline } : {}) });
  if (backend === "playground") return playground();
  if (backend === "native") {
    const source = playground();
    return createNativeBackend({
      cwd: options.cwd,
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
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

/**
 * What each CLI command needs that a backend other than Playground does not have yet: checked
 * before anything boots. `mcp` and the batch run on native (tools and tasks limited to what it runs).
 */
const NEEDS_PLAYGROUND: Record<string, string> = {
  serve: "a web server for the site URL, the login link and --attach",
  check: "HTTP and REST requests to the site and browser surfaces (admin pages, front-end visits, cron over HTTP)",
};

/**
 * Refuses, before boot, a CLI command the named backend cannot run (`serve`, `check` on native).
 * @param cli - the CLI command (`"serve"`, `"check"`).
 * @throws `invalid-argument` for an unknown backend name; `backend-unsupported` (exit 2) naming the
 *   backend and what is missing.
 */
export function assertCliBackend(cli: string, name: string | undefined, options: BackendOptions): void {
  if (name === undefined || name === "playground") return;
  createBackend(name, options);
  const missing = NEEDS_PLAYGROUND[cli];
  if (missing === undefined) return;
  throw new WpCodeboxError("backend-unsupported", `wp-codebox ${cli} --backend ${name}: the ${name} backend has no ${missing} yet. Use --backend playground (the default).`, { backend: name, command: cli, missing });
}
