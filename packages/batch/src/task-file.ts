/**
 * Reading and validating a task file (`tasks.jsonl`, one `wp-codebox/batch-task/v1` object a
 * line). The whole file is checked before anything runs; every problem carries its 1-based line
 * number and a JSON pointer into that line's object.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import {
  parseJsonText,
  BATCH_TASK_SCHEMA,
  BATCH_TASK_ID_MAX_LENGTH,
  WpCodeboxError,
  episodeDeterminismOptions,
  isMissingInputFile,
  readInputTextSync,
  matrixCellId,
  normalizePolicy,
  parseClockOption,
  parseDuration,
  resolveDeterminism,
  validateAgainstSchema,
  validateEpisodeScript,
  validateRecipe,
  episodeScriptHostAccess,
  hostPathChecker,
  hostAccessCode,
  resolveHostAccess,
  BACKEND_NAMES,
  type BackendName,
  type BatchTask,
  type RuntimeBackend,
} from "@wp-codebox/runtime-core";

/** One problem of a task file: `line` is 1-based; `pointer` points into that line's JSON object (`""` = the whole line). */
export interface TaskFileIssue {
  line: number;
  pointer: string;
  message: string;
}

/** Per-task overrides of the runtime, as validated (each replaces the file's own `runtime` field). */
export interface TaskRuntimeOverrides {
  /** The backend (replaces the file's `runtime.backend`). */
  backend?: BackendName;
  wp?: string;
  php?: string;
  /** `"real"` or an ISO-8601 instant where the sandbox's virtual clock starts. */
  clock?: string;
  /** Seed of every source of randomness in the sandbox. */
  seed?: number;
}

/**
 * A validated task with absolute paths: what a local pool or a BullMQ job carries. It holds no
 * secret values (recipes and scripts name their secret variables; workers read the values).
 */
export interface ResolvedTask {
  id: string;
  /** 1-based line in the task file. */
  line: number;
  kind: "recipe" | "episode";
  /** The backend that runs it: the line's `runtime.backend`, else the file's; absent = playground. */
  backend?: BackendName;
  /** Absolute path of the recipe or episode script. */
  file: string;
  runtime: TaskRuntimeOverrides;
  /** Whole-task wall-clock limit in ms (boot to verified bundle); absent = none. */
  timeoutMs?: number;
  /**
   * Set when the line names a matrix recipe (`runtime.matrix`): the line's own id and this cell.
   * Each cell is a task of its own (`<line id>.wp-6.5-php-8.2`), with the cell's versions as
   * `runtime` overrides, so the cells of one recipe run side by side in the pool.
   */
  matrix?: { task: string; wp: string | null; php: string | null };
  /**
   * The `--allow-path` / `--allow-network` grants the batch was started with (absolute paths,
   * host patterns), carried to whichever process runs the task.
   */
  grants?: { allowPaths: string[]; allowNetwork: string[] };
}

/** What `validateTaskFile` returns: the tasks in file order, or every issue. */
export interface TaskFileValidation {
  path: string;
  valid: boolean;
  tasks: ResolvedTask[];
  issues: TaskFileIssue[];
}

/** Options of task-file validation. */
export interface TaskFileOptions {
  /**
   * The backend that will run the tasks: its `preflight` checks each task's WordPress and PHP
   * versions without booting (a WordPress release that is not bundled must be fetchable, or
   * cached when offline). Versions are only checked against the schema when absent.
   */
  backend?: Pick<RuntimeBackend, "preflight">;
  /** Bundled WordPress versions and `WP_CODEBOX_OFFLINE=1`, as recipe validation takes them. */
  wordpressVersions?: readonly string[];
  offline?: boolean;
  /** Skip reading the referenced recipes and scripts (pure shape check). */
  skipReferencedFiles?: boolean;
  /**
   * `--allow-path DIR`: host paths beyond the task file's folder (for its `recipe`/`episode`
   * paths) and beyond each recipe's or script's own folder (for what it names); relative to `cwd`.
   */
  allowPaths?: readonly string[];
  /** `--allow-network ORIGIN`: hosts the recipes' and scripts' policies may reach (`*` = every host). */
  allowNetwork?: readonly string[];
  /** Base of relative `allowPaths`; default `process.cwd()`. */
  cwd?: string;
}

function collapseIssues(issues: { path: string; message: string }[]): { path: string; message: string }[] {
  // One message per field (the schema validator already folds unions into one issue each).
  const byPath = new Map<string, string[]>();
  for (const i of issues) byPath.set(i.path, [...(byPath.get(i.path) ?? []), i.message]);
  return [...byPath].map(([path, messages]) => {
    // A duration is text or a number of ms: say that rather than name JSON types.
    if (path === "/timeout") return { path, message: 'must be a duration such as "90s" or a positive number of ms' };
    return { path, message: [...new Set(messages)].join("; ") };
  });
}

