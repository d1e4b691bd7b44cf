/**
 * The boot state of a PHP worker's in-memory file system (Emscripten MEMFS: `/tmp`, `/internal`,
 * everything not mounted from the host), so a warm pool can hand a worker to its next session
 * as it was at boot without booting a new one (~1–2 s).
 *
 * `capture()` remembers every in-memory node that exists when the worker is ready and, from then
 * on, watches the file system calls that change something (open for writing, write, truncate,
 * rename, unlink, rmdir, chmod, chown, utime). `restore()` then:
 * - refuses (returns `restored: false`) when any node that existed at boot was changed, moved or
 *   removed: their bytes are not kept, so only a new worker brings them back;
 * - otherwise deletes every node created since (files, links, folders), which makes the in-memory
 *   file system equal to the boot state again, and says which PHP files it deleted (OPcache may
 *   still hold their compiled code).
 * Host mounts (`/wordpress`, wp-content, `/workspace`, the caller's mounts) are not in-memory nodes
 * and are left alone; php-wasm's own per-request files (`/request/*`, `/internal/eval.php`) too.
 * In a cache folder (`cacheDirs`: OPcache's file cache) a file there at boot may be deleted or
 * rewritten (OPcache drops entries it cannot use and writes a script's entry again when it
 * recompiles it): `restore()` deletes a rewritten one, since a missing entry is only a cache miss
 * (the script is compiled again), whereas keeping it would keep a session's bytes.
 */

/** The part of an Emscripten FS node this module reads. */
interface FsNode {
  name: string;
  mode: number;
  parent: FsNode;
  mount: { mountpoint: string };
  mounted: unknown;
  contents?: Record<string, FsNode> | Uint8Array | null;
}

interface FsStream {
  node?: FsNode;
}

/** The part of Emscripten's `FS` object this module uses and wraps. */
export interface EmscriptenFs {
  root: FsNode;
  cwd(): string;
  chdir(path: string): void;
  lookupPath(path: string, options?: { follow?: boolean }): { node: FsNode | null };
  getPath(node: FsNode): string;
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  unlink(path: string): void;
  rmdir(path: string): void;
  readdir(path: string): string[];
  [method: string]: unknown;
}

const O_ACCMODE = 3;
const O_CREAT = 0o100;
const O_TRUNC = 0o1000;

/** php-wasm's own scratch files, rewritten at every request: neither state nor something a session leaves. */
const SCRATCH_PATHS = ["/request", "/internal/eval.php"];

function isScratch(path: string): boolean {
  return SCRATCH_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
}

/** What `restore()` did. */
export type MemoryFsRestore =
  | { restored: true; deleted: number; deletedPhpFiles: string[] }
  | { restored: false; reason: string };

export class MemoryFsBootState {
  private readonly bootNodes = new Set<FsNode>();
  private readonly bootPaths = new Map<string, FsNode>();
  private bootCwd = "/";
  private changed: string | undefined;
  /** Boot files in a cache folder written since boot: deleted by `restore()`. */
  private readonly staleCache = new Set<string>();
  private captured = false;

  /**
   * @param fs - php-wasm's Emscripten `FS` object.
   * @param cacheDirs - in-memory folders whose boot files may be deleted (not changed) without
   *   making the boot state unrecoverable.
   */
  constructor(
    private readonly fs: EmscriptenFs,
    private readonly cacheDirs: string[] = [],
  ) {}

  private inCache(path: string): boolean {
    return this.cacheDirs.some((dir) => path.startsWith(`${dir}/`));
  }

  /** Remembers the current in-memory nodes as the boot state and starts watching changes to them. Call once, when the worker is ready. */
  capture(): void {
    if (this.captured) return;
    this.captured = true;
    this.bootCwd = this.fs.cwd();
    this.walk(this.fs.root, "", (node, path) => {
      this.bootNodes.add(node);
      this.bootPaths.set(path, node);
    });
    this.watch();
  }

