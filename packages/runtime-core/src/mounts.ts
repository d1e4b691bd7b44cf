/**
 * Mount validation, done before boot: a mount makes a host path visible inside the
 * sandbox and nothing else, so targets stay inside the sandbox and no symlink leads out.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { WpCodeboxError, quoteValue } from "./errors.js";
import { assertNoNulByte, specialFileType } from "./input-files.js";
import type { MountMode, MountSpec, ResolvedMount } from "./runtime.js";

/** Sandbox prefixes a mount target may lie under (`/workspace` itself is allowed too). */
export const MOUNT_TARGET_ROOTS = ["/wordpress/wp-content/", "/workspace/"] as const;

/** The one sandbox folder that may not be a mount target itself (only folders below it). */
const WP_CONTENT = "/wordpress/wp-content";
/** Where the site's own storage lives: the SQLite database folder and its db.php drop-in. */
const SITE_STORAGE_TARGETS = [`${WP_CONTENT}/database`, `${WP_CONTENT}/db.php`] as const;

const MODES: readonly MountMode[] = ["readonly", "readwrite"];

/**
 * Validates mounts and resolves their sources, before any boot.
 * Checks, in order, each with its own code:
 * - `invalid-mount`: not an object, empty source/target, a NUL byte in either, a target that is
 *   the whole `/wordpress/wp-content`, mode not `readonly`|`readwrite`, two
 *   mounts with the same target, a file at `/workspace`, or a mount under `/workspace/` beside a
 *   read-write mount of the whole `/workspace`;
 * - `mount-escape`: the target has a `..` segment;
 * - `mount-target-outside-sandbox`: the target is not absolute under `/wordpress/wp-content/…` or
 *   `/workspace/…` (or exactly `/workspace`);
 * - `mount-source-missing`: the source does not exist;
 * - `mount-symlink-escape`: a symlink inside the source tree resolves outside the source
 *   (`data.link` names the link's host path);
 * - `mount-special-file`: the source is, or its tree holds, a FIFO, socket or device
 *   (`data.file`, `data.fileType`).
 * @param specs - mounts as given (sources relative to `cwd` or absolute).
 * @param cwd - directory relative sources are resolved against.
 * @returns mounts with the real absolute `source`, normalised `target` (no trailing slash) and
 *   `kind` (`file` | `directory`), in input order.
 * @throws WpCodeboxError with one of the codes above (the first problem found).
 */
export function resolveMounts(specs: readonly MountSpec[], cwd: string): ResolvedMount[] {
  const resolved: ResolvedMount[] = [];
  const seen = new Map<string, number>();
  specs.forEach((spec, index) => {
    const mount = resolveMount(spec, cwd, index);
    const previous = seen.get(mount.target);
    if (previous !== undefined) {
      throw new WpCodeboxError(
        "invalid-mount",
        `Mounts #${previous} and #${index} both target ${mount.target}: give each mount its own target.`,
        { target: mount.target, indexes: [previous, index] },
      );
    }
    seen.set(mount.target, index);
    resolved.push(mount);
  });
  // A read-write /workspace is the host folder itself: a mount inside it would create its mount
  // point in that folder (or, read-only, be hidden under it).
  const file = resolved.findIndex((m) => m.target === "/workspace" && m.kind === "file");
  if (file !== -1) {
    throw new WpCodeboxError("invalid-mount", `Mount #${file} puts the file ${resolved[file]!.source} at /workspace, which is a folder: mount it at /workspace/<name>.`, { target: "/workspace", index: file });
  }
  const whole = resolved.findIndex((m) => m.target === "/workspace" && m.mode === "readwrite");
  const inside = resolved.findIndex((m) => m.target.startsWith("/workspace/"));
  if (whole !== -1 && inside !== -1) {
    throw new WpCodeboxError(
      "invalid-mount",
      `Mount #${inside} (${resolved[inside]!.target}) lies inside the read-write mount #${whole} of the whole /workspace: put its files in ${resolved[whole]!.source} instead, or mount /workspace read-only (:ro).`,
      { target: resolved[inside]!.target, indexes: [whole, inside] },
    );
  }
  return resolved;
}

