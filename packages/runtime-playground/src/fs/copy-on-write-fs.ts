/**
 * A copy-on-write host mount for php-wasm: the shared WordPress core (lower layer, never written)
 * under a per-sandbox upper layer, so a sandbox may write anywhere a real site may (`.htaccess`,
 * `wp-config.php`, core files) while every sandbox boots from the same unchanged core.
 *
 * Rules (those of overlay filesystems):
 * - A path resolves to the upper layer when it exists there, else to the lower layer unless a
 *   whiteout hides it (the path, or an ancestor, was deleted, or sits under an opaque directory).
 * - Reading opens the resolved file; nothing is copied.
 * - Opening for writing, truncating, chmod/utime, or renaming copies the entry up first (a file
 *   with its bytes and mode, a directory as an empty directory: its lower children stay visible).
 * - Creating (file, directory, symlink) creates the missing parent directories in the upper layer.
 * - Deleting a lower entry records a whiteout; `rmdir` refuses a directory whose merged listing is
 *   not empty. A directory created where a lower one was deleted is opaque (lower children hidden).
 * - `readdir` merges both layers minus whiteouts.
 * Whiteouts are marker files in a third host folder (`<whiteouts>/<parent>/.wh.<name>`, opaque:
 * `<whiteouts>/<dir>/.wh..opq`), so every PHP worker of the sandbox (each a thread with its own
 * Emscripten filesystem) sees the same state, and snapshots can carry it.
 * Built on Emscripten's NODEFS helpers (errno conversion, stat shaping, fd-based stream ops).
 */
import * as fs from "node:fs";
import { posix } from "node:path";
import type { MountHandler } from "@php-wasm/universal";

const ENOENT = 44;
const ENOTEMPTY = 55;
const ENOTDIR = 54;
/** O_WRONLY | O_RDWR bits as Emscripten tests them. */
const ACCESS_MODE_MASK = 2097155;
const O_RDONLY = 0;
/** O_CREAT | O_TRUNC | O_APPEND. */
const MUTATING_OPEN_FLAGS = 64 | 512 | 1024;
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;

const WHITEOUT_PREFIX = ".wh.";
const OPAQUE_MARKER = ".wh..opq";

/** Host folders of one copy-on-write mount. */
export interface CopyOnWriteLayers {
  /** The shared, read-only tree (WordPress core of the installed-site cache). */
  lower: string;
  /** Per-sandbox folder that receives every change. */
  upper: string;
  /** Per-sandbox folder of whiteout markers (deletions of lower entries). */
  whiteouts: string;
}

type Ops = Record<string, (...args: never[]) => unknown>;
type EmscriptenNode = {
  name: string;
  parent: EmscriptenNode;
  mode: number;
  mount: { opts: { root: string; layers: CopyOnWriteLayers } };
  node_ops: unknown;
  stream_ops: unknown;
};
type EmscriptenStream = { node: EmscriptenNode; flags: number; nfd?: number; shared: { refcount: number } };
type NodeFs = {
  node_ops: Ops;
  stream_ops: Ops;
  createNode(parent: EmscriptenNode | null, name: string, mode: number, dev: number): EmscriptenNode;
  tryFSOperation<T>(f: () => T): T;
  flagsForNode(flags: number): number;
  getattr(func: () => fs.Stats, node: EmscriptenNode): unknown;
  setattr(arg: unknown, node: EmscriptenNode, attr: unknown, chmod: unknown, utimes: unknown, truncate: unknown, stat: unknown): void;
};
type EmscriptenFs = {
  filesystems: { NODEFS: NodeFs };
  ErrnoError: new (errno: number) => Error;
  createNode(parent: EmscriptenNode | null, name: string, mode: number, dev?: number): EmscriptenNode;
  mkdirTree(path: string): void;
  mount(type: unknown, opts: unknown, mountpoint: string): unknown;
  unmount(mountpoint: string): void;
  analyzePath(path: string): { exists: boolean };
};

