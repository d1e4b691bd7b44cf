/**
 * Which of a WordPress tree's PHP scripts a sandbox worker compiles into OPcache ahead of its first
 * WordPress load (`precompile` of the worker's boot options): the scripts every load includes.
 *
 * They are found by following, from a few entry points, each `require`/`include` outside a
 * function or method body (one inside a function loads a library on demand) whose path is built
 * only from literals and `ABSPATH`, `WPINC`, `BLOCKS_PATH`, `__DIR__` or `dirname( __FILE__ )`.
 * That is how `wp-settings.php` and the loaders it names spell their includes in every release,
 * minified builds included (whole files on one line), so the list follows the release instead of
 * being kept by hand, but for a few scripts every load includes from inside a function
 * (`ON_DEMAND_SCRIPTS`). A script the list misses is compiled when it is first included, as without
 * a list; one it lists needlessly (a multisite file) is compiled and not run.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join, posix } from "node:path";

/**
 * Where the walk starts (relative to the tree): a WordPress load, the admin API run-php loads, the
 * login page a browser script starts at, the widgets every theme's load registers.
 */
const ENTRY_POINTS = ["wp-load.php", "wp-settings.php", "wp-blog-header.php", "index.php", "wp-admin/includes/admin.php", "wp-login.php", "wp-includes/default-widgets.php", "wp-includes/blocks/index.php"];

/**
 * Scripts every WordPress load includes from inside a function (the walk does not follow those),
 * seen missing from OPcache at a warm sandbox's first load of 6.5 and 7.0: the database class
 * (the SQLite integration extends it), the object cache, the core blocks' metadata, the Requests
 * library's hooks, and every script of the folders named (core's block patterns, registered on
 * each load). Those a release does not have are left out, as any missing script.
 */
const ON_DEMAND_SCRIPTS = [
  "wp-includes/class-wpdb.php",
  "wp-includes/cache.php",
  "wp-includes/class-wp-object-cache.php",
  "wp-includes/cache-compat.php",
  "wp-includes/blocks/blocks-json.php",
  "wp-includes/blocks/require-static-blocks.php",
  "wp-includes/build/routes/registry.php",
  "wp-includes/Requests/src/Requests.php",
  "wp-includes/Requests/src/Hooks.php",
  "wp-includes/Requests/src/HookManager.php",
  "wp-includes/Requests/src/Utility/InputValidator.php",
];
const ON_DEMAND_FOLDERS = ["wp-includes/block-patterns"];

/** At most this many scripts: a tree whose includes lead everywhere still gets a bounded list. */
const MAX_SCRIPTS = 2000;
/** Scripts larger than this (bytes) are not read for includes (core's largest is ~400 KB). */
const MAX_SCRIPT_BYTES = 4 * 1024 * 1024;

const PATH_PART = /'[^'\\]*'|"[^"\\$]*"|dirname\(\s*__FILE__\s*\)|[A-Za-z_]+|\S/g;

/**
 * The tokens of PHP source `fileLevelIncludes` looks at, in one pass of the regex engine (a loop
 * over characters in JavaScript took ~0.3 s for a release's 500 scripts, on the main thread that
 * answers the installer's file locks): strings, comments, heredocs (label in group 1), text outside
 * `<?php … ?>`, braces and semicolons, and the words `function`, `require`, `include` (not as a
 * variable, a property or a method: `$include`, `->require`, `::function`).
 */
const TOKEN =
  /'(?:[^'\\]|\\[\s\S])*'|"(?:[^"\\]|\\[\s\S])*"|`[^`]*`|(?:\/\/|#)[^\n]*?(?=\?>|\n|$)|\/\*[\s\S]*?(?:\*\/|$)|<<<[ \t]*["']?([A-Za-z_]\w*)["']?[\s\S]*?\n[ \t]*\1\b|\?>[\s\S]*?(?:<\?(?:php|=)?|$)|[{};]|(?<![\w$>:])(?:function|(?:require|include)(?:_once)?)(?!\w)/g;

/**
 * The path expressions (the text between `require`/`include` and its `;`, outer parentheses
 * removed) of the includes in the PHP source `source` that are not inside a function's or a
 * method's body. A small scanner, not a parser: it skips strings, comments, heredocs and the text
 * outside `<?php … ?>`, and follows `{`/`}` to know when a function body ends.
 */
export function fileLevelIncludes(source: string): string[] {
  const found: string[] = [];
  const start = source.indexOf("<?");
  if (start < 0) return found;
  // For each `{` open now: whether it opened a function body.
  const braces: boolean[] = [];
  let functionBodies = 0;
  let functionPending = false;
  // The include whose expression is being read, and where that expression starts.
  let includeAt = -1;
  const tokens = new RegExp(TOKEN.source, "g");
  tokens.lastIndex = start + 2;
  for (let match = tokens.exec(source); match !== null; match = tokens.exec(source)) {
    const token = match[0];
    if (token === ";") {
      if (includeAt >= 0) {
        let expr = source.slice(includeAt, match.index).trim();
        while (expr.startsWith("(") && expr.endsWith(")")) expr = expr.slice(1, -1).trim();
        found.push(expr);
        includeAt = -1;
      }
      // `function f();` in an interface or an abstract class has no body.
      functionPending = false;
    } else if (includeAt >= 0) {
      // Strings and the rest are part of the expression; it ends at its `;`.
    } else if (token === "{") {
      braces.push(functionPending);
      if (functionPending) functionBodies += 1;
      functionPending = false;
    } else if (token === "}") {
      if (braces.pop()) functionBodies -= 1;
    } else if (token === "function") {
      functionPending = true;
    } else if (/^(?:require|include)/.test(token) && functionBodies === 0) {
      includeAt = match.index + token.length;
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
 * Reads the scripts asynchronously, so the thread stays free meanwhile (on a first boot it answers
 * the installer's file locks).
 * Never rejects: an unreadable script ends that branch of the walk.
 */
export async function coreScriptsToPrecompile(treeDir: string): Promise<string[]> {
  const found = new Set<string>();
  const folders = await Promise.all(ON_DEMAND_FOLDERS.map(async (folder) => (await readdir(join(treeDir, folder)).catch(() => [] as string[])).filter((name) => name.endsWith(".php")).sort().map((name) => `${folder}/${name}`)));
  const queue = [...ENTRY_POINTS, ...ON_DEMAND_SCRIPTS, ...folders.flat()];
  while (queue.length > 0 && found.size < MAX_SCRIPTS) {
    const rel = queue.shift()!;
    if (found.has(rel) || !isCoreScript(rel)) continue;
    let source: string;
    try {
      const path = join(treeDir, rel);
      const info = await stat(path);
      if (!info.isFile() || info.size > MAX_SCRIPT_BYTES) continue;
      source = await readFile(path, "utf8");
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
