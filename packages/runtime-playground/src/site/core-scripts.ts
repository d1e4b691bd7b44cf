/**
 * Which of a WordPress tree's PHP scripts a sandbox worker compiles into OPcache ahead of its first
 * WordPress load (`precompile` of the worker's boot options): the scripts every load includes.
 *
 * They are found by following, from a few entry points, each `require`/`include` outside a
 * function or method body (one inside a function loads a library on demand) whose path is built
 * only from literals and `ABSPATH`, `WPINC`, `BLOCKS_PATH`, `__DIR__` or `dirname( __FILE__ )`.
 * That is how `wp-settings.php` and the loaders it names spell their includes in every release,
 * minified builds included (whole files on one line), so the list follows the release instead of
 * being kept by hand. A script the list misses is compiled when it is first included, as without
 * a list; one it lists needlessly (a multisite file) is compiled and not run.
 */
import { readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";

/**
 * Where the walk starts (relative to the tree): a WordPress load, the admin API run-php loads, the
 * login page a browser script starts at, the widgets every theme's load registers.
 */
const ENTRY_POINTS = ["wp-load.php", "wp-settings.php", "wp-blog-header.php", "index.php", "wp-admin/includes/admin.php", "wp-login.php", "wp-includes/default-widgets.php", "wp-includes/blocks/index.php"];

/** At most this many scripts: a tree whose includes lead everywhere still gets a bounded list. */
const MAX_SCRIPTS = 2000;
/** Scripts larger than this (bytes) are not read for includes (core's largest is ~400 KB). */
const MAX_SCRIPT_BYTES = 4 * 1024 * 1024;

const PATH_PART = /'[^'\\]*'|"[^"\\$]*"|dirname\(\s*__FILE__\s*\)|[A-Za-z_]+|\S/g;

const INCLUDE_KEYWORD = /^(?:require|include)(?:_once)?(?![\w$])/;

/**
 * The path expressions (the text between `require`/`include` and its `;`, outer parentheses
 * removed) of the includes in the PHP source `source` that are not inside a function's or a
 * method's body. A small scanner, not a parser: it skips strings, comments, heredocs and the text
 * outside `<?php … ?>`, and follows `{`/`}` to know when a function body ends.
 */
export function fileLevelIncludes(source: string): string[] {
  const found: string[] = [];
  // For each `{` open now: whether it opened a function body.
  const braces: boolean[] = [];
  let functionBodies = 0;
  let functionPending = false;
  let i = source.indexOf("<?");
  if (i < 0) return found;
  const n = source.length;
  const skipString = (at: number): number => {
    const quote = source[at]!;
    let j = at + 1;
    while (j < n && source[j] !== quote) j += source[j] === "\\" ? 2 : 1;
    return j + 1;
  };
  while (i < n) {
    const c = source[i]!;
    if (c === "'" || c === '"' || c === "`") {
      i = skipString(i);
    } else if (c === "#" || (c === "/" && source[i + 1] === "/")) {
      // A line comment ends at the line's end or at `?>`.
      const eol = source.indexOf("\n", i);
      const close = source.indexOf("?>", i);
      i = close >= 0 && (eol < 0 || close < eol) ? close : eol < 0 ? n : eol;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "?" && source[i + 1] === ">") {
      const open = source.indexOf("<?", i + 2);
      i = open < 0 ? n : open + 2;
    } else if (c === "<" && source.startsWith("<<<", i)) {
      const label = /^<<<[ \t]*(["']?)([A-Za-z_]\w*)\1/.exec(source.slice(i, i + 80));
      if (!label) {
        i += 3;
        continue;
      }
      const end = new RegExp(`\\n[ \\t]*${label[2]}\\b`).exec(source.slice(i + label[0].length));
      i = end ? i + label[0].length + end.index + end[0].length : n;
    } else if (c === "{") {
      braces.push(functionPending);
      if (functionPending) functionBodies += 1;
      functionPending = false;
      i += 1;
    } else if (c === "}") {
      if (braces.pop()) functionBodies -= 1;
      i += 1;
    } else if (c === ";") {
      // `function f();` in an interface or an abstract class has no body.
      functionPending = false;
      i += 1;
    } else if (/[A-Za-z_]/.test(c) && !/[\w$]/.test(source[i - 1] ?? "")) {
      const word = /^[A-Za-z_]\w*/.exec(source.slice(i, i + 40))![0];
      if (word === "function" || word === "fn") functionPending = word === "function";
      const keyword = functionBodies === 0 ? INCLUDE_KEYWORD.exec(word) : null;
      if (keyword && keyword[0] === word) {
        // The expression runs to the next `;` outside a string.
        let j = i + word.length;
        const start = j;
        while (j < n && source[j] !== ";") j = source[j] === "'" || source[j] === '"' ? skipString(j) : j + 1;
        let expr = source.slice(start, j).trim();
        while (expr.startsWith("(") && expr.endsWith(")")) expr = expr.slice(1, -1).trim();
        found.push(expr);
        i = j;
      } else {
        i += word.length;
      }
    } else {
      i += 1;
    }
  }
  return found;
}

/**
 * The include path expression `expr` (the text after `require`) of the script at `from` (relative
 * to the tree), resolved to a path relative to the tree; undefined when any part of it is not a
 * literal or one of the constants named in the module comment.
 */
export function resolveIncludePath(expr: string, from: string): string | undefined {
  let path = "";
  for (const part of expr.match(PATH_PART) ?? []) {
    if (part === ".") continue;
    if (part === "ABSPATH") path += "/";
    else if (part === "WPINC") path += "wp-includes";
    else if (part === "BLOCKS_PATH") path += "/wp-includes/blocks/";
    else if (part === "__DIR__" || part.startsWith("dirname")) path += `/${posix.dirname(from)}`;
    else if (part.startsWith("'") || part.startsWith('"')) path += part.slice(1, -1);
    else return undefined;
  }
  if (!path.startsWith("/")) return undefined;
  // Normalised under a stand-in root, so `..` past the tree's root shows instead of being clamped.
  const normal = posix.normalize(`/tree${path}`);
  if (!normal.startsWith("/tree/")) return undefined;
  const rel = normal.slice("/tree/".length);
  return rel.endsWith(".php") ? rel : undefined;
}

/** Whether `rel` is core's: not the site's configuration, nor under wp-content (a sandbox's own code, never shared through OPcache). */
function isCoreScript(rel: string): boolean {
  return rel !== "wp-config.php" && !rel.startsWith("wp-content/");
}

/**
 * The scripts of the WordPress tree at `treeDir` that a WordPress load includes, as paths relative
 * to the tree (`/`-separated), entry points first; scripts that do not exist are left out, and
 * so are `wp-config.php` and everything under `wp-content/` (`isCoreScript`).
 * Never throws: an unreadable script ends that branch of the walk.
 */
export function coreScriptsToPrecompile(treeDir: string): string[] {
  const found = new Set<string>();
  const queue = [...ENTRY_POINTS];
  while (queue.length > 0 && found.size < MAX_SCRIPTS) {
    const rel = queue.shift()!;
    if (found.has(rel) || !isCoreScript(rel)) continue;
    let source: string;
    try {
      const path = join(treeDir, rel);
      const stat = statSync(path);
      if (!stat.isFile() || stat.size > MAX_SCRIPT_BYTES) continue;
      source = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    found.add(rel);
    for (const expr of fileLevelIncludes(source)) {
      const next = resolveIncludePath(expr, rel);
      if (next !== undefined && !found.has(next)) queue.push(next);
    }
  }
  return [...found];
}
