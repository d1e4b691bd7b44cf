/**
 * `planRun`: resolves and validates a run completely before anything boots: a single command
 * (`wp-codebox run`), a workspace recipe, or an episode script. Commands, args, `@file`
 * payloads, browser scripts, state-export requests, observation requests, mounts, plugins,
 * themes, policy, env, secret env, the bundle directory and what only the backend knows
 * (WordPress source, PHP version) are all checked here, so an invalid input costs no boot and
 * is refused with a stable code. `runSession` executes the result without re-checking it.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { isKernelPseudoPath } from "../artifact-bundle/bundle-layout.js";
import { checkCommandInput, checkObservationRequest, commandArgsIssues, flattenCommandArgs, type PlannedAction } from "../command-input.js";
import { commandIds, getCommandDefinition } from "../command-registry.js";
import { parseDuration } from "../durations.js";
import { validateEpisodeScript, type EpisodeScript, type EpisodeScriptStep, type PlannedEpisodeStep } from "../episode/episode-script.js";
// Declared beside the command input and the episode script (lower folders); the entry exports them from here.
export type { PlannedAction, PlannedEpisodeStep };
import { assertEnvironment, environmentVariableProblem, isEnvName, readSecretEnv } from "../environment.js";
import { assertSecretsSafe, secretValueProblem } from "../secrets/secret-safety.js";
import { WpCodeboxError, quoteValue } from "../errors.js";
import { assertNoNulByte, checkInputFile, isMissingInputFile, readInputTextSync, specialFileType } from "../input-files.js";
import { parseMountFlag, pluginMount, resolveMounts, themeMount } from "../mounts.js";
import { missingCapability, normalizePolicy, parsePolicyArg } from "../policy.js";
import { planRecipe, readRecipeFile, type RecipePlan } from "../recipe/validate-recipe.js";
import { episodeScriptHostAccess, hostAccessCode, resolveHostAccess, type HostAccess, type HostPathUse } from "../host-access.js";
import type { MountSpec, ObservationSpec, ResolvedMount, RuntimeBackend, RuntimeCreateSpec, RuntimePolicy, RuntimePreflight } from "../runtime.js";
import { jsonPointerToken, type SchemaIssue } from "../schema-validation.js";
import { assertDefines, defineProblems, parseDefineFlags, type WpDefineValue } from "../wp-defines.js";
import { episodeDeterminismOptions, parseClockOption, parseSeedOption, resolveDeterminism, type SiteOriginMode } from "../determinism.js";
import { assertBackendSupports, type BackendNeed } from "../backend-support.js";
import { parseJsonText } from "../json-syntax.js";

/** Runtime inputs of a single-command run, as the command line gives them (strings) or as objects. */
export interface CommandRunRequest {
  kind: "command";
  /** Command id, e.g. `wordpress.run-php` (see `commandCatalog()`). */
  command: string;
  /** `key=value` args. */
  args?: string[];
  /** `"30s"`, `"500ms"`, `"1500"` (ms) or ms; `0` = none; default the command's catalog default. */
  timeout?: string | number;
  /** Bundled WordPress version (`"6.5"`); not with `wordpressPath`. Default: the backend's newest. */
  wp?: string;
  /** Own WordPress build, a zip or directory (relative to `cwd`). */
  wordpressPath?: string;
  /** PHP version; default the backend's (8.3). */
  php?: string;
  /** PHP extensions to load (`--php-extension`); default the backend's (`["intl"]`). */
  extensions?: string[];
  /** `SRC:TARGET[:ro|:rw]` flags or mount specs; sources relative to `cwd`. */
  mounts?: (string | MountSpec)[];
  /** Plugin folders or single-file plugins to mount and activate. */
  plugins?: string[];
  themes?: string[];
  /** A policy file, inline JSON, or a policy object. Default: exactly the command's capability. */
  policy?: string | Partial<RuntimePolicy>;
  /** `NAME=VALUE` pairs or a record: environment variables PHP sees. */
  env?: string[] | Record<string, string>;
  /** Names of the caller's environment variables to pass in, redacted from every artifact. */
  secretEnv?: string[];
  /** Host path of wp-cli.phar for `wordpress.wp-cli` (relative to `cwd`). */
  wpCliPhar?: string;
  /** `--update-baselines`: screenshot steps with `compare` write their baselines instead of comparing. */
  updateBaselines?: boolean;
  /** `--clock ISO-8601|real`: where the virtual clock starts, or host time (default). */
  clock?: string;
  /**
   * `--site-request-timeout 2m`: limit of each request to the site (a browser's, an `http-request`'s),
   * a duration (`"0"` = none); default `DEFAULT_SITE_REQUEST_TIMEOUT_MS`.
   */
  siteRequestTimeout?: string | number;
  /** `--seed N`: seed of every source of randomness; refused with outbound network. */
  seed?: string | number;
  /** Site origin; default `stable` when deterministic, else `loopback`. */
  origin?: SiteOriginMode;
  /** `--define NAME=VALUE` flags, or a record: wp-config.php constants to set or override. */
  defines?: string[] | Record<string, WpDefineValue>;
}