function readJson(path: string, kind: "recipe" | "episode-script"): { value?: unknown; error?: string } {
  if (!path.includes("\0") && !existsSync(path)) return { error: `${path} does not exist` };
  let text: string;
  try {
    text = readInputTextSync(path, kind);
  } catch (error) {
    return { error: `${(error as WpCodeboxError).code}: ${(error as Error).message}` };
  }
  try {
    return { value: parseJsonText(text) };
  } catch (error) {
    return { error: `${path} is not JSON: ${(error as Error).message}` };
  }
}

/**
 * Applies a task's runtime overrides to a parsed recipe or episode script (a copy): each given
 * field replaces the file's. A `wp` or `php` override also replaces that axis of a recipe's
 * `runtime.matrix` (a matrix left with no axis is dropped), and an episode's own
 * `runtime.wordpress` path gives way to an explicit `wp`.
 */
export function applyRuntimeOverrides(document: unknown, kind: ResolvedTask["kind"], runtime: TaskRuntimeOverrides): unknown {
  if (!document || typeof document !== "object" || Array.isArray(document)) return document;
  const given = (["backend", "wp", "php", "clock", "seed"] as const).filter((k) => runtime[k] !== undefined);
  if (given.length === 0) return document;
  const doc = { ...(document as Record<string, unknown>) };
  const current = isRecord(doc.runtime) ? { ...doc.runtime } : {};
  for (const key of given) current[key] = runtime[key];
  if (runtime.wp !== undefined && kind === "episode") delete current.wordpress;
  if (isRecord(current.matrix)) {
    const matrix = { ...current.matrix };
    if (runtime.wp !== undefined) delete matrix.wp;
    if (runtime.php !== undefined) delete matrix.php;
    if (Object.keys(matrix).length === 0) delete current.matrix;
    else current.matrix = matrix;
  }
  doc.runtime = current;
  return doc;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The (wp, php) cells of a recipe's `runtime.matrix` (after overrides), or undefined without a matrix. */
function matrixCells(doc: unknown): { wp?: string; php?: string }[] | undefined {
  const runtime = isRecord(doc) && isRecord(doc.runtime) ? doc.runtime : undefined;
  const matrix = runtime && isRecord(runtime.matrix) ? runtime.matrix : undefined;
  if (!matrix) return undefined;
  const list = (axis: unknown, fixed: unknown) => (Array.isArray(axis) ? axis.map(String) : [typeof fixed === "string" ? fixed : undefined]);
  return list(matrix.wp, runtime!.wp).flatMap((wp) => list(matrix.php, runtime!.php).map((php) => ({ ...(wp !== undefined ? { wp } : {}), ...(php !== undefined ? { php } : {}) })));
}

type EpisodeLike = { runtime?: { wp?: string; php?: string; wordpress?: string; clock?: string; seed?: number }; policy?: unknown };

/**
 * What an episode run would refuse about its runtime before boot, checked without planning it
 * (planning would also demand the secret values, which in queue mode only the workers have):
 * the WordPress and PHP versions through the backend's preflight, and clock and seed against the
 * script's network policy.
 */
function checkEpisodeRuntime(script: EpisodeLike, options: TaskFileOptions, issue: (path: string, message: string) => void): void {
  const runtime = script.runtime ?? {};
  if (options.backend?.preflight && runtime.wordpress === undefined) {
    try {
      options.backend.preflight({ ...(runtime.wp !== undefined ? { wordpress: { version: runtime.wp } } : {}), ...(runtime.php !== undefined ? { php: runtime.php } : {}) });
    } catch (error) {
      if (!(error instanceof WpCodeboxError)) throw error;
      issue(error.code.startsWith("php-") ? "/runtime/php" : "/runtime/wp", `${error.code}: ${error.message}`);
    }
  }
  let network;
  try {
    network = script.policy === undefined ? undefined : normalizePolicy(script.policy).network;
  } catch {
    return; // the run reports the policy's own problems
  }
  try {
    resolveDeterminism(episodeDeterminismOptions({ clock: runtime.clock, seed: runtime.seed }, network), network);
  } catch (error) {
    if (!(error instanceof WpCodeboxError)) throw error;
    issue(error.code === "invalid-clock" ? "/runtime/clock" : "/runtime/seed", `${error.code}: ${error.message}`);
  }
}

/**
 * Validates task-file text. Checks, per line: JSON, the `batch-task` schema, exactly one of
 * `recipe`/`episode`, a unique id, a valid `timeout`, and (unless `skipReferencedFiles`) that the
 * referenced file exists and is a valid recipe or episode script with the overrides applied
 * (its own problems are listed under `/recipe` or `/episode` with the file's pointer; a problem
 * an override causes is listed under that override). A matrix recipe becomes one task per cell
 * (see `ResolvedTask.matrix`).
 * Blank lines and lines starting with `//` are ignored.
 * @param baseDir - folder relative task paths resolve against (the task file's folder).
 */
export function validateTaskLines(text: string, baseDir: string, options: TaskFileOptions = {}, path = "<tasks>"): TaskFileValidation {
  const issues: TaskFileIssue[] = [];
  const tasks: ResolvedTask[] = [];
  const seen = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  // The task file names recipes and scripts: they must lie in its folder or a granted path.
  const fileAccess = resolveHostAccess(baseDir, options, options.cwd);
  const grants = { allowPaths: fileAccess.allowPaths, allowNetwork: fileAccess.allowNetwork };
  const hasGrants = grants.allowPaths.length > 0 || grants.allowNetwork.length > 0;
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("//")) return;
    let value: unknown;
    try {
      value = parseJsonText(trimmed);
    } catch (error) {
      issues.push({ line, pointer: "", message: `not JSON: ${(error as Error).message}` });
      return;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      issues.push({ line, pointer: "", message: 'must be a JSON object such as {"id": "t1", "recipe": "recipe.json"}' });
      return;
    }
    const at = (pointer: string, message: string) => issues.push({ line, pointer, message });
    const before = issues.length;
    for (const issue of collapseIssues(validateAgainstSchema(BATCH_TASK_SCHEMA, value))) {
      const pointer = issue.path === "/" ? "" : issue.path;
      at(pointer, pointer === "/id" && issue.message.startsWith("must match pattern") ? "must be 1–128 letters, digits, '.', '_' or '-', not start with '.' or '-', and not be all digits" : issue.message);
    }
    const task = value as Partial<BatchTask>;
    const hasRecipe = task.recipe !== undefined;
    const hasEpisode = task.episode !== undefined;
    if (hasRecipe === hasEpisode) at("", hasRecipe ? 'has both "recipe" and "episode": a task runs one of them' : 'needs "recipe" (a workspace recipe file) or "episode" (an episode script)');
    if (typeof task.id === "string") {
      const first = seen.get(task.id);
      if (first !== undefined) at("/id", `duplicates the id of line ${first}: ids name bundle folders and queue jobs, so they must be unique`);
      else seen.set(task.id, line);
    }
    let timeoutMs: number | undefined;
    if (task.timeout !== undefined && (typeof task.timeout === "string" || typeof task.timeout === "number")) {
      try {
        timeoutMs = parseDuration(task.timeout);
        if (timeoutMs === 0) at("/timeout", 'must be more than 0 (leave "timeout" out for no limit)');
      } catch (error) {
        at("/timeout", (error as Error).message);
      }
    }
    const clock = task.runtime?.clock;
    if (typeof clock === "string") {
      try {
        parseClockOption(clock);
      } catch (error) {
        at("/runtime/clock", (error as Error).message.replace(/^--clock /, ""));
      }
    }
    const rel = hasRecipe ? task.recipe : task.episode;
    if (hasRecipe === hasEpisode || typeof rel !== "string" || rel === "") return;
    const kind: ResolvedTask["kind"] = hasRecipe ? "recipe" : "episode";
    const lineValid = issues.length === before;
    const file = isAbsolute(rel) ? rel : resolve(baseDir, rel);
    const pathIssues: { path: string; message: string }[] = [];
    if (!hostPathChecker(fileAccess, pathIssues).check(`/${hasRecipe ? "recipe" : "episode"}`, file)) {
      for (const i of pathIssues) at(i.path, i.message);
      return;
    }
    const runtime: TaskRuntimeOverrides = { ...(task.runtime ?? {}) };
    let cells: { wp?: string; php?: string }[] | undefined;
    let backend: BackendName | undefined = runtime.backend;
    if (!options.skipReferencedFiles) {
      const pointer = `/${kind}`;
      const read = readJson(file, kind === "recipe" ? "recipe" : "episode-script");
      if (read.error) {
        at(pointer, read.error);
        return;
      }
      const doc = applyRuntimeOverrides(read.value, kind, runtime);
      const named = isRecord(doc) && isRecord(doc.runtime) ? doc.runtime.backend : undefined;
      if ((BACKEND_NAMES as readonly unknown[]).includes(named)) backend = named as BackendName;
      // A problem caused by one of the line's overrides belongs to the line, not to the file.
      const own = (path: string) => (["wp", "php", "clock", "seed"] as const).find((k) => runtime[k] !== undefined && path === `/runtime/${k}`);
      const fileIssue = (path: string, message: string) => {
        const key = own(path);
        // One message per override: the line's own check may have reported it already.
        if (key) {
          if (!issues.some((i) => i.line === line && i.pointer === `/runtime/${key}`)) at(`/runtime/${key}`, message);
        }
        else at(pointer, `${file}#${path}: ${message}`);
      };
      if (kind === "recipe") {
        const checks = {
          ...(options.backend ? { backend: options.backend } : {}),
          ...(options.wordpressVersions ? { wordpressVersions: options.wordpressVersions } : {}),
          ...(options.offline ? { offline: true } : {}),
          ...grants,
        };
        for (const issue of validateRecipe(doc, file, checks).issues) fileIssue(issue.path, issue.message);
        cells = matrixCells(doc);
      } else {
        const { issues: scriptIssues } = validateEpisodeScript(doc);
        for (const issue of scriptIssues) fileIssue(issue.path, issue.message);
        for (const issue of episodeScriptHostAccess(doc, dirname(file), resolveHostAccess(dirname(file), grants)).issues) fileIssue(issue.path, issue.message);
        if (scriptIssues.length === 0) checkEpisodeRuntime(doc as EpisodeLike, options, fileIssue);
      }
    }
    if (!lineValid || issues.length > before) return;
    const base = { line, kind, ...(backend !== undefined ? { backend } : {}), file, ...(timeoutMs !== undefined && timeoutMs > 0 ? { timeoutMs } : {}), ...(hasGrants ? { grants } : {}) };
    if (!cells) {
      tasks.push({ id: task.id!, ...base, runtime });
      return;
    }
    // A matrix recipe: one task per cell, its versions as overrides.
    for (const cell of cells) {
      const id = `${task.id}.${matrixCellId(cell)}`;
      if (id.length > BATCH_TASK_ID_MAX_LENGTH) {
        at("/id", `with the matrix cell ${matrixCellId(cell)} the task id ${id} is longer than ${BATCH_TASK_ID_MAX_LENGTH} characters; shorten the id`);
        continue;
      }
      tasks.push({ id, ...base, runtime: { ...runtime, ...cell }, matrix: { task: task.id!, wp: cell.wp ?? null, php: cell.php ?? null } });
    }
  });
  // Matrix cells add ids of their own; they must not collide with another line's.
  const owner = new Map<string, ResolvedTask>();
  for (const t of tasks) {
    const first = owner.get(t.id);
    if (first) issues.push({ line: t.line, pointer: "/id", message: `${t.matrix ? `its matrix cell id ${t.id}` : `the id ${t.id}`} is also the id of ${first.matrix ? "a matrix cell of " : ""}line ${first.line}: ids name bundle folders and queue jobs, so they must be unique` });
    else owner.set(t.id, t);
  }
  const unique = [...new Map(issues.map((i) => [`${i.line} ${i.pointer} ${i.message}`, i])).values()];
  issues.splice(0, issues.length, ...unique);
  if (tasks.length === 0 && issues.length === 0) issues.push({ line: 0, pointer: "", message: "the task file has no tasks" });
  return { path, valid: issues.length === 0, tasks: issues.length === 0 ? tasks : [], issues };
}