/** `lstat`, or undefined when nothing is there. Missing entries are the common case (most files live only in the lower layer), so they are answered without an exception. */
function lexists(path: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined; // ENOTDIR: a file where a directory was expected
  }
}

/** Path of `node` relative to the mount root ("" for the root itself). */
function relOf(node: EmscriptenNode): string {
  const parts: string[] = [];
  while (node.parent !== node) {
    parts.push(node.name);
    node = node.parent;
  }
  return parts.reverse().join("/");
}

function join(rel: string, name: string): string {
  return rel ? `${rel}/${name}` : name;
}

/** Overlay resolution and layer changes for one mount (host paths only; no Emscripten state). */
export class CopyOnWriteLayout {
  /**
   * `lstat` of lower-layer paths (null: absent). The lower layer is never written, so what it
   * holds never changes: WordPress stats every file it includes (OPcache checks mtimes), and
   * asking the host again each time cost ~20 ms of every WordPress load.
   */
  private readonly lowerStats = new Map<string, fs.Stats | null>();

  constructor(readonly layers: CopyOnWriteLayers) {}

  private lowerStat(rel: string): fs.Stats | undefined {
    let stat = this.lowerStats.get(rel);
    if (stat === undefined) {
      stat = lexists(this.lowerPath(rel)) ?? null;
      this.lowerStats.set(rel, stat);
    }
    return stat ?? undefined;
  }

  upperPath(rel: string): string {
    return rel ? posix.join(this.layers.upper, rel) : this.layers.upper;
  }

  lowerPath(rel: string): string {
    return rel ? posix.join(this.layers.lower, rel) : this.layers.lower;
  }

  private whiteoutPath(rel: string): string {
    return posix.join(this.layers.whiteouts, posix.dirname(rel) === "." ? "" : posix.dirname(rel), WHITEOUT_PREFIX + posix.basename(rel));
  }

  private opaquePath(rel: string): string {
    return posix.join(this.layers.whiteouts, rel, OPAQUE_MARKER);
  }

  /** True when the lower entry at `rel` is hidden (deleted itself, an ancestor deleted, or under an opaque upper directory). */
  hiddenInLower(rel: string): boolean {
    if (!rel || !fs.existsSync(this.layers.whiteouts)) return false;
    const parts = rel.split("/");
    let prefix = "";
    for (const part of parts) {
      if (fs.existsSync(this.opaquePath(prefix))) return true;
      prefix = join(prefix, part);
      if (fs.existsSync(this.whiteoutPath(prefix))) return true;
    }
    return false;
  }

  /** The host path `rel` resolves to and its `lstat`, or undefined when it does not exist in the merged view. */
  resolveStat(rel: string): { path: string; stat: fs.Stats } | undefined {
    const upper = this.upperPath(rel);
    const upperStat = lexists(upper);
    if (upperStat) return { path: upper, stat: upperStat };
    if (this.hiddenInLower(rel)) return undefined;
    const lowerStat = this.lowerStat(rel);
    return lowerStat ? { path: this.lowerPath(rel), stat: lowerStat } : undefined;
  }

  /** The host path `rel` resolves to, or undefined when it does not exist in the merged view. */
  resolve(rel: string): string | undefined {
    return this.resolveStat(rel)?.path;
  }

  /** Whether `rel` exists in the lower layer and is visible. */
  inLower(rel: string): boolean {
    return !!rel && !this.hiddenInLower(rel) && !!this.lowerStat(rel);
  }

  /** Merged directory listing (names only). */
  readdir(rel: string): string[] {
    const names = new Set<string>();
    const upper = this.upperPath(rel);
    const upperStat = lexists(upper);
    if (upperStat?.isDirectory()) for (const name of fs.readdirSync(upper)) names.add(name);
    const opaque = rel ? fs.existsSync(this.opaquePath(rel)) : false;
    if (!opaque && !this.hiddenInLower(rel)) {
      const lower = this.lowerPath(rel);
      if (lexists(lower)?.isDirectory()) {
        const whiteoutDir = posix.join(this.layers.whiteouts, rel);
        const hidden = new Set(
          fs.existsSync(whiteoutDir)
            ? fs
                .readdirSync(whiteoutDir)
                .filter((n) => n.startsWith(WHITEOUT_PREFIX) && n !== OPAQUE_MARKER)
                .map((n) => n.slice(WHITEOUT_PREFIX.length))
            : [],
        );
        for (const name of fs.readdirSync(lower)) if (!hidden.has(name)) names.add(name);
      }
    }
    return [...names];
  }

