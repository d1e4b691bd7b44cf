/**
 * Plugin and theme requirements, read on the host before anything boots: `Requires at least`
 * (WordPress) and `Requires PHP` from a plugin's main file header (else its readme.txt) or a
 * theme's style.css, read the way WordPress reads file headers (the first 8 KiB, one
 * `Name: value` line). A sandbox that does not meet them is refused with `plugin-requirements`,
 * naming the versions and the flag that fixes it, instead of failing inside activation.
 */
import { existsSync, openSync, readSync, closeSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { WpCodeboxError } from "./errors.js";

/** What one plugin or theme declares it needs. */
export interface DeclaredRequirements {
  kind: "plugin" | "theme";
  /** Folder (or single-file plugin) name, as under wp-content/plugins|themes. */
  name: string;
  /** `Requires at least`, when declared. */
  wordpress?: string;
  /** `Requires PHP`, when declared. */
  php?: string;
  /** Host file each came from. */
  sources: { wordpress?: string; php?: string };
}

/** One requirement the sandbox does not meet. */
export interface UnmetRequirement {
  kind: "plugin" | "theme";
  name: string;
  /** `wordpress` (`Requires at least`) or `php` (`Requires PHP`). */
  requirement: "wordpress" | "php";
  required: string;
  /** What the sandbox runs. */
  actual: string;
  /** Host file that declares it. */
  source: string;
  /** The flag that fixes it: `--wp 7.0`, `--php 8.4`. */
  fix: string;
  /** False when the backend offers no PHP version that meets it (so `fix` names one that does not exist here). */
  fixAvailable?: boolean;
}

/** WordPress reads a file header from the first 8 KiB only. */
const HEADER_BYTES = 8192;

function head(path: string): string {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const n = readSync(fd, buffer, 0, HEADER_BYTES, 0);
    return buffer.subarray(0, n).toString("utf8").replace(/\r\n?/g, "\n");
  } finally {
    closeSync(fd);
  }
}

/**
 * The value of header `name` in `text` as WordPress's `get_file_data()` reads it (case-insensitive,
 * after comment markers, a trailing `*\/` dropped), or undefined when absent or empty.
 */
export function fileHeader(text: string, name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`^(?:[ \\t]*<\\?php)?[ \\t/*#@]*${escaped}:(.*)$`, "mi").exec(text);
  const value = match?.[1]?.replace(/\s*(?:\*\/|\?>).*/, "").trim();
  return value ? value : undefined;
}

/** The plugin's main file: the file itself for a single-file plugin, else the first top-level `.php` with a `Plugin Name` header (as `get_plugins()` finds it). */
function pluginMainFile(path: string): string | undefined {
  if (statSync(path).isFile()) return path;
  for (const entry of readdirSync(path).sort()) {
    if (!entry.endsWith(".php")) continue;
    const file = join(path, entry);
    if (statSync(file).isFile() && fileHeader(head(file), "Plugin Name")) return file;
  }
  return undefined;
}

/**
 * What a plugin (folder or single file) or theme folder on the host declares. The plugin header
 * wins over readme.txt, as in WordPress's `validate_plugin_requirements()`.
 */
export function readDeclaredRequirements(kind: "plugin" | "theme", hostPath: string): DeclaredRequirements {
  const found: DeclaredRequirements = { kind, name: basename(hostPath), sources: {} };
  const files: string[] = [];
  if (kind === "plugin") {
    const main = pluginMainFile(hostPath);
    if (main) files.push(main);
    const readme = join(hostPath, "readme.txt");
    if (statSync(hostPath).isDirectory() && existsSync(readme)) files.push(readme);
  } else {
    const style = join(hostPath, "style.css");
    if (existsSync(style)) files.push(style);
  }
  for (const file of files) {
    const text = head(file);
    const wp = fileHeader(text, "Requires at least");
    const php = fileHeader(text, "Requires PHP");
    if (wp && found.wordpress === undefined) Object.assign(found, { wordpress: wp }), (found.sources.wordpress = file);
    if (php && found.php === undefined) Object.assign(found, { php }), (found.sources.php = file);
  }
  return found;
}

/** The numeric parts of a version (`7.0.4-RC1` → [7, 0, 4]); undefined when it does not start with a number. */
function versionParts(version: string): number[] | undefined {
  const match = /^\s*v?(\d+(?:\.\d+)*)/.exec(version);
  return match ? match[1]!.split(".").map(Number) : undefined;
}

