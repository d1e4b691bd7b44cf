/**
 * A task's fingerprint: a digest of everything the task reads, so that a resumed batch keeps a
 * finished bundle only when running the task again would read the same inputs.
 *
 * It covers the task-file entry (kind, file path, runtime overrides, timeout, matrix cell), the
 * bytes of the recipe or episode script, the content of every plugin, theme and mount the file
 * names and of every file an argument reads (`@file` JSON payloads, `path` args, an episode's
 * own WordPress zip or directory), the WordPress and PHP versions the backend resolves the task
 * to (offline: the backend's preflight reads only bundled builds and the cache), and the version
 * of this tool. Directories are walked in sorted order without following symlinks (a link
 * contributes its target text), so the digest depends only on content, not on walk order,
 * timestamps or inode numbers.
 */
import { createHash, type Hash } from "node:crypto";
import { closeSync, lstatSync, openSync, readFileSync, readSync, readdirSync, readlinkSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import {
  readInputTextSync,
  checkCommandInput,
  flattenCommandArgs,
  getCommandDefinition,
  planRecipe,
  type RuntimeBackend,
  type RuntimeCreateSpec,
} from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { applyRuntimeOverrides, type ResolvedTask } from "./task-file.js";

/** Bounds of the content walk; a walk past `maxEntries` makes the task not resumable. */
export interface FingerprintLimits {
  /** Files, folders and links walked per task, over all inputs; default 100 000. */
  maxEntries: number;
  /**
   * Bytes read for content hashes per task; default 1 GiB. Past it, a file contributes its size
   * and modification time (ms) instead of its content: still deterministic, and an edit still
   * changes the digest.
   */
  maxContentBytes: number;
}

/** The default walk bounds (see `FingerprintLimits`). */
export const DEFAULT_FINGERPRINT_LIMITS: FingerprintLimits = { maxEntries: 100_000, maxContentBytes: 1024 * 1024 * 1024 };

/** Prefix of a fingerprint whose walk hit `maxEntries`: such a task is always run again. */
export const UNRESUMABLE_FINGERPRINT_PREFIX = "unresumable-";

/** Options of `taskFingerprint`. */
export interface TaskFingerprintOptions {
  /** Resolves WordPress and PHP versions without booting; default the Playground backend (offline when `WP_CODEBOX_OFFLINE=1`). */
  backend?: Pick<RuntimeBackend, "preflight">;
  limits?: Partial<FingerprintLimits>;
  /** Tool version mixed into the digest; default this package's version. */
  toolVersion?: string;
}

let ownVersion: string | undefined;
/** This package's version, read once from its package.json. */
export function toolVersion(): string {
  if (ownVersion === undefined) {
    try {
      ownVersion = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string }).version ?? "unknown";
    } catch {
      ownVersion = "unknown";
    }
  }
  return ownVersion;
}

/**
 * A sha256 hex digest of everything `task` reads (see the module comment).
 * @returns 64 hex characters, or `unresumable-<hex>` when an input tree has more entries than
 *   `limits.maxEntries` (such a fingerprint never lets a bundle be kept; see `isResumableFingerprint`).
 *   Never throws for missing or unreadable inputs: they are hashed as such (the run then reports them).
 */
export function taskFingerprint(task: ResolvedTask, options: TaskFingerprintOptions = {}): string {
  const limits = { ...DEFAULT_FINGERPRINT_LIMITS, ...options.limits };
  const hash = createHash("sha256");
  const walk = new ContentWalk(hash, limits);
  const { line: _line, id: _id, ...entry } = task;
  feed(hash, "task", JSON.stringify({ ...entry, timeoutMs: task.timeoutMs ?? null, matrix: task.matrix ?? null }));
  feed(hash, "tool", options.toolVersion ?? toolVersion());
  walk.path("file", task.file);
  let document: unknown;
  try {
    document = applyRuntimeOverrides(JSON.parse(readInputTextSync(task.file, task.kind === "recipe" ? "recipe" : "episode-script")), task.kind, task.runtime);
  } catch {
    document = undefined; // unreadable or not JSON: its bytes (above) are all there is
  }
  if (document !== undefined) {
    const inputs = task.kind === "recipe" ? recipeInputs(document, task.file) : episodeInputs(document, dirname(task.file));
    const backend = options.backend ?? createPlaygroundBackend({ cwd: dirname(task.file), offline: process.env.WP_CODEBOX_OFFLINE === "1" });
    let versions: string;
    try {
      versions = JSON.stringify(backend.preflight?.(inputs.spec) ?? null);
    } catch (error) {
      versions = `refused: ${(error as { code?: string }).code ?? (error as Error).message}`;
    }
    feed(hash, "versions", versions);
    for (const [label, path] of inputs.paths) walk.path(label, path);
  }
  const digest = hash.digest("hex");
  return walk.truncated ? `${UNRESUMABLE_FINGERPRINT_PREFIX}${digest}` : digest;
}

/** False for a fingerprint whose inputs were too large to walk: its task always runs again. */
export function isResumableFingerprint(fingerprint: string): boolean {
  return !fingerprint.startsWith(UNRESUMABLE_FINGERPRINT_PREFIX);
}

