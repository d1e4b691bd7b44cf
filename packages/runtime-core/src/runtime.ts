/**
 * The backend-agnostic runtime contract: a backend creates runtimes, a runtime executes
 * commands and hands back evidence. Nothing here knows about WordPress Playground or Playwright.
 */
import type { TestCounts } from "./test-results.js";
import type { ErrorCode } from "./errors.js";

/** How a mount may be used from inside the sandbox. */
export type MountMode = "readonly" | "readwrite";

/**
 * A host folder or file made visible inside the sandbox.
 * - `source`: host path (absolute, or relative to the caller's working directory).
 * - `target`: sandbox path under `/wordpress/wp-content/…` or `/workspace/…`; no `..` segments.
 * - `mode`: `readonly` mounts are copied into the sandbox, so writes never reach the host;
 *   `readwrite` mounts are shared with the host.
 */
export interface MountSpec {
  source: string;
  target: string;
  mode: MountMode;
  metadata?: Record<string, unknown>;
}

/** Network rule: `"deny"` (default), `"allow"`, or an allow-list of host names. */
export type NetworkPolicy = "deny" | "allow" | { allowHosts: string[] };

/**
 * What a run may do. Enforced on every execute, not advisory.
 * - `commands`: capability ids allowed (exact command ids, plus policy-only capabilities such as
 *   `wordpress.browser-actions.evaluate`).
 */
export interface RuntimePolicy {
  commands: string[];
  network: NetworkPolicy;
  filesystem: "readonly-mounts" | "readwrite-mounts";
  secrets: "none" | "scoped";
}

/** Where the WordPress build comes from: a bundled version (`"6.5"`) or a zip/directory path. */
export interface WordPressSource {
  version?: string;
  path?: string;
}

/**
 * Everything needed to create a sandbox.
 * - `wordpress`: bundled version or own build; default newest bundled.
 * - `php`: PHP version `"X.Y"`, one the backend offers (`preflight` says which); default `"8.3"`.
 * - `plugins` / `themes`: host folders mounted under `wp-content/plugins|themes/<basename>` and
 *   activated after boot.
 * - `env`: runtime environment variables visible to PHP through `getenv()`.
 * - `secretEnv`: names → values; visible to PHP like `env`, redacted from every artifact.
 * - `siteOptions`: WordPress options set after boot (`blogname` → `"Demo"`).
 */
export interface RuntimeCreateSpec {
  backend?: string;
  wordpress?: WordPressSource;
  php?: string;
  /**
   * PHP extensions to load, from those the PHP build ships (`intl`; `redis`, `memcached` where the
   * engine has JSPI). Default `["intl"]`; `[]` (or `["none"]`) loads none. Unknown names are
   * refused before boot with `php-extension-unavailable`; `none` beside other names with
   * `invalid-argument`.
   */
  extensions?: string[];
  mounts?: MountSpec[];
  plugins?: string[];
  themes?: string[];
  policy?: Partial<RuntimePolicy>;
  env?: Record<string, string>;
  secretEnv?: Record<string, string>;
  siteOptions?: Record<string, string>;
  /**
   * wp-config.php constants to set or override (`--define`), JSON scalars; names are checked with
   * `defineNameProblem` (reserved ones are `invalid-define`). Recorded in `RuntimeInfo.defines`.
   */
  defines?: Record<string, import("./wp-defines.js").WpDefineValue>;
  /** Host path of wp-cli.phar for `wordpress.wp-cli`; default `$WP_CODEBOX_WP_CLI_PHAR`, then `<cacheDir>/wp-cli.phar`. */
  wpCliPhar?: string;
  /**
   * `--update-baselines`: screenshot steps with `compare` write their image to the baseline path
   * (inside the script's folder) instead of comparing. Default false.
   */
  updateBaselines?: boolean;
  /**
   * `"real"` (default: host time) or an ISO-8601 instant where the sandbox's virtual clock starts;
   * it then advances only with work done (see `VIRTUAL_CLOCK_STEP_US`, `VIRTUAL_CLOCK_READ_US`).
   */
  clock?: string;
  /** Seeds every source of randomness (PHP entropy, page `Math.random`); refused with outbound network. */
  seed?: number | string;
  /**
   * Limit of one request to the sandbox's site (a browser's page load, a REST call, PHP calling
   * its own site), in ms; `0` = none. A request that takes longer gets a 504 and its PHP worker is
   * replaced. Default `DEFAULT_SITE_REQUEST_TIMEOUT_MS` (30 s).
   */
  siteRequestTimeoutMs?: number;
  /** `stable` (`http://wp-codebox.test`) or `loopback` (`http://127.0.0.1:PORT`); default stable when deterministic. */
  origin?: import("./determinism.js").SiteOriginMode;
  /** Called with human-readable progress while the runtime boots (for stderr). */
  onProgress?: (message: string) => void;
  /**
   * Interrupts the boot where it waits: e.g. for another process that is filling the shared cache
   * (installing the same WordPress); the create then rejects with `interrupted`.
   */
  signal?: AbortSignal;
}

