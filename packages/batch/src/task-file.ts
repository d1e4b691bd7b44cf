/**
 * Reading and validating a task file (`tasks.jsonl`, one `wp-codebox/batch-task/v1` object a
 * line). The whole file is checked before anything runs; every problem carries its 1-based line
 * number and a JSON pointer into that line's object.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import {
  BATCH_TASK_SCHEMA,
  RECIPE_PHP_VERSIONS,
  WpCodeboxError,
  parseDuration,
  validateAgainstSchema,
  validateEpisodeScript,
  validateRecipe,
  type BatchTask,
} from "@wp-codebox/runtime-core";

/** One problem of a task file: `line` is 1-based; `pointer` points into that line's JSON object (`""` = the whole line). */
export interface TaskFileIssue {
  line: number;
  pointer: string;
  message: string;
}

/** Per-task overrides of the runtime, as validated. */
export interface TaskRuntimeOverrides {
  wp?: string;
  php?: string;
  clock?: string;
  seed?: number | string;
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
  /** Absolute path of the recipe or episode script. */
  file: string;
  runtime: TaskRuntimeOverrides;
  /** Whole-task wall-clock limit in ms (boot to verified bundle); absent = none. */
  timeoutMs?: number;
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
  /** Bundled WordPress versions (`runtime.wp` must name one); unchecked when absent. */
  wordpressVersions?: readonly string[];
  /** Skip reading the referenced recipes and scripts (pure shape check). */
  skipReferencedFiles?: boolean;
}

function collapseIssues(issues: { path: string; message: string }[]): { path: string; message: string }[] {
  // A union (php, seed, timeout) makes Ajv report one error per branch; keep one clear message per field.
  const byPath = new Map<string, string[]>();
  for (const i of issues) byPath.set(i.path, [...(byPath.get(i.path) ?? []), i.message]);
  return [...byPath].map(([path, messages]) => {
    if (messages.length === 1) return { path, message: messages[0]! };
    if (path === "/runtime/php") return { path, message: `must be one of ${RECIPE_PHP_VERSIONS.join(", ")}` };
    if (path === "/timeout") return { path, message: 'must be a duration such as "90s" or a positive number of ms' };
    if (path === "/runtime/seed") return { path, message: "must be an integer or a non-empty string" };
    return { path, message: [...new Set(messages)].filter((m) => !m.startsWith("must match a schema in anyOf")).join("; ") || "is invalid" };
  });
}

function readJson(path: string): { value?: unknown; error?: string } {
  if (!existsSync(path)) return { error: `${path} does not exist` };
  if (!statSync(path).isFile()) return { error: `${path} is not a file` };
  try {
    return { value: JSON.parse(readFileSync(path, "utf8")) };
  } catch (error) {
    return { error: `${path} is not JSON: ${(error as Error).message}` };
  }
}

/**
 * Applies a task's `wp`/`php` overrides to a parsed recipe or episode script (a copy). An episode's
 * own `runtime.wordpress` path gives way to an explicit `wp`.
 */
export function applyRuntimeOverrides(document: unknown, kind: ResolvedTask["kind"], runtime: TaskRuntimeOverrides): unknown {
  if (!document || typeof document !== "object" || Array.isArray(document)) return document;
  if (runtime.wp === undefined && runtime.php === undefined) return document;
  const doc = { ...(document as Record<string, unknown>) };
  const current = doc.runtime && typeof doc.runtime === "object" && !Array.isArray(doc.runtime) ? { ...(doc.runtime as Record<string, unknown>) } : {};
  if (runtime.wp !== undefined) {
    current.wp = runtime.wp;
    if (kind === "episode") delete current.wordpress;
  }
  if (runtime.php !== undefined) current.php = runtime.php;
  doc.runtime = current;
  return doc;
}