interface TaskInputs {
  /** What the backend resolves versions from. */
  spec: RuntimeCreateSpec;
  /** `[label, absolute path]` of every file or tree the task reads, in a fixed order. */
  paths: [string, string][];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

function runtimeSpec(runtime: unknown, wordpressPath?: string): RuntimeCreateSpec {
  const r = isRecord(runtime) ? runtime : {};
  return {
    ...(wordpressPath !== undefined ? { wordpress: { path: wordpressPath } } : typeof r.wp === "string" ? { wordpress: { version: r.wp } } : {}),
    ...(typeof r.php === "string" ? { php: r.php } : {}),
    ...(Array.isArray(r.extensions) ? { extensions: strings(r.extensions) } : {}),
  };
}

/** The files a command's resolved args read: `@file` JSON payloads and `path` args. */
function argFiles(command: string, args: readonly string[], label: string): [string, string][] {
  let definition;
  try {
    definition = getCommandDefinition(command);
  } catch {
    return [];
  }
  const out: [string, string][] = [];
  for (const raw of args) {
    const eq = raw.indexOf("=");
    if (eq <= 0) continue;
    const key = raw.slice(0, eq);
    const value = raw.slice(eq + 1);
    const spec = definition.args.find((a) => a.name === key);
    if (spec?.format === "json" && value.startsWith("@") && isAbsolute(value.slice(1))) out.push([`${label}/${key}`, value.slice(1)]);
    else if (spec?.format === "path" && isAbsolute(value)) out.push([`${label}/${key}`, value]);
  }
  return out;
}

function recipeInputs(document: unknown, file: string): TaskInputs {
  const runtime = isRecord(document) ? document.runtime : undefined;
  let plan;
  try {
    // No processEnv: secret values are not read (a queue submitter does not have them).
    plan = planRecipe(document, file);
  } catch {
    return { spec: runtimeSpec(runtime), paths: [] }; // invalid: the run refuses it; the file bytes are hashed
  }
  const paths: [string, string][] = plan.inputs.resolvedMounts.map((m, i) => [`mount/${i}`, m.source]);
  for (const step of [...plan.setup, ...plan.steps]) paths.push(...argFiles(step.command, step.args, step.pointer));
  return { spec: runtimeSpec(runtime), paths };
}

function episodeInputs(document: unknown, baseDir: string): TaskInputs {
  const script = isRecord(document) ? document : {};
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  const runtime = isRecord(script.runtime) ? script.runtime : {};
  const wordpressPath = typeof runtime.wordpress === "string" ? abs(runtime.wordpress) : undefined;
  const paths: [string, string][] = [];
  if (wordpressPath !== undefined) paths.push(["wordpress", wordpressPath]);
  (Array.isArray(script.mounts) ? script.mounts : []).forEach((m, i) => {
    if (isRecord(m) && typeof m.source === "string") paths.push([`mount/${i}`, abs(m.source)]);
  });
  strings(script.plugins).forEach((p, i) => paths.push([`plugin/${i}`, abs(p)]));
  strings(script.themes).forEach((t, i) => paths.push([`theme/${i}`, abs(t)]));
  (Array.isArray(script.steps) ? script.steps : []).forEach((step, i) => {
    const action = isRecord(step) && isRecord(step.action) ? step.action : undefined;
    if (!action || typeof action.command !== "string") return;
    try {
      const flat = flattenCommandArgs(action.command, action.args as Record<string, unknown> | string[] | undefined);
      paths.push(...argFiles(action.command, checkCommandInput(action.command, flat.args, baseDir).args, `/steps/${i}`));
    } catch {
      // an invalid step: the run refuses it before boot
    }
  });
  return { spec: runtimeSpec(runtime, wordpressPath), paths };
}

/** Length-prefixed, so that no two different sequences of fields hash alike. */
function feed(hash: Hash, label: string, value: string | Buffer): void {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  hash.update(`${label}\0${bytes.length}\0`);
  hash.update(bytes);
}

/** A bounded, deterministic walk of files and trees into one hash. */
class ContentWalk {
  entries = 0;
  contentBytes = 0;
  truncated = false;
  constructor(
    private readonly hash: Hash,
    private readonly limits: FingerprintLimits,
  ) {}

  path(label: string, path: string): void {
    feed(this.hash, "input", `${label} ${path}`);
    this.entry("", path);
  }

  private entry(relative: string, path: string): void {
    if (this.truncated) return;
    if (++this.entries > this.limits.maxEntries) {
      this.truncated = true;
      feed(this.hash, "truncated", relative);
      return;
    }
    let stat;
    try {
      stat = lstatSync(path, { bigint: true });
    } catch (error) {
      feed(this.hash, "missing", `${relative} ${(error as NodeJS.ErrnoException).code ?? ""}`);
      return;
    }
    if (stat.isSymbolicLink()) {
      let target = "";
      try {
        target = readlinkSync(path);
      } catch {
        // unreadable link: its name alone
      }
      feed(this.hash, "link", `${relative}\0${target}`);
    } else if (stat.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(path).sort();
      } catch (error) {
        feed(this.hash, "dir-unreadable", `${relative} ${(error as NodeJS.ErrnoException).code ?? ""}`);
        return;
      }
      feed(this.hash, "dir", `${relative}\0${names.length}`);
      for (const name of names) this.entry(relative === "" ? name : `${relative}/${name}`, join(path, name));
    } else if (stat.isFile()) {
      const size = Number(stat.size);
      if (this.contentBytes + size > this.limits.maxContentBytes) {
        feed(this.hash, "file-stat", `${relative}\0${size}\0${stat.mtimeNs}`);
        return;
      }
      this.contentBytes += size;
      feed(this.hash, "file", `${relative}\0${size}\0${fileDigest(path)}`);
    } else {
      // A FIFO, socket or device is never opened (reading a FIFO would block).
      feed(this.hash, "special", relative);
    }
  }
}

/** sha256 hex of a regular file, read in chunks so a large file never sits in memory whole. */
function fileDigest(path: string): string {
  const hash = createHash("sha256");
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? ""}`;
  }
  try {
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}
