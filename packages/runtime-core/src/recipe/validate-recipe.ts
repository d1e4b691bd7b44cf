/**
 * `validateRecipe`: every problem in a workspace recipe at once, each with a JSON pointer and a
 * message saying what to fix. The same pass resolves what `planRecipe` prints, so validation and
 * planning can never disagree.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { defineProblems, type WpDefineValue } from "../wp-defines.js";
import { dirname, isAbsolute, resolve } from "node:path";
import { environmentVariableProblem, readSecretEnv } from "../environment.js";
import { secretValueProblem } from "../secrets/secret-safety.js";
import { WpCodeboxError } from "../errors.js";
import { checkInputFile, isMissingInputFile, pathArgumentKind, readInputTextSync } from "../input-files.js";
import { parseJsonText } from "../json-syntax.js";
import { BROWSER_EVALUATE_CAPABILITY, getCommandDefinition, parseCommandArgs, readJsonArg, COMMAND_DEFINITIONS } from "../command-registry.js";
import { normalizePolicy } from "../policy.js";
import { resolveDeterminism } from "../determinism.js";
import { pluginMount, resolveMounts, themeMount } from "../mounts.js";
import { parseDuration } from "../durations.js";
import { jsonPointerToken, validateAgainstSchema, type SchemaIssue } from "../schema-validation.js";
import { checkBrowserBaselines } from "../browser-baselines.js";
import { browserInteractionScriptUsesEvaluate, normalizeLegacyBrowserActions, validateBrowserInteractionScript } from "../browser-interaction-script.js";
import type { MountSpec, ResolvedMount, RuntimeBackend, RuntimePolicy } from "../runtime.js";
import { commandArgsIssues, flattenCommandArgs } from "../command-input.js";
import { normalizeWordPressStateRequest, wordPressStateRequestFromArgs } from "../wordpress-state.js";
import { parseWpCliCommand } from "../wp-cli-command.js";
import { WORKSPACE_RECIPE_SCHEMA, type RecipeExpect, type RecipeStep, type WorkspaceRecipe } from "./recipe-schema.js";
import { parseJsonPath } from "./recipe-expectations.js";
import { PATH_NOT_ALLOWED, checkHostPath, commandArgHostPaths, hostAccessCode, hostPathChecker, networkAccessIssues, resolveHostAccess, type HostAccess, type HostPathUse } from "../host-access.js";


/** Options of `validateRecipe` / `planRecipe`. */
export interface RecipeCheckOptions {
  /**
   * The bundled WordPress versions (`"6.5"`, …). With `offline`, every WordPress version the recipe
   * names must be one of them (others would have to be fetched from the release mirror).
   */
  wordpressVersions?: readonly string[];
  /** `WP_CODEBOX_OFFLINE=1`: releases cannot be fetched. */
  offline?: boolean;
  /** Where `secretEnv` values come from; when given, every named variable must be set. */
  processEnv?: NodeJS.ProcessEnv;
  /**
   * Without `processEnv`: where the `secretEnv` values that are set are read, only to check that
   * each can be redacted safely (`secret-unsafe`); unset names are not reported.
   */
  secretSafetyEnv?: NodeJS.ProcessEnv;
  /** The backend that will run the recipe: its `preflight` checks `runtime.wp` and `runtime.php`. */
  backend?: Pick<RuntimeBackend, "preflight">;
  /**
   * `--allow-path DIR`: host folders or files, beyond the recipe's own folder, that the recipe
   * may name (mounts, plugins, themes, `@file` and path args); relative to `cwd`. Default none.
   */
  allowPaths?: readonly string[];
  /** `--allow-network ORIGIN`: hosts the recipe's policy may reach (`*` = every host). Default none. */
  allowNetwork?: readonly string[];
  /** Base of relative `allowPaths`; default `process.cwd()`. */
  cwd?: string;
}

/** One step, resolved: flat args with paths made absolute, expectations, timeout. */
export interface PlannedRecipeStep {
  /** JSON pointer of the step in the recipe (`/setup/0`, `/steps/2`). */
  pointer: string;
  phase: "setup" | "step";
  index: number;
  name: string;
  command: string;
  /** `key=value` args as `execute` receives them; `@file` and path args are absolute. */
  args: string[];
  expect: RecipeExpect;
  /** Undefined: the command's default limit. */
  timeoutMs?: number;
}

