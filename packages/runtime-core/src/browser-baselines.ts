/**
 * Baseline PNGs of `screenshot` steps with `compare`. A script may come from someone else, and
 * `--update-baselines` writes these files on the host, so each path must name a `.png` inside the
 * script's own folder (symlinks followed); no grant widens that.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { checkHostPath, PATH_NOT_ALLOWED, resolveHostAccess } from "./host-access.js";
import { quoteValue, WpCodeboxError } from "./errors.js";

/** One baseline a script names. */
export interface BrowserBaseline {
  /** Index of the screenshot step. */
  index: number;
  /** The path as the script wrote it. */
  compare: string;
  /** Absolute path with symlinks resolved (of its longest existing prefix). */
  path: string;
}

/** A problem with one baseline path: the step index and a message starting `path-not-allowed:` or naming the field. */
export interface BrowserBaselineIssue {
  index: number;
  message: string;
}

/**
 * The folder `compare` paths resolve against: the script file's folder for `steps-json=@file`
 * (or `actions-json=@file`), else `cwd` (inline steps typed on the command line).
 * @param args - the command's args (a `@file` value may be relative to `cwd`).
 */
export function browserScriptFolder(args: Record<string, string | undefined>, cwd: string): string {
  const value = args["steps-json"] ?? args["actions-json"];
  if (value === undefined || !value.startsWith("@")) return cwd;
  const file = value.slice(1);
  return dirname(isAbsolute(file) ? file : resolve(cwd, file));
}

/**
 * Resolves every `compare` path of `steps` against `folder` and checks it stays inside it.
 * @returns `{ baselines, issues }`: one baseline per allowed path, one issue per refused one
 *   (absolute, outside the folder, through a symlink out of it: `path-not-allowed`; else not
 *   ending in `.png`).
 */
export function checkBrowserBaselines(steps: readonly { kind: string; compare?: unknown }[], folder: string): { baselines: BrowserBaseline[]; issues: BrowserBaselineIssue[] } {
  const access = resolveHostAccess(folder);
  const baselines: BrowserBaseline[] = [];
  const issues: BrowserBaselineIssue[] = [];
  steps.forEach((step, index) => {
    if (step.kind !== "screenshot" || typeof step.compare !== "string") return;
    const compare = step.compare;
    if (compare.includes("\0")) {
      issues.push({ index, message: "compare contains a NUL byte" });
      return;
    }
    // Where a path points is checked before what it names, so every escape is `path-not-allowed`.
    if (isAbsolute(compare)) {
      issues.push({ index, message: `${PATH_NOT_ALLOWED}: compare ${quoteValue(compare)} is an absolute path; name the baseline relative to the script's folder ${access.folder} (a path such as baselines/home.png).` });
      return;
    }
    const checked = checkHostPath(resolve(folder, compare), access);
    if (!checked.allowed) {
      issues.push({
        index,
        message: `${PATH_NOT_ALLOWED}: baseline ${checked.real} is outside the script's folder ${access.folder}; baselines live beside the script (a path such as baselines/home.png).`,
      });
      return;
    }
    if (!/\.png$/i.test(compare)) {
      issues.push({ index, message: `compare ${quoteValue(compare)} must name a .png file` });
      return;
    }
    baselines.push({ index, compare, path: checked.real });
  });
  return { baselines, issues };
}

/**
 * {@link checkBrowserBaselines}, throwing on the first refused path.
 * @returns the baselines by step index.
 * @throws WpCodeboxError `path-not-allowed` (a path outside the folder) or `invalid-steps-json`
 *   (not a `.png`), with `data.issues` listing every problem as `{ index, message }`.
 */
export function assertBrowserBaselines(steps: readonly { kind: string; compare?: unknown }[], folder: string): Map<number, BrowserBaseline> {
  const { baselines, issues } = checkBrowserBaselines(steps, folder);
  if (issues.length) {
    const code = issues.some((i) => i.message.startsWith(`${PATH_NOT_ALLOWED}:`)) ? PATH_NOT_ALLOWED : "invalid-steps-json";
    throw new WpCodeboxError(code, `The browser script names baselines it may not use:\n${issues.map((i) => `/${i.index}/compare: ${i.message}`).join("\n")}`, { issues: issues.map((i) => ({ ...i })) });
  }
  return new Map(baselines.map((b) => [b.index, b]));
}
