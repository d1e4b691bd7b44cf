/**
 * A read-write host mount for php-wasm that keeps every symlink inside the mount: Emscripten's
 * NODEFS, except that creating a symlink (PHP's `symlink()`) or moving one (`rename()`, also of a
 * folder holding links) fails with `EPERM` when the link would resolve outside the mounted folder.
 *
 * Why: a link PHP creates in a read-write mount is a real link in the user's folder. One pointing
 * outside would outlive the sandbox, and the next run would refuse the whole mount
 * (`mount-symlink-escape`). Links that stay inside are written with relative text, so they mean
 * the same on the host as in the sandbox (an absolute sandbox path such as `/workspace/a` does not
 * exist on the host).
 * Source: Emscripten NODEFS (`node_ops`: lookup, mknod, symlink, rename; `realPath`), ERRNO_CODES.EPERM = 63.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import type { MountHandler } from "@php-wasm/universal";

const EPERM = 63;
/** Links checked when a folder is moved; past this the move is refused rather than walked further. */
const MAX_WALK_ENTRIES = 10_000;

type Ops = Record<string, (...args: unknown[]) => unknown>;
type EmscriptenNode = { node_ops: Ops; stream_ops: Ops; name: string; parent: EmscriptenNode; mount: { mountpoint: string } };
type NodeFs = Ops & {
  node_ops: Ops;
  stream_ops: Ops;
  createNode: (...a: unknown[]) => EmscriptenNode;
  getMode: (p: string) => number;
  realPath: (node: EmscriptenNode) => string;
};
type EmscriptenFs = {
  filesystems: { NODEFS: NodeFs };
  ErrnoError: new (errno: number) => Error;
  mkdirTree(path: string): void;
  writeFile(path: string, data: string): void;
  mount(type: unknown, opts: { root: string }, mountpoint: string): unknown;
  unmount(mountpoint: string): void;
  analyzePath(path: string): { exists: boolean };
};

/** True when `path` is `root` or lies under it (both absolute, normalised). */
function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** The real path of `path`, or of its deepest existing ancestor joined with the rest (a dangling link's target). */
function realPathOrAncestor(path: string): string {
  let head = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...rest);
    } catch {
      const up = dirname(head);
      if (up === head) return path;
      rest.unshift(head.slice(up.length).replace(/^[/\\]/, ""));
      head = up;
    }
  }
}

/**
 * Where a link with text `text`, placed in host folder `linkDir`, leads, as the relative text to
 * write, or undefined when it would lead outside `hostRoot`.
 * @param hostRoot - the mounted folder's real host path.
 * @param vfsMountPoint - where it is mounted in the sandbox (`/workspace/data`).
 * @param linkDir - the host folder the link goes in; `vfsLinkDir` - the same folder in the sandbox.
 * @param text - the link text as PHP gave it: relative, or an absolute sandbox path.
 * @returns relative link text (`"../a.txt"`; `"."` for the folder itself), or undefined. Never throws.
 */
export function confinedLinkText(hostRoot: string, vfsMountPoint: string, linkDir: string, vfsLinkDir: string, text: string): string | undefined {
  let vfsTarget: string;
  if (posix.isAbsolute(text)) vfsTarget = posix.normalize(text);
  else vfsTarget = posix.join(vfsLinkDir, text);
  const mountPrefix = vfsMountPoint.endsWith("/") ? vfsMountPoint : `${vfsMountPoint}/`;
  if (vfsTarget !== vfsMountPoint && !vfsTarget.startsWith(mountPrefix)) return undefined;
  const hostTarget = join(hostRoot, vfsTarget.slice(vfsMountPoint.length));
  // Through links already in the mount, the host may see the path elsewhere: check where it really lands.
  if (!isInside(hostRoot, realPathOrAncestor(hostTarget))) return undefined;
  const realDir = realPathOrAncestor(linkDir);
  return relative(realDir, hostTarget) || ".";
}