/** A capability of the derived policy and why it is there. */
export interface PlannedCapability {
  capability: string;
  reason: string;
  /** True when granted because a step needs it implicitly (an `evaluate` browser step). */
  autoGranted: boolean;
  /** Pointers of the steps that use it. */
  usedBy: string[];
}

/** What `planRecipe` returns (`wp-codebox recipe plan --json`). Secret values never appear. */
export interface RecipePlan {
  schema: "wp-codebox/workspace-recipe-plan/v1";
  recipe: { path: string; name?: string; description?: string };
  /** `clock` / `seed`: the recipe's determinism options (see `resolveDeterminism`). */
  runtime: { wp?: string; php?: string; extensions?: string[]; clock?: string; seed?: number; matrix?: { wp?: string[]; php?: string[] }; defines?: Record<string, WpDefineValue> };
  /** The combinations to run: one (runtime.wp, runtime.php) cell, or every matrix wp × php. */
  cells: { wp?: string; php?: string }[];
  inputs: {
    plugins: string[];
    themes: string[];
    /** The caller's mounts (absolute sources). */
    mounts: MountSpec[];
    /** Every mount after resolution, including plugins and themes. */
    resolvedMounts: ResolvedMount[];
    runtimeEnv: Record<string, string>;
    secretEnv: string[];
  };
  policy: RuntimePolicy;
  capabilities: PlannedCapability[];
  setup: PlannedRecipeStep[];
  steps: PlannedRecipeStep[];
  artifacts: { directory?: string; includeRuntimeSnapshotBundles: boolean };
  /**
   * What the recipe may reach on the host: its own folder, the `--allow-path` / `--allow-network`
   * grants, and `widened`: every path outside the folder that a grant let through.
   */
  hostAccess: HostAccess & { widened: HostPathUse[] };
}