/** A workspace recipe (`wp-codebox/workspace-recipe/v1`): the file, or its parsed document plus its path. */
export interface RecipeRunRequest {
  kind: "recipe";
  /** The recipe file (relative to `cwd`); relative paths inside it resolve against its folder. */
  file: string;
  /** The parsed recipe; default read from `file`. */
  recipe?: unknown;
  /** Host path of wp-cli.phar (relative to `cwd`). */
  wpCliPhar?: string;
  /** `--update-baselines`: screenshot steps with `compare` write their baselines instead of comparing. */
  updateBaselines?: boolean;
  /** `--clock` / `--seed`: override the recipe's `runtime.clock` / `runtime.seed`. */
  clock?: string;
  seed?: string | number;
}

/** An episode script (`wp-codebox/episode-script/v1`): a file, or a parsed script plus its folder. */
export interface EpisodeRunRequest {
  kind: "episode";
  /** The script file (relative to `cwd`). */
  file?: string;
  /** The parsed script; default read from `file`. */
  script?: unknown;
  /** Folder relative paths in the script resolve against; default the file's folder, else `cwd`. */
  baseDir?: string;
  /** `--clock` / `--seed`: override the script's `runtime.clock` / `runtime.seed` (episodes default to a virtual clock and seed 0). */
  clock?: string;
  seed?: string | number;
}

/** What `planRun` accepts. */
export type RunRequest = CommandRunRequest | RecipeRunRequest | EpisodeRunRequest;

/** Options of `planRun`. */
export interface PlanRunOptions {
  /** Base of relative paths on the command line; default `process.cwd()`. */
  cwd?: string;
  /** Where secret env values are read; default `process.env`. */
  processEnv?: NodeJS.ProcessEnv;
  /**
   * Bundle directory (relative to `cwd`); it must not exist or be empty. Default: the recipe's or
   * script's `artifacts.directory`, else `<cwd>/wp-codebox-artifacts/<run id>`.
   */
  artifactsDir?: string;
  /** Run id; default a new sortable one (`newRunId`). */
  runId?: string;
  /** The backend that will run the plan: its `preflight` checks the WordPress source and PHP version. */
  backend?: Pick<RuntimeBackend, "preflight" | "deterministic" | "supports"> & { kind?: string };
  /**
   * `--allow-path DIR`: host folders or files, beyond a recipe's or episode script's own folder,
   * that it may name; relative to `cwd`. Default none. Not used by command runs (the caller
   * named those paths).
   */
  allowPaths?: readonly string[];
  /** `--allow-network ORIGIN`: hosts a recipe's or script's policy may reach (`*` = every host). Default none. */
  allowNetwork?: readonly string[];
}

interface RunPlanBase {
  runId: string;
  /** Absolute bundle directory, checked usable (absent or empty). */
  artifactsDir: string;
  /** What `backend.create` receives. Holds secret VALUES in `secretEnv`: never print it. */
  createSpec: RuntimeCreateSpec;
  /** The policy the runtime enforces. */
  policy: RuntimePolicy;
  /** Every mount after resolution, including plugins and themes. */
  mounts: ResolvedMount[];
  /** Secret values, redacted from every artifact and from what the caller prints. */
  secrets: string[];
  /** Every command the session will execute, in order. */
  actions: PlannedAction[];
  /** Versions the backend's `preflight` resolved (recorded if the sandbox then fails to boot). */
  preflight: RuntimePreflight;
}

/** A single-command run (`wp-codebox run`). */
export interface CommandRunPlan extends RunPlanBase {
  kind: "command";
  command: PlannedAction;
}

/** A recipe run; `recipe` is what `wp-codebox recipe plan` prints (no secret values). */
export interface RecipeRunPlan extends RunPlanBase {
  kind: "recipe";
  recipe: RecipePlan;
}

/** An episode run. */
export interface EpisodeRunPlan extends RunPlanBase {
  kind: "episode";
  episode: {
    path?: string;
    steps: PlannedEpisodeStep[];
    resetObservations?: ObservationSpec[];
    includeRuntimeSnapshotBundles: boolean;
    /** The script's folder, the grants, and each path outside the folder a grant let through. */
    hostAccess: HostAccess & { widened: HostPathUse[] };
  };
}

/** A run resolved and validated by `planRun`; `runSession` executes it. */
export type RunPlan = CommandRunPlan | RecipeRunPlan | EpisodeRunPlan;

