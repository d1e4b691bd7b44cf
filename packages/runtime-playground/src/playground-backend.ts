/**
 * `createPlaygroundBackend()`: the WordPress Playground implementation of `RuntimeBackend`.
 * Offline by construction: WordPress comes from `@wp-playground/wordpress-builds`, PHP from
 * `@php-wasm/node`, SQLite integration from `@wp-playground/cli`.
 */
import {
  MAX_DURATION_MS,
  WpCodeboxError,
  assertDefines,
  assertEnvironment,
  assertSecretsSafe,
  assertRequirementsMet,
  assertRuntimeSnapshot,
  isConcreteVersion,
  defaultRuntimePolicy,
  normalizePolicy,
  pluginMount,
  probeHostDir,
  resolveDeterminism,
  resolveMounts,
  themeMount,
  type Runtime,
  type RuntimeBackend,
  type WordPressChoiceRecord,
  type RuntimeCreateSpec,
  type RuntimePolicy,
  type RuntimePreflight,
} from "@wp-codebox/runtime-core";
import { SupportedPHPVersions } from "@php-wasm/universal";
import { basename, resolve } from "node:path";
import { existsSync } from "node:fs";
import { resolveCacheDir } from "./site/cache-dir.js";
import { findWordPressBuild } from "./site/wordpress-builds.js";
import { resolveWordPressTree } from "./site/wordpress-source.js";
import { ensureInstalledSite, hasInstalledSite, installedSiteDir, isInstalledSiteComplete, opcacheDirFor, startInstallerWorker, type InstalledSite } from "./sandbox/installed-site.js";
import { ensureSeedPack, seedPackPath, sweepStaleSeedPartials } from "./site/opcache-seed.js";
import { coreScriptsToPrecompile } from "./site/core-scripts.js";
import { sqliteIntegrationZipPath } from "./site/sqlite-integration.js";
import { DEVELOPER_SITE_CONSTANTS, baseConstants } from "./site/wordpress-constants.js";
import { PlaygroundRuntime } from "./sandbox/playground-runtime.js";
import type { PlaygroundRuntimeSetup } from "./sandbox/sandbox-boot.js";
import { WORDPRESS_VERSION_PATTERN, assertWordPressReleaseObtainable, isBundledWordPress } from "./site/wordpress-releases.js";
import { pinnedDefaultWordPress } from "./site/wordpress-default.js";
import { resolvePhpExtensions } from "./site/php-extensions.js";
import { DEFAULT_PHP_VERSION } from "./site/php-versions.js";
import { prestartPhpWorker } from "./worker/php-worker-thread.js";
import { sandboxTempBase } from "./sandbox/sandbox-dirs.js";
import { assertPhpData } from "@wp-codebox/commands";

/** PHP versions `@php-wasm/node` runs, newest first: the library's own list (`SupportedPHPVersions`). */
export const SUPPORTED_PHP_VERSIONS: readonly string[] = SupportedPHPVersions;
export { DEFAULT_PHP_VERSION } from "./site/php-versions.js";

/** Options of the Playground backend. */
export interface PlaygroundBackendOptions {
  /** Cache for WordPress trees and installed sites; default `$WP_CODEBOX_CACHE_DIR` or `~/.cache/wp-codebox`. */
  cacheDir?: string;
  /** Base for relative mount sources and `code-file` paths; default `process.cwd()`. */
  cwd?: string;
  /** Per-stream output cap in bytes; default 10 MiB. */
  outputCapBytes?: number;
  /**
   * PHP workers per sandbox serving loopback HTTP in parallel (browser traffic). Default
   * `$WP_CODEBOX_WORKERS` or 1: on a 2-core machine a second worker made the block-editor publish
   * slower (Chromium and PHP compete for the cores; `npm run bench:browser`). Each extra worker
   * costs about 150 MB and boots on the first loopback request.
   */
  workers?: number;
  /**
   * WordPress release mirror for `--wp` versions that are not bundled; default
   * `$WP_CODEBOX_WORDPRESS_MIRROR`, else https://wordpress.org/.
   */
  wordpressMirror?: string;
  /** Never fetch a WordPress release (only bundled or cached ones); default `$WP_CODEBOX_OFFLINE === "1"`. */
  offline?: boolean;
  /**
   * Bytes of evidence (command output, bundle file contents) a sandbox keeps in memory before
   * larger values go to files in its own directory; default 64 MiB (`DEFAULT_EVIDENCE_MEMORY_BYTES`).
   * Matters for long-lived sandboxes (`serve`, MCP), whose evidence grows with every call.
   */
  evidenceMemoryBytes?: number;
}

