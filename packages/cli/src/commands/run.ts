/**
 * `wp-codebox run`: one command in a fresh sandbox. `planRun` checks everything before boot;
 * `runSession` boots, runs, always writes and verifies the bundle, and always disposes.
 */
import {
  planRun,
  runSession,
  type CommandRunPlan,
  type ResolvedMount,
  type RuntimeBackend,
  type RuntimeCreateSpec,
  type RuntimePolicy,
} from "@wp-codebox/runtime-core";
import { createBackend } from "./backends.js";
import { toRunOutcome, type RunOutcome } from "./run-outcome.js";

export { toRunOutcome, type RunOutcome };

export { assertUsableArtifactsDir, newRunId } from "@wp-codebox/runtime-core";

/**
 * Inputs of `wp-codebox run`, as strings the way the command line gives them.
 * - `command`: command id, e.g. `wordpress.run-php` (see `wp-codebox commands`).
 * - `args`: flat `key=value` command args.
 * - `timeout`: duration text (`"30s"`, `"500ms"`, `"1500"` = ms) or ms; `0` means none; default
 *   the command's catalog default (60000 ms; browser commands 135000 ms).
 * - `artifactsDir`: bundle directory (created; must be empty if it exists); default
 *   `./wp-codebox-artifacts/<run id>`.
 * - `wp` / `wordpressPath`: bundled WordPress version or own zip/dir (not both); default newest bundled.
 * - `php`: PHP version; default 8.3.
 * - `phpExtensions`: `--php-extension` names (`intl`); default the backend's (`intl`); `["none"]` loads none.
 * - `mounts`: `SRC:TARGET[:ro|:rw]` flags; `plugins` / `themes`: host folders to mount and activate.
 * - `policy`: `FILE` or inline JSON; default `{ "commands": [command] }`.
 * - `env`: `NAME=VALUE` runtime env; `secretEnv`: names whose values come from `processEnv`.
 */
export interface RunOptions {
  command: string;
  args?: string[];
  timeout?: string | number;
  artifactsDir?: string;
  wp?: string;
  wordpressPath?: string;
  php?: string;
  phpExtensions?: string[];
  mounts?: string[];
  plugins?: string[];
  themes?: string[];
  policy?: string;
  env?: string[];
  secretEnv?: string[];
  /** `--wp-cli-phar PATH`: wp-cli.phar for `wordpress.wp-cli` (relative to `cwd`). */
  wpCliPhar?: string;
  /** `--update-baselines`: browser screenshot steps with `compare` write their baselines instead of comparing. */
  updateBaselines?: boolean;
  /** `--clock ISO|real`: virtual clock start instant, or host time (default). */
  clock?: string;
  /** `--seed N`: seed of every source of randomness. */
  seed?: string;
  /** `--site-request-timeout 2m`: limit of each request to the site (`0` = none; default 30s). */
  siteRequestTimeout?: string;
  /** `--define NAME=VALUE` (repeatable): wp-config.php constants to set or override; VALUE a JSON scalar or text. */
  defines?: string[];
  /** Site origin (`stable` / `loopback`); default stable when deterministic. `serve` asks for loopback. */
  origin?: "stable" | "loopback";
  /** Base of relative paths; default `process.cwd()`. */
  cwd?: string;
  /** Where `secretEnv` values are read; default `process.env`. */
  processEnv?: NodeJS.ProcessEnv;
  /** Cache directory of the Playground backend; default `$WP_CODEBOX_CACHE_DIR` or `~/.cache/wp-codebox`. */
  cacheDir?: string;
  /** Human-readable progress (boot, execute, bundle). */
  onProgress?: (message: string) => void;
  /** Aborting it (reason `"SIGINT"`/`"SIGTERM"`) stops the run: bundle written, sandbox disposed. */
  interrupt?: AbortSignal;
  /** Backend to use; default the one `backendName` names. */
  backend?: RuntimeBackend;
  /** `--backend playground|native` (default playground): used when `backend` is not given. */
  backendName?: string;
}

/** A run validated before boot: the plan, plus the fields callers of the first release read. */
export interface PreparedRun {
  runId: string;
  command: string;
  /** Args as `execute` receives them (file references absolute). */
  args: string[];
  /** Undefined: the command's catalog default. */
  timeoutMs?: number;
  artifactsDir: string;
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  /** For `backend.create` (holds secret values: never print it), with `onProgress` when given. */
  createSpec: RuntimeCreateSpec;
  cwd: string;
  plan: CommandRunPlan;
}