/** A sortable, unique run id: `run-20250131-142501-a1b2c3` (UTC time, then 6 random hex digits). */
export function newRunId(now: Date = new Date(), prefix = "run"): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${prefix}-${stamp}-${randomBytes(3).toString("hex")}`;
}

/**
 * Refuses a bundle directory that could not receive a bundle: one inside `/proc`, `/sys` or
 * `/dev`, one under a regular file, an existing file, or a non-empty directory.
 * @throws WpCodeboxError `artifacts-dir-invalid` (also for a NUL byte in the path), `artifacts-dir-not-empty`.
 */
export function assertUsableArtifactsDir(dir: string): void {
  assertNoNulByte(dir, "Artifacts directory", "artifacts-dir-invalid");
  const abs = resolve(dir);
  if (isKernelPseudoPath(abs)) {
    throw new WpCodeboxError("artifacts-dir-invalid", `Artifacts directory ${dir} is inside /${abs.split("/")[1]}: choose a normal folder, e.g. --artifacts ./out.`, { directory: dir });
  }
  if (!existsSync(abs)) {
    // The nearest existing ancestor must be a directory, or the bundle could never be written.
    let parent = dirname(abs);
    while (!existsSync(parent)) parent = dirname(parent);
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

/** Non-empty secret values, de-duplicated: what the redactor replaces. */
function secretValues(secretEnv: Record<string, string>): string[] {
  return [...new Set(Object.values(secretEnv).filter((v) => v.length > 0))];
}

/** The policy a runtime gets when the caller gives none: every runnable command, no page JavaScript, no network. */
export function defaultRuntimePolicy(): RuntimePolicy {
  return normalizePolicy({ commands: commandIds().filter((id) => getCommandDefinition(id).runnable) });
}

/**
 * Resolves and validates a run completely, without booting anything.
 * @param request - `{ kind: "command", command, args, … }`, `{ kind: "recipe", file }` or
 *   `{ kind: "episode", file | script }`.
 * @returns the plan: run id, bundle directory, create spec, policy, resolved mounts, secret values,
 *   the ordered actions and the kind-specific part (`command`, `recipe`, `episode`).
 * @throws WpCodeboxError — for a command run the first problem's own code: `unknown-command`,
 *   `invalid-argument`, `missing-argument`, `invalid-json-arg`, `invalid-steps-json`,
 *   `invalid-state-request`, `invalid-duration`, `invalid-policy`, `invalid-mount`, `mount-*`,
 *   `wordpress-source-invalid`, `php-version-unavailable`, `wordpress-version-unavailable`,
 *   `wordpress-build-missing`; for a recipe `invalid-recipe`, for a script
 *   `invalid-episode-script`, each listing every problem in `data.issues` as `{ path, message }`
 *   (`path-not-allowed` / `network-not-allowed` instead when the recipe or script names a host path
 *   or asks for network that `allowPaths` / `allowNetwork` do not grant; `invalid-argument` for a
 *   grant that does not exist or is no host);
 *   and on every path `artifacts-dir-not-empty` / `artifacts-dir-invalid`.
 * @example
 * const plan = planRun({ kind: "command", command: "wordpress.run-php", args: ["code=<?php echo 1;"] }, { backend });
 * const outcome = await runSession(plan, { backend });
 */
export function planRun(request: RunRequest, options: PlanRunOptions = {}): RunPlan {
  const cwd = options.cwd ?? process.cwd();
  const processEnv = options.processEnv ?? process.env;
  switch (request.kind) {
    case "command":
      return planCommandRun(request, cwd, processEnv, options);
    case "recipe":
      return planRecipeRun(request, cwd, processEnv, options);
    case "episode":
      return planEpisodeRun(request, cwd, processEnv, options);
    default:
      throw new WpCodeboxError("invalid-argument", `Unknown run kind "${(request as { kind?: unknown }).kind}": use "command", "recipe" or "episode".`);
  }
}

function finishBase(
  runId: string,
  artifactsDir: string,
  createSpec: RuntimeCreateSpec,
  policy: RuntimePolicy,
  mounts: ResolvedMount[],
  actions: PlannedAction[],
  preflight: RuntimePreflight | void,
): RunPlanBase {
  assertUsableArtifactsDir(artifactsDir);
  return { runId, artifactsDir, createSpec, policy, mounts, secrets: secretValues(createSpec.secretEnv ?? {}), actions, preflight: { ...(preflight ?? {}) } };
}

function planCommandRun(request: CommandRunRequest, cwd: string, processEnv: NodeJS.ProcessEnv, options: PlanRunOptions): CommandRunPlan {
  // Every flag is checked even after one fails, so one run names every problem (see `refuseAll`).
  const problems: WpCodeboxError[] = [];
  const attempt = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof WpCodeboxError)) throw error;
      problems.push(error);
      return undefined;
    }
  };
  const checked = attempt(() => checkCommandInput(request.command, request.args ?? [], cwd));
  const timeoutMs = request.timeout === undefined ? undefined : attempt(() => namingFlag("--timeout", request.timeout!, () => parseDuration(request.timeout!)));
  // A policy that leaves out "commands" grants exactly the command, as no policy at all does.
  const granted = checked ? [checked.capability] : [];
  const policyDefaults = { defaults: { commands: granted } };
  const policy = attempt(() =>
    request.policy === undefined
      ? normalizePolicy({ commands: granted })
      : typeof request.policy === "string"
        ? parsePolicyArg(request.policy, cwd, policyDefaults)
        : normalizePolicy(request.policy, policyDefaults),
  );
  // The runtime would deny it on execute: say so before a boot.
  const missing = policy && checked ? missingCapability(policy, checked) : undefined;
  if (missing !== undefined) {
    problems.push(
      new WpCodeboxError(
        "invalid-policy",
        `The policy does not grant the capability "${missing}" that ${checked!.command}${missing === checked!.capability ? "" : " with an evaluate step"} needs, so the run would be denied: add it to the policy's "commands" (it grants ${JSON.stringify(policy!.commands)}), or leave "commands" out to grant exactly this command.`,
        { capability: missing, commands: policy!.commands },
      ),
    );
  }

  if (request.wp !== undefined && request.wordpressPath !== undefined) {
    problems.push(
      new WpCodeboxError("invalid-argument", "Give either --wp X.Y (a bundled WordPress) or --wordpress PATH (your own build), not both.", {
        wp: request.wp,
        wordpress: request.wordpressPath,
      }),
    );
  }
  let wordpress: RuntimeCreateSpec["wordpress"];
  let wordpressRefused = false;
  if (request.wordpressPath !== undefined) {
    const path = resolve(cwd, request.wordpressPath);
    const special = attempt(() => (assertNoNulByte(request.wordpressPath!, "--wordpress", "wordpress-source-invalid"), wordpressSourceProblem(path)));
    if (request.wordpressPath.includes("\0")) wordpressRefused = true;
    else if (special) {
      wordpressRefused = true;
      problems.push(new WpCodeboxError("wordpress-source-invalid", `--wordpress ${quoteValue(request.wordpressPath)} is ${special}: pass a WordPress zip or directory.`, { path: request.wordpressPath }));
    } else if (!existsSync(path)) {
      wordpressRefused = true;
      problems.push(
        new WpCodeboxError("wordpress-source-invalid", `--wordpress ${request.wordpressPath} does not exist (resolved to ${path}): pass a WordPress zip or directory.`, {
          path: request.wordpressPath,
        }),
      );
    }
    wordpress = { path };
  } else if (request.wp !== undefined) wordpress = { version: request.wp };

  const mountSpecs: MountSpec[] = [];
  for (const m of request.mounts ?? []) {
    const spec = typeof m === "string" ? attempt(() => parseMountFlag(m)) : m;
    if (spec) mountSpecs.push({ ...spec, source: resolve(cwd, spec.source) });
  }
  const plugins = (request.plugins ?? []).map((p) => resolve(cwd, p));
  const themes = (request.themes ?? []).map((t) => resolve(cwd, t));
  const mounts: ResolvedMount[] = [];
  // One at a time, so that each missing source is named; then all together, for clashing targets.
  const specs = [...mountSpecs, ...plugins.map((p) => pluginMount(p, cwd)), ...themes.map((t) => themeMount(t, cwd))];
  const each = specs.map((spec) => attempt(() => resolveMounts([spec], cwd)));
  if (each.every((m) => m !== undefined)) mounts.push(...(attempt(() => resolveMounts(specs, cwd)) ?? []));

  const env: Record<string, string> = {};
  const pairs = Array.isArray(request.env) ? request.env : Object.entries(request.env ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = eq > 0 ? pair.slice(0, eq) : "";
    if (!isEnvName(name)) {
      problems.push(new WpCodeboxError("invalid-argument", `--env ${quoteValue(pair)}: expected NAME=VALUE with NAME made of letters, digits and _ (e.g. --env MY_FLAG=1).`, { flag: pair }));
      continue;
    }
    env[name] = pair.slice(eq + 1);
  }
  for (const name of request.secretEnv ?? []) {
    if (!isEnvName(name)) {
      // `NAME=value` is the likeliest slip: the value after "=" is a secret, never repeated.
      const eq = name.indexOf("=");
      problems.push(
        eq >= 0
          ? new WpCodeboxError("invalid-argument", `--secret-env ${quoteValue(name.slice(0, eq))}=…: takes only a variable name; its value is read from your environment (export ${isEnvName(name.slice(0, eq)) ? name.slice(0, eq) : "NAME"}=... first). What followed "=" is not shown.`, { name: name.slice(0, eq) })
          : new WpCodeboxError("invalid-argument", `--secret-env ${quoteValue(name)}: expected an environment variable name (letters, digits and _).`, { name }),
      );
    }
  }
  const secrets = readSecretEnv((request.secretEnv ?? []).filter(isEnvName), processEnv);
  for (const name of secrets.missing) {
    problems.push(new WpCodeboxError("invalid-argument", `--secret-env ${name}: ${name} is not set in the environment. Export it first (export ${name}=...) or drop the flag.`, { name }));
  }
  const siteRequestTimeoutMs = request.siteRequestTimeout === undefined ? undefined : attempt(() => siteRequestTimeoutOption(request.siteRequestTimeout!));
  const defines =
    request.defines === undefined ? undefined
    : Array.isArray(request.defines) ? attempt(() => parseDefineFlags(request.defines as string[]))
    : attempt(() => (assertDefines(request.defines, "defines"), request.defines as Record<string, WpDefineValue>));
  // What PHP cannot receive unchanged is refused here, not after a boot.
  attempt(() => assertEnvironment(env, "--env"));
  attempt(() => assertEnvironment(secrets.values, "--secret-env"));
  attempt(() => assertSecretsSafe(secrets.values, "--secret-env"));

  // Clock and seed (invalid-clock, invalid-seed, seed-with-network).
  const determinism = attempt(() => resolveDeterminism({ clock: request.clock, seed: request.seed, origin: request.origin }, (policy ?? defaultRuntimePolicy()).network));

  if (request.wpCliPhar !== undefined) attempt(() => checkWpCliPhar(resolve(cwd, request.wpCliPhar!)));
  const createSpec: RuntimeCreateSpec = {
    ...(wordpress ? { wordpress } : {}),
    ...(request.php !== undefined ? { php: request.php } : {}),
    ...(request.extensions !== undefined ? { extensions: request.extensions } : {}),
    mounts: mountSpecs,
    plugins,
    themes,
    ...(policy ? { policy } : {}),
    env,
    secretEnv: secrets.values,
    ...(request.wpCliPhar !== undefined ? { wpCliPhar: resolve(cwd, request.wpCliPhar) } : {}),
    ...(request.updateBaselines ? { updateBaselines: true } : {}),
    ...(request.clock !== undefined ? { clock: request.clock } : {}),
    ...(siteRequestTimeoutMs !== undefined ? { siteRequestTimeoutMs } : {}),
    ...(determinism?.seed !== undefined ? { seed: determinism.seed } : {}),
    ...(request.origin !== undefined ? { origin: request.origin } : {}),
    ...(defines !== undefined && Object.keys(defines).length ? { defines } : {}),
  };
  // The backend's own checks (PHP version, extensions, WordPress source) whatever else is wrong.
  const preflight = attempt(() => options.backend?.preflight?.(wordpressRefused ? { ...createSpec, wordpress: undefined } : createSpec));
  if (checked) attempt(() => assertBackendSupports(options.backend, [{ pointer: "/command", command: checked.command }]));
  if (problems.length > 0) throw refuseAll(problems);

  const runId = options.runId ?? newRunId();
  const artifactsDir = resolve(cwd, options.artifactsDir ?? `wp-codebox-artifacts/${runId}`);
  const command: PlannedAction = { pointer: "/command", command: checked!.command, args: checked!.args, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
  return { kind: "command", ...finishBase(runId, artifactsDir, createSpec, policy!, mounts, [command], preflight ?? undefined), command };
}