/**
 * Validates task-file text. Checks, per line: JSON, the `batch-task` schema, exactly one of
 * `recipe`/`episode`, a unique id, a valid `timeout`, and (unless `skipReferencedFiles`) that the
 * referenced file exists and is a valid recipe or episode script with the overrides applied
 * (its own problems are listed under `/recipe` or `/episode` with the file's pointer).
 * Blank lines and lines starting with `//` are ignored.
 * @param baseDir - folder relative task paths resolve against (the task file's folder).
 */
export function validateTaskLines(text: string, baseDir: string, options: TaskFileOptions = {}, path = "<tasks>"): TaskFileValidation {
  const issues: TaskFileIssue[] = [];
  const tasks: ResolvedTask[] = [];
  const seen = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("//")) return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
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
    if (typeof clock === "string" && clock !== "real" && Number.isNaN(Date.parse(clock))) at("/runtime/clock", 'must be "real" or an ISO 8601 instant such as "2030-01-01T00:00:00Z"');
    const rel = hasRecipe ? task.recipe : task.episode;
    if (hasRecipe === hasEpisode || typeof rel !== "string" || rel === "") return;
    const kind: ResolvedTask["kind"] = hasRecipe ? "recipe" : "episode";
    const lineValid = issues.length === before;
    const file = isAbsolute(rel) ? rel : resolve(baseDir, rel);
    const runtime: TaskRuntimeOverrides = { ...(task.runtime ?? {}) };
    if (!options.skipReferencedFiles) {
      const pointer = `/${kind}`;
      const read = readJson(file);
      if (read.error) {
        at(pointer, read.error);
        return;
      }
      const doc = applyRuntimeOverrides(read.value, kind, runtime);
      const fileIssues =
        kind === "recipe" ? validateRecipe(doc, file, options.wordpressVersions ? { wordpressVersions: options.wordpressVersions } : {}).issues : validateEpisodeScript(doc).issues;
      if (kind === "episode" && runtime.wp !== undefined && options.wordpressVersions && !options.wordpressVersions.some((v) => v === runtime.wp || v.startsWith(`${runtime.wp}.`))) {
        at("/runtime/wp", `WordPress ${runtime.wp} is not bundled; use one of ${options.wordpressVersions.join(", ")}`);
      }
      for (const issue of fileIssues) {
        // An override's own problem belongs to the task line, not to the file.
        if (issue.path === "/runtime/wp" && runtime.wp !== undefined) at("/runtime/wp", issue.message);
        else if (issue.path === "/runtime/php" && runtime.php !== undefined) at("/runtime/php", issue.message);
        else at(pointer, `${file}#${issue.path}: ${issue.message}`);
      }
    }
    if (!lineValid || issues.length > before) return;
    tasks.push({ id: task.id!, line, kind, file, runtime: { ...(task.runtime ?? {}) }, ...(timeoutMs !== undefined && timeoutMs > 0 ? { timeoutMs } : {}) });
  });
  const unique = [...new Map(issues.map((i) => [`${i.line} ${i.pointer} ${i.message}`, i])).values()];
  issues.splice(0, issues.length, ...unique);
  if (tasks.length === 0 && issues.length === 0) issues.push({ line: 0, pointer: "", message: "the task file has no tasks" });
  return { path, valid: issues.length === 0, tasks: issues.length === 0 ? tasks : [], issues };
}

/**
 * Reads and validates a task file (see `validateTaskLines`).
 * @throws WpCodeboxError `invalid-batch` when the file cannot be read.
 */
export function validateTaskFile(path: string, options: TaskFileOptions = {}): TaskFileValidation {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new WpCodeboxError("invalid-batch", `Cannot read the task file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Pass a JSONL file, one task a line.`, { path });
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
      "invalid-batch",
      `${validation.path} has ${validation.issues.length} problem(s); nothing ran:\n${formatTaskFileIssues(validation)}\nwp-codebox schema batch-task prints the JSON Schema of one line.`,
      { issues: validation.issues },
    );
  }
  return validation.tasks;
}
