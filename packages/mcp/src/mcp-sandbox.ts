/**
 * The sandbox behind an MCP session: one `RuntimeEpisode` (so every tool call is recorded in a
 * verifiable trace) over a runtime that is booted locally or attached to a `serve` sandbox.
 * Tool calls are serialised: the episode is one sequence of actions, never interleaved.
 */
import { randomBytes } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import {
  createRuntimeEpisode,
  readArtifactFile,
  serializeError,
  writeArtifactBundle,
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
} from "@wp-codebox/runtime-core";

/** Options of `createMcpSandbox`. */
export interface McpSandboxOptions {
  /** Makes the runtime: the Playground backend, or one whose `create` attaches to a `serve` sandbox. */
  backend: RuntimeBackend;
  /** What to boot (ignored by an attaching backend). */
  createSpec?: RuntimeCreateSpec;
  /** Base directory of `collect_artifacts` bundles (relative `directory` inputs resolve here). */
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
  /** Writes the bundle of everything so far (the trace since the last reset) and verifies it. */
  collect(options?: { directory?: string; includeRuntimeSnapshotBundles?: boolean }): Promise<CollectedBundle>;
  /**
   * The artifact files at bundle-relative `paths` (e.g. screenshots named by a browser result's
   * `artifactRefs`), each read on its own: an attached runtime fetches just those files from
   * `serve` (`read-artifact`), never the whole session. One entry per path, in order: the file, or
   * why it could not be read (`artifact-not-found`, `artifact-too-large` over `maxBytes`, …).
   */
  files(paths: readonly string[], options?: { maxBytes?: number }): Promise<ArtifactRead[]>;
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

/** A sortable, unique bundle name: `mcp-20261201-014501-a1b2c3`. */
function bundleName(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `mcp-${stamp}-${randomBytes(3).toString("hex")}`;
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
  let closed = false;
  let queue: Promise<unknown> = Promise.resolve();

  const start = (): Promise<void> => {
    if (closed) return Promise.reject(new WpCodeboxError("runtime-disposed", "The MCP session is closed."));
    boot ??= (async () => {
      const started = Date.now();
      log(options.attached ? "Opening an episode on the attached sandbox" : "Booting the sandbox");
      await episode.reset();
      booted = true;
      const info = runtime!.info();
      const how = options.attached ? "attached" : `${info.bootMode} site`;
      log(`Sandbox ready: WordPress ${info.wordpressVersion} on PHP ${info.phpVersion} at ${info.siteUrl} (${Date.now() - started} ms, ${how})`);
    })();
    return boot;
  };

  /** Runs `work` after the boot and after every earlier call. */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(async () => {
      if (closed) throw new WpCodeboxError("runtime-disposed", "The MCP session is closed.");
      await start();
      return work();
    });
    queue = next.catch(() => undefined);
    return next;
  };

  const sandbox: McpSandbox = {
    start,
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
        return episode.step({ command, args, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }, undefined, signal ? { signal } : undefined);
      }),
    reset: () => serial(() => episode.reset()),
    observe: (spec) =>
      serial(async () => {
        const observation = await episode.observe(spec);
        return { observation, data: episode.observationData(observation.id) };
      }),
    snapshot: () => serial(() => episode.snapshot()),
    restore: (snapshotId) => serial(() => episode.restore(snapshotId)),
    collect: (collectOptions = {}) =>
      serial(async () => {
        const base = resolve(options.artifactsDir);
        const directory = collectOptions.directory
          ? isAbsolute(collectOptions.directory)
            ? collectOptions.directory
            : resolve(base, collectOptions.directory)
          : resolve(base, bundleName());
        const artifacts = await episode.collectArtifacts({ includeRuntimeSnapshotBundles: collectOptions.includeRuntimeSnapshotBundles ?? false });
        const trace = episode.trace();
        const failed = trace.steps.filter((s) => s.execution.status !== "ok");
        const written = await writeArtifactBundle(directory, artifacts, {
          status: failed.length ? failed[0]!.execution.status : "ok",
          summary: `MCP session ${trace.id}: ${trace.steps.length} step(s) since the last reset, ${trace.steps.length - failed.length} ok, ${trace.snapshots.length} snapshot(s).`,
          extraMetadata: { source: "wp-codebox mcp" },
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
      }),
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