/** What a `--wordpress` path is when it is neither a regular file nor a directory (a FIFO, a device), else undefined. */
function wordpressSourceProblem(path: string): string | undefined {
  if (path.includes("\0") || !existsSync(path)) return undefined;
  const stats = statSync(path);
  return stats.isDirectory() ? undefined : specialFileType(stats);
}

/**
 * A `--wp-cli-phar` that exists must be a regular file within its cap (a missing one stays the
 * command's `wp-cli-unavailable`, exit 3, as before).
 * @throws WpCodeboxError `input-file-invalid`, `input-file-too-large`.
 */
function checkWpCliPhar(path: string): void {
  if (path.includes("\0") || existsSync(path)) checkInputFile(path, "wp-cli-phar");
}

/** `check()`, its error's message prefixed with the flag and value it is about (code kept). */
function namingFlag<T>(flag: string, value: string | number, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof WpCodeboxError)) throw error;
    throw new WpCodeboxError(error.code, `${flag} ${quoteValue(value)}: ${error.message}`, error.data);
  }
}

/**
 * One error for every problem of a command run's flags: the first problem's code (so each alone
 * keeps the code it always had), its message followed by the others, and all of them in
 * `data.problems` (`[{ code, message, data }]`).
 */
function refuseAll(problems: WpCodeboxError[]): WpCodeboxError {
  const [first, ...rest] = problems;
  if (rest.length === 0) return first!;
  const more = rest.map((p) => `  error[${p.code}]: ${p.message}`).join("\n");
  return new WpCodeboxError(first!.code, `${first!.message}\nAlso ${rest.length} more problem${rest.length === 1 ? "" : "s"}:\n${more}`, {
    ...first!.data,
    problems: problems.map((p) => ({ code: p.code, message: p.message, data: p.data })),
  });
}

