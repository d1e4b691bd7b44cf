/**
 * `wp-codebox serve`: boots a sandbox (or a warm pool of them) from the same flags as `run` (or a
 * recipe's runtime and inputs) and keeps it up until Ctrl-C, SIGTERM or `--ttl` of inactivity.
 * Prints the site URL, a one-click admin login URL and the control endpoint + token for `--attach`.
 */
import { resolve } from "node:path";
import { WpCodeboxError, parseDuration, quoteValue, type RuntimeCreateSpec } from "@wp-codebox/runtime-core";
import { startLiveServer, type LiveEvent, type LiveServer } from "@wp-codebox/live";
import { prepareRun, type RunOptions } from "./run.js";
import { createBackend } from "./backends.js";
import { planRecipeFile } from "./recipe-run.js";

/** Default idle time before serve disposes everything (an abandoned serve must not hold ~0.5 GB forever). */
export const DEFAULT_SERVE_TTL = "30m";

/** Inputs of `serve`: the runtime flags of `run` plus the serve options. */
export interface ServeOptions extends Omit<RunOptions, "command" | "args" | "timeout" | "artifactsDir" | "interrupt"> {
  /** Recipe whose `runtime` and `inputs` (plugins, themes, mounts, env, secretEnv) the sandbox takes; flags add to / override it. */
  recipe?: string;
  /** `--allow-path DIR`: host paths beyond the `--recipe` file's folder it may name (relative to `cwd`). */
  allowPaths?: string[];
  /** Control port on 127.0.0.1; default any free port. */
  port?: string | number;
  /** Idle time (`30m`, `90s`; `0` = never); default 30m. */
  ttl?: string;
  /** Warm pool size; default 0 = one shared sandbox. */
  pool?: string | number;
  /**
   * Session lease (`60s`, `2m`; `0` = sessions never expire): a session whose client makes no call
   * and sends no renewal for this long after its last call is released (default 60s).
   */
  sessionLease?: string;
  onEvent?: (event: LiveEvent) => void;
  /** Aborting it while the sandbox boots disposes it; `startServe` then throws `interrupted`. */
  signal?: AbortSignal;
}

/** Shortest `--session-lease` other than 0, in ms: clients renew every third of it over HTTP. */
export const MIN_SESSION_LEASE_MS = 1_000;

/**
 * Parses `--session-lease` with the duration syntax of `--ttl`.
 * @returns ms; `undefined` when not given (the live server's default applies).
 * @throws `invalid-argument` naming the flag, for text that is not a duration or a lease shorter than 1 s (other than 0).
 */
function sessionLeaseOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    throw new WpCodeboxError("invalid-argument", `--session-lease ${quoteValue(value)}: ${(error as Error).message}`, { sessionLease: value });
  }
  if (ms !== 0 && ms < MIN_SESSION_LEASE_MS) {
    throw new WpCodeboxError("invalid-argument", `--session-lease ${quoteValue(value)}: a lease must be at least 1s (clients renew it every third of it), or 0 for sessions that never expire.`, { sessionLease: value });
  }
  return ms;
}

function integerOption(name: string, value: string | number | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === "number" ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new WpCodeboxError("invalid-argument", `--${name} ${quoteValue(value)}: expected a whole number from ${min} to ${max}.`, { [name]: value });
  }
  return n;
}

/**
 * Resolves the create spec of `serve` without booting: the runtime flags are validated exactly as
 * `run` validates them. Policy: `--policy`, else every runnable command (like the backend default).
 * @throws the codes `run` throws for runtime flags, `invalid-recipe`, `invalid-argument`, `invalid-duration`.
 */