/**
 * Reads and validates a task file (see `validateTaskLines`).
 * @throws WpCodeboxError `invalid-batch` when the file does not exist; `input-file-invalid` /
 *   `input-file-too-large` when it is not a regular file or is over 16 MiB.
 */
export function validateTaskFile(path: string, options: TaskFileOptions = {}): TaskFileValidation {
  let text: string;
  try {
    text = readInputTextSync(path, "task-file");
  } catch (error) {
    if (!isMissingInputFile(error)) throw error;
    throw new WpCodeboxError("invalid-batch", `Cannot read the task file ${path}: it does not exist. Pass a JSONL file, one task a line.`, { path });
  }
  return validateTaskLines(text, dirname(path), options, path);
}

/** `path:line pointer: message` lines of a failed validation. */
export function formatTaskFileIssues(validation: Pick<TaskFileValidation, "path" | "issues">): string {
  return validation.issues.map((i) => `  ${validation.path}:${i.line} ${i.pointer || "/"}: ${i.message}`).join("\n");
}

/**
 * Throws unless the task file is valid.
 * @throws WpCodeboxError `invalid-batch` listing every issue (exit 2); nothing has run.
 */
export function assertValidTaskFile(validation: TaskFileValidation): ResolvedTask[] {
  if (!validation.valid) {
    throw new WpCodeboxError(
      // A path or network a task may not reach is refused under its own code.
      hostAccessCode(validation.issues, "invalid-batch"),
      `${validation.path} has ${validation.issues.length} problem(s); nothing ran:\n${formatTaskFileIssues(validation)}\nwp-codebox schema batch-task prints the JSON Schema of one line.`,
      { issues: validation.issues },
    );
  }
  return validation.tasks;
}