/**
 * Parses `--site-request-timeout` (a duration; `0` = no limit).
 * @throws `invalid-argument` naming the flag, for text that is not a duration.
 */
function siteRequestTimeoutOption(value: string | number): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new WpCodeboxError("invalid-argument", `--site-request-timeout ${quoteValue(value)}: ${(error as Error).message}`, { siteRequestTimeout: String(value) });
  }
}

function planRecipeRun(request: RecipeRunRequest, cwd: string, processEnv: NodeJS.ProcessEnv, options: PlanRunOptions): RecipeRunPlan {
  const path = resolve(cwd, request.file);
  const recipe = planRecipe(request.recipe ?? readRecipeFile(path), path, {
    processEnv,
    cwd,
    ...(options.allowPaths ? { allowPaths: options.allowPaths } : {}),
    ...(options.allowNetwork ? { allowNetwork: options.allowNetwork } : {}),
    ...(options.backend ? { backend: options.backend } : {}),
  });
  // --clock / --seed override the recipe's runtime.clock / runtime.seed, checked like them.
  if (request.clock !== undefined) recipe.runtime.clock = (parseClockOption(request.clock), request.clock);
  if (request.seed !== undefined) recipe.runtime.seed = parseSeedOption(request.seed);
  resolveDeterminism({ clock: recipe.runtime.clock, seed: recipe.runtime.seed }, recipe.policy.network);
  const secrets = readSecretEnv(recipe.inputs.secretEnv, processEnv);
  if (request.wpCliPhar !== undefined) checkWpCliPhar(resolve(cwd, request.wpCliPhar));
  const createSpec: RuntimeCreateSpec = {
    ...(recipe.runtime.wp !== undefined ? { wordpress: { version: recipe.runtime.wp } } : {}),
    ...(recipe.runtime.php !== undefined ? { php: recipe.runtime.php } : {}),
    ...(recipe.runtime.clock !== undefined ? { clock: recipe.runtime.clock } : {}),
    ...(recipe.runtime.seed !== undefined ? { seed: recipe.runtime.seed } : {}),
    ...(recipe.runtime.extensions !== undefined ? { extensions: recipe.runtime.extensions } : {}),
    ...(recipe.runtime.defines !== undefined ? { defines: recipe.runtime.defines } : {}),
    mounts: recipe.inputs.mounts,
    plugins: recipe.inputs.plugins,
    themes: recipe.inputs.themes,
    policy: recipe.policy,
    env: recipe.inputs.runtimeEnv,
    secretEnv: secrets.values,
    ...(request.wpCliPhar !== undefined ? { wpCliPhar: resolve(cwd, request.wpCliPhar) } : {}),
    ...(request.updateBaselines ? { updateBaselines: true } : {}),
  };
  const runId = options.runId ?? newRunId();
  const artifactsDir = options.artifactsDir !== undefined ? resolve(cwd, options.artifactsDir) : recipe.artifacts.directory ?? resolve(cwd, `wp-codebox-artifacts/${runId}`);
  const actions = [...recipe.setup, ...recipe.steps].map((s): PlannedAction => ({ pointer: s.pointer, command: s.command, args: s.args, ...(s.timeoutMs !== undefined ? { timeoutMs: s.timeoutMs } : {}) }));
  assertBackendSupports(options.backend, actions.map((a) => ({ pointer: a.pointer, command: a.command })));
  // planRecipe ran the backend's preflight already (problems became /runtime issues); this only reads the versions.
  const preflight = options.backend?.preflight?.(createSpec);
  return { kind: "recipe", ...finishBase(runId, artifactsDir, createSpec, recipe.policy, recipe.inputs.resolvedMounts, actions, preflight), recipe };
}