/** Every symlink under `dir` (host), as `[folder holding it, relative to dir, link text]`; undefined past the walk bound. */
function linksUnder(dir: string): [string, string][] | undefined {
  const out: [string, string][] = [];
  let seen = 0;
  const walk = (rel: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(join(dir, rel));
    } catch {
      return true;
    }
    for (const name of names) {
      if (++seen > MAX_WALK_ENTRIES) return false;
      const child = rel === "" ? name : `${rel}/${name}`;
      const stat = lstatSync(join(dir, child), { throwIfNoEntry: false });
      if (stat?.isSymbolicLink()) out.push([rel, readlinkSync(join(dir, child))]);
      else if (stat?.isDirectory() && !walk(child)) return false;
    }
    return true;
  };
  return walk("") ? out : undefined;
}

function confinedFs(FS: EmscriptenFs, hostRoot: string, vfsMountPoint: string): unknown {
  const NODEFS = FS.filesystems.NODEFS;
  const nodeOps: Ops = { ...NODEFS.node_ops };
  const adopt = (node: EmscriptenNode) => {
    node.node_ops = nodeOps;
    return node;
  };
  const refuse = (): never => {
    throw new FS.ErrnoError(EPERM);
  };
  /** The node's path in the sandbox (`/workspace/a/b`). */
  const vfsPath = (node: EmscriptenNode): string => posix.join(vfsMountPoint, relative(hostRoot, NODEFS.realPath(node)).split(sep).join("/"));
  nodeOps.lookup = (...args: unknown[]) => adopt(NODEFS.node_ops.lookup!(...args) as EmscriptenNode);
  nodeOps.mknod = (...args: unknown[]) => adopt(NODEFS.node_ops.mknod!(...args) as EmscriptenNode);
  nodeOps.symlink = (parent: unknown, newName: unknown, oldPath: unknown) => {
    const dir = parent as EmscriptenNode;
    const text = confinedLinkText(hostRoot, vfsMountPoint, NODEFS.realPath(dir), vfsPath(dir), String(oldPath));
    if (text === undefined) refuse();
    return NODEFS.node_ops.symlink!(parent, newName, text);
  };
  nodeOps.rename = (oldNode: unknown, newDir: unknown, newName: unknown) => {
    const node = oldNode as EmscriptenNode;
    const from = NODEFS.realPath(node);
    const toDir = NODEFS.realPath(newDir as EmscriptenNode);
    const vfsToDir = vfsPath(newDir as EmscriptenNode);
    const stat = lstatSync(from, { throwIfNoEntry: false });
    // A relative link means something else in its new place: every link moved must still stay inside.
    const links: [string, string][] | undefined = stat?.isSymbolicLink() ? [["..", readlinkSync(from)]] : stat?.isDirectory() ? linksUnder(from) : [];
    if (links === undefined) refuse();
    for (const [rel, text] of links!) {
      const hostDir = rel === ".." ? toDir : join(toDir, String(newName), rel);
      const vfsDir = rel === ".." ? vfsToDir : posix.join(vfsToDir, String(newName), rel);
      // An absolute host path (a link that was in the folder before boot) means the same anywhere.
      const stays = isAbsolute(text) ? isInside(hostRoot, realPathOrAncestor(text)) : confinedLinkText(hostRoot, vfsMountPoint, hostDir, vfsDir, text) !== undefined;
      if (!stays) refuse();
    }
    return NODEFS.node_ops.rename!(oldNode, newDir, newName);
  };
  return {
    ...NODEFS,
    node_ops: nodeOps,
    mount: (mount: { opts: { root: string } }) => adopt(NODEFS.createNode(null, "/", NODEFS.getMode(mount.opts.root), 0)),
    createNode: (...args: unknown[]) => adopt(NODEFS.createNode(...args)),
  };
}

/**
 * Mounts `hostPath` read-write at the mount point, refusing (`EPERM`) any symlink creation or
 * move that would make a link lead outside it.
 * @throws Error when `hostPath` does not exist (mounts are validated before boot, so only on a race).
 */
export function createConfinedNodeFsMountHandler(hostPath: string): MountHandler {
  return ((_php: unknown, FS: EmscriptenFs, mountpoint: string) => {
    const root = realpathSync(hostPath);
    if (!FS.analyzePath(mountpoint).exists) {
      if (statSync(root).isFile()) {
        FS.mkdirTree(posix.dirname(mountpoint));
        FS.writeFile(mountpoint, "");
      } else FS.mkdirTree(mountpoint);
    }
    FS.mount(confinedFs(FS, root, resolve("/", mountpoint)), { root }, mountpoint);
    return () => FS.unmount(mountpoint);
  }) as unknown as MountHandler;
}
