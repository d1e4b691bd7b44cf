/**
 * `wp-codebox run`: validate everything that can be validated offline, boot a sandbox, run one
 * command, always write the artifact bundle, always dispose the sandbox (SPEC §5).
 */
import { dirname as dirnamePath, resolve as resolvePath } from "node:path";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { createRedactor,
  WpCodeboxError,
  getCommandDefinition,
  normalizePolicy,
  failedExecutionResult,
  isKernelPseudoPath,
  parseCommandArgs,
  readBrowserScriptArgs,
  parseDuration,
  parseMountFlag,
  parsePolicyArg,
  pluginMount,
  readJsonArg,
  resolveMounts,
  serializeError,
  themeMount,
  verifyArtifactBundle,
  writeArtifactBundle,
  type BundleViolation,
  type ExecutionResult,
  type MountSpec,
  type ResolvedMount,
  type Runtime,
  type RuntimeArtifacts,
  type RuntimeBackend,
  type RuntimeCreateSpec,
  type RuntimeInfo,
  type RuntimePolicy,
} from "@wp-codebox/runtime-core";
import { DEFAULT_PHP_VERSION, SUPPORTED_PHP_VERSIONS, createPlaygroundBackend, findWordPressBuild } from "@wp-codebox/runtime-playground";
import { CliExitError, EXIT_CODES } from "../cli-exit-error.js";

/**
 * Inputs of `wp-codebox run`, as strings the way the command line gives them.
 * - `command`: command id, e.g. `wordpress.run-php` (see `wp-codebox commands`).
 * - `args`: flat `key=value` command args.
 * - `timeout`: duration text (`"30s"`, `"500ms"`, `"1500"` = ms) or ms; `0` means none; default
 *   the runtime's 60000 ms.
 * - `artifactsDir`: bundle directory (created; must be empty if it exists); default
 *   `./wp-codebox-artifacts/<run id>`.
 * - `wp` / `wordpressPath`: bundled WordPress version or own zip/dir (not both); default newest bundled.
 * - `php`: PHP version; default 8.3.
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
  mounts?: string[];
  plugins?: string[];
  themes?: string[];
  policy?: string;
  env?: string[];
  secretEnv?: string[];
  /** `--wp-cli-phar PATH`: wp-cli.phar for `wordpress.wp-cli` (relative to `cwd`). */
  wpCliPhar?: string;
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
  /** Backend to use; default `createPlaygroundBackend({ cwd, cacheDir })`. */
  backend?: RuntimeBackend;
}

/** A run validated before boot. */
export interface PreparedRun {
  runId: string;
  command: string;
  args: string[];
  /** Undefined: the runtime default (60000 ms). */
  timeoutMs?: number;
  artifactsDir: string;
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  createSpec: RuntimeCreateSpec;
  cwd: string;
}

/** What a run produced. `error` is set when the command could not run (or was interrupted). */
export interface RunOutcome {
  runId: string;
  /** The command's result; a synthetic `status: "error"` result when `execute` threw or boot failed. */
  result: ExecutionResult;
  bundle: { directory: string; id: string; digest: string; valid: boolean; violations: BundleViolation[] };
  /** Set when boot or `execute` threw (policy denial, boot failure) or the run was interrupted. */
  error?: WpCodeboxError | CliExitError;
  runtimeInfo?: RuntimeInfo;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A sortable, unique run id: `run-20250131-142501-a1b2c3`. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `run-${stamp}-${randomBytes(3).toString("hex")}`;
}

/**
 * Validates a run without booting anything.
 * @returns the resolved run (policy, mounts, create spec, bundle directory).
 * @throws WpCodeboxError `unknown-command`, `invalid-argument`, `missing-argument`,
 *   `invalid-json-arg`, `invalid-duration`, `invalid-policy`, `invalid-mount`, `mount-escape`,
 *   `mount-target-outside-sandbox`, `mount-source-missing`, `mount-symlink-escape`,
 *   `php-version-unavailable`, `wordpress-source-invalid`, `wordpress-version-unavailable`,
 *   `artifacts-dir-not-empty`.
 */