/** Result of `validateRecipe`: `issues` are `{ path (JSON pointer), message }`. */
export interface RecipeValidation {
  valid: boolean;
  recipe?: WorkspaceRecipe;
  issues: SchemaIssue[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Drops Ajv's union noise (anyOf) where nested issues already name the problem. */
function foldSchemaIssues(raw: SchemaIssue[]): SchemaIssue[] {
  const isUnion = (m: string) => /must match (a|exactly one) schema in (anyOf|oneOf)/.test(m);
  const hasNested = (path: string) => raw.some((o) => o.path.startsWith(`${path}/`) && !isUnion(o.message));
  const out = new Map<string, string[]>();
  for (const issue of raw) {
    if (isUnion(issue.message) && hasNested(issue.path)) continue;
    if (isUnion(issue.message)) {
      out.set(issue.path, [...(out.get(issue.path) ?? []), "has the wrong type or shape (see wp-codebox schema recipe)"]);
      continue;
    }
    const messages = out.get(issue.path) ?? [];
    if (!messages.includes(issue.message)) messages.push(issue.message);
    out.set(issue.path, messages);
  }
  return [...out.entries()].map(([path, messages]) => ({ path, message: messages.join(", or ") }));
}

/**
 * Converts a step's `args` into flat `key=value` strings: strings as is, numbers and booleans
 * stringified, an object/array value for key `k` as `k-json=<inline JSON>` (or as `k=<inline JSON>`
 * when `k` already ends in `-json`), and a string under the base name of a JSON-valued argument
 * (`"steps": "@flow.json"`) as that argument (`steps-json=@flow.json`).
 * @returns the args plus, per arg index, the recipe key it came from (for pointers).
 */
export function recipeArgsToFlat(args: RecipeStep["args"], command = ""): { args: string[]; keys: string[] } {
  return flattenCommandArgs(command, args);
}

interface Analysis {
  issues: SchemaIssue[];
  plan?: RecipePlan;
}

/**
 * Validates a parsed recipe document: the schema (unknown fields, types, versions), then every
 * semantic rule: mounts, plugins and themes (with `resolveMounts` semantics, relative to the
 * recipe), commands (known, allowed in recipes, granted by an explicit policy), args (as
 * `parseCommandArgs` sees them, `@file` relative to the recipe), browser scripts inside steps
 * (`/steps/N/args/steps/M/field`), durations and expectations (JSON paths, regular expressions).
 * @param value - the parsed JSON.
 * @param recipePath - the recipe file; relative paths resolve against its directory.
 * @returns `{ valid, recipe?, issues }`; `recipe` is the typed input when valid.
 */
export function validateRecipe(value: unknown, recipePath: string, options: RecipeCheckOptions = {}): RecipeValidation {
  const { issues } = analyzeRecipe(value, recipePath, options);
  return issues.length ? { valid: false, issues } : { valid: true, recipe: value as WorkspaceRecipe, issues };
}

/**
 * Resolves a recipe without booting anything: inputs, the derived policy with each capability's
 * reason (auto-granted ones marked), and the ordered steps with their resolved args.
 * Without `policy.commands`, the policy grants exactly the capabilities the steps use, plus
 * `wordpress.browser-actions.evaluate` when a browser script has an `evaluate` step.
 * @throws WpCodeboxError `invalid-recipe` with `data.issues` (every problem) when invalid;
 *   `path-not-allowed` / `network-not-allowed` (same shape) when any problem is a host path or
 *   network the recipe may not reach (see `allowPaths` / `allowNetwork`); `invalid-argument` for a
 *   bad grant.
 */
export function planRecipe(value: unknown, recipePath: string, options: RecipeCheckOptions = {}): RecipePlan {
  const { issues, plan } = analyzeRecipe(value, recipePath, options);
  if (issues.length || !plan) throw invalidRecipeError(recipePath, issues);
  return plan;
}

/** The `invalid-recipe` error for a list of issues, one `pointer: message` per line. */
export function invalidRecipeError(recipePath: string, issues: readonly SchemaIssue[]): WpCodeboxError {
  return new WpCodeboxError(
    // A path or network the recipe may not reach is refused under its own code.
    hostAccessCode(issues, "invalid-recipe"),
    `The recipe ${recipePath} has ${issues.length} problem(s):\n${formatRecipeIssues(issues)}\nFix them and run again (wp-codebox schema recipe prints the JSON Schema).`,
    { issues: issues.map((i) => ({ ...i })), recipe: recipePath },
  );
}

/** `pointer: message`, one per line. */
export function formatRecipeIssues(issues: readonly SchemaIssue[]): string {
  return issues.map((i) => `  ${i.path || "/"}: ${i.message}`).join("\n");
}

/**
 * Reads and parses a recipe file.
 * @throws WpCodeboxError `invalid-recipe` when the file does not exist or is not JSON;
 *   `input-file-invalid` / `input-file-too-large` when it is not a regular file or is over 4 MiB.
 */
export function readRecipeFile(path: string): unknown {
  let text: string;
  try {
    text = readInputTextSync(path, "recipe");
  } catch (error) {
    if (!isMissingInputFile(error)) throw error;
    throw new WpCodeboxError("invalid-recipe", `Cannot read recipe ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Check the path.`, { recipe: path }, { cause: error });
  }
  try {
    return parseJsonText(text);
  } catch (error) {
    throw new WpCodeboxError("invalid-recipe", `The recipe ${path} is not valid JSON: ${(error as Error).message}. Fix the syntax.`, { recipe: path }, { cause: error });
  }
}

function analyzeRecipe(value: unknown, recipePath: string, options: RecipeCheckOptions): Analysis {
  const base = dirname(resolve(recipePath));
  const access = resolveHostAccess(base, options, options.cwd);
  const issues = foldSchemaIssues(validateAgainstSchema(WORKSPACE_RECIPE_SCHEMA, value));
  if (!isRecord(value) || issues.some((i) => i.path === "/" || i.path === "/schema")) return { issues };
  // Every host path the recipe names must lie in its folder or a granted one, checked before it is read.
  const { check: allowed, widened } = hostPathChecker(access, issues);
  const confineToAccess = (real: string): void => {
    const checked = checkHostPath(real, access);
    if (!checked.allowed) throw new WpCodeboxError("path-not-allowed", `${checked.message.slice(`${PATH_NOT_ALLOWED}: `.length)} (the file changed after its path was checked)`, { path: real });
  };
  const recipe = value as Partial<WorkspaceRecipe>;
  const bad = (path: string) => issues.some((i) => i.path === path || i.path.startsWith(`${path}/`));
  const at = (path: string, message: string) => issues.push({ path, message });

  // Runtime: which WordPress and PHP versions exist is the backend's to say; offline, only bundled WordPress builds.
  const runtimeShapeBad = bad("/runtime");
  const isBundled = (wp: string) => options.wordpressVersions!.some((v) => v === wp || v.startsWith(`${wp}.`) || wp.startsWith(`${v}.`));
  const offlineCheck = (pointer: string, wp: string | undefined) => {
    if (wp !== undefined && !bad(pointer) && options.offline && options.wordpressVersions && !isBundled(wp)) {
      at(pointer, `WordPress ${wp} is not bundled and WP_CODEBOX_OFFLINE=1 forbids fetching it (unless it is already cached); bundled: ${options.wordpressVersions.join(", ")}`);
    }
  };
  const matrix = isRecord(recipe.runtime?.matrix) ? recipe.runtime!.matrix! : undefined;
  offlineCheck("/runtime/wp", recipe.runtime?.wp);
  (Array.isArray(matrix?.wp) ? matrix!.wp! : []).forEach((wp, i) => offlineCheck(`/runtime/matrix/wp/${i}`, wp));
  if (matrix && !bad("/runtime/matrix")) {
    if (matrix.wp === undefined && matrix.php === undefined) at("/runtime/matrix", "names no axis: give wp and/or php lists");
    if (matrix.wp !== undefined && recipe.runtime?.wp !== undefined) at("/runtime/wp", "is also given as /runtime/matrix/wp; keep one of them");
    if (matrix.php !== undefined && recipe.runtime?.php !== undefined) at("/runtime/php", "is also given as /runtime/matrix/php; keep one of them");
  }

  if (recipe.runtime?.defines !== undefined && !bad("/runtime/defines")) {
    for (const p of defineProblems(recipe.runtime.defines)) at(`/runtime/defines/${jsonPointerToken(p.name)}`, `invalid-define: ${p.message}`);
  }

  // Every (wp, php) cell the recipe will boot must be one the backend can provide.
  if (options.backend?.preflight && !runtimeShapeBad) {
    const wps = matrix?.wp ?? [recipe.runtime?.wp];
    const phps = matrix?.php ?? [recipe.runtime?.php];
    // One issue per pointer: a version refused offline above is not reported again.
    const seen = new Set<string>(issues.map((i) => i.path));
    wps.forEach((wp, i) =>
      phps.forEach((php, j) => {
        try {
          const extensions = Array.isArray(recipe.runtime?.extensions) ? { extensions: [...recipe.runtime!.extensions!] } : {};
          options.backend!.preflight!({ ...(wp !== undefined ? { wordpress: { version: wp } } : {}), ...(php !== undefined ? { php } : {}), ...extensions });
        } catch (error) {
          if (!(error instanceof WpCodeboxError)) throw error;
          const isPhp = error.code.startsWith("php-");
          const pointer =
            // `none` beside other extensions is an invalid-argument about the extensions list too.
            error.code === "php-extension-unavailable" || error.data.option === "extensions" ? "/runtime/extensions"
            : isPhp ? (matrix?.php ? `/runtime/matrix/php/${j}` : "/runtime/php")
            : matrix?.wp ? `/runtime/matrix/wp/${i}` : "/runtime/wp";
          if (!seen.has(pointer)) at(pointer, `${error.code}: ${error.message}`);
          seen.add(pointer);
        }
      }),
    );
  }

  // Inputs: plugins, themes, mounts, each checked on its own so every problem is reported.
  const inputs = isRecord(recipe.inputs) ? recipe.inputs : {};
  const resolvedMounts: ResolvedMount[] = [];
  const mounts: MountSpec[] = [];
  const plugins: string[] = [];
  const themes: string[] = [];
  const seenTargets = new Map<string, string>();
  const check = (pointer: string, spec: MountSpec, hint: string) => {
    try {
      const [mount] = resolveMounts([spec], base);
      const previous = seenTargets.get(mount!.target);
      if (previous) at(pointer, `mounts at ${mount!.target}, which ${previous} already uses; give each input its own target`);
      else seenTargets.set(mount!.target, pointer);
      resolvedMounts.push(mount!);
      return true;
    } catch (error) {
      if (!(error instanceof WpCodeboxError)) throw error;
      at(pointer, `${error.code}: ${error.message}${hint}`);
      return false;
    }
  };
  (Array.isArray(inputs.mounts) ? inputs.mounts : []).forEach((m, i) => {
    if (bad(`/inputs/mounts/${i}`)) return;
    const spec: MountSpec = { source: isAbsolute(m.source) ? m.source : resolve(base, m.source), target: m.target, mode: m.mode ?? "readonly" };
    if (!allowed(`/inputs/mounts/${i}/source`, spec.source)) return;
    if (check(`/inputs/mounts/${i}`, spec, " (sources are relative to the recipe file)")) mounts.push(spec);
  });
  (Array.isArray(inputs.plugins) ? inputs.plugins : []).forEach((p, i) => {
    if (bad(`/inputs/plugins/${i}`) || typeof p !== "string") return;
    const abs = resolve(base, p);
    if (!allowed(`/inputs/plugins/${i}`, abs)) return;
    if (check(`/inputs/plugins/${i}`, pluginMount(abs, base), " (plugin paths are relative to the recipe file)")) plugins.push(abs);
  });
  (Array.isArray(inputs.themes) ? inputs.themes : []).forEach((t, i) => {
    if (bad(`/inputs/themes/${i}`) || typeof t !== "string") return;
    const abs = resolve(base, t);
    if (!allowed(`/inputs/themes/${i}`, abs)) return;
    if (check(`/inputs/themes/${i}`, themeMount(abs, base), " (theme paths are relative to the recipe file)")) themes.push(abs);
  });
  // Environment and secrets: what PHP cannot receive unchanged is refused here, not after a boot.
  if (isRecord(inputs.runtimeEnv) && !bad("/inputs/runtimeEnv")) {
    for (const [name, value] of Object.entries(inputs.runtimeEnv)) {
      const problem = environmentVariableProblem(name, value);
      if (problem) at(`/inputs/runtimeEnv/${jsonPointerToken(name)}`, problem);
    }
  }
  const secretEnv = Array.isArray(inputs.secretEnv) ? [...inputs.secretEnv] : [];
  if (options.processEnv && !bad("/inputs/secretEnv")) {
    const secrets = readSecretEnv(secretEnv, options.processEnv);
    secretEnv.forEach((name, i) => {
      if (secrets.missing.includes(name)) at(`/inputs/secretEnv/${i}`, `${name} is not set in the environment; export it (export ${name}=...) before running the recipe`);
      else {
        const problem = environmentVariableProblem(name, secrets.values[name]);
        if (problem) at(`/inputs/secretEnv/${i}`, `the value of ${name}: ${problem}`);
        const unsafe = problem ? undefined : secretValueProblem(secrets.values[name]!);
        if (unsafe) at(`/inputs/secretEnv/${i}`, `secret-unsafe: the value of ${name}: ${unsafe}`);
      }
    });
  } else if (options.secretSafetyEnv && !bad("/inputs/secretEnv")) {
    const secrets = readSecretEnv(secretEnv, options.secretSafetyEnv);
    secretEnv.forEach((name, i) => {
      const value = secrets.values[name];
      const unsafe = typeof value === "string" && environmentVariableProblem(name, value) === undefined ? secretValueProblem(value) : undefined;
      if (unsafe) at(`/inputs/secretEnv/${i}`, `secret-unsafe: the value of ${name}: ${unsafe}`);
    });
  }

  // Policy: validated by the policy module itself.
  let explicitPolicy: RuntimePolicy | undefined;
  if (recipe.policy !== undefined && !bad("/policy")) {
    try {
      explicitPolicy = normalizePolicy(recipe.policy, { source: "recipe policy" });
    } catch (error) {
      if (!(error instanceof WpCodeboxError)) throw error;
      for (const issue of (error.data.issues as SchemaIssue[] | undefined) ?? [{ path: "", message: error.message }]) at(`/policy${issue.path}`, issue.message);
    }
    // Outbound network is the command line's to grant: the recipe can only narrow it.
    if (explicitPolicy) issues.push(...networkAccessIssues(explicitPolicy.network, access, "/policy/network"));
    if (secretEnv.length && recipe.policy.secrets === "none") at("/policy/secrets", `is "none" but inputs.secretEnv names ${secretEnv.join(", ")}; use "scoped" or drop the secrets`);
  }

  // Steps.
  const capabilities = new Map<string, PlannedCapability>();
  const pointersOf = new Map<string, Set<string>>();
  // Linear in steps: the "used by" reasons are spelled once, after the loop.
  const use = (capability: string, pointer: string, reason: string, autoGranted: boolean) => {
    const entry = capabilities.get(capability) ?? { capability, reason, autoGranted, usedBy: [] };
    const seen = pointersOf.get(capability) ?? new Set<string>();
    if (!seen.has(pointer)) {
      seen.add(pointer);
      entry.usedBy.push(pointer);
    }
    pointersOf.set(capability, seen);
    capabilities.set(capability, entry);
  };
  const planned: Record<"setup" | "steps", PlannedRecipeStep[]> = { setup: [], steps: [] };
  for (const phase of ["setup", "steps"] as const) {
    const list = Array.isArray(recipe[phase]) ? recipe[phase]! : [];
    list.forEach((step, index) => {
      const pointer = `/${phase}/${index}`;
      if (!isRecord(step) || bad(`${pointer}/command`) || bad(`${pointer}/args`) || typeof step.command !== "string") return;
      const result = analyzeStep(step, pointer, base, issues, bad, allowed, confineToAccess);
      if (!result) return;
      use(result.capability, pointer, `used by ${pointer}`, false);
      if (result.usesEvaluate) use(BROWSER_EVALUATE_CAPABILITY, pointer, `auto-granted: the browser script of ${pointer} has an evaluate step`, true);
      let timeoutMs: number | undefined;
      if (step.timeout !== undefined && !bad(`${pointer}/timeout`)) {
        try {
          timeoutMs = parseDuration(step.timeout);
        } catch (error) {
          at(`${pointer}/timeout`, (error as Error).message);
        }
      }
      planned[phase].push({
        pointer,
        phase: phase === "setup" ? "setup" : "step",
        index,
        name: step.name ?? `${step.command} #${index}`,
        command: step.command,
        args: result.args,
        expect: step.expect ?? {},
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      });
    });
  }

  for (const entry of capabilities.values()) if (!entry.autoGranted) entry.reason = `used by ${entry.usedBy.join(", ")}`;

  // Explicit policy.commands are authoritative: every step must be granted.
  if (explicitPolicy && recipe.policy?.commands !== undefined) {
    for (const cap of capabilities.values()) {
      if (explicitPolicy.commands.includes(cap.capability)) continue;
      for (const pointer of cap.usedBy) {
        at(
          cap.autoGranted ? pointer : `${pointer}/command`,
          `needs the capability "${cap.capability}", which /policy/commands does not grant; add it there (or drop policy.commands to derive the policy from the steps)`,
        );
      }
    }
  }

  if (issues.length) return { issues };
  const policy: RuntimePolicy = explicitPolicy && recipe.policy?.commands !== undefined
    ? explicitPolicy
    : { ...(explicitPolicy ?? normalizePolicy({})), commands: [...capabilities.keys()] };
  if (secretEnv.length && recipe.policy?.secrets === undefined) policy.secrets = "scoped";
  try {
    resolveDeterminism({ clock: recipe.runtime?.clock, seed: recipe.runtime?.seed }, policy.network);
  } catch (error) {
    if (!(error instanceof WpCodeboxError)) throw error;
    at(error.code === "invalid-clock" ? "/runtime/clock" : "/runtime/seed", `${error.code}: ${error.message}`);
    return { issues };
  }
  const capabilityList: PlannedCapability[] =
    recipe.policy?.commands !== undefined
      ? policy.commands.map((c) => ({ capability: c, reason: "granted by /policy/commands", autoGranted: false, usedBy: capabilities.get(c)?.usedBy ?? [] }))
      : [...capabilities.values()];
  const artifactsDir = recipe.artifacts?.directory;
  return {
    issues,
    plan: {
      schema: "wp-codebox/workspace-recipe-plan/v1",
      recipe: {
        path: resolve(recipePath),
        ...(recipe.name !== undefined ? { name: recipe.name } : {}),
        ...(recipe.description !== undefined ? { description: recipe.description } : {}),
      },
      runtime: {
        ...(recipe.runtime?.wp !== undefined ? { wp: recipe.runtime.wp } : {}),
        ...(recipe.runtime?.php !== undefined ? { php: recipe.runtime.php } : {}),
        ...(recipe.runtime?.clock !== undefined ? { clock: recipe.runtime.clock } : {}),
        ...(recipe.runtime?.seed !== undefined ? { seed: recipe.runtime.seed } : {}),
        ...(recipe.runtime?.extensions !== undefined ? { extensions: [...recipe.runtime.extensions] } : {}),
        ...(recipe.runtime?.defines !== undefined ? { defines: { ...recipe.runtime.defines } } : {}),
        ...(matrix ? { matrix: { ...(matrix.wp ? { wp: [...matrix.wp] } : {}), ...(matrix.php ? { php: [...matrix.php] } : {}) } } : {}),
      },
      cells: (matrix?.wp ?? [recipe.runtime?.wp]).flatMap((wp) =>
        (matrix?.php ?? [recipe.runtime?.php]).map((php) => ({ ...(wp !== undefined ? { wp } : {}), ...(php !== undefined ? { php } : {}) })),
      ),
      inputs: { plugins, themes, mounts, resolvedMounts, runtimeEnv: { ...(inputs.runtimeEnv ?? {}) }, secretEnv },
      policy,
      capabilities: capabilityList,
      setup: planned.setup,
      steps: planned.steps,
      artifacts: {
        ...(artifactsDir !== undefined ? { directory: resolve(base, artifactsDir) } : {}),
        includeRuntimeSnapshotBundles: recipe.artifacts?.includeRuntimeSnapshotBundles ?? false,
      },
      hostAccess: { ...access, widened },
    },
  };
}

/** Checks one step; pushes issues; returns the resolved args and capability when usable. */
function analyzeStep(
  step: RecipeStep,
  pointer: string,
  base: string,
  issues: SchemaIssue[],
  bad: (path: string) => boolean,
  allowed: (pointer: string, path: string) => boolean,
  confine?: (realPath: string) => void,
): { args: string[]; capability: string; usesEvaluate: boolean } | undefined {
  const at = (path: string, message: string) => issues.push({ path, message });
  const known = COMMAND_DEFINITIONS.filter((d) => d.recipe).map((d) => d.id);
  let definition;
  try {
    definition = getCommandDefinition(step.command);
  } catch {
    at(`${pointer}/command`, `unknown command "${step.command}"; use one of ${known.join(", ")}`);
    return undefined;
  }
  if (!definition.recipe || !definition.runnable) {
    at(`${pointer}/command`, `"${step.command}" cannot be a recipe step${definition.runnable ? "" : " (it is a policy-only capability, granted automatically when a browser script needs it)"}; use one of ${known.join(", ")}`);
    return undefined;
  }
  let flat: string[];
  let keys: string[];
  try {
    ({ args: flat, keys } = recipeArgsToFlat(step.args, step.command));
  } catch (error) {
    if (!(error instanceof WpCodeboxError)) throw error;
    for (const issue of commandArgsIssues(error, `${pointer}/args`)) at(issue.path, issue.message);
    return undefined;
  }
  // No file is read (and none is named in a plan) unless the recipe may name it.
  const refused = commandArgHostPaths(step.command, flat, base, { keys, textFiles: true }).filter(({ key, path }) => !allowed(`${pointer}/args/${jsonPointerToken(key)}`, path));
  if (refused.length) return undefined;
  // What is read is checked again from the open handle: a name checked above could be swapped
  // for a symlink out of the folder before the read.
  const read = { confine: (real: string) => confine?.(real) };
  // Resolve file references relative to the recipe: `@file` for json args, path args, and
  // `@file` text args (replaced by the file's content).
  const resolved = flat.map((raw, i) => {
    const eq = raw.indexOf("=");
    if (eq <= 0) return raw;
    const key = raw.slice(0, eq);
    const value = raw.slice(eq + 1);
    const spec = definition.args.find((a) => a.name === key);
    if (!spec) return raw;
    const where = `${pointer}/args/${jsonPointerToken(keys[i]!)}`;
    if (spec.format === "json") {
      if (value.startsWith("@")) {
        const file = resolve(base, value.slice(1));
        try {
          readJsonArg(`@${file}`, base, read);
        } catch (error) {
          at(where, `${(error as WpCodeboxError).code ?? "invalid-json-arg"}: ${(error as Error).message}`);
        }
        return `${key}=@${file}`;
      }
      try {
        readJsonArg(value, base);
      } catch (error) {
        at(where, `${(error as WpCodeboxError).code ?? "invalid-json-arg"}: ${(error as Error).message}`);
      }
      return raw;
    }
    if (spec.format === "path") {
      const file = resolve(base, value.startsWith("@") ? value.slice(1) : value);
      // A NUL byte is reported once, by the argument check below.
      if (file.includes("\0")) return `${key}=${file}`;
      if (!existsSync(file)) at(where, `file ${file} does not exist (paths are relative to the recipe file)`);
      else {
        try {
          checkInputFile(file, pathArgumentKind(key));
        } catch (error) {
          at(where, `${(error as WpCodeboxError).code}: ${(error as Error).message}`);
        }
      }
      return `${key}=${file}`;
    }
    if (value.startsWith("@") && value.length > 1) {
      const file = resolve(base, value.slice(1));
      try {
        return `${key}=${readInputTextSync(file, "arg-file", read)}`;
      } catch (error) {
        if (isMissingInputFile(error)) at(where, `file ${file} (from "@…") cannot be read; fix the path (relative to the recipe file) or write the value inline`);
        else at(where, `${(error as WpCodeboxError).code}: ${(error as Error).message}`);
      }
    }
    return raw;
  });
  try {
    const parsed = parseCommandArgs(step.command, resolved);
    if (definition.kind === "state") normalizeWordPressStateRequest(wordPressStateRequestFromArgs(parsed));
    if (step.command === "wordpress.wp-cli" && parsed.command !== undefined) parseWpCliCommand(parsed.command);
  } catch (error) {
    if (!(error instanceof WpCodeboxError)) throw error;
    for (const issue of commandArgsIssues(error, `${pointer}/args`, { args: resolved, keys })) at(issue.path, issue.message);
  }
  // Browser scripts: every issue, pointed into the recipe.
  let usesEvaluate = false;
  if (step.command === "wordpress.browser-actions") {
    for (const argName of ["steps-json", "actions-json"]) {
      const i = resolved.findIndex((a) => a.startsWith(`${argName}=`));
      if (i < 0) continue;
      let raw: unknown;
      try {
        raw = readJsonArg(resolved[i]!.slice(argName.length + 1), base);
      } catch {
        continue; // reported above
      }
      const wrapped = isRecord(raw) && "steps" in raw;
      const input = wrapped ? (raw as { steps: unknown }).steps : raw;
      const report = argName === "steps-json" ? validateBrowserInteractionScript(input) : normalizeLegacyBrowserActions(input);
      const root = `${pointer}/args/${jsonPointerToken(keys[i]!)}${wrapped ? "/steps" : ""}`;
      for (const issue of report.issues) at(`${root}${issue.path}`, issue.message);
      const value = resolved[i]!.slice(argName.length + 1);
      if (report.valid && !value.startsWith("@")) {
        // Baselines resolve against the script file's folder; an inline script has none of its own.
        report.steps.forEach((s, n) => {
          if (s.kind === "screenshot" && s.compare !== undefined) at(`${root}/${n}/compare`, "compare needs the script in a file beside its baselines: move the steps to a .json file and name it with steps-json=@file");
        });
      } else if (report.valid) {
        for (const issue of checkBrowserBaselines(report.steps, dirname(value.slice(1))).issues) at(`${root}/${issue.index}/compare`, issue.message);
      }
      if (report.valid && browserInteractionScriptUsesEvaluate(report.steps)) usesEvaluate = true;
    }
  }
  // Expectations that can be checked before running.
  const expect = step.expect;
  if (expect && !bad(`${pointer}/expect`)) {
    if (expect.stdoutMatches !== undefined) {
      try {
        new RegExp(expect.stdoutMatches);
      } catch (error) {
        at(`${pointer}/expect/stdoutMatches`, `is not a valid regular expression: ${(error as Error).message}`);
      }
    }
    const jsons = expect.json === undefined ? [] : Array.isArray(expect.json) ? expect.json : [expect.json];
    jsons.forEach((j, k) => {
      const parsed = parseJsonPath(j.path);
      if ("error" in parsed) at(`${pointer}/expect/json${Array.isArray(expect.json) ? `/${k}` : ""}/path`, parsed.error);
    });
    if (expect.assertions !== undefined && step.command !== "wordpress.browser-actions") {
      at(`${pointer}/expect/assertions`, `only wordpress.browser-actions reports assertions; remove it from this ${step.command} step`);
    }
    if (expect.tests !== undefined && step.command !== "wordpress.phpunit") {
      at(`${pointer}/expect/tests`, `only wordpress.phpunit reports test counts; remove it from this ${step.command} step`);
    }
  }
  return { args: resolved, capability: definition.capability, usesEvaluate };
}
