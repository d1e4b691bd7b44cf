import type { MessagePort } from "node:worker_threads";
import type { WorkMark } from "./php-determinism.js";
import type { DbError, PhpFatal, PhpHttpResult, PhpRunResult } from "@wp-codebox/commands";

/**
 * Messages between a runtime (main thread) and its PHP worker thread. Plain data only, so values
 * cross the thread boundary unchanged.
 */

/** A host path made visible at `vfsPath` inside PHP through Node's filesystem (NODEFS). */
export interface WorkerMount {
  hostPath: string;
  vfsPath: string;
  /** Refuse every write (EROFS); default writable. */
  readOnly?: boolean;
}

/** What a worker needs to boot WordPress. Paths are host paths unless named `vfs…`. */
export interface WorkerBootOptions {
  phpVersion: string;
  /** PHP extensions php-wasm loads before PHP starts (`intl`, …); default none. */
  extensions?: string[];
  siteUrl: string;
  /** Host directory with the WordPress core tree, mounted at `/wordpress`. */
  coreDir: string;
  /** Mount core writable (only the installer does). */
  coreWritable?: boolean;
  /**
   * Per-sandbox copy-on-write layers over the shared core (copy-on-write-fs.ts): host folders that
   * receive the sandbox's changes and deletions. Required unless `coreWritable`.
   */
  coreLayers?: { upper: string; whiteouts: string };
  /** Host directory mounted at `/wordpress/wp-content` (per-sandbox copy). */
  contentDir?: string;
  /** Host directory mounted at `/workspace`. */
  workspaceDir?: string;
  /**
   * Host file with a saved OPcache file cache (compiled core scripts), packed (opcache-seed.ts).
   * Its files go into the in-memory file cache folder at boot, so the first WordPress load skips
   * compilation.
   */
  opcacheSeedPack?: string;
  /**
   * Scripts to compile into OPcache before the site is mounted (`core-scripts.ts`): the WordPress
   * tree at host folder `treeDir`, whose files the site's core links to (same paths under
   * `/wordpress`, same mtimes), is mounted read-only at `/wordpress` for it and unmounted after.
   * With `awaitSite` this runs while the site installs, on a core the installer leaves idle. A
   * script with a syntax error is skipped; one whose compiling ends the request (a compile-time
   * fatal error such as a function declared twice) ends the list there. Either fails again, with
   * its message, when WordPress includes it.
   * A worker booted with `awaitSite` before the tree was known is given it later instead
   * (`PhpWorkerHost.releaseCore`).
   */
  precompile?: CorePrecompile;
  /**
   * OPcache compiles without its optimiser and keeps no file cache: the installer's worker when
   * the sandbox's worker makes the seed (`precompile`). An install loads core once, and optimising
   * each script as it is compiled cost about a third of the install request's CPU.
   */
  quickCompile?: boolean;
  /** Extra NODEFS mounts applied after the core mounts, in order. */
  mounts: WorkerMount[];
  /**
   * What Playground's boot does about the database: the installer runs WordPress's installer
   * straight away on a fresh copy of a release (no database yet), and asks WordPress first whether
   * it is installed (`-if-needed`, one more WordPress load) on a tree that brings a database of
   * its own; sandboxes never install.
   */
  installMode: "install-from-existing-files" | "install-from-existing-files-if-needed" | "do-not-attempt-installing";
  sqliteZipPath: string;
  constants: Record<string, string | number | boolean | null>;
  /**
   * The sandbox's own site: connections PHP opens to it are allowed whatever the network rule and
   * go to the sandbox server's `selfCallPort` (sandbox-origin.ts). Absent: nothing is "self".
   */
  origin?: import("./sandbox-origin.js").SandboxOrigin;
  selfCallPort?: number;
  /** The policy's network rule, enforced on every socket PHP opens (php-network-guard.ts); default "deny". */
  network?: import("@wp-codebox/runtime-core").NetworkPolicy;
  /**
   * PHP source of a must-use plugin in place before WordPress boots, so WordPress's installer runs
   * with it too (the installer's: `installerMuPlugin` in site-php.ts). Never cached by OPcache.
   */
  installerMuPlugin?: string;
  /** PHP source of a must-use plugin written to `/internal/shared/mu-plugins/` after boot. */
  muPlugin?: string;
  processId: number;
  /**
   * Port of the runtime's shared file-lock manager (exposed with `exposeSyncAPI`), so several PHP
   * workers can use one SQLite database safely. Absent: locks are not coordinated (one worker).
   */
  lockPort?: MessagePort;
  /** Virtual clock and seeded entropy (php-determinism.ts); absent: host time and entropy. */
  determinism?: import("./php-determinism.js").WorkerDeterminism;
  /** Clock instant and entropy stream of the boot itself. */
  bootMark?: import("./php-determinism.js").WorkMark;
  /**
   * The site's files are not there yet (a first boot installs the site, or unpacks the release to
   * install, meanwhile): the worker loads PHP and starts it, then waits for a `site-ready` message
   * (`PhpWorkerHost.releaseSite`, which may also name `SiteReadyOptions`) before it mounts
   * anything and boots WordPress.
   */
  awaitSite?: boolean;
  /**
   * With `awaitSite`, for a site installed already (its `wp-config.php` and Playground's patches
   * of core made when it was installed, so Playground's boot reads and writes nothing of the
   * site's): the worker boots PHP's side of WordPress (constants, the SQLite integration,
   * wp-codebox's preloads) before the site comes, and mounts the site once it is released. After
   * a `precompile` it also compiles the SQLite integration and builds its grammar meanwhile (the
   * rest of the installed site's OPcache seed). Not for the installer, whose site Playground's
   * boot makes (`wp-config.php`, its install checks), nor with a virtual clock (the boot's clock
   * reads keep their order).
   */
  siteAfterBoot?: boolean;
}