function resolveMount(spec: MountSpec, cwd: string, index: number): ResolvedMount {
  if (typeof spec !== "object" || spec === null || typeof spec.source !== "string" || typeof spec.target !== "string" || !spec.source || !spec.target) {
    throw new WpCodeboxError("invalid-mount", `Mount #${index} needs a non-empty "source" (host path) and "target" (sandbox path).`, { index });
  }
  if (!MODES.includes(spec.mode)) {
    throw new WpCodeboxError(
      "invalid-mount",
      `Mount #${index} (${quoteValue(spec.target)}) has mode ${quoteValue(String(spec.mode))}: use "readonly" or "readwrite".`,
      { index, mode: String(spec.mode) },
    );
  }
  assertNoNulByte(spec.source, `Mount #${index} source`, "invalid-mount");
  const target = normalizeMountTarget(spec.target);
  const hostSource = isAbsolute(spec.source) ? spec.source : resolve(cwd, spec.source);
  let source: string;
  let kind: ResolvedMount["kind"];
  let special: string | undefined;
  try {
    source = realpathSync(hostSource);
    const stats = statSync(source);
    kind = stats.isDirectory() ? "directory" : "file";
    special = kind === "file" ? specialFileType(stats) : undefined;
  } catch {
    throw new WpCodeboxError(
      "mount-source-missing",
      `Mount source ${quoteValue(hostSource)} does not exist: create it or fix the path (relative paths are resolved against ${cwd}).`,
      { index, source: hostSource },
    );
  }
  if (special) throw specialFileError(hostSource, hostSource, special);
  if (kind === "directory") assertNoSymlinkEscape(source, hostSource);
  return { ...spec, source, target, mode: spec.mode, kind };
}

/**
 * Normalises and checks a sandbox target path.
 * @returns the target with duplicate slashes, `.` segments and a trailing slash removed.
 * @throws WpCodeboxError `mount-escape` (a `..` segment) or `mount-target-outside-sandbox`.
 */
export function normalizeMountTarget(target: string): string {
  assertNoNulByte(target, "Mount target", "invalid-mount");
  const segments = target.split(/[/\\]/);
  if (segments.includes("..")) {
    throw new WpCodeboxError(
      "mount-escape",
      `Mount target ${quoteValue(target)} contains "..": write the sandbox path without parent segments, under /wordpress/wp-content/ or /workspace/.`,
      { target },
    );
  }
  const normalized = target.startsWith("/") ? posix.normalize(target).replace(/\/+$/, "") : target;
  if (normalized === WP_CONTENT && !target.includes("\\")) {
    throw new WpCodeboxError(
      "invalid-mount",
      `Mount target ${quoteValue(target)} is the whole of ${WP_CONTENT}, which cannot be replaced: it holds the site's SQLite database and its db.php drop-in, so WordPress would not boot. Mount a folder below it instead, e.g. ${WP_CONTENT}/plugins/<name>, ${WP_CONTENT}/themes/<name> or ${WP_CONTENT}/uploads/<name>.`,
      { target },
    );
  }
  const reserved = SITE_STORAGE_TARGETS.find((t) => normalized === t || normalized.startsWith(`${t}/`));
  if (reserved !== undefined && !target.includes("\\")) {
    throw new WpCodeboxError(
      "invalid-mount",
      `Mount target ${quoteValue(target)} would replace ${reserved}, where the sandbox keeps the site's SQLite database and the db.php drop-in that loads it, so WordPress would not boot. Mount your files elsewhere under ${WP_CONTENT}/ or /workspace/.`,
      { target },
    );
  }
  const inside = normalized === "/workspace" || MOUNT_TARGET_ROOTS.some((root) => normalized.startsWith(root) && normalized.length > root.length);
  if (!inside || target.includes("\\")) {
    throw new WpCodeboxError(
      "mount-target-outside-sandbox",
      `Mount target ${quoteValue(target)} is outside the sandbox: use an absolute path under /wordpress/wp-content/ or /workspace/.`,
      { target },
    );
  }
  return normalized;
}