  /** Makes the directory `rel` (and its ancestors) exist in the upper layer, copying modes from the merged view. */
  ensureUpperDir(rel: string, error: (errno: number) => Error): void {
    if (!rel) {
      fs.mkdirSync(this.layers.upper, { recursive: true });
      return;
    }
    if (lexists(this.upperPath(rel))?.isDirectory()) return;
    this.ensureUpperDir(posix.dirname(rel) === "." ? "" : posix.dirname(rel), error);
    const source = this.resolve(rel);
    const stat = source ? lexists(source) : undefined;
    if (!stat) throw error(ENOENT);
    if (!stat.isDirectory()) throw error(ENOTDIR);
    fs.mkdirSync(this.upperPath(rel), { mode: stat.mode & 0o7777 });
  }

  /** Copies the entry at `rel` into the upper layer (a directory without its children). */
  copyUp(rel: string, error: (errno: number) => Error): string {
    const upper = this.upperPath(rel);
    if (lexists(upper)) return upper;
    const source = this.resolve(rel);
    const stat = source ? lexists(source) : undefined;
    if (!source || !stat) throw error(ENOENT);
    this.ensureUpperDir(posix.dirname(rel) === "." ? "" : posix.dirname(rel), error);
    if (stat.isDirectory()) fs.mkdirSync(upper, { mode: stat.mode & 0o7777 });
    else if (stat.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), upper);
    else {
      fs.copyFileSync(source, upper);
      fs.chmodSync(upper, stat.mode & 0o7777);
    }
    return upper;
  }

  /** Copies the whole merged subtree at `rel` into the upper layer (before renaming a directory). */
  copyUpTree(rel: string, error: (errno: number) => Error): void {
    const path = this.copyUp(rel, error);
    if (!lexists(path)?.isDirectory()) return;
    for (const name of this.readdir(rel)) this.copyUpTree(join(rel, name), error);
  }

  /** Records that the lower entry at `rel` is deleted. */
  addWhiteout(rel: string): void {
    const marker = this.whiteoutPath(rel);
    fs.mkdirSync(posix.dirname(marker), { recursive: true });
    fs.writeFileSync(marker, "");
    // Markers of the deleted entry's children are moot now.
    fs.rmSync(posix.join(this.layers.whiteouts, rel), { recursive: true, force: true });
  }

  /**
   * Forgets a whiteout at `rel` before something new is created there; a new directory in place of
   * a deleted lower one becomes opaque, so the deleted children stay deleted.
   */
  clearWhiteout(rel: string, creatingDirectory: boolean): void {
    const marker = this.whiteoutPath(rel);
    const wasDeleted = fs.existsSync(marker);
    if (wasDeleted) fs.rmSync(marker, { force: true });
    if (creatingDirectory && (wasDeleted || this.hiddenInLower(rel)) && lexists(this.lowerPath(rel))) {
      fs.mkdirSync(posix.join(this.layers.whiteouts, rel), { recursive: true });
      fs.writeFileSync(this.opaquePath(rel), "");
    }
  }
}