/** What a worker compiles into OPcache before its site is mounted (boot option `precompile`). */
export interface CorePrecompile {
  /** Host folder of the WordPress tree, mounted read-only at `/wordpress` while compiling. */
  treeDir: string;
  /** Scripts to compile, relative to the tree (`core-scripts.ts`). */
  scripts: string[];
}

/** Boot options a worker booted with `awaitSite` may be given only when the site is ready. */
export type SiteReadyOptions = Partial<Pick<WorkerBootOptions, "coreDir" | "installMode" | "opcacheSeedPack">>;

export type WorkerRequest =
  | { op: "run"; id: number; code: string; env?: Record<string, string>; capBytes: number; mark?: WorkMark }
  | {
      op: "http";
      id: number;
      method: string;
      url: string;
      headers: Record<string, string>;
      body?: Uint8Array;
      capBytes: number;
      mark?: WorkMark;
    }
  | { op: "read-file"; id: number; path: string }
  | { op: "mount"; id: number; mount: WorkerMount }
  /**
   * Answers OPcache's file cache as it is now, packed: `{ pack: Uint8Array }` (opcache-seed.ts,
   * transferred to the runtime), for the runtime to write (`writeSeedPack`) while this worker
   * goes on. `compileDirs`: folders of PHP's filesystem whose
   * `.php` files are compiled into the cache first (never run).
   */
  | { op: "export-opcache"; id: number; compileDirs?: string[] }
  /** Forgets cached filesystem nodes under `vfsPath` after the host changed the files (reset, restore). */
  | { op: "forget-cached-files"; id: number; vfsPath: string }
  | { op: "write-file"; id: number; path: string; data: Uint8Array | string }
  /**
   * Puts the worker's in-memory file system back as it was when the worker became ready (deletes
   * what was created since) and drops what PHP keeps of the deleted files between requests
   * (compiled scripts, the realpath and stat caches). Answers a `MemoryFsRestore`; refused
   * (`restored: false`) when a file that was there at boot was changed.
   */
  | { op: "restore-boot-fs"; id: number };

// The shapes handlers read are declared once in @wp-codebox/commands; the worker's add the clock.
export type { CappedStream, DbError, PhpFatal } from "@wp-codebox/commands";

/** How a script or HTTP request ended, from assets/runtime/request-report.php. */
export interface RequestReport {
  fatal?: PhpFatal;
  dbErrors?: DbError[];
}

export interface WorkerRunResult extends PhpRunResult {
  /** Virtual clock when the run finished (µs since the epoch); absent with host time. */
  clockUs?: number;
}

export interface WorkerHttpResult extends PhpHttpResult {
  /** Virtual clock when the request finished (µs since the epoch); absent with host time. */
  clockUs?: number;
}

/**
 * The answer to a request. `engineCrashed` (what php-wasm threw): PHP's engine died under this
 * request (a WebAssembly trap), so the worker answers nothing more and must be replaced.
 */
export type WorkerResponse =
  | { id: number; ok: true; value: unknown; engineCrashed?: string }
  | { id: number; ok: false; error: { message: string; stack?: string }; engineCrashed?: string };

/** A request PHP left for the runtime to send to the sandbox's own site (nobody waits for its answer). */
export interface DeferredRequest {
  method: string;
  /** Absolute URL on the sandbox's own site, as PHP wrote it. */
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Uint8Array;
}

export type WorkerEvent =
  /** `printed`: `[run id, stdout bytes, stderr bytes]` of the running `run`, updated as PHP prints. */
  /** `bootMarks`: the boot's steps as they ended, `[step, epoch ms]`, for benches. */
  | { event: "ready"; bootMs: number; bootMarks?: [string, number][]; clockUs?: number; printed: SharedArrayBuffer }
  | { event: "boot-failed"; error: { message: string; stack?: string } }
  | { event: "progress"; message: string }
  /**
   * What php-wasm's Emscripten glue itself printed (not PHP's output): an abort's reason, a
   * warning. It goes to the runtime's progress instead of the process's stderr.
   */
  | { event: "engine-message"; text: string }
  | { event: "network-denied"; host: string; port: number }
  /** PHP opened a connection to its own site (sent before the connection is made). */
  | { event: "self-call" }
  /**
   * A `blocking => false` request PHP made to its own site during the work that just ended (sent
   * before that work's response); the runtime serves it on the next free worker.
   */
  | { event: "deferred-request"; request: DeferredRequest }
  /** A chunk of a running `run` request's output, up to the cap (none past it); `bytes` = total so far. */
  | { event: "output"; id: number; stream: "stdout" | "stderr"; data: Uint8Array; bytes: number };