/** Walks `root` (a real path) and refuses any symlink whose resolved target lies outside it. */
function assertNoSymlinkEscape(root: string, displayRoot: string): void {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        let resolvedTarget: string;
        try {
          resolvedTarget = realpathSync(full);
        } catch {
          // Dangling: judge by the literal link text.
          resolvedTarget = resolve(dirname(full), readlinkSync(full));
        }
        if (!isInside(root, resolvedTarget)) {
          const shown = join(displayRoot, relative(root, full));
          throw new WpCodeboxError(
            "mount-symlink-escape",
            `Symlink ${shown} inside mount source ${displayRoot} points outside it (to ${resolvedTarget}): remove the link or mount its target separately.`,
            { link: shown, resolvesTo: resolvedTarget, source: displayRoot },
          );
        }
      } else if (entry.isDirectory()) {
        stack.push(full);
      } else if (!entry.isFile()) {
        // Copying or reading it at boot would block (a FIFO) or never end (a device).
        const shown = join(displayRoot, relative(root, full));
        throw specialFileError(shown, displayRoot, specialFileType(lstatSync(full)) ?? "not a regular file");
      }
    }
  }
}

function specialFileError(file: string, source: string, type: string): WpCodeboxError {
  return new WpCodeboxError(
    "mount-special-file",
    `${file === source ? `Mount source ${quoteValue(source)}` : `${quoteValue(file)} inside mount source ${quoteValue(source)}`} is ${type}: a mount holds only regular files, folders and symlinks. Remove it or mount a folder without it.`,
    { file, source, fileType: type },
  );
}

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * Parses the CLI flag `--mount SRC:TARGET[:ro|:rw]` (also `:readonly`/`:readwrite`). The split is
 * at the last `:` followed by `/`, so sources may contain `:`. Without a mode suffix the mount is
 * `readwrite` (as `[:ro]` in the flag syntax implies).
 * @throws WpCodeboxError `invalid-mount` when there is no `:/TARGET` part.
 * @example parseMountFlag("./data:/workspace/data:ro") // { source: "./data", target: "/workspace/data", mode: "readonly" }
 */
export function parseMountFlag(flag: string): MountSpec {
  let rest = flag;
  let mode: MountMode = "readwrite";
  const suffix = /:(ro|rw|readonly|readwrite)$/.exec(rest);
  if (suffix) {
    mode = suffix[1] === "ro" || suffix[1] === "readonly" ? "readonly" : "readwrite";
    rest = rest.slice(0, suffix.index);
  }
  const split = rest.lastIndexOf(":/");
  // A colon after the target is a mode we do not know (":RO", ":rx"): refuse it rather than
  // silently mounting read-write at a path ending in ":RO".
  if (split > 0 && rest.slice(split + 1).includes(":")) {
    throw new WpCodeboxError(
      "invalid-mount",
      `--mount ${quoteValue(flag)}: unknown mode ${quoteValue(rest.slice(rest.lastIndexOf(":") + 1))}; use :ro (read-only copy) or :rw (shared with the host; the default).`,
      { flag },
    );
  }
  if (split <= 0) {
    throw new WpCodeboxError(
      "invalid-mount",
      `--mount ${quoteValue(flag)}: expected SRC:TARGET[:ro|:rw] with an absolute sandbox TARGET, e.g. ./data:/workspace/data:ro.`,
      { flag },
    );
  }
  return { source: rest.slice(0, split), target: rest.slice(split + 1), mode };
}

/** `--plugin PATH` → readonly mount at `/wordpress/wp-content/plugins/<basename>`. */
export function pluginMount(path: string, cwd: string = process.cwd()): MountSpec {
  return { source: path, target: `/wordpress/wp-content/plugins/${basename(resolve(cwd, path))}`, mode: "readonly" };
}

/** `--theme PATH` → readonly mount at `/wordpress/wp-content/themes/<basename>`. */
export function themeMount(path: string, cwd: string = process.cwd()): MountSpec {
  return { source: path, target: `/wordpress/wp-content/themes/${basename(resolve(cwd, path))}`, mode: "readonly" };
}