function copyOnWriteFs(FS: EmscriptenFs): unknown {
  const NODEFS = FS.filesystems.NODEFS;
  const error = (errno: number) => new FS.ErrnoError(errno);
  const layoutOf = (node: EmscriptenNode) => {
    const opts = node.mount.opts as { layout?: CopyOnWriteLayout; layers: CopyOnWriteLayers };
    return (opts.layout ??= new CopyOnWriteLayout(opts.layers));
  };
  const resolved = (node: EmscriptenNode): string => {
    const path = layoutOf(node).resolve(relOf(node));
    if (path === undefined) throw error(ENOENT);
    return path;
  };
  const createNode = (parent: EmscriptenNode | null, name: string, mode: number): EmscriptenNode => {
    const node = NODEFS.createNode(parent, name, mode, 0);
    node.node_ops = nodeOps;
    node.stream_ops = streamOps;
    return node;
  };
  const getMode = (path: string) => NODEFS.tryFSOperation(() => fs.lstatSync(path).mode);

  const nodeOps = {
    getattr(node: EmscriptenNode) {
      const found = layoutOf(node).resolveStat(relOf(node));
      if (!found) throw error(ENOENT);
      return NODEFS.getattr(() => found.stat, node);
    },
    setattr(node: EmscriptenNode, attr: { mode?: number; dontFollow?: boolean }) {
      if (attr.mode != null && attr.dontFollow) throw error(52);
      const path = NODEFS.tryFSOperation(() => layoutOf(node).copyUp(relOf(node), error));
      NODEFS.setattr(path, node, attr, fs.chmodSync, fs.utimesSync, fs.truncateSync, fs.lstatSync);
    },
    lookup(parent: EmscriptenNode, name: string) {
      const found = layoutOf(parent).resolveStat(join(relOf(parent), name));
      if (!found) throw error(ENOENT);
      return createNode(parent, name, found.stat.mode);
    },
    mknod(parent: EmscriptenNode, name: string, mode: number) {
      const layout = layoutOf(parent);
      const rel = join(relOf(parent), name);
      NODEFS.tryFSOperation(() => layout.ensureUpperDir(relOf(parent), error));
      const isDir = (mode & S_IFMT) === S_IFDIR;
      const node = createNode(parent, name, mode);
      NODEFS.tryFSOperation(() => {
        layout.clearWhiteout(rel, isDir);
        if (isDir) fs.mkdirSync(layout.upperPath(rel), node.mode);
        else fs.writeFileSync(layout.upperPath(rel), "", { mode: node.mode });
      });
      return node;
    },
    rename(oldNode: EmscriptenNode, newDir: EmscriptenNode, newName: string) {
      const layout = layoutOf(oldNode);
      const oldRel = relOf(oldNode);
      const newRel = join(relOf(newDir), newName);
      NODEFS.tryFSOperation(() => {
        const target = layout.resolve(newRel);
        const targetStat = target ? lexists(target) : undefined;
        if (targetStat?.isDirectory() && layout.readdir(newRel).length > 0) throw error(ENOTEMPTY);
        layout.copyUpTree(oldRel, error);
        layout.ensureUpperDir(relOf(newDir), error);
        const wasDir = lexists(layout.upperPath(oldRel))?.isDirectory() ?? false;
        // An empty directory in place of a lower one: replace it (rename would refuse a non-empty upper copy).
        if (targetStat?.isDirectory() && lexists(layout.upperPath(newRel))) fs.rmSync(layout.upperPath(newRel), { recursive: true, force: true });
        layout.clearWhiteout(newRel, wasDir);
        if (wasDir && targetStat?.isDirectory()) layout.clearWhiteout(newRel, true);
        fs.renameSync(layout.upperPath(oldRel), layout.upperPath(newRel));
        if (wasDir && lexists(layout.lowerPath(newRel))) {
          // The moved directory replaces a lower one: none of that one's children show through.
          fs.mkdirSync(posix.join(layout.layers.whiteouts, newRel), { recursive: true });
          fs.writeFileSync(posix.join(layout.layers.whiteouts, newRel, OPAQUE_MARKER), "");
        }
        if (lexists(layout.lowerPath(oldRel))) layout.addWhiteout(oldRel);
      });
      oldNode.name = newName;
    },
    unlink(parent: EmscriptenNode, name: string) {
      const layout = layoutOf(parent);
      const rel = join(relOf(parent), name);
      NODEFS.tryFSOperation(() => {
        const upper = layout.upperPath(rel);
        const inUpper = !!lexists(upper);
        const inLower = layout.inLower(rel);
        if (!inUpper && !inLower) throw error(ENOENT);
        if (inUpper) fs.unlinkSync(upper);
        if (inLower) layout.addWhiteout(rel);
      });
    },
    rmdir(parent: EmscriptenNode, name: string) {
      const layout = layoutOf(parent);
      const rel = join(relOf(parent), name);
      NODEFS.tryFSOperation(() => {
        const path = layout.resolve(rel);
        if (!path) throw error(ENOENT);
        if (!lexists(path)?.isDirectory()) throw error(ENOTDIR);
        if (layout.readdir(rel).length > 0) throw error(ENOTEMPTY);
        const upper = layout.upperPath(rel);
        if (lexists(upper)) fs.rmSync(upper, { recursive: true, force: true });
        if (layout.inLower(rel)) layout.addWhiteout(rel);
        else fs.rmSync(posix.join(layout.layers.whiteouts, rel), { recursive: true, force: true });
      });
    },
    readdir(node: EmscriptenNode) {
      return NODEFS.tryFSOperation(() => {
        const path = resolved(node);
        if (!lexists(path)?.isDirectory()) throw error(ENOTDIR);
        return layoutOf(node).readdir(relOf(node));
      });
    },
    symlink(parent: EmscriptenNode, newName: string, oldPath: string) {
      const layout = layoutOf(parent);
      const rel = join(relOf(parent), newName);
      NODEFS.tryFSOperation(() => {
        layout.ensureUpperDir(relOf(parent), error);
        layout.clearWhiteout(rel, false);
        fs.symlinkSync(oldPath, layout.upperPath(rel));
      });
    },
    readlink(node: EmscriptenNode) {
      const path = resolved(node);
      return NODEFS.tryFSOperation(() => fs.readlinkSync(path));
    },
    statfs(path: string) {
      return (NODEFS.node_ops.statfs as unknown as (p: string) => unknown)(path);
    },
  };

  const streamOps = {
    ...NODEFS.stream_ops,
    open(stream: EmscriptenStream) {
      const layout = layoutOf(stream.node);
      const rel = relOf(stream.node);
      const writes = (stream.flags & ACCESS_MODE_MASK) !== O_RDONLY || (stream.flags & MUTATING_OPEN_FLAGS) !== 0;
      NODEFS.tryFSOperation(() => {
        const path = writes ? layout.copyUp(rel, error) : layout.resolve(rel);
        if (path === undefined) throw error(ENOENT);
        stream.shared.refcount = 1;
        stream.nfd = fs.openSync(path, NODEFS.flagsForNode(stream.flags));
      });
    },
    setattr(stream: EmscriptenStream, attr: unknown) {
      // Path-based on the upper copy: the stream may hold a read-only descriptor of the lower file.
      const path = NODEFS.tryFSOperation(() => layoutOf(stream.node).copyUp(relOf(stream.node), error));
      NODEFS.setattr(path, stream.node, attr, fs.chmodSync, fs.utimesSync, fs.truncateSync, fs.lstatSync);
    },
  };

  return {
    ...NODEFS,
    node_ops: nodeOps,
    stream_ops: streamOps,
    mount: (mount: { opts: { root: string } }) => createNode(null, "/", getMode(mount.opts.root)),
    createNode: (parent: EmscriptenNode | null, name: string, mode: number) => createNode(parent, name, mode),
  };
}

/** Mounts `layers` at the mount point as one copy-on-write tree (see the module comment). */
export function createCopyOnWriteMountHandler(layers: CopyOnWriteLayers): MountHandler {
  return ((_php: unknown, FS: EmscriptenFs, mountpoint: string) => {
    fs.mkdirSync(layers.upper, { recursive: true });
    if (!FS.analyzePath(mountpoint).exists) FS.mkdirTree(mountpoint);
    FS.mount(copyOnWriteFs(FS), { root: layers.lower, layers }, mountpoint);
    return () => FS.unmount(mountpoint);
  }) as unknown as MountHandler;
}