/**
 * Whether `actual` meets `required` (`actual >= required`); a missing part is 0 (WordPress 7.0 is
 * 7.0.0). With `partial`, `actual` names only what is known (PHP `8.3`, patch level unknown) and
 * only the parts both name are compared, so `8.3` meets `8.3.5` (WordPress checks it again at
 * activation). Unreadable versions count as met.
 */
export function versionMeets(actual: string, required: string, options: { partial?: boolean } = {}): boolean {
  const a = versionParts(actual);
  const r = versionParts(required);
  if (!a || !r) return true;
  const n = options.partial ? Math.min(a.length, r.length) : Math.max(a.length, r.length);
  for (let i = 0; i < n; i += 1) {
    const [x, y] = [a[i] ?? 0, r[i] ?? 0];
    if (x !== y) return x > y;
  }
  return true;
}

/** A concrete version (`6.5.5`, `7.0`), as opposed to `latest` or `custom:<path>`. */
export function isConcreteVersion(version: string | undefined): version is string {
  return version !== undefined && /^\d+\.\d+(?:\.\d+)?$/.test(version);
}

/**
 * The requirements of `plugins` and `themes` (host paths) that a sandbox of WordPress `wordpress`
 * on PHP `php` does not meet. A version that is not concrete (`latest`, a custom build) is not
 * compared. `phpVersions` (newest first) picks the PHP the fix names: the oldest that meets.
 */
export function unmetRequirements(
  inputs: { plugins?: readonly string[]; themes?: readonly string[] },
  sandbox: { wordpress?: string; php?: string; phpVersions?: readonly string[] },
): UnmetRequirement[] {
  const unmet: UnmetRequirement[] = [];
  const declared = [
    ...(inputs.plugins ?? []).filter((p) => existsSync(p)).map((p) => readDeclaredRequirements("plugin", p)),
    ...(inputs.themes ?? []).filter((t) => existsSync(t)).map((t) => readDeclaredRequirements("theme", t)),
  ];
  for (const d of declared) {
    if (d.wordpress && isConcreteVersion(sandbox.wordpress) && !versionMeets(sandbox.wordpress, d.wordpress)) {
      unmet.push({ kind: d.kind, name: d.name, requirement: "wordpress", required: d.wordpress, actual: sandbox.wordpress, source: d.sources.wordpress!, fix: `--wp ${versionParts(d.wordpress)!.join(".")}` });
    }
    if (d.php && isConcreteVersion(sandbox.php) && !versionMeets(sandbox.php, d.php, { partial: true })) {
      const oldest = [...(sandbox.phpVersions ?? [])].reverse().find((v) => versionMeets(v, d.php!, { partial: true }));
      unmet.push({
        kind: d.kind,
        name: d.name,
        requirement: "php",
        required: d.php,
        actual: sandbox.php,
        source: d.sources.php!,
        fix: `--php ${oldest ?? versionParts(d.php)!.slice(0, 2).join(".")}`,
        ...(sandbox.phpVersions && !oldest ? { fixAvailable: false } : {}),
      });
    }
  }
  return unmet;
}

/** One line per unmet requirement: who needs what, what the sandbox runs, and the flag that fixes it. */
export function describeUnmetRequirement(u: UnmetRequirement): string {
  const what = u.requirement === "wordpress" ? "WordPress" : "PHP";
  const header = u.requirement === "wordpress" ? "Requires at least" : "Requires PHP";
  const fix = u.fixAvailable === false ? `no PHP version available here meets it, so it cannot run in this sandbox` : `pass ${u.fix} (or newer)`;
  return `The ${u.kind} ${u.name} requires ${what} ${u.required} ("${header}" in ${basename(u.source)}), but this sandbox runs ${what} ${u.actual}: ${fix}.`;
}

/**
 * Refuses inputs whose requirements the sandbox does not meet (see `unmetRequirements`).
 * @throws WpCodeboxError `plugin-requirements` (exit 2) naming every unmet requirement, with
 *   `data.unmet: UnmetRequirement[]`.
 */
export function assertRequirementsMet(
  inputs: { plugins?: readonly string[]; themes?: readonly string[] },
  sandbox: { wordpress?: string; php?: string; phpVersions?: readonly string[] },
): void {
  const unmet = unmetRequirements(inputs, sandbox);
  if (unmet.length) throw new WpCodeboxError("plugin-requirements", unmet.map(describeUnmetRequirement).join(" "), { unmet });
}
