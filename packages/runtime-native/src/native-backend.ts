/**
 * `createNativeBackend()`: the `RuntimeBackend` that boots WordPress on Debian's PHP with a private
 * MariaDB server per sandbox, every process confined by bubblewrap. What it cannot do the same way
 * as the Playground backend it refuses before boot (`native-unsupported`), naming the backend.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import {
  MAX_DURATION_MS,
  WpCodeboxError,
  assertDefines,
  assertRuntimeSnapshot,
  assertEnvironment,
  assertSecretsSafe,
  defaultRuntimePolicy,
  normalizePolicy,
  pluginMount,
  resolveCacheDir,
  resolveMounts,
  themeMount,
  type BackendSupport,
  type RuntimeBackend,
  type RuntimeCreateSpec,
  type RuntimePreflight,
  type WordPressChoiceRecord,
} from "@wp-codebox/runtime-core";
import { NativeRuntime } from "./native-runtime.js";
import { NATIVE_OBSERVATION_TYPES, NATIVE_SHARED_COMMANDS } from "./native-command-context.js";
import { pharFromSpec } from "./native-wp-cli.js";
import { ensureNativeSite } from "./native-site-cache.js";
import { DEFAULT_NATIVE_TOOLS, assertNativeTools, type NativeTools } from "./native-tools.js";

/**
 * Where a spec's WordPress tree comes from. The CLI passes the Playground package's resolver, so
 * both backends boot the same bundled builds and mirror releases; without one, only
 * `wordpress.path` naming a WordPress directory works.
 */
export interface WordPressTreeSource {
  /** The release a spec resolves to, without fetching (`"6.5.5"`, `custom:<path>`). @throws what the resolver refuses. */
  preflight(spec: RuntimeCreateSpec): string;
  /** The tree's folder and release, fetched or unpacked into the cache when needed. */
  tree(spec: RuntimeCreateSpec): Promise<{ dir: string; release: string; chosen?: Omit<WordPressChoiceRecord, "version"> }>;
}

/** Options of the native backend. */
export interface NativeBackendOptions {
  /** Cache for installed native sites; default `$WP_CODEBOX_CACHE_DIR` or `~/.cache/wp-codebox`. */
  cacheDir?: string;
  /** Base for relative mount sources and `code-file` paths; default `process.cwd()`. */
  cwd?: string;
  /** Per-stream output cap in bytes; default 10 MiB. */
  outputCapBytes?: number;
  /** Paths of the Debian programs (tests point one at a missing file). */
  tools?: Partial<NativeTools>;
  wordpress?: WordPressTreeSource;
  /**
   * The wp-cli phar for a create spec (host path). The CLI passes the Playground package's
   * resolver (`--wp-cli-phar`, `$WP_CODEBOX_WP_CLI_PHAR`, the cached install); without one,
   * `spec.wpCliPhar` then `$WP_CODEBOX_WP_CLI_PHAR`.
   * @throws `wp-cli-unavailable`.
   */
  wpCliPhar?: (spec: RuntimeCreateSpec) => string;
}

/**
 * What native sandboxes run: every catalog command (its own `wordpress.run-php`, `wordpress.wp-cli`,
 * `wordpress.rest-request` and `wordpress.http-request`; the shared handlers of
 * `@wp-codebox/commands` for the others) and every observation type. What a backend leaves out of
 * its `supports` is refused before boot (`backend-unsupported`).
 */
export const NATIVE_SUPPORT: BackendSupport = Object.freeze({
  commands: Object.freeze(["wordpress.run-php", "wordpress.wp-cli", "wordpress.rest-request", "wordpress.http-request", ...NATIVE_SHARED_COMMANDS]),
  observations: NATIVE_OBSERVATION_TYPES,
});

/** A WordPress directory given as `wordpress.path` (the source used when no resolver is given). */
function directoryTree(cwd: string): WordPressTreeSource {
  const find = (spec: RuntimeCreateSpec) => {
    const path = spec.wordpress?.path !== undefined ? resolve(cwd, spec.wordpress.path) : undefined;
    if (!path || !existsSync(join(path, "wp-load.php")) || !statSync(path).isDirectory()) {
      throw new WpCodeboxError("wordpress-source-invalid", "This native backend was created without a WordPress resolver: pass wordpress.path naming a WordPress directory (the CLI resolves bundled versions and releases).", { path: spec.wordpress?.path ?? null });
    }
    const version = /\$wp_version\s*=\s*'([^']+)'/.exec(readFileSync(join(path, "wp-includes", "version.php"), "utf8"))?.[1] ?? "unknown";
    return { dir: path, release: version };
  };
  return { preflight: (spec) => find(spec).release, tree: async (spec) => find(spec) };
}