/** One command to run: flat `key=value` args; structured payloads use `*-json` args. */
export interface ExecutionSpec {
  command: string;
  args: string[];
  /**
   * Wall-clock limit in ms, enforced from outside PHP. Default: the command's `defaultTimeoutMs`
   * (60000 ms for most). `0` means none; a whole number up to `MAX_DURATION_MS` (2^31 - 1),
   * anything else is `invalid-argument`.
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A failure recorded as data: stable kebab-case code, what to fix, JSON-safe details. */
export interface ExecutionError {
  code: ErrorCode;
  message: string;
  data?: Record<string, unknown>;
}

/** The shape every command returns. Failures are results, not exceptions. */
export interface ExecutionResult {
  id: string;
  command: string;
  args: string[];
  status: "ok" | "error" | "timed-out";
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Total bytes the command wrote per stream, before capping. */
  stdoutBytes?: number;
  stderrBytes?: number;
  /** True when a stream was cut at the cap. */
  truncated?: { stdout: boolean; stderr: boolean };
  json?: unknown;
  error?: ExecutionError;
  /** ISO-8601 timestamps. */
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  artifactRefs?: ArtifactRef[];
  /**
   * Database errors WordPress recorded while the command ran (SQLite translation failures and
   * other `$wpdb->last_error`s), in order. Absent when there were none. A database error does
   * not change `status`: WordPress itself carries on.
   */
  dbErrors?: DbErrorRecord[];
  /**
   * PHP fatal errors of requests the command set off in the background (a WP-Cron run spawned by
   * a page load, a loopback request PHP made to its own site), in order. Absent when there were
   * none. Unless the command's `background-errors=record` arg says otherwise, one makes an `ok`
   * result `error` with code `php-fatal` and `data.background: true`.
   */
  backgroundErrors?: BackgroundErrorRecord[];
}

/** A PHP fatal error in a background request: its message, PHP file and line, and the request. */
export interface BackgroundErrorRecord {
  kind: "php-fatal";
  message: string;
  file: string;
  line: number;
  /** The request that died, e.g. `POST /wp-cron.php?doing_wp_cron=…`. */
  method: string;
  url: string;
  /** HTTP status the request ended with (500 for a fatal). */
  status: number;
}

/** One database error: the query as WordPress sent it and the error message as plain text. */
export interface DbErrorRecord {
  query: string;
  message: string;
}

/** A bundle-relative file produced by a command, with its SHA-256 (hex) and size in bytes. */
export interface ArtifactRef {
  path: string;
  kind: string;
  sha256?: string;
  bytes?: number;
}

/** A file a runtime contributes to the bundle (`path` is bundle-relative, under `files/`). */
export interface ArtifactFile {
  path: string;
  kind: string;
  contentType: string;
  content: Uint8Array | string;
}

/** A lifecycle event for `files/events.jsonl`. `at` is ISO-8601. */
export interface RuntimeEvent {
  at: string;
  type: string;
  data?: Record<string, unknown>;
}

/** Facts about a booted runtime. */
export interface RuntimeInfo {
  id: string;
  backend: string;
  wordpressVersion: string;
  /** The WordPress booted, where it came from and how it was chosen; absent for backends that do not say. */
  wordpress?: import("./wordpress-choice.js").WordPressChoiceRecord;
  phpVersion: string;
  /** PHP extensions loaded into the sandbox's PHP (`["intl"]`); absent for backends that do not say. */
  phpExtensions?: string[];
  siteUrl: string;
  /** How the site started: `installed` (ran the installer) or `cached` (installed copy). */
  bootMode: "installed" | "cached";
  bootDurationMs: number;
  mounts: ResolvedMount[];
  policy: RuntimePolicy;
  plugins: string[];
  themes: string[];
  /** Clock mode, start instant, seed and origin mode (absent: a backend without determinism support). */
  determinism?: import("./determinism.js").RuntimeDeterminism;
  /** The caller's wp-config constants (`--define`, `runtime.defines`), as given; absent when none. */
  defines?: Record<string, import("./wp-defines.js").WpDefineValue>;
}

/** A validated mount with its absolute host path. */
export interface ResolvedMount extends MountSpec {
  source: string;
  kind: "file" | "directory";
}

/** What the runtime gathered so far, for an artifact bundle. */
export interface RuntimeArtifacts {
  info: RuntimeInfo;
  results: ExecutionResult[];
  events: RuntimeEvent[];
  files: ArtifactFile[];
  /** Values to redact from every text artifact. */
  secrets: string[];
  /** Review fields the runtime contributes, e.g. the browser `assertions` block. */
  review?: { assertions?: { total: number; passed: number; failed: number; results: unknown[] }; tests?: TestCounts };
  /**
   * Snapshots whose files are in `files` (`collectArtifacts({ includeRuntimeSnapshotBundles: true })`):
   * declared in the reference manifest with their semantics and `replay.status`.
   */
  snapshots?: { id: string; semantics: string; replay: { status: string }; artifacts: string[] }[];
}

/** Options for collecting artifacts. */
export interface ArtifactSpec {
  includeRuntimeSnapshotBundles?: boolean;
  /**
   * Only what these executions (result ids) did: their results, the files they wrote, their review
   * counts, and the events recorded while they ran, plus the events that say how the sandbox
   * booted. For a client of a shared sandbox (`run --attach`) whose bundle must not hold other
   * clients' work. Absent: everything since boot (or since the sandbox was recycled).
   */
  executions?: string[];
}

/** An observation request; `type` selects the observer. */
export interface ObservationSpec {
  type: string;
  [key: string]: unknown;
}

/** A live sandbox. `execute` throws only for contract misuse (unknown command, policy, disposed). */
export interface Runtime {
  info(): RuntimeInfo;
  execute(spec: ExecutionSpec): Promise<ExecutionResult>;
  observe?(spec: ObservationSpec): Promise<unknown>;
  snapshot?(options?: Record<string, unknown>): Promise<unknown>;
  collectArtifacts(spec?: ArtifactSpec): Promise<RuntimeArtifacts>;
  dispose(): Promise<void>;
  /**
   * Returns the sandbox to its initial state (fresh WordPress + mounts), fast: by restoring a cached
   * clean state rather than a full boot. Optional; when absent, an episode's
   * `reset()` disposes the runtime and creates a new one with `backend.create`.
   */
  reset?(): Promise<void>;
  /**
   * Makes the sandbox as good as freshly booted for an unrelated next user (a warm pool's next
   * session, a batch lane's next task): `reset()` plus everything a session leaves that `reset()`
   * keeps (PHP workers' memory file system, logins, the virtual clock and seeded entropy, recorded
   * results and events). Optional; without it a pool or lane boots a new runtime instead.
   */
  recycle?(): Promise<void>;
}

/** What `RuntimeBackend.preflight` resolved a create spec to, before boot. */
export interface RuntimePreflight {
  wordpressVersion?: string;
  phpVersion?: string;
}

/** The backends a CLI flag (`--backend`) or a script (`runtime.backend`) can name; the first is the default. */
export const BACKEND_NAMES = ["playground", "native"] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** A factory of runtimes (e.g. the WordPress Playground backend). */
export interface RuntimeBackend {
  kind: string;
  /**
   * Whether the backend can run a virtual clock and seeded randomness (`clock`, `seed` in a create
   * spec); absent means it can. Episodes default to both only on a backend that can.
   */
  deterministic?: boolean;
  create(spec: RuntimeCreateSpec): Promise<Runtime>;
  /**
   * Checks, without booting, what only the backend knows about a create spec: whether the
   * WordPress source and the PHP version are available (and, as backends grow, extensions).
   * `planRun` calls it so that such problems are refused before anything boots.
   * @returns the versions the spec resolves to (e.g. `{ wordpressVersion: "6.5.5", phpVersion: "8.3" }`),
   *   recorded in the bundle when the sandbox then fails to boot.
   * @throws WpCodeboxError with the same code `create` would throw (e.g. `php-version-unavailable`,
   *   `wordpress-version-unavailable`, `wordpress-source-invalid`).
   */
  preflight?(spec: RuntimeCreateSpec): RuntimePreflight | void;
  restore?(snapshot: unknown, spec?: RuntimeCreateSpec): Promise<Runtime>;
  /**
   * What the backend's runtimes can run: catalog command ids and observation types. Absent: every
   * command and observation. `planRun` (and batch, mcp) refuse anything outside it before boot
   * with `backend-unsupported` (see `assertBackendSupports`).
   */
  supports?: BackendSupport;
}

/** Catalog commands (e.g. `"wordpress.run-php"`) and observation types (e.g. `"runtime-info"`) a backend runs. */
export interface BackendSupport {
  commands: readonly string[];
  observations: readonly string[];
}