/** The code and message of a thrown check, as one issue message. */
function issueMessage(error: unknown): string {
  if (error instanceof WpCodeboxError) return `${error.code}: ${error.message}`;
  throw error;
}

function readEpisodeScript(path: string): unknown {
  try {
    return parseJsonText(readInputTextSync(path, "episode-script"));
  } catch (error) {
    if (error instanceof WpCodeboxError && !isMissingInputFile(error)) throw error;
    throw new WpCodeboxError("invalid-episode-script", `Cannot read the episode script ${path}: ${(error as Error).message}. Pass a JSON file with schema "wp-codebox/episode-script/v1".`, { path });
  }
}

function planEpisodeRun(request: EpisodeRunRequest, cwd: string, processEnv: NodeJS.ProcessEnv, options: PlanRunOptions): EpisodeRunPlan {
  const path = request.file !== undefined ? resolve(cwd, request.file) : undefined;
  if (request.script === undefined && path === undefined) throw new WpCodeboxError("missing-argument", "An episode run needs the script file or the parsed script.");
  const input: unknown = request.script ?? readEpisodeScript(path!);
  // Schema issues do not stop the checks below: they run on the parts that are well-formed, so
  // one run lists every problem (an unknown field no longer hides a bad observation type).
  const schemaIssues = validateEpisodeScript(input).issues;
  if (schemaIssues.some((i) => i.path === "/" || i.path === "/schema" || i.path === "/steps")) throw invalidEpisodeScriptError(schemaIssues, path);
  const script = withoutInvalidParts(input as EpisodeScript, schemaIssues);
  const baseDir = request.baseDir !== undefined ? resolve(cwd, request.baseDir) : path !== undefined ? dirname(path) : cwd;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  // Host paths and network the script may reach are checked first: a refused path is never read.
  const access = resolveHostAccess(baseDir, options, cwd);
  const host = episodeScriptHostAccess(input, baseDir, access);
  if (host.issues.length > 0) throw invalidEpisodeScriptError([...host.issues, ...schemaIssues], path);
  const issues: SchemaIssue[] = [...schemaIssues];
  const at = (pointer: string, error: unknown) => issues.push({ path: pointer, message: issueMessage(error) });

  // Runtime.
  if (script.runtime?.wp !== undefined && script.runtime.wordpress !== undefined) {
    issues.push({ path: "/runtime", message: "give either wp (a bundled WordPress) or wordpress (a zip or directory), not both" });
  }
  let wordpress: RuntimeCreateSpec["wordpress"];
  if (script.runtime?.wordpress !== undefined) {
    wordpress = { path: abs(script.runtime.wordpress) };
    if (!existsSync(wordpress.path!)) issues.push({ path: "/runtime/wordpress", message: `wordpress-source-invalid: ${wordpress.path} does not exist; pass a WordPress zip or directory` });
  } else if (script.runtime?.wp !== undefined) wordpress = { version: script.runtime.wp };

  // Inputs, each checked on its own so every problem is reported.
  const mounts: ResolvedMount[] = [];
  const mountSpecs: MountSpec[] = [];
  const plugins: string[] = [];
  const themes: string[] = [];
  const resolveOne = (pointer: string, spec: MountSpec): boolean => {
    try {
      mounts.push(...resolveMounts([spec], baseDir));
      return true;
    } catch (error) {
      at(pointer, error);
      return false;
    }
  };
  (script.mounts ?? []).forEach((m, i) => {
    const spec: MountSpec = { source: abs(m.source), target: m.target, mode: m.mode ?? "readonly" };
    if (resolveOne(`/mounts/${i}`, spec)) mountSpecs.push(spec);
  });
  (script.plugins ?? []).forEach((p, i) => {
    if (resolveOne(`/plugins/${i}`, pluginMount(abs(p), baseDir))) plugins.push(abs(p));
  });
  (script.themes ?? []).forEach((t, i) => {
    if (resolveOne(`/themes/${i}`, themeMount(abs(t), baseDir))) themes.push(abs(t));
  });

  // Policy.
  let policy = defaultRuntimePolicy();
  if (script.policy !== undefined) {
    try {
      // Leaving out "commands" grants what no policy grants: every runnable command.
      policy = normalizePolicy(script.policy, { source: "episode script policy", defaults: { commands: policy.commands } });
    } catch (error) {
      if (!(error instanceof WpCodeboxError)) throw error;
      for (const issue of (error.data.issues as SchemaIssue[] | undefined) ?? [{ path: "", message: error.message }]) issues.push({ path: `/policy${issue.path}`, message: issue.message });
    }
  }

  // Clock and seed: the flags, else the script's runtime, else the episode defaults (virtual clock,
  // seed 0) on a backend that has them; on one that has not (native), the host's clock.
  if (request.clock !== undefined) parseClockOption(request.clock);
  if (request.seed !== undefined) parseSeedOption(request.seed);
  const asked = { clock: request.clock ?? script.runtime?.clock, seed: request.seed ?? script.runtime?.seed, ...(script.runtime?.origin ? { origin: script.runtime.origin } : {}) };
  const determinism = options.backend?.deterministic === false ? asked : episodeDeterminismOptions(asked, policy.network);
  try {
    resolveDeterminism(determinism, policy.network);
  } catch (error) {
    // A refused flag keeps its own code (seed-with-network …); the script's own fields become issues.
    if (request.clock !== undefined || request.seed !== undefined) throw error;
    at((error as WpCodeboxError).code === "invalid-clock" ? "/runtime/clock" : "/runtime/seed", error);
  }

  for (const p of script.runtime?.defines !== undefined ? defineProblems(script.runtime.defines) : []) issues.push({ path: `/runtime/defines/${jsonPointerToken(p.name)}`, message: `invalid-define: ${p.message}` });

  // Environment and secrets: what PHP cannot receive unchanged is refused here, not after a boot.
  for (const [name, value] of Object.entries(script.env ?? {})) {
    const problem = environmentVariableProblem(name, value);
    if (problem) issues.push({ path: `/env/${jsonPointerToken(name)}`, message: problem });
  }
  const secrets = readSecretEnv(script.secretEnv ?? [], processEnv);
  for (const name of secrets.missing) {
    issues.push({ path: `/secretEnv/${(script.secretEnv ?? []).indexOf(name)}`, message: `${name} is not set in the environment; export it (export ${name}=...) before running the episode` });
  }
  for (const [name, value] of Object.entries(secrets.values)) {
    const problem = environmentVariableProblem(name, value);
    if (problem) issues.push({ path: `/secretEnv/${(script.secretEnv ?? []).indexOf(name)}`, message: `the value of ${name}: ${problem}` });
    const unsafe = problem ? undefined : secretValueProblem(value);
    if (unsafe) issues.push({ path: `/secretEnv/${(script.secretEnv ?? []).indexOf(name)}`, message: `secret-unsafe: the value of ${name}: ${unsafe}` });
  }

  // Observations and steps.
  const observation = (pointer: string, spec: ObservationSpec): void => {
    try {
      checkObservationRequest(spec);
    } catch (error) {
      at(pointer, error);
    }
  };
  (script.resetObservations ?? []).forEach((o, i) => observation(`/resetObservations/${i}`, o));
  const steps: PlannedEpisodeStep[] = [];
  const actions: PlannedAction[] = [];
  script.steps.forEach((step, index) => {
    if (step === null) return; // left out: its schema issues are listed
    const pointer = `/steps/${index}`;
    const name = step.name !== undefined ? { name: step.name } : {};
    if ("action" in step) {
      const { args, command, timeoutMs, ...intent } = step.action;
      let checkedArgs: string[] | undefined;
      let flat: { args: string[]; keys: string[] } | undefined;
      try {
        flat = flattenCommandArgs(command, args);
        const checked = checkCommandInput(command, flat.args, baseDir);
        const missing = missingCapability(policy, checked);
        if (missing !== undefined) issues.push({ path: `${pointer}/action`, message: `the policy does not grant the capability "${missing}" this step needs; add it to /policy/commands` });
        checkedArgs = checked.args;
      } catch (error) {
        if (!(error instanceof WpCodeboxError)) throw error;
        if (error.code === "unknown-command") at(`${pointer}/action/command`, error);
        else issues.push(...commandArgsIssues(error, `${pointer}/action/args`, flat));
      }
      if (step.observe) observation(`${pointer}/observe`, step.observe);
      if (checkedArgs === undefined) return;
      const action = { pointer, command, args: checkedArgs, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
      actions.push(action);
      steps.push({ index, ...name, kind: "action", action: { ...action, intent }, ...(step.observe ? { observe: step.observe } : {}) });
    } else if ("snapshot" in step) {
      steps.push({ index, ...name, kind: "snapshot" });
    } else {
      observation(`${pointer}/observe`, step.observe);
      steps.push({ index, ...name, kind: "observe", observe: step.observe });
    }
  });

  const createSpec: RuntimeCreateSpec = {
    ...(wordpress ? { wordpress } : {}),
    ...(script.runtime?.php !== undefined ? { php: script.runtime.php } : {}),
    ...(script.runtime?.extensions !== undefined ? { extensions: [...script.runtime.extensions] } : {}),
    ...(script.runtime?.defines !== undefined ? { defines: { ...script.runtime.defines } } : {}),
    mounts: mountSpecs,
    plugins,
    themes,
    policy,
    env: { ...(script.env ?? {}) },
    secretEnv: secrets.values,
    ...(determinism.clock !== undefined ? { clock: determinism.clock } : {}),
    ...(determinism.seed !== undefined ? { seed: determinism.seed } : {}),
    ...(determinism.origin !== undefined ? { origin: determinism.origin } : {}),
  };
  // The backend's checks (PHP version, extensions, WordPress source) run whatever else is wrong; a
  // WordPress source refused above is left out of them, so it is not reported twice.
  let preflight: RuntimePreflight | void = undefined;
  const wordpressRefused = issues.some((i) => i.path === "/runtime" || i.path === "/runtime/wordpress");
  try {
    preflight = options.backend?.preflight?.(wordpressRefused ? { ...createSpec, wordpress: undefined } : createSpec);
  } catch (error) {
    // A backend this host cannot run (native without its Debian packages) is the environment's
    // fault (exit 3), not the script's.
    if (error instanceof WpCodeboxError && error.code === "native-backend-unavailable") throw error;
    const code = error instanceof WpCodeboxError ? error.code : "";
    // `none` beside other extensions is an invalid-argument about the extensions list too.
    const aboutExtensions = code === "php-extension-unavailable" || (error instanceof WpCodeboxError && error.data.option === "extensions");
    at(aboutExtensions ? "/runtime/extensions" : code === "plugin-requirements" ? "/plugins" : code.startsWith("php-") ? "/runtime/php" : "/runtime", error);
  }
  if (issues.length > 0) throw invalidEpisodeScriptError(issues, path);
  assertBackendSupports(options.backend, [
    ...(script.resetObservations ?? []).map((o, i) => ({ pointer: `/resetObservations/${i}`, observation: o.type })),
    ...steps.flatMap((s): BackendNeed[] => {
      const pointer = `/steps/${s.index}`;
      if (s.kind === "action") return [{ pointer: `${pointer}/action`, command: s.action.command }, ...(s.observe ? [{ pointer: `${pointer}/observe`, observation: s.observe.type }] : [])];
      return s.kind === "observe" ? [{ pointer: `${pointer}/observe`, observation: s.observe.type }] : [];
    }),
  ]);

  const runId = options.runId ?? newRunId(new Date(), "episode");
  const scripted = (script as EpisodeScript).artifacts?.directory;
  const artifactsDir =
    options.artifactsDir !== undefined ? resolve(cwd, options.artifactsDir) : scripted !== undefined ? resolve(baseDir, scripted) : resolve(cwd, `wp-codebox-artifacts/${runId}`);
  return {
    kind: "episode",
    ...finishBase(runId, artifactsDir, createSpec, policy, mounts, actions, preflight),
    episode: {
      ...(path !== undefined ? { path } : {}),
      steps,
      ...(script.resetObservations ? { resetObservations: script.resetObservations } : {}),
      includeRuntimeSnapshotBundles: script.artifacts?.includeRuntimeSnapshotBundles ?? false,
      hostAccess: { ...access, widened: host.widened },
    },
  };
}

/**
 * The script without the parts that have schema issues, for the checks that need well-formed
 * input: a top-level field (or one runtime field) with an issue is left out, and a step with an
 * issue becomes `null` (its index, and so every pointer, stays).
 */
function withoutInvalidParts(script: EpisodeScript, issues: readonly SchemaIssue[]): Omit<EpisodeScript, "steps"> & { steps: (EpisodeScriptStep | null)[] } {
  const hasIssue = (prefix: string) => issues.some((i) => i.path === prefix || i.path.startsWith(`${prefix}/`));
  const clean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(script)) {
    if (key === "runtime" && !issues.some((i) => i.path === "/runtime") && value && typeof value === "object") {
      clean.runtime = Object.fromEntries(Object.entries(value).filter(([field]) => !hasIssue(`/runtime/${jsonPointerToken(field)}`)));
    } else if (key === "steps") {
      clean.steps = script.steps.map((step, i) => (hasIssue(`/steps/${i}`) ? null : step));
    } else if (!hasIssue(`/${jsonPointerToken(key)}`)) clean[key] = value;
  }
  return clean as Omit<EpisodeScript, "steps"> & { steps: (EpisodeScriptStep | null)[] };
}

function invalidEpisodeScriptError(issues: SchemaIssue[], path: string | undefined): WpCodeboxError {
  return new WpCodeboxError(
    // A path or network the script may not reach is refused under its own code.
    hostAccessCode(issues, "invalid-episode-script"),
    `Invalid episode script${path ? ` ${path}` : ""} (${issues.length} issue${issues.length === 1 ? "" : "s"}):\n${issues.map((i) => `  ${i.path || "/"}: ${i.message}`).join("\n")}\nFix them; wp-codebox schema episode-script prints the JSON Schema.`,
    { issues },
  );
}
