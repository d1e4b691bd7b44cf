/**
 * The `--attach` side of the CLI: `run --attach`, `episode run --attach` and `collect --attach`
 * drive a `wp-codebox serve` sandbox through the attach client (a `Runtime` over HTTP) with the
 * same code paths as a local sandbox, so results and bundles are identical in shape. While
 * attached, the client renews its session's lease in the background; a process killed before it
 * detaches loses its session (and a pooled sandbox goes back) after serve's `--session-lease`.
 */
import { resolve } from "node:path";
import {
  WpCodeboxError,
  assertUsableArtifactsDir,
  newRunId,
  planRun,
  runSession,
  probeArtifactsDir,
  bundleWriteFailure,
  writeArtifactBundle,
  type BundleViolation,
  type CommandRunPlan,
  type Runtime,
} from "@wp-codebox/runtime-core";
import { attachRuntime, type AttachedRuntime, type AttachOptions } from "@wp-codebox/live/client";
// Types only: run.ts loads the Playground backend, which an attached run never needs.
import type { RunOptions } from "./run.js";
import { toRunOutcome, type RunOutcome } from "./run-outcome.js";

/** Where to attach: `--attach URL` and `--token T` (default `$WP_CODEBOX_TOKEN`). */
export interface AttachTarget {
  control: string;
  token?: string;
  processEnv?: NodeJS.ProcessEnv;
}

/** Runtime flags that make no sense with `--attach` (the sandbox runs with what `serve` was given). */
export const RUNTIME_FLAG_NAMES = ["wp", "wordpress", "php", "phpExtension", "mount", "plugin", "theme", "policy", "env", "secretEnv", "wpCliPhar", "clock", "seed", "siteRequestTimeout", "define", "backend"] as const;

/**
 * Refuses runtime flags beside `--attach`.
 * @throws `invalid-argument` naming the flags.
 */
export function assertNoRuntimeFlags(opts: Record<string, unknown>): void {
  const given = RUNTIME_FLAG_NAMES.filter((k) => opts[k] !== undefined && !(Array.isArray(opts[k]) && (opts[k] as unknown[]).length === 0));
  if (given.length) {
    const flags = given.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    throw new WpCodeboxError("invalid-argument", `${flags.join(", ")} cannot be used with --attach: the sandbox runs with the flags wp-codebox serve was started with. Drop them, or pass them to serve.`, { flags });
  }
}

function tokenOf(target: AttachTarget): string {
  const token = target.token ?? (target.processEnv ?? process.env).WP_CODEBOX_TOKEN;
  if (!token) throw new WpCodeboxError("missing-argument", "--attach needs the control token serve printed: pass --token T or set WP_CODEBOX_TOKEN.");
  return token;
}

/**
 * Takes a session on the serve sandbox. With `options.reattach` (the MCP server), a session serve
 * no longer knows is replaced by a new one on the next call (see `AttachOptions.reattach`).
 * @throws `missing-argument` (no token), `attach-unreachable`, `attach-unauthorized`, `pool-exhausted`.
 */
export function attach(target: AttachTarget, options: Pick<AttachOptions, "reattach" | "onReattach"> = {}): Promise<AttachedRuntime> {
  return attachRuntime({ control: target.control, token: tokenOf(target), ...options });
}

/**
 * `run --attach`: validates the command and its args locally (no call is made for a typo), runs
 * it in the attached sandbox under the policy serve was started with, writes the bundle of this
 * run (its command, the files it wrote, the events while it ran, and how the sandbox booted; not
 * what other clients did in a shared sandbox) and detaches.
 * @returns like `runCommand`.
 * @throws what `prepareRun` throws for the command/args/artifacts dir, and the attach errors.
 */
export async function runAttached(options: RunOptions & AttachTarget): Promise<RunOutcome> {
  // The same plan as a local run (command, args, timeout, bundle directory), without runtime flags.
  const plan = planRun(
    { kind: "command", command: options.command, args: options.args ?? [], ...(options.timeout !== undefined ? { timeout: options.timeout } : {}) },
    { ...(options.cwd ? { cwd: options.cwd } : {}), ...(options.artifactsDir !== undefined ? { artifactsDir: options.artifactsDir } : {}) },
  ) as CommandRunPlan;
  const runtime = await attach(options);
  options.onProgress?.(`Attached to ${runtime.info().siteUrl} (sandbox ${runtime.sandboxId})`);
  // The bundle holds what this run did, not what other clients did in a shared sandbox before it.
  const ran: string[] = [];
  const thisRun: Runtime = {
    info: () => runtime.info(),
    execute: async (spec) => {
      const result = await runtime.execute(spec);
      ran.push(result.id);
      return result;
    },
    collectArtifacts: (spec) => runtime.collectArtifacts({ ...spec, executions: ran }),
    dispose: () => runtime.dispose(),
  };
  try {
    // runSession with a running runtime: nothing boots and nothing is disposed (we detach below).
    const session = await runSession(plan, {
      runtime: thisRun,
      ...(options.interrupt ? { signal: options.interrupt } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    return toRunOutcome(session);
  } finally {
    await runtime.dispose();
  }
}

/** What `collect --attach` returns. */
export interface CollectOutcome {
  bundle: { directory: string; id: string; digest: string; valid: boolean; violations: BundleViolation[] };
  results: number;
  siteUrl: string;
}

/**
 * `collect --attach … --artifacts DIR`: writes the bundle of everything done in the attached
 * sandbox so far (verified like any other) and detaches; the sandbox keeps running.
 * @throws `artifacts-dir-not-empty`, attach errors.
 */
export async function collectAttached(options: AttachTarget & { artifactsDir?: string; cwd?: string; includeSnapshots?: boolean; onProgress?: (m: string) => void }): Promise<CollectOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const runId = newRunId().replace(/^run-/, "collect-");
  const directory = resolve(cwd, options.artifactsDir ?? `wp-codebox-artifacts/${runId}`);
  assertUsableArtifactsDir(directory);
  probeArtifactsDir(directory);
  const runtime = await attach(options);
  try {
    options.onProgress?.(`Collecting from ${runtime.info().siteUrl} (sandbox ${runtime.sandboxId})`);
    const artifacts = await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: options.includeSnapshots ?? false });
    const written = await writeArtifactBundle(directory, artifacts, {
      summary: `Collected from a live sandbox: ${artifacts.results.length} command(s), ${artifacts.results.filter((r) => r.status === "ok").length} ok.`,
      extraMetadata: { runId, attached: { siteUrl: runtime.info().siteUrl, sandbox: runtime.sandboxId } },
    }).catch((thrown: unknown) => {
      throw bundleWriteFailure(thrown, directory);
    });
    // writeArtifactBundle has verified it (it throws bundle-invalid otherwise).
    const verification: { valid: boolean; violations: BundleViolation[] } = { valid: written.valid, violations: [] };
    return { bundle: { directory: written.directory, id: written.id, digest: written.digest, valid: verification.valid, violations: verification.violations }, results: artifacts.results.length, siteUrl: runtime.info().siteUrl };
  } finally {
    await runtime.dispose();
  }
}