/**
 * The policy a runtime gets when the caller gives none: every runnable command, no page
 * JavaScript (`wordpress.browser-actions.evaluate` must be granted explicitly), no network.
 */
export function defaultPolicy(): RuntimePolicy {
  return defaultRuntimePolicy();
}

/**
 * Creates the WordPress Playground backend.
 * @example
 * const backend = createPlaygroundBackend();
 * const runtime = await backend.create({ plugins: ["./my-plugin"] });
 * const result = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_bloginfo('version');"] });
 * await runtime.dispose();
 */
export function createPlaygroundBackend(options: PlaygroundBackendOptions = {}): RuntimeBackend & {
  create(spec?: RuntimeCreateSpec): Promise<PlaygroundRuntime>;
  restore(snapshot: unknown, spec?: RuntimeCreateSpec): Promise<PlaygroundRuntime>;
  preflight(spec?: RuntimeCreateSpec): RuntimePreflight;
} {
  const backend = {
    kind: "playground",
    /**
     * Checks what only this backend knows, without booting: the PHP version is one php-wasm
     * ships, and the WordPress source exists (a bundled version, or your zip or directory).
     * @returns the WordPress release (`"6.5.5"`, or `custom:<path>`) and PHP version the spec resolves to.
     * A version that is not bundled (`6.7.1`, `latest`) passes when it can be fetched from the release
     * mirror at boot, or offline (`WP_CODEBOX_OFFLINE=1`) when it is already cached. The spec's
     * plugins and themes must declare no `Requires at least` / `Requires PHP` above those versions
     * (compared here when the version is concrete; `latest` and custom builds after they resolve, in `create`).
     * @throws `php-version-unavailable`, `php-extension-unavailable`, `wordpress-version-unavailable`,
     *   `wordpress-build-missing`, `wordpress-source-invalid`, `plugin-requirements`.
     */
    preflight(spec: RuntimeCreateSpec = {}): RuntimePreflight {
      const resolved = backend.preflightVersions(spec);
      const cwd = options.cwd ?? process.cwd();
      assertRequirementsMet(
        { plugins: (spec.plugins ?? []).map((p) => resolve(cwd, p)), themes: (spec.themes ?? []).map((t) => resolve(cwd, t)) },
        { wordpress: resolved.wordpressVersion, php: resolved.phpVersion, phpVersions: SUPPORTED_PHP_VERSIONS },
      );
      return resolved;
    },
    /** `preflight` without the requirements of the inputs: the versions the spec resolves to. */
    preflightVersions(spec: RuntimeCreateSpec = {}): RuntimePreflight & { wordpressVersion: string; phpVersion: string } {
      const cwd = options.cwd ?? process.cwd();
      const php = spec.php ?? DEFAULT_PHP_VERSION;
      if (!SUPPORTED_PHP_VERSIONS.includes(php)) {
        throw new WpCodeboxError("php-version-unavailable", `PHP ${php} is not available. Choose one of: ${SUPPORTED_PHP_VERSIONS.join(", ")}.`, {
          requested: php,
          available: [...SUPPORTED_PHP_VERSIONS],
        });
      }
      resolvePhpExtensions(spec.extensions, php);
      if (spec.wordpress?.path !== undefined) {
        const path = resolve(cwd, spec.wordpress.path);
        if (!existsSync(path)) {
          throw new WpCodeboxError("wordpress-source-invalid", `WordPress source ${spec.wordpress.path} does not exist (resolved to ${path}): pass a WordPress zip or directory.`, {
            path: spec.wordpress.path,
          });
        }
        return { wordpressVersion: `custom:${path}`, phpVersion: php };
      }
      const version = spec.wordpress?.version ?? pinnedDefaultWordPress();
      // Named by nobody: the newest release, chosen at boot (it may need the mirror); requirements are checked then.
      if (version === undefined) return { wordpressVersion: "latest", phpVersion: php };
      if (!isBundledWordPress(version) && WORDPRESS_VERSION_PATTERN.test(version)) {
        // Not bundled: fetched from the release mirror at boot; offline only a cached release will do.
        assertWordPressReleaseObtainable(version, { cacheDir: resolveCacheDir(options.cacheDir), ...(options.offline !== undefined ? { offline: options.offline } : {}) });
        return { wordpressVersion: version, phpVersion: php };
      }
      return { wordpressVersion: findWordPressBuild(version).release, phpVersion: php };
    },
    /**
     * Boots a fresh sandbox from `spec` and makes its state equal to `snapshot`. The
     * snapshot's hashes are verified before anything boots.
     * @throws `invalid-snapshot`, `snapshot-tampered`, `snapshot-incompatible`, and what `create` throws.
     */
    async restore(snapshot: unknown, spec: RuntimeCreateSpec = {}): Promise<PlaygroundRuntime> {
      assertRuntimeSnapshot(snapshot);
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
     * Boots a sandbox. Mounts, clock and seed are validated before anything boots.
     * @throws `mount-*` codes, `invalid-policy`, `invalid-clock`, `invalid-seed`, `seed-with-network`, `secret-unsafe` (a secret value too
     *   short or spelled by the bundle itself), `wordpress-version-unavailable`,
     *   `wordpress-download-failed`, `wordpress-checksum-mismatch` (a non-bundled `--wp` release),
     *   `wordpress-source-invalid`, `php-version-unavailable`, `boot-failed`.
     */
    async create(spec: RuntimeCreateSpec = {}): Promise<PlaygroundRuntime> {
      const cwd = options.cwd ?? process.cwd();
      const cacheDir = resolveCacheDir(options.cacheDir);
      const policy = spec.policy === undefined ? defaultPolicy() : normalizePolicy(spec.policy);
      backend.preflight(spec);
      // Both are written on every boot: a file in the way or a missing permission is the host's to fix, said before anything starts.
      probeHostDir(cacheDir, "the cache", "WP_CODEBOX_CACHE_DIR");
      probeHostDir(sandboxTempBase(), "the sandboxes' scratch folder", process.env.WP_CODEBOX_TMPDIR ? "WP_CODEBOX_TMPDIR" : "WP_CODEBOX_TMPDIR (or TMPDIR)");
      const determinism = resolveDeterminism({ clock: spec.clock, seed: spec.seed, origin: spec.origin }, policy.network);
      const php = spec.php ?? DEFAULT_PHP_VERSION;
      for (const p of [...(spec.plugins ?? []), ...(spec.themes ?? [])]) {
        if (!existsSync(resolve(cwd, p))) {
          throw new WpCodeboxError("mount-source-missing", `${p} does not exist (resolved to ${resolve(cwd, p)}). Pass the plugin or theme folder.`, { source: p });
        }
      }
      assertEnvironment(spec.env ?? {}, "--env");
      assertEnvironment(spec.secretEnv ?? {}, "--secret-env");
      assertSecretsSafe(spec.secretEnv ?? {}, "--secret-env");
      assertPhpData(spec.siteOptions ?? {}, "site options");
      if (spec.defines !== undefined) assertDefines(spec.defines, "defines");
      if (spec.siteRequestTimeoutMs !== undefined && !(Number.isInteger(spec.siteRequestTimeoutMs) && spec.siteRequestTimeoutMs >= 0 && spec.siteRequestTimeoutMs <= MAX_DURATION_MS)) {
        // NaN or a negative limit would end every request at once (a Node timer fires immediately).
        throw new WpCodeboxError("invalid-argument", `siteRequestTimeoutMs must be a whole number of ms from 0 (no limit) to ${MAX_DURATION_MS}; got ${String(spec.siteRequestTimeoutMs)}.`, { siteRequestTimeoutMs: String(spec.siteRequestTimeoutMs) });
      }
      const mountSpecs = [
        ...(spec.mounts ?? []),
        ...(spec.plugins ?? []).map((p) => pluginMount(p, cwd)),
        ...(spec.themes ?? []).map((t) => themeMount(t, cwd)),
      ];
      const mounts = resolveMounts(mountSpecs, cwd);
      spec.onProgress?.("Preparing WordPress");
      // The first PHP worker's thread imports php-wasm and compiles PHP's WebAssembly while the
      // release is found, unpacked and installed (the CLI may have started it already).
      prestartPhpWorker(php);
      // Waiting for another process that fills the cache ends when the caller's signal aborts.
      const lockOptions = spec.signal ? { signal: spec.signal } : {};
      const version = spec.wordpress?.version ?? pinnedDefaultWordPress();
      // A release not installed yet for this PHP version: the installer's worker loads and starts
      // PHP on the second core while the release is unpacked, taking the thread prestarted above.
      // With no site of this PHP version at all (a machine's first run) it starts now; else once
      // the tree is located, if its site is not there (a new release: the default is the newest),
      // so that a warm boot never has it compete with the sandbox's worker.
      // The sandbox's own first worker compiles core and saves the site's OPcache seed, so the
      // installer compiles without optimising (a third less CPU) and saves none. Not with a virtual
      // clock: every PHP run of the boot reads it, in a fixed sequence.
      const sandboxSeeds = determinism.clock !== "virtual";
      let installer = hasInstalledSite(php, cacheDir) ? undefined : startInstallerWorker(php, { quickCompile: sandboxSeeds });
      // Set while a boot that started without the installer waits to know whether the release is
      // installed (see the end): told true when it is not, and the unpack then waits for `unpack`.
      let located: ((installing: boolean) => void) | undefined;
      let unpack: { go: () => void; stop: (error: unknown) => void } | undefined;
      const onTreeLocated = async (tree: { dir: string; release: string }): Promise<void> => {
        if (installer !== undefined || isInstalledSiteComplete(installedSiteDir(tree, php, cacheDir))) return;
        installer = startInstallerWorker(php, { quickCompile: sandboxSeeds });
        if (!located || !sandboxSeeds) return;
        const started = new Promise<void>((go, stop) => (unpack = { go, stop }));
        located(true);
        await started;
      };
      // The sandbox's setup; the fields that depend on the WordPress tree (which release, where its
      // site is installed) are filled in by `prepareSite` (placeholders until then).
      const setup: PlaygroundRuntimeSetup = {
        siteDir: "",
        wordpressRelease: "",
        wordpress: { version: "", source: "bundled", chosenBy: "named" },
        bootMode: "installed",
        phpVersion: php,
        phpExtensions: resolvePhpExtensions(spec.extensions, php),
        policy,
        mounts,
        plugins: (spec.plugins ?? []).map((p) => basename(resolve(cwd, p))),
        themes: (spec.themes ?? []).map((t) => basename(resolve(cwd, t))),
        env: spec.env ?? {},
        secretEnv: spec.secretEnv ?? {},
        siteOptions: spec.siteOptions ?? {},
        sqliteZipPath: sqliteIntegrationZipPath(),
        // The caller's defines last: they override the developer-site defaults (the reserved names they cannot name).
        constants: { ...baseConstants(policy), ...DEVELOPER_SITE_CONSTANTS, ...(spec.defines ?? {}) },
        ...(spec.defines !== undefined && Object.keys(spec.defines).length ? { defines: { ...spec.defines } } : {}),
        cwd,
        outputCapBytes: options.outputCapBytes,
        ...(spec.siteRequestTimeoutMs !== undefined ? { siteRequestTimeoutMs: spec.siteRequestTimeoutMs } : {}),
        wpCli: { ...(spec.wpCliPhar !== undefined ? { flag: spec.wpCliPhar } : {}), cacheDir },
        ...(spec.updateBaselines ? { updateBaselines: true } : {}),
        workers: options.workers ?? (Number(process.env.WP_CODEBOX_WORKERS) || 1),
        ...(options.evidenceMemoryBytes !== undefined ? { evidenceMemoryBytes: options.evidenceMemoryBytes } : {}),
        determinism,
        onProgress: spec.onProgress,
      };
      /**
       * Finds the WordPress tree (downloading and unpacking a release if needed), fills in the
       * setup's site fields, and installs the site if needed.
       * @returns the install under way (wrapped: an async function would wait for it), or none
       *   when the site was installed already.
       */
      const prepareSite = async (): Promise<{ installing?: Promise<InstalledSite> }> => {
        let tree: { dir: string; release: string };
        let wordpressSource: PlaygroundRuntimeSetup["wordpressSource"];
        let chosen: Omit<WordPressChoiceRecord, "version">;
        try {
          const resolved = await resolveWordPressTree(spec, {
            cwd,
            cacheDir,
            ...(options.wordpressMirror !== undefined ? { wordpressMirror: options.wordpressMirror } : {}),
            ...(options.offline !== undefined ? { offline: options.offline } : {}),
            ...(spec.onProgress ? { onProgress: spec.onProgress } : {}),
            onTreeLocated,
            ...lockOptions,
          });
          tree = { dir: resolved.dir, release: resolved.release };
          wordpressSource = resolved.source;
          chosen = resolved.chosen;
          // `latest` and custom builds are known only now: their inputs' requirements are checked before the boot.
          if (!isConcreteVersion(version)) {
            assertRequirementsMet({ plugins: (spec.plugins ?? []).map((p) => resolve(cwd, p)), themes: (spec.themes ?? []).map((t) => resolve(cwd, t)) }, { wordpress: tree.release, php, phpVersions: SUPPORTED_PHP_VERSIONS });
          }
        } catch (error) {
          await installer?.terminate();
          throw error;
        }
        const siteDir = installedSiteDir(tree, php, cacheDir);
        // What a process killed while writing this site's seed left.
        sweepStaleSeedPartials(seedPackPath(opcacheDirFor(siteDir)));
        // A first boot of the release: the sandbox's first PHP worker loads and starts PHP on the
        // second core while the installer runs on the first (PlaygroundRuntime.boot's `siteReady`).
        const installOptions = { ...lockOptions, ...(installer ? { installer } : {}), seedBySandbox: sandboxSeeds };
        const installing = isInstalledSiteComplete(siteDir) ? undefined : ensureInstalledSite(tree, php, cacheDir, spec.onProgress, installOptions);
        // Its failure is the boot's to report (through `installed`), not an unhandled rejection meanwhile.
        installing?.catch(() => undefined);
        const site = installing ? undefined : await ensureInstalledSite(tree, php, cacheDir, spec.onProgress, installOptions);
        const seed = installing ? undefined : ensureSeedPack(opcacheDirFor(siteDir));
        // Listed while the site installs (the installer's worker works meanwhile).
        const scripts = sandboxSeeds && seed === undefined ? await coreScriptsToPrecompile(tree.dir) : [];
        Object.assign(setup, {
          siteDir,
          // Written by the installer (the worker reads it only once the site is ready), or by this sandbox.
          opcacheSeedPack: installing && !sandboxSeeds ? seedPackPath(opcacheDirFor(siteDir)) : seed,
          ...(sandboxSeeds && seed === undefined
            ? { seedOpcache: { pack: seedPackPath(opcacheDirFor(siteDir)), precompile: { treeDir: installing ? tree.dir : siteDir, scripts } } }
            : {}),
          wordpressRelease: tree.release,
          ...(wordpressSource ? { wordpressSource } : {}),
          wordpress: { version: tree.release, ...chosen },
          bootMode: site?.installed === false ? "cached" : "installed",
        } satisfies Partial<PlaygroundRuntimeSetup>);
        return installing ? { installing } : {};
      };
      const installed = (installing: Promise<InstalledSite>): Promise<void> =>
        installing.then((done) => {
          // Another process may have installed it while this one waited for the lock.
          setup.bootMode = done.installed ? "installed" : "cached";
          // A site installed by an older wp-codebox has its seed as a folder only.
          setup.opcacheSeedPack = ensureSeedPack(opcacheDirFor(done.dir));
        });
      /**
       * Boots while the site is prepared: the sandbox's first worker loads and starts PHP while
       * the release is unpacked, compiles core once the tree is there (`coreReady`) and boots
       * WordPress once the site is installed. `prepare` is called by the boot once that worker is
       * started (unpacking blocks this thread); `abandon` when the boot failed before that.
       */
      const bootBesideInstall = async (prepare: () => Promise<{ installing?: Promise<InstalledSite> }>, abandon: (error: unknown) => Promise<void>): Promise<PlaygroundRuntime> => {
        let prepared: Promise<{ installing?: Promise<InstalledSite> }> | undefined;
        try {
          return await PlaygroundRuntime.boot(setup, () => {
            prepared = prepare();
            const coreReady = prepared.then(() => undefined);
            const siteReady = prepared.then(({ installing }) => (installing ? installed(installing) : undefined));
            // Awaited by the boot; handled here so a failure is never unhandled meanwhile.
            coreReady.catch(() => undefined);
            siteReady.catch(() => undefined);
            return { siteReady, coreReady };
          });
        } catch (error) {
          if (!prepared) await abandon(error);
          throw error;
        }
      };
      // A machine's first run: the installer was started above.
      if (installer && sandboxSeeds) return bootBesideInstall(prepareSite, async () => void (await installer?.terminate()));
      // Otherwise the tree is located first (downloaded if need be): a release not installed yet
      // for this PHP version boots as a machine's first run does (`onTreeLocated`).
      const notInstalled = new Promise<boolean>((resolve) => (located = resolve));
      const preparing = prepareSite();
      preparing.catch(() => undefined);
      if (await Promise.race([notInstalled, preparing.then(() => false, () => false)])) {
        return bootBesideInstall(
          () => {
            unpack!.go();
            return preparing;
          },
          async (error) => {
            // The resolution then ends, and terminates the installer.
            unpack!.stop(error);
            await preparing.catch(() => undefined);
          },
        );
      }
      located = undefined;
      const { installing } = await preparing;
      const siteReady = installing ? installed(installing) : undefined;
      // Awaited by the boot once its worker is started; handled here so a failure is never unhandled meanwhile.
      siteReady?.catch(() => undefined);
      return PlaygroundRuntime.boot(setup, siteReady);
    },
  };
  return backend;
}

export type { Runtime };
