/**
 * The sandbox behind an MCP session: one `RuntimeEpisode` (so every tool call is recorded in a
 * verifiable trace) over a runtime that is booted locally or attached to a `serve` sandbox.
 * Tool calls are serialised: the episode is one sequence of actions, never interleaved.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import {
  createRuntimeEpisode,
  readArtifactFile,
  SerialQueue,
  serializeError,
  writeArtifactBundle,
  bundleWriteFailure,
  WpCodeboxError,
  type ArtifactFileRead,
  type BundleViolation,
  type ObservationSpec,
  type Runtime,
  type RuntimeBackend,
  type RuntimeCreateSpec,
  type RuntimeEpisode,
  type RuntimeEpisodeReset,
  type RuntimeEpisodeSnapshot,
  type RuntimeEpisodeStepResult,
  type RuntimeEpisodeObservation,
  type RuntimeInfo,
  type RuntimePolicy,
  type SerializedError,
  type AbilitiesObservation,
} from "@wp-codebox/runtime-core";

/** Options of `createMcpSandbox`. */
export interface McpSandboxOptions {
  /** Makes the runtime: the Playground backend, or one whose `create` attaches to a `serve` sandbox. */
  backend: RuntimeBackend;
  /** What to boot (ignored by an attaching backend). */
  createSpec?: RuntimeCreateSpec;
  /**
   * Base directory of `collect_artifacts` bundles. Each MCP server session writes into a fresh
   * folder of its own there (`mcp-<UTC time>-<random>`, made at the first collect); relative
   * `directory` inputs resolve inside that folder and may not leave it.
   */
  artifactsDir: string;
  /** Human-readable progress (boot, dispose) for stderr. */
  log?: (message: string) => void;
  /** The backend attaches to a sandbox someone else keeps up: the log says so instead of "booting"/"disposing". */
  attached?: boolean;
}

/** A written and verified bundle. */
export interface CollectedBundle {
  directory: string;
  id: string;
  digest: string;
  valid: boolean;
  violations: BundleViolation[];
  trace: { id: string; digest: string; steps: number };
}