export function prepareRun(options: RunOptions): PreparedRun {
  const cwd = options.cwd ?? process.cwd();
  const processEnv = options.processEnv ?? process.env;
  const command = options.command;
  const args = options.args ?? [];

  // Command and args (also rejects policy-only capabilities).
  const parsed = parseCommandArgs(command, args);
  const definition = getCommandDefinition(command);
  for (const spec of definition.args) {
    const value = parsed[spec.name];
    if (spec.format === "json" && value !== undefined) readJsonArg(value, cwd);
  }
  // A browser script is checked now, so an invalid one costs no boot.
  if (command === "wordpress.browser-actions") readBrowserScriptArgs(parsed, cwd);

  const timeoutMs = options.timeout === undefined ? undefined : parseDuration(options.timeout);

  const policy =
    options.policy !== undefined ? parsePolicyArg(options.policy, cwd) : normalizePolicy({ commands: [definition.capability] });

  if (options.wp !== undefined && options.wordpressPath !== undefined) {
    throw new WpCodeboxError("invalid-argument", "Give either --wp X.Y (a bundled WordPress) or --wordpress PATH (your own build), not both.", {
      wp: options.wp,
      wordpress: options.wordpressPath,
    });
  }
  if (options.wordpressPath !== undefined && !existsSync(resolve(cwd, options.wordpressPath))) {
    throw new WpCodeboxError(
      "wordpress-source-invalid",
      `--wordpress ${options.wordpressPath} does not exist (resolved to ${resolve(cwd, options.wordpressPath)}): pass a WordPress zip or directory.`,
      { path: options.wordpressPath },
    );
  }
  if (options.wordpressPath === undefined) findWordPressBuild(options.wp);

  const php = options.php ?? DEFAULT_PHP_VERSION;
  if (!(SUPPORTED_PHP_VERSIONS as readonly string[]).includes(php)) {
    throw new WpCodeboxError("php-version-unavailable", `PHP ${php} is not available. Choose one of: ${SUPPORTED_PHP_VERSIONS.join(", ")}.`, {
      requested: php,
      available: [...SUPPORTED_PHP_VERSIONS],
    });
  }

  const mountSpecs: MountSpec[] = (options.mounts ?? []).map((flag) => parseMountFlag(flag));
  const plugins = options.plugins ?? [];
  const themes = options.themes ?? [];
  const mounts = resolveMounts([...mountSpecs, ...plugins.map((p) => pluginMount(p, cwd)), ...themes.map((t) => themeMount(t, cwd))], cwd);

  const env: Record<string, string> = {};
  for (const pair of options.env ?? []) {
    const eq = pair.indexOf("=");
    const name = eq > 0 ? pair.slice(0, eq) : "";
    if (!ENV_NAME.test(name)) {
      throw new WpCodeboxError("invalid-argument", `--env ${pair}: expected NAME=VALUE with NAME made of letters, digits and _ (e.g. --env MY_FLAG=1).`, {
        flag: pair,
      });
    }
    env[name] = pair.slice(eq + 1);
  }
  const secretEnv: Record<string, string> = {};
  for (const name of options.secretEnv ?? []) {
    if (!ENV_NAME.test(name)) {
      throw new WpCodeboxError("invalid-argument", `--secret-env ${name}: expected an environment variable name (letters, digits and _).`, { name });
    }
    const value = processEnv[name];
    if (value === undefined) {
      throw new WpCodeboxError(
        "invalid-argument",
        `--secret-env ${name}: ${name} is not set in the environment. Export it first (export ${name}=...) or drop the flag.`,
        { name },
      );
    }
    secretEnv[name] = value;
  }

  const runId = newRunId();
  const artifactsDir = resolve(cwd, options.artifactsDir ?? `wp-codebox-artifacts/${runId}`);
  assertUsableArtifactsDir(artifactsDir);

  const createSpec: RuntimeCreateSpec = {
    wordpress: options.wordpressPath !== undefined ? { path: options.wordpressPath } : options.wp !== undefined ? { version: options.wp } : undefined,
    php,
    mounts: mountSpecs,
    plugins,
    themes,
    policy,
    env,
    secretEnv,
    ...(options.wpCliPhar !== undefined ? { wpCliPhar: resolve(cwd, options.wpCliPhar) } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
  if (createSpec.wordpress === undefined) delete createSpec.wordpress;
  return { runId, command, args, ...(timeoutMs !== undefined ? { timeoutMs } : {}), artifactsDir, policy, mounts, createSpec, cwd };
}

/** @throws WpCodeboxError `artifacts-dir-not-empty` when `dir` is a file or a non-empty directory. */
export function assertUsableArtifactsDir(dir: string): void {
  const abs = resolvePath(dir);
  if (isKernelPseudoPath(abs)) {
    throw new WpCodeboxError("artifacts-dir-invalid", `Artifacts directory ${dir} is inside /${abs.split("/")[1]}: choose a normal folder, e.g. --artifacts ./out.`, { directory: dir });
  }
  if (!existsSync(abs)) {
    // The nearest existing ancestor must be a directory, or the bundle could never be written.
    let parent = dirnamePath(abs);
    while (!existsSync(parent)) parent = dirnamePath(parent);
    if (!statSync(parent).isDirectory()) {
      throw new WpCodeboxError("artifacts-dir-invalid", `Artifacts directory ${dir} cannot be created: ${parent} is a file. Pass --artifacts with a path under a folder.`, { directory: dir, blocker: parent });
    }
    return;
  }
  const stats = statSync(abs);
  if (!stats.isDirectory() || readdirSync(abs).length > 0) {
    throw new WpCodeboxError(
      "artifacts-dir-not-empty",
      `Artifacts directory ${dir} ${stats.isDirectory() ? "is not empty" : "is a file"}: pass --artifacts with a new or empty directory, or omit it to use ./wp-codebox-artifacts/<run id>.`,
      { directory: dir },
    );
  }
}

type Raced<T> = { kind: "value"; value: T } | { kind: "interrupted"; signal: string };

/** Resolves with the promise's value, or with the interrupt when `signal` aborts first. */
function raceInterrupt<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<Raced<T>> {
  const value = promise.then((v): Raced<T> => ({ kind: "value", value: v }));
  if (!signal) return value;
  const reason = (): Raced<T> => ({ kind: "interrupted", signal: typeof signal.reason === "string" ? signal.reason : "SIGINT" });
  if (signal.aborted) return Promise.resolve(reason());
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<Raced<T>>((resolvePromise) => {
    onAbort = () => resolvePromise(reason());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([value, interrupted]).finally(() => signal.removeEventListener("abort", onAbort!));
}

function interruptedError(signal: string, directory: string): CliExitError {
  return new CliExitError(
    "interrupted",
    `Interrupted by ${signal}: the sandbox was disposed and a partial bundle written to ${directory}. Run the command again to finish the work.`,
    signal === "SIGTERM" ? EXIT_CODES.sigterm : EXIT_CODES.sigint,
    { signal },
  );
}

/** Runtime facts for a bundle when no runtime booted. */
function placeholderInfo(prepared: PreparedRun): RuntimeInfo {
  let wordpressVersion = "unknown";
  if (prepared.createSpec.wordpress?.path) wordpressVersion = `custom:${prepared.createSpec.wordpress.path}`;
  else {
    try {
      wordpressVersion = findWordPressBuild(prepared.createSpec.wordpress?.version).release;
    } catch {
      // keep "unknown"
    }
  }
  return {
    id: prepared.runId,
    backend: "playground",
    wordpressVersion,
    phpVersion: prepared.createSpec.php ?? DEFAULT_PHP_VERSION,
    siteUrl: "",
    bootMode: "cached",
    bootDurationMs: 0,
    mounts: prepared.mounts,
    policy: prepared.policy,
    plugins: prepared.createSpec.plugins ?? [],
    themes: prepared.createSpec.themes ?? [],
  };
}

/**
 * Runs a command in a fresh sandbox and writes the artifact bundle, whatever happens: a failed or
 * timed-out command, a policy denial or a boot failure (recorded as a synthetic error result), or
 * an interrupt (recorded as `interrupted`). The sandbox is disposed before this returns.
 * @returns the result, the bundle (`directory`, `id`, `digest`, `valid` from a fresh verification,
 *   `violations`) and, when the command could not run, `error`.
 * @throws WpCodeboxError from `prepareRun` (nothing booted, no bundle), or from writing the bundle.
 * @example const { result, bundle } = await runCommand({ command: "wordpress.run-php", args: ["code=<?php echo 1;"] });
 */
export async function runCommand(options: RunOptions): Promise<RunOutcome> {
  const prepared = prepareRun(options);
  return executePreparedRun(prepared, options);
}

/** The boot/execute/bundle half of `runCommand`, for a run already validated by `prepareRun`. */
export async function executePreparedRun(prepared: PreparedRun, options: Pick<RunOptions, "onProgress" | "interrupt" | "backend" | "cacheDir"> = {}): Promise<RunOutcome> {
  const progress = options.onProgress ?? (() => undefined);
  const backend = options.backend ?? createPlaygroundBackend({ cwd: prepared.cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
  const startedMs = Date.now();
  let runtime: Runtime | undefined;
  let creating: Promise<Runtime> | undefined;
  try {
    let artifacts: RuntimeArtifacts;
    let result: ExecutionResult;
    let error: WpCodeboxError | CliExitError | undefined;
    let summary: string | undefined;

    progress(`Booting a sandbox for ${prepared.command} (run ${prepared.runId})`);
    creating = backend.create(prepared.createSpec);
    const booted = await raceInterrupt(creating, options.interrupt).catch((thrown: unknown) => ({ kind: "failed" as const, thrown }));
    if (booted.kind === "value") {
      runtime = booted.value;
      const info = runtime.info();
      progress(`Booted WordPress ${info.wordpressVersion} on PHP ${info.phpVersion} in ${info.bootDurationMs} ms (${info.bootMode} site)`);
      progress(`Running ${prepared.command}`);
      const executed = await raceInterrupt(
        runtime.execute({ command: prepared.command, args: prepared.args, ...(prepared.timeoutMs !== undefined ? { timeoutMs: prepared.timeoutMs } : {}) }),
        options.interrupt,
      ).catch((thrown: unknown) => ({ kind: "failed" as const, thrown }));
      artifacts = await runtime.collectArtifacts();
      if (executed.kind === "value") {
        result = executed.value;
      } else {
        if (executed.kind === "interrupted") error = interruptedError(executed.signal, prepared.artifactsDir);
        else error = asRunError(executed.thrown);
        result = failedExecutionResult(prepared, error, startedMs);
        summary = `${prepared.command} did not complete: error[${error.code}]: ${error.message}`;
        artifacts = { ...artifacts, results: [...artifacts.results, result] };
      }
    } else {
      error = booted.kind === "interrupted" ? interruptedError(booted.signal, prepared.artifactsDir) : asRunError(booted.thrown);
      result = failedExecutionResult(prepared, error, startedMs);
      summary = `The sandbox did not boot, so ${prepared.command} did not run: error[${error.code}]: ${error.message}`;
      artifacts = {
        info: placeholderInfo(prepared),
        results: [result],
        events: [{ at: new Date().toISOString(), type: booted.kind === "interrupted" ? "boot-interrupted" : "boot-failed", data: { code: error.code } }],
        files: [],
        secrets: Object.values(prepared.createSpec.secretEnv ?? {}).filter((v) => v.length > 0),
      };
    }

    progress(`Writing the artifact bundle to ${prepared.artifactsDir}`);
    const written = await writeArtifactBundle(prepared.artifactsDir, artifacts, {
      ...(summary !== undefined ? { summary, status: "error" as const } : {}),
      extraMetadata: { runId: prepared.runId },
    });
    const verification = await verifyArtifactBundle(written.directory);
    // What we print is held to the same rule as the bundle: no secret value reaches stdout.
    const redactor = createRedactor(Object.values(prepared.createSpec.secretEnv ?? {}));
    return {
      runId: prepared.runId,
      result: redactor.redactValue(result),
      bundle: { directory: written.directory, id: written.id, digest: written.digest, valid: verification.valid, violations: verification.violations },
      ...(error ? { error } : {}),
      ...(runtime ? { runtimeInfo: runtime.info() } : {}),
    };
  } finally {
    if (runtime) {
      progress("Disposing the sandbox");
      await runtime.dispose().catch(() => undefined);
    } else if (creating) {
      // Interrupted mid-boot: wait (bounded) for the boot to settle, then dispose what it made.
      const late = await Promise.race([
        creating.then(
          (r) => r,
          () => undefined,
        ),
        delay(30_000, undefined, { ref: false }),
      ]);
      await late?.dispose().catch(() => undefined);
    }
  }
}

/** Errors `execute`/`create` throw become run errors; non-wp-codebox errors are internal. */
function asRunError(thrown: unknown): WpCodeboxError | CliExitError {
  if (thrown instanceof WpCodeboxError || thrown instanceof CliExitError) return thrown;
  const serialized = serializeError(thrown);
  return new WpCodeboxError("internal-error", `${serialized.message} (an unexpected failure: please report it with the bundle attached)`, {}, { cause: thrown });
}