/**
 * Validates a run without booting anything (`planRun` for one command, with the Playground
 * backend's preflight for the WordPress source and PHP version).
 * @throws WpCodeboxError what `planRun` throws: `unknown-command`, `invalid-argument`,
 *   `missing-argument`, `invalid-json-arg`, `invalid-steps-json`, `invalid-state-request`,
 *   `invalid-duration`, `invalid-policy`, `mount-*`, `php-version-unavailable`, `php-extension-unavailable`,
 *   `wordpress-source-invalid`, `wordpress-version-unavailable`, `artifacts-dir-not-empty`,
 *   `invalid-clock`, `invalid-seed`, `seed-with-network`.
 */
export function prepareRun(options: RunOptions): PreparedRun {
  const cwd = options.cwd ?? process.cwd();
  const backend = options.backend ?? createBackend(options.backendName, { cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
  const plan = planRun(
    {
      kind: "command",
      command: options.command,
      args: options.args ?? [],
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      ...(options.wp !== undefined ? { wp: options.wp } : {}),
      ...(options.wordpressPath !== undefined ? { wordpressPath: options.wordpressPath } : {}),
      ...(options.php !== undefined ? { php: options.php } : {}),
      ...(options.phpExtensions !== undefined ? { extensions: phpExtensionFlags(options.phpExtensions) } : {}),
      mounts: options.mounts ?? [],
      plugins: options.plugins ?? [],
      themes: options.themes ?? [],
      ...(options.policy !== undefined ? { policy: options.policy } : {}),
      env: options.env ?? [],
      secretEnv: options.secretEnv ?? [],
      ...(options.wpCliPhar !== undefined ? { wpCliPhar: options.wpCliPhar } : {}),
      ...(options.updateBaselines ? { updateBaselines: true } : {}),
      ...(options.clock !== undefined ? { clock: options.clock } : {}),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(options.siteRequestTimeout !== undefined ? { siteRequestTimeout: options.siteRequestTimeout } : {}),
      ...(options.origin !== undefined ? { origin: options.origin } : {}),
      ...(options.defines?.length ? { defines: options.defines } : {}),
    },
    { cwd, ...(options.processEnv ? { processEnv: options.processEnv } : {}), ...(options.artifactsDir !== undefined ? { artifactsDir: options.artifactsDir } : {}), backend },
  ) as CommandRunPlan;
  return {
    runId: plan.runId,
    command: plan.command.command,
    args: plan.command.args,
    ...(plan.command.timeoutMs !== undefined ? { timeoutMs: plan.command.timeoutMs } : {}),
    artifactsDir: plan.artifactsDir,
    policy: plan.policy,
    mounts: plan.mounts,
    createSpec: { ...plan.createSpec, ...(options.onProgress ? { onProgress: options.onProgress } : {}) },
    cwd,
    plan,
  };
}

/**
 * `--php-extension` values as a create spec's `extensions`: `none` alone means load none; `none`
 * beside other names is left for the backend's preflight to refuse (`invalid-argument`).
 */
function phpExtensionFlags(values: string[]): string[] {
  return values.length === 1 && values[0]!.trim().toLowerCase() === "none" ? [] : values;
}


/**
 * Boots, runs, writes and verifies the bundle, disposes: `runSession` for a prepared run.
 * @param options.backend - default the backend `options.backendName` names (playground); an attach client's backend works too.
 */
export async function executePreparedRun(prepared: PreparedRun, options: Pick<RunOptions, "onProgress" | "interrupt" | "backend" | "backendName" | "cacheDir"> = {}): Promise<RunOutcome> {
  const backend = options.backend ?? createBackend(options.backendName, { cwd: prepared.cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
  const session = await runSession(prepared.plan, { backend, ...(options.interrupt ? { signal: options.interrupt } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  return toRunOutcome(session);
}

/**
 * Runs a command in a fresh sandbox and writes the artifact bundle, whatever happens: a failed or
 * timed-out command, a policy denial or a boot failure (a synthetic error result), or an
 * interrupt (`interrupted`). The sandbox is disposed before this returns.
 * @returns the result, the verified bundle, the exit code and, when the command could not run, `error`.
 * @throws WpCodeboxError from `prepareRun` (invalid input; nothing booted, no bundle), or from writing the bundle.
 * @example const { result, bundle } = await runCommand({ command: "wordpress.run-php", args: ["code=<?php echo 1;"] });
 */
export async function runCommand(options: RunOptions): Promise<RunOutcome> {
  return executePreparedRun(prepareRun(options), options);
}