export async function prepareServe(options: ServeOptions): Promise<{ spec: RuntimeCreateSpec; port?: number; ttlMs: number; pool: number; sessionLeaseMs?: number }> {
  const cwd = options.cwd ?? process.cwd();
  const processEnv = options.processEnv ?? process.env;
  let base: Partial<RunOptions> = {};
  if (options.recipe !== undefined) {
    // The recipe's paths are checked like `recipe run` checks them. Its policy is not used (--policy
    // is), so its network rule needs no grant.
    const plan = await planRecipeFile(options.recipe, cwd, processEnv, { ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}), allowNetwork: ["*"] });
    base = {
      ...(plan.runtime.wp !== undefined ? { wp: plan.runtime.wp } : {}),
      ...(plan.runtime.php !== undefined ? { php: plan.runtime.php } : {}),
      ...(plan.runtime.extensions !== undefined ? { phpExtensions: plan.runtime.extensions.length ? plan.runtime.extensions : ["none"] } : {}),
      plugins: plan.inputs.plugins,
      themes: plan.inputs.themes,
      mounts: plan.inputs.mounts.map((m) => `${m.source}:${m.target}:${m.mode === "readonly" ? "ro" : "rw"}`),
      env: Object.entries(plan.inputs.runtimeEnv).map(([k, v]) => `${k}=${v}`),
      secretEnv: plan.inputs.secretEnv,
      // JSON text keeps each value's type (a string stays a string) through --define parsing.
      defines: Object.entries(plan.runtime.defines ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`),
    };
  }
  // The same validation as `run` (mounts, versions, env, secrets), with a neutral command.
  const prepared = prepareRun({
    command: "wordpress.run-php",
    args: ["code=<?php"],
    cwd,
    processEnv,
    ...base,
    ...(options.wp !== undefined ? { wp: options.wp } : {}),
    ...(options.wordpressPath !== undefined ? { wordpressPath: options.wordpressPath } : {}),
    ...(options.php !== undefined ? { php: options.php } : {}),
    ...(options.phpExtensions !== undefined ? { phpExtensions: options.phpExtensions } : {}),
    mounts: [...(base.mounts ?? []), ...(options.mounts ?? [])],
    plugins: [...(base.plugins ?? []), ...(options.plugins ?? [])],
    themes: [...(base.themes ?? []), ...(options.themes ?? [])],
    env: [...(base.env ?? []), ...(options.env ?? [])],
    secretEnv: [...(base.secretEnv ?? []), ...(options.secretEnv ?? [])],
    ...(options.policy !== undefined ? { policy: options.policy } : {}),
    ...(options.wpCliPhar !== undefined ? { wpCliPhar: options.wpCliPhar } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.siteRequestTimeout !== undefined ? { siteRequestTimeout: options.siteRequestTimeout } : {}),
    ...(options.backendName !== undefined ? { backendName: options.backendName } : {}),
    ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
    defines: [...(base.defines ?? []), ...(options.defines ?? [])],
    // serve prints a URL a browser on this machine opens: the loopback origin, even when deterministic.
    origin: "loopback",
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  const spec = { ...prepared.createSpec };
  if (options.policy === undefined) delete spec.policy;
  const ttlMs = parseDuration(options.ttl ?? DEFAULT_SERVE_TTL);
  const port = integerOption("port", options.port, 1, 65535);
  const pool = integerOption("pool", options.pool, 0, 32) ?? 0;
  const sessionLeaseMs = sessionLeaseOption(options.sessionLease);
  return { spec, ...(port !== undefined ? { port } : {}), ttlMs, pool, ...(sessionLeaseMs !== undefined ? { sessionLeaseMs } : {}) };
}

/**
 * Boots and serves; resolves with the running server once the (first) site is ready.
 * @throws what `prepareServe` and the backend throw (nothing is left running then).
 */
export async function startServe(options: ServeOptions): Promise<LiveServer> {
  const { spec, port, ttlMs, pool, sessionLeaseMs } = await prepareServe(options);
  const cwd = options.cwd ?? process.cwd();
  return startLiveServer({
    // Playground by default; `--backend native` serves through the native sandbox's own web server.
    backend: createBackend(options.backendName, { cwd: resolve(cwd), ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) }),
    spec,
    pool,
    ...(port !== undefined ? { port } : {}),
    ttlMs,
    ...(sessionLeaseMs !== undefined ? { sessionLeaseMs } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** The human block `serve` prints on stdout. */
export function formatServeAddress(live: LiveServer, ttlMs: number): string {
  const lines = [
    `site:     ${live.url}`,
    ...(live.loginUrl ? [`login:    ${live.loginUrl}`] : []),
    `control:  ${live.control}`,
    `token:    ${live.token}`,
    `pool:     ${live.pool.mode === "pool" ? `${live.pool.size} sandboxes (each --attach session takes one)` : "one shared sandbox"}`,
    "",
    `attach:   WP_CODEBOX_TOKEN=${live.token} wp-codebox run --attach ${live.control} --command wordpress.run-php --arg 'code=<?php echo get_bloginfo("name");'`,
    `collect:  WP_CODEBOX_TOKEN=${live.token} wp-codebox collect --attach ${live.control} --artifacts ./out`,
    `Stop with Ctrl-C${ttlMs > 0 ? `; stops by itself after ${Math.round(ttlMs / 1000)} s without activity` : ""}.`,
  ];
  return `${lines.join("\n")}\n`;
}