  /** See the module comment. Never throws: a failure is `restored: false` with the reason. */
  restore(): MemoryFsRestore {
    if (!this.captured) return { restored: false, reason: "the boot state was never captured" };
    if (this.changed !== undefined) return { restored: false, reason: `${this.changed} (there at boot) was changed` };
    try {
      const added: Array<{ path: string; dir: boolean }> = [];
      this.walk(this.fs.root, "", (node, path) => {
        if (!this.bootNodes.has(node)) added.push({ path, dir: this.fs.isDir(node.mode) });
      });
      for (const [path, node] of this.bootPaths) {
        if (this.inCache(path)) {
          if (this.staleCache.has(path) && this.bootNodes.has(node)) added.push({ path, dir: false });
          continue;
        }
        let now: FsNode | null = null;
        try {
          now = this.fs.lookupPath(path, { follow: false }).node;
        } catch {
          now = null;
        }
        if (now !== node) return { restored: false, reason: `${path} (there at boot) was moved or removed` };
      }
      // Children before their folders; a new folder's new children are in `added` too.
      added.sort((a, b) => b.path.length - a.path.length);
      const deletedPhpFiles: string[] = [];
      for (const { path, dir } of added) {
        if (dir) this.fs.rmdir(path);
        else if (this.staleCache.has(path)) {
          // A rewritten cache entry: gone for good (a cache miss), no longer a boot node.
          try {
            this.fs.unlink(path);
          } catch {
            // deleted by OPcache already
          }
          this.bootNodes.delete(this.bootPaths.get(path)!);
          this.bootPaths.delete(path);
        } else {
          this.fs.unlink(path);
          if (path.endsWith(".php")) deletedPhpFiles.push(path);
        }
      }
      // A deleted folder may have been the working directory.
      try {
        this.fs.chdir(this.bootCwd);
      } catch {
        // the boot cwd is a boot node, unchanged (checked above)
      }
      this.staleCache.clear();
      return { restored: true, deleted: added.length, deletedPhpFiles };
    } catch (error) {
      return { restored: false, reason: `the in-memory file system could not be put back: ${(error as Error).message}` };
    }
  }

  /** Calls `visit` for every in-memory node under `node` (depth first, parents first), skipping mount points and scratch files. */
  private walk(node: FsNode, path: string, visit: (node: FsNode, path: string) => void): void {
    if (!this.fs.isDir(node.mode) || !node.contents || node.contents instanceof Uint8Array) return;
    for (const [name, child] of Object.entries(node.contents)) {
      const childPath = `${path}/${name}`;
      // A mount point's node belongs to the in-memory parent, but what is mounted there does not.
      if (child.mounted || isScratch(childPath)) continue;
      visit(child, childPath);
      this.walk(child, childPath, visit);
    }
  }

  private boot(node: FsNode | null | undefined, what: string): void {
    if (!node || this.changed !== undefined || !this.bootNodes.has(node)) return;
    const path = this.fs.getPath(node);
    if (this.inCache(path) && this.fs.isFile(node.mode)) this.staleCache.add(path);
    else this.changed = what;
  }

  private bootAt(path: unknown, follow = true): FsNode | null {
    if (typeof path !== "string") return (path as FsNode | null) ?? null;
    try {
      return this.fs.lookupPath(path, { follow }).node;
    } catch {
      return null;
    }
  }

  private watch(): void {
    const fs = this.fs;
    const wrap = (name: string, before: (...args: unknown[]) => void) => {
      const original = fs[name];
      if (typeof original !== "function") return;
      fs[name] = function (this: unknown, ...args: unknown[]) {
        before(...args);
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      };
    };
    wrap("open", (path, flags) => {
      const writes = typeof flags === "string" ? !/^r$/.test(flags) : typeof flags === "number" && ((flags & O_ACCMODE) !== 0 || (flags & (O_CREAT | O_TRUNC)) !== 0);
      if (writes) this.boot(this.bootAt(path), `open for writing ${typeof path === "string" ? path : ""}`);
    });
    wrap("write", (stream) => this.boot((stream as FsStream | undefined)?.node, "a write"));
    wrap("truncate", (path) => this.boot(this.bootAt(path), `truncate ${String(path)}`));
    wrap("ftruncate", (fd) => {
      const stream = (fs.getStream as ((fd: number) => FsStream | undefined) | undefined)?.(fd as number);
      this.boot(stream?.node, "truncate");
    });
    wrap("unlink", (path) => {
      if (typeof path === "string" && this.inCache(path)) return;
      this.boot(this.bootAt(path, false), `unlink ${String(path)}`);
    });
    for (const name of ["rmdir", "chmod", "lchmod", "chown", "lchown", "utime"]) {
      wrap(name, (path) => this.boot(this.bootAt(path, name !== "rmdir" && !name.startsWith("l")), `${name} ${String(path)}`));
    }
    for (const name of ["fchmod", "fchown"]) {
      wrap(name, (fd) => this.boot((fs.getStream as ((fd: number) => FsStream | undefined) | undefined)?.(fd as number)?.node, name));
    }
    wrap("rename", (from, to) => {
      this.boot(this.bootAt(from, false), `rename ${String(from)}`);
      this.boot(this.bootAt(to, false), `rename onto ${String(to)}`);
    });
  }
}