/** What an MCP session drives; every method waits for the boot and for earlier calls. */
export interface McpSandbox {
  /** Starts booting now (idempotent); calls made before the boot ends wait for it. */
  start(): Promise<void>;
  /** True once the runtime is up. */
  readonly booted: boolean;
  /** Latest boot progress message (for progress notifications while waiting). */
  readonly bootMessage: string | undefined;
  /** The runtime facts (boots if needed). */
  info(): Promise<RuntimeInfo>;
  /** The policy the runtime enforces. */
  policy(): Promise<RuntimePolicy>;
  /**
   * Runs one command as an episode step. When `signal` aborts, the running command is stopped
   * (recorded as `timed-out`); a call still waiting for its turn is dropped with `interrupted`.
   */
  step(command: string, args: string[], options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<RuntimeEpisodeStepResult>;
  reset(): Promise<RuntimeEpisodeReset>;
  observe(spec: ObservationSpec): Promise<{ observation: RuntimeEpisodeObservation; data: unknown }>;
  snapshot(): Promise<RuntimeEpisodeSnapshot>;
  restore(snapshotId: string): Promise<RuntimeEpisodeSnapshot>;
  /**
   * Writes the bundle of everything so far (the trace since the last reset) and verifies it, into
   * this session's folder under the artifacts base: `directory` (relative, inside that folder), or
   * the next free `bundle-NNNN`.
   * @throws `artifacts-dir-outside-base` (see `bundleDirectoryFor`), `artifacts-dir-not-empty`.
   */
  collect(options?: { directory?: string; includeRuntimeSnapshotBundles?: boolean }): Promise<CollectedBundle>;
  /** This server session's bundle folder under the artifacts base (made by the first bundle). */
  readonly sessionDir: string;
  /**
   * The artifact files at bundle-relative `paths` (e.g. screenshots named by a browser result's
   * `artifactRefs`), each read on its own: an attached runtime fetches just those files from
   * `serve` (`read-artifact`), never the whole session. One entry per path, in order: the file, or
   * why it could not be read (`artifact-not-found`, `artifact-too-large` over `maxBytes`, …).
   */
  files(paths: readonly string[], options?: { maxBytes?: number }): Promise<ArtifactRead[]>;
  /**
   * The site's registered abilities with their schemas (the runtime's `abilities` observation,
   * not recorded in the episode trace). Read once per site state: a step, reset or restore makes
   * the next call read them again; while another call runs or waits, the last list read is
   * returned at once. `available` false (no abilities) before WordPress 6.9 or when the runtime
   * cannot observe them.
   */
  abilities(): Promise<AbilitiesObservation>;
  /** Calls `listener` once the sandbox is up (at once when it already is). */
  onBooted?(listener: () => void): void;
  /** A link that logs the browser in as the administrator, when the runtime makes one. */
  loginUrl(): Promise<string | undefined>;
  /** Disposes the runtime (waits for a boot in flight). Idempotent. */
  close(): Promise<void>;
}

/** One entry of `McpSandbox.files`: the file read, or the error that refused it. */
export type ArtifactRead = { path: string; file: ArtifactFileRead } | { path: string; error: SerializedError };

/**
 * The runtime extras the MCP sandbox uses when a runtime has them: in-place restore, and reading
 * one artifact file where collecting everything would cost a transfer (the attach client).
 */
type RestorableRuntime = Runtime & {
  restoreSnapshot?(snapshot: unknown): Promise<void>;
  readArtifact?(spec: { path: string; maxBytes?: number }): Promise<ArtifactFileRead>;
  /** A local runtime makes the link on demand; an attached one was handed it by serve. */
  loginUrl?: (() => Promise<string>) | string;
};

/**
 * A backend that restores snapshots in place when the runtime can (`restoreSnapshot`), instead of
 * booting a second sandbox: the episode gets a fresh view of the same runtime, and the view it
 * replaces no longer disposes it.
 */
function inPlaceRestoreBackend(inner: RuntimeBackend, onRuntime: (rt: RestorableRuntime | undefined) => void): RuntimeBackend {
  let current: { runtime: RestorableRuntime; view: { superseded: boolean } } | undefined;
  const viewOf = (runtime: RestorableRuntime): Runtime => {
    const state = { superseded: false };
    current = { runtime, view: state };
    onRuntime(runtime);
    const view: Runtime = {
      info: () => runtime.info(),
      execute: (spec) => runtime.execute(spec),
      collectArtifacts: (spec) => runtime.collectArtifacts(spec),
      dispose: async () => {
        if (state.superseded) return;
        if (current?.runtime === runtime) {
          current = undefined;
          onRuntime(undefined);
        }
        await runtime.dispose();
      },
    };
    if (runtime.observe) view.observe = (spec) => runtime.observe!(spec);
    if (runtime.snapshot) view.snapshot = (options) => runtime.snapshot!(options);
    if (runtime.reset) view.reset = () => runtime.reset!();
    return view;
  };
  const backend: RuntimeBackend = {
    kind: inner.kind,
    create: async (spec) => viewOf((await inner.create(spec)) as RestorableRuntime),
  };
  backend.restore = async (snapshot, spec) => {
    if (current?.runtime.restoreSnapshot) {
      const { runtime, view } = current;
      await runtime.restoreSnapshot!(snapshot);
      view.superseded = true;
      return viewOf(runtime);
    }
    if (!inner.restore) {
      throw new WpCodeboxError("snapshot-unsupported", `The ${inner.kind} backend cannot restore snapshots.`, { backend: inner.kind });
    }
    return viewOf((await inner.restore(snapshot, spec)) as RestorableRuntime);
  };
  return backend;
}

/**
 * The folder of one MCP server session under the `--artifacts` base: `mcp-20261201-014501-a1b2c3`
 * (UTC time the server started, then random). Names sort by time, so the newest is the last.
 */
export function sessionFolderName(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `mcp-${stamp}-${randomBytes(3).toString("hex")}`;
}

/** The real path of `path`, or of its deepest existing ancestor with the rest appended (symlinks resolved). */
function realPathOf(path: string): string {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = existsSync(existing) ? realpathSync(existing) : existing;
  return resolve(real, relative(existing, path));
}

/**
 * Where a `collect_artifacts` `directory` input puts the bundle: a relative path inside the
 * session folder. Absolute paths, `..` segments that leave the folder, the folder itself, and
 * paths that reach outside it through a symbolic link are refused.
 * @returns the absolute bundle directory.
 * @throws `artifacts-dir-outside-base` naming the input and the folder it must stay in.
 * @example bundleDirectoryFor("/bundles/mcp-20261201-014501-a1b2c3", "final") // "/bundles/mcp-…/final"
 */
export function bundleDirectoryFor(sessionDir: string, directory: string): string {
  const refuse = (why: string): never => {
    throw new WpCodeboxError(
      "artifacts-dir-outside-base",
      `collect_artifacts: directory ${JSON.stringify(directory)} ${why}. Give a relative folder name such as "final"; bundles of this session go under ${sessionDir}.`,
      { directory, base: sessionDir },
    );
  };
  if (directory.trim() === "" || directory.includes("\0")) refuse("is not a folder name");
  if (isAbsolute(directory) || /^[a-zA-Z]:|^[\\/]/.test(directory)) refuse("is an absolute path");
  const target = resolve(sessionDir, directory);
  const inside = (base: string, path: string): boolean => {
    const rel = relative(base, path);
    return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
  };
  if (!inside(sessionDir, target)) refuse("leaves the session's bundle folder");
  if (!inside(realPathOf(sessionDir), realPathOf(target))) refuse("leads outside the session's bundle folder through a symbolic link");
  return target;
}

/** The first `bundle-NNNN` under `sessionDir` that does not exist or is empty. */
function nextBundleDirectory(sessionDir: string): string {
  for (let n = 1; ; n++) {
    const candidate = resolve(sessionDir, `bundle-${String(n).padStart(4, "0")}`);
    if (!existsSync(candidate) || readdirSync(candidate).length === 0) return candidate;
  }
}

/**
 * Creates the sandbox of an MCP session. Nothing boots until `start()` (or the first call).
 * @throws (from the methods) what `backend.create` throws (`boot-failed`, …), the episode's codes
 *   (`snapshot-unsupported`, `snapshot-not-found`, `observation-unsupported`, …),
 *   `artifacts-dir-not-empty` from `collect`, `runtime-disposed` after `close`.
 */
export function createMcpSandbox(options: McpSandboxOptions): McpSandbox {
  const log = options.log ?? (() => undefined);
  let runtime: RestorableRuntime | undefined;
  let bootMessage: string | undefined;
  const backend = inPlaceRestoreBackend(options.backend, (rt) => {
    runtime = rt;
  });
  const episode: RuntimeEpisode = createRuntimeEpisode(
    {
      ...(options.createSpec ?? {}),
      onProgress: (message) => {
        bootMessage = message;
        log(message);
        options.createSpec?.onProgress?.(message);
      },
    },
    backend,
  );
  let boot: Promise<void> | undefined;
  let booted = false;
  const bootListeners: (() => void)[] = [];
  /** The abilities read for the current site state; dropped by anything that may change it. */
  let abilitiesRead: AbilitiesObservation | undefined;
  /** The last abilities read, kept when the site may have changed since. */
  let lastAbilities: AbilitiesObservation | undefined;
  const changed = <T>(work: Promise<T>): Promise<T> => {
    abilitiesRead = undefined;
    return work.finally(() => (abilitiesRead = undefined));
  };
  let closed = false;
  const order = new SerialQueue();
  // Named now (the server's start time); made by the first bundle written into it.
  const sessionDir = resolve(options.artifactsDir, sessionFolderName());

  const start = (): Promise<void> => {
    if (closed) return Promise.reject(new WpCodeboxError("runtime-disposed", "The MCP session is closed."));
    boot ??= (async () => {
      const started = Date.now();
      log(options.attached ? "Opening an episode on the attached sandbox" : "Booting the sandbox");
      await episode.reset();
      booted = true;
      for (const listener of bootListeners.splice(0)) listener();
      const info = runtime!.info();
      const how = options.attached ? "attached" : `${info.bootMode} site`;
      log(`Sandbox ready: WordPress ${info.wordpressVersion} on PHP ${info.phpVersion} at ${info.siteUrl} (${Date.now() - started} ms, ${how})`);
    })();
    return boot;
  };

  /** Runs `work` after the boot and after every earlier call. */
  const serial = <T>(work: () => Promise<T>): Promise<T> =>
    order.run(async () => {
      if (closed) throw new WpCodeboxError("runtime-disposed", "The MCP session is closed.");
      await start();
      return work();
    });

  const sandbox: McpSandbox = {
    start,
    sessionDir,
    get booted() {
      return booted;
    },
    get bootMessage() {
      return bootMessage;
    },
    info: () => serial(async () => runtime!.info()),
    policy: () => serial(async () => runtime!.info().policy),
    step: (command, args, stepOptions = {}) =>
      serial(() => {
        const { timeoutMs, signal } = stepOptions;
        if (signal?.aborted) throw new WpCodeboxError("interrupted", `${command}: the call was cancelled before it started.`, { command });
        return changed(episode.step({ command, args, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }, undefined, signal ? { signal } : undefined));
      }),
    reset: () => serial(() => changed(episode.reset())),
    observe: (spec) =>
      serial(async () => {
        const observation = await episode.observe(spec);
        return { observation, data: episode.observationData(observation.id) };
      }),
    snapshot: () => serial(() => episode.snapshot()),
    restore: (snapshotId) => serial(() => changed(episode.restore(snapshotId))),
    abilities: () => {
      if (abilitiesRead) return Promise.resolve(abilitiesRead);
      // While a call runs or waits, the last list read stands: listing tools never waits for a long command.
      if (booted && order.depth > 0 && lastAbilities) return Promise.resolve(lastAbilities);
      return serial(async () => {
        if (abilitiesRead) return abilitiesRead;
        const rt = runtime!;
        if (!rt.observe) return { available: false, abilities: [] };
        const observed = (await rt.observe({ type: "abilities" })) as { data?: AbilitiesObservation };
        abilitiesRead = lastAbilities = { available: observed.data?.available === true, abilities: observed.data?.abilities ?? [] };
        return abilitiesRead;
      });
    },
    onBooted(listener) {
      if (booted) listener();
      else bootListeners.push(listener);
    },
    loginUrl: () =>
      serial(async () => {
        const link = runtime!.loginUrl;
        return typeof link === "function" ? await link.call(runtime) : link;
      }),
    collect: (collectOptions = {}) => {
      let chosen: string | undefined;
      try {
        // Checked before waiting for the boot or earlier calls: a refused directory is refused at once.
        if (collectOptions.directory !== undefined) chosen = bundleDirectoryFor(sessionDir, collectOptions.directory);
      } catch (error) {
        return Promise.reject(error);
      }
      return serial(async () => {
        const directory = chosen ?? nextBundleDirectory(sessionDir);
        const artifacts = await episode.collectArtifacts({ includeRuntimeSnapshotBundles: collectOptions.includeRuntimeSnapshotBundles ?? false });
        const trace = episode.trace();
        const failed = trace.steps.filter((s) => s.execution.status !== "ok");
        const written = await writeArtifactBundle(directory, artifacts, {
          status: failed.length ? failed[0]!.execution.status : "ok",
          summary: `MCP session ${trace.id}: ${trace.steps.length} step(s) since the last reset, ${trace.steps.length - failed.length} ok, ${trace.snapshots.length} snapshot(s).`,
          extraMetadata: { source: "wp-codebox mcp" },
        }).catch((thrown: unknown) => {
          throw bundleWriteFailure(thrown, directory);
        });
        // writeArtifactBundle has verified it (it throws bundle-invalid otherwise).
        const verification: { valid: boolean; violations: BundleViolation[] } = { valid: written.valid, violations: [] };
        return {
          directory: written.directory,
          id: written.id,
          digest: written.digest,
          valid: verification.valid,
          violations: verification.violations,
          trace: { id: trace.id, digest: trace.digest, steps: trace.steps.length },
        };
      });
    },
    files: (paths, readOptions = {}) =>
      serial(async () => {
        if (paths.length === 0) return [];
        const rt = runtime!;
        const limit = readOptions.maxBytes === undefined ? {} : { maxBytes: readOptions.maxBytes };
        // A local runtime gathers its artifacts in memory; an attached one would send them all, so it reads each file.
        const local = rt.readArtifact ? undefined : await rt.collectArtifacts();
        const reads: ArtifactRead[] = [];
        for (const path of paths) {
          try {
            reads.push({ path, file: local ? readArtifactFile(local, path, limit) : await rt.readArtifact!({ path, ...limit }) });
          } catch (error) {
            reads.push({ path, error: serializeError(error) });
          }
        }
        return reads;
      }),
    async close() {
      if (closed) return;
      closed = true;
      // A boot in flight must finish before its runtime can be disposed.
      await boot?.catch(() => undefined);
      log(options.attached ? "Closing the episode" : "Disposing the sandbox");
      await episode.close().catch(() => undefined);
    },
  };
  return sandbox;
}