/**
 * Creates the native backend.
 * @example
 * const backend = createNativeBackend({ wordpress: { preflight, tree } });
 * const runtime = await backend.create({});
 * const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo $wpdb->get_var('SELECT VERSION()');"] });
 * await runtime.dispose();
 */
export function createNativeBackend(options: NativeBackendOptions = {}): RuntimeBackend & {
  create(spec?: RuntimeCreateSpec): Promise<NativeRuntime>;
  restore(snapshot: unknown, spec?: RuntimeCreateSpec): Promise<NativeRuntime>;
  preflight(spec?: RuntimeCreateSpec): RuntimePreflight;
} {
  const cwd = options.cwd ?? process.cwd();
  const tools: NativeTools = { ...DEFAULT_NATIVE_TOOLS, ...(options.tools ?? {}) };
  const wordpress = options.wordpress ?? directoryTree(cwd);
  const backend = {
    kind: "native",
    // No virtual clock or seeded randomness: episodes run on the host's clock.
    deterministic: false,
    supports: NATIVE_SUPPORT,
    /**
     * Checks, without booting: the Debian packages are installed, the PHP version is Debian's, the
     * spec asks for nothing this backend refuses, the WordPress source exists.
     * @returns `{ wordpressVersion, phpVersion }` (Debian's PHP, `"8.2"` on Debian 12).
     * @throws `native-backend-unavailable` (exit 3, naming the packages), `php-version-unavailable`,
     *   `native-unsupported`, and what the WordPress source refuses.
     */
    preflight(spec: RuntimeCreateSpec = {}): RuntimePreflight {
      const status = assertNativeTools(tools);
      if (spec.php !== undefined && spec.php !== status.phpVersion) {
        throw new WpCodeboxError("php-version-unavailable", `PHP ${spec.php} is not available on the native backend: it runs Debian's PHP ${status.phpVersion}. Choose --php ${status.phpVersion}, or --backend playground.`, {
          requested: spec.php,
          available: [status.phpVersion],
          backend: "native",
        });
      }
      const unsupported = (what: string, option: string) => {
        throw new WpCodeboxError("native-unsupported", `${what} is not supported on the native backend yet; use --backend playground.`, { backend: "native", option });
      };
      if (spec.clock !== undefined && spec.clock !== "real") unsupported("A virtual clock (--clock)", "clock");
      if (spec.seed !== undefined) unsupported("Seeded randomness (--seed)", "seed");
      if (spec.extensions !== undefined && spec.extensions.length > 0) {
        const missing = spec.extensions.filter((e) => !(status.phpExtensions ?? []).includes(e.toLowerCase()));
        if (missing.length) {
          throw new WpCodeboxError("php-extension-unavailable", `PHP extension ${missing.join(", ")} is not installed in Debian's PHP. Loaded: ${(status.phpExtensions ?? []).join(", ")}.`, { requested: missing, available: status.phpExtensions ?? [], backend: "native" });
        }
      }
      return { wordpressVersion: wordpress.preflight(spec), phpVersion: status.phpVersion };
    },
    /**
     * Boots a fresh native sandbox from `spec` and loads a snapshot taken on this backend into it
     * (its MariaDB dump and wp-content). The snapshot's hashes are verified before anything boots.
     * @throws `invalid-snapshot`, `snapshot-tampered`, `snapshot-incompatible` (taken on another
     *   backend, WordPress or PHP version), `state-export-failed`, and what `create` throws.
     */
    async restore(snapshot: unknown, spec: RuntimeCreateSpec = {}): Promise<NativeRuntime> {
      assertRuntimeSnapshot(snapshot);
      const c = snapshot.compatibility;
      if (c.backend !== "native" || snapshot.database.engine !== "mariadb") {
        throw new WpCodeboxError("snapshot-incompatible", `Snapshot ${snapshot.id} was taken on the ${c.backend} backend (${snapshot.database.engine}); the native backend restores only its own MariaDB snapshots. Restore it with --backend ${c.backend}.`, { snapshot: { ...c, engine: snapshot.database.engine }, backend: "native" });
      }
      const runtime = await backend.create(spec);
      try {
        await runtime.restoreSnapshot(snapshot);
      } catch (error) {
        await runtime.dispose();
        throw error;
      }
      return runtime;
    },
    /**
     * Boots a native sandbox (the first one per WordPress release installs it into a cached
     * MariaDB data directory).
     * @throws what `preflight` throws, `mount-*` codes, `invalid-policy`, `secret-unsafe`, `boot-failed`.
     */
    async create(spec: RuntimeCreateSpec = {}): Promise<NativeRuntime> {
      const { phpVersion } = backend.preflight(spec);
      const status = assertNativeTools(tools);
      const policy = spec.policy === undefined ? defaultRuntimePolicy() : normalizePolicy(spec.policy);
      for (const p of [...(spec.plugins ?? []), ...(spec.themes ?? [])]) {
        if (!existsSync(resolve(cwd, p))) throw new WpCodeboxError("mount-source-missing", `${p} does not exist (resolved to ${resolve(cwd, p)}). Pass the plugin or theme folder.`, { source: p });
      }
      assertEnvironment(spec.env ?? {}, "--env");
      assertEnvironment(spec.secretEnv ?? {}, "--secret-env");
      assertSecretsSafe(spec.secretEnv ?? {}, "--secret-env");
      if (spec.defines !== undefined) assertDefines(spec.defines, "defines");
      if (spec.siteRequestTimeoutMs !== undefined && !(Number.isInteger(spec.siteRequestTimeoutMs) && spec.siteRequestTimeoutMs >= 0 && spec.siteRequestTimeoutMs <= MAX_DURATION_MS)) {
        throw new WpCodeboxError("invalid-argument", `siteRequestTimeoutMs must be a whole number of ms from 0 (no limit) to ${MAX_DURATION_MS}; got ${String(spec.siteRequestTimeoutMs)}.`, { siteRequestTimeoutMs: String(spec.siteRequestTimeoutMs) });
      }
      const mounts = resolveMounts([...(spec.mounts ?? []), ...(spec.plugins ?? []).map((p) => pluginMount(p, cwd)), ...(spec.themes ?? []).map((t) => themeMount(t, cwd))], cwd);
      spec.onProgress?.("Preparing WordPress");
      const tree = await wordpress.tree(spec);
      const site = await ensureNativeSite(tools, tree, phpVersion!, resolveCacheDir(options.cacheDir), spec.onProgress);
      return NativeRuntime.boot({
        tools,
        site: site.layout,
        bootMode: site.installed ? "installed" : "cached",
        treeDir: tree.dir,
        wordpressRelease: tree.release,
        ...(tree.chosen ? { wordpressChoice: { version: tree.release, ...tree.chosen } } : {}),
        phpVersion: phpVersion!,
        phpExtensions: status.phpExtensions ?? [],
        policy,
        mounts,
        plugins: (spec.plugins ?? []).map((p) => basename(resolve(cwd, p))),
        themes: (spec.themes ?? []).map((t) => basename(resolve(cwd, t))),
        env: spec.env ?? {},
        secretEnv: spec.secretEnv ?? {},
        siteOptions: spec.siteOptions ?? {},
        ...(spec.defines !== undefined && Object.keys(spec.defines).length ? { defines: { ...spec.defines } } : {}),
        cwd,
        ...(options.outputCapBytes !== undefined ? { outputCapBytes: options.outputCapBytes } : {}),
        ...(spec.onProgress ? { onProgress: spec.onProgress } : {}),
        ...(spec.origin === "loopback" ? { origin: "loopback" as const } : {}),
        ...(spec.siteRequestTimeoutMs !== undefined ? { siteRequestTimeoutMs: spec.siteRequestTimeoutMs } : {}),
        wpCliPhar: () => (options.wpCliPhar ? options.wpCliPhar(spec) : pharFromSpec(spec.wpCliPhar, cwd)),
      });
    },
  };
  return backend;
}
