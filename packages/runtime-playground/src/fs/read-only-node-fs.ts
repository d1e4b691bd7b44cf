/**
 * A read-only host mount for php-wasm: Emscripten's NODEFS with every write operation refused
 * (`EROFS`). Used for the WordPress core, which lives in the shared installed-site cache: a
 * sandbox must never change what later sandboxes boot from.
 * Source: Emscripten NODEFS (`node_ops` / `stream_ops`), ERRNO_CODES.EROFS = 69.
 */
import type { MountHandler } from "@php-wasm/universal";

const EROFS = 69;
/** O_WRONLY | O_RDWR | O_ACCMODE bits as Emscripten tests them (`flags & 2097155`). */
const ACCESS_MODE_MASK = 2097155;
const O_RDONLY = 0;
/** O_CREAT | O_TRUNC | O_APPEND: opening with any of them changes the file. */
const MUTATING_OPEN_FLAGS = 64 | 512 | 1024;

type Ops = Record<string, (...args: unknown[]) => unknown>;
type EmscriptenNode = { node_ops: Ops; stream_ops: Ops };
type EmscriptenFs = {
  filesystems: { NODEFS: Ops & { node_ops: Ops; stream_ops: Ops; createNode: (...a: unknown[]) => EmscriptenNode; getMode: (p: string) => number } };
  ErrnoError: new (errno: number) => Error;
  mkdirTree(path: string): void;
  mount(type: unknown, opts: { root: string }, mountpoint: string): unknown;
  unmount(mountpoint: string): void;
  analyzePath(path: string): { exists: boolean };
};

function readOnlyFs(FS: EmscriptenFs): unknown {
  const NODEFS = FS.filesystems.NODEFS;
  const refuse = () => {
    throw new FS.ErrnoError(EROFS);
  };
  const nodeOps: Ops = { ...NODEFS.node_ops };
  const streamOps: Ops = { ...NODEFS.stream_ops };
  const adopt = (node: EmscriptenNode) => {
    node.node_ops = nodeOps;
    node.stream_ops = streamOps;
    return node;
  };
  for (const op of ["mknod", "rename", "unlink", "rmdir", "symlink", "setattr"]) if (op in nodeOps) nodeOps[op] = refuse;
  nodeOps.lookup = (...args: unknown[]) => adopt(NODEFS.node_ops.lookup!(...args) as EmscriptenNode);
  streamOps.open = (...args: unknown[]) => {
    const stream = args[0] as { flags: number };
    if ((stream.flags & ACCESS_MODE_MASK) !== O_RDONLY || (stream.flags & MUTATING_OPEN_FLAGS) !== 0) refuse();
    return NODEFS.stream_ops.open!(...args);
  };
  streamOps.write = refuse;
  if ("allocate" in streamOps) streamOps.allocate = refuse;
  return {
    ...NODEFS,
    node_ops: nodeOps,
    stream_ops: streamOps,
    mount: (mount: { opts: { root: string } }) => adopt(NODEFS.createNode(null, "/", NODEFS.getMode(mount.opts.root), 0)),
    createNode: (...args: unknown[]) => adopt(NODEFS.createNode(...args)),
  };
}

/** Mounts `hostPath` at the mount point so PHP can read it but never change it (EROFS). */
export function createReadOnlyNodeFsMountHandler(hostPath: string): MountHandler {
  return ((_php: unknown, FS: EmscriptenFs, mountpoint: string) => {
    if (!FS.analyzePath(mountpoint).exists) FS.mkdirTree(mountpoint);
    FS.mount(readOnlyFs(FS), { root: hostPath }, mountpoint);
    return () => FS.unmount(mountpoint);
  }) as unknown as MountHandler;
}
