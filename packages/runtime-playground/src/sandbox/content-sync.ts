/**
 * Fast `reset()`: brings a sandbox's wp-content back to its clean state by touching only what
 * changed, instead of deleting and copying the whole tree (≈260 files, 14 MB of bundled themes).
 *
 * The clean state is layers of host trees: the installed site's wp-content, then each read-only
 * mount copied at its target (later layers win, as `cpSync` over the earlier ones would). After
 * every copy the sandbox tree is stamped: each file's size and ctime. A file is untouched when
 * both still match; ctime cannot be set back from user space (any write, chmod, rename or utime
 * moves it), so nothing a sandbox does survives a reset, even a file forged to the same size and
 * mtime.
 */
import { copyFileSync, lstatSync, lutimesSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, utimesSync, type Stats } from "node:fs";
import { join } from "node:path";

/** A host tree (or single file) placed at `target` (relative to the synced root; "" = the root). */
export interface ContentLayer {
  source: string;
  target: string;
}

/** Marks a relative path as a directory to create empty and never descend into (a read-write mount point). */
export interface ContentMountPoint {
  target: string;
}

type Kind = "file" | "dir" | "symlink";
type Stamp = Map<string, { size: number; ctimeMs: number }>;

function kindOf(stats: Stats): Kind | undefined {
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isDirectory()) return "dir";
  if (stats.isFile()) return "file";
  return undefined;
}

/** relative path → where its clean content comes from. */
function expectedTree(layers: readonly ContentLayer[], mountPoints: readonly ContentMountPoint[]): Map<string, { kind: Kind; source?: string }> {
  const tree = new Map<string, { kind: Kind; source?: string }>();
  const addParents = (rel: string): void => {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const p = parts.slice(0, i).join("/");
      if (tree.get(p)?.kind !== "dir") tree.set(p, { kind: "dir" });
    }
  };
  const walk = (abs: string, rel: string): void => {
    let stats: Stats;
    try {
      stats = lstatSync(abs);
    } catch {
      return;
    }
    const kind = kindOf(stats);
    if (!kind) return;
    if (rel) {
      if (kind !== "dir" || tree.get(rel)?.kind !== "dir") {
        // A file replaces what was there (and a directory replaces a file), as a copy over it would.
        for (const key of [...tree.keys()]) if (key === rel || key.startsWith(`${rel}/`)) tree.delete(key);
      }
      addParents(rel);
      tree.set(rel, kind === "dir" ? { kind } : { kind, source: abs });
    }
    if (kind === "dir") for (const name of readdirSync(abs)) walk(join(abs, name), rel ? `${rel}/${name}` : name);
  };
  for (const layer of layers) walk(layer.source, layer.target);
  for (const point of mountPoints) {
    for (const key of [...tree.keys()]) if (key.startsWith(`${point.target}/`)) tree.delete(key);
    addParents(point.target);
    tree.set(point.target, { kind: "dir" });
  }
  return tree;
}

/**
 * Keeps one sandbox directory equal to its clean layers. `restore()` after the first call costs
 * one `lstat` per file plus copies of what changed.
 */
export class ContentSync {
  private stamp: Stamp = new Map();
  private readonly mountPointSet: Set<string>;

  constructor(
    private readonly root: string,
    private readonly layers: readonly ContentLayer[],
    private readonly mountPoints: readonly ContentMountPoint[] = [],
  ) {
    this.mountPointSet = new Set(mountPoints.map((m) => m.target));
  }

  /** Records the current tree as clean (call right after it was copied, and after `restore`). */
  stampNow(): void {
    const stamp: Stamp = new Map();
    const walk = (abs: string, rel: string): void => {
      for (const name of readdirSync(abs)) {
        const r = rel ? `${rel}/${name}` : name;
        const a = join(abs, name);
        const stats = lstatSync(a);
        if (stats.isDirectory()) {
          if (!this.mountPointSet.has(r)) walk(a, r);
        } else stamp.set(r, { size: stats.size, ctimeMs: stats.ctimeMs });
      }
    };
    walk(this.root, "");
    this.stamp = stamp;
  }

  /**
   * Makes the tree equal to its clean layers again: removes what was added, re-copies what was
   * changed or deleted, keeps what is untouched.
   * @returns how many entries were removed and copied.
   */
  restore(): { removed: number; copied: number } {
    const expected = expectedTree(this.layers, this.mountPoints);
    let removed = 0;
    let copied = 0;
    const seen = new Set<string>();
    const walk = (abs: string, rel: string): void => {
      for (const name of readdirSync(abs)) {
        const r = rel ? `${rel}/${name}` : name;
        const a = join(abs, name);
        const want = expected.get(r);
        const stats = lstatSync(a);
        const kind = kindOf(stats);
        if (!want || want.kind !== kind) {
          rmSync(a, { recursive: true, force: true });
          removed++;
          continue;
        }
        seen.add(r);
        if (kind === "dir") {
          if (!this.mountPointSet.has(r)) walk(a, r);
          continue;
        }
        const clean = this.stamp.get(r);
        if (kind === "file" && clean && clean.size === stats.size && clean.ctimeMs === stats.ctimeMs) continue;
        rmSync(a, { force: true });
        this.place(want, a);
        copied++;
      }
    };
    walk(this.root, "");
    // Sorted: parents come before their children.
    for (const r of [...expected.keys()].sort()) {
      if (seen.has(r)) continue;
      const want = expected.get(r)!;
      if (want.kind === "dir") mkdirSync(join(this.root, r), { recursive: true });
      else this.place(want, join(this.root, r));
      copied++;
    }
    return { removed, copied };
  }

  /** Puts a file or symlink back with its clean content and its source's mtime, as the boot's copy did. */
  private place(want: { kind: Kind; source?: string }, dest: string): void {
    const source = lstatSync(want.source!);
    if (want.kind === "symlink") {
      symlinkSync(readlinkSync(want.source!), dest);
      lutimesSync(dest, source.atime, source.mtime);
    } else {
      copyFileSync(want.source!, dest);
      utimesSync(dest, source.atime, source.mtime);
    }
  }
}
