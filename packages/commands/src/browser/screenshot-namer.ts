/**
 * Screenshot names for `files/browser/screenshot-<name>.png`: sanitised, never overwriting.
 */

/**
 * Lower-cases `raw` and keeps only `[a-z0-9._-]` (other runs of characters become `-`; leading dots
 * and dashes are dropped so a name is never hidden or flag-like). Empty → `screenshot`.
 * @example sanitizeScreenshotName("After Crop!") === "after-crop"
 */
export function sanitizeScreenshotName(raw: string): string {
  const name = raw
    .toLowerCase()
    .replace(/\.png$/, "")
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[.-]+|[.-]+$/g, "")
    .slice(0, 100);
  return name || "screenshot";
}

/** Hands out unique sanitised names: the second `a` becomes `a-2`, then `a-3` … */
export class ScreenshotNamer {
  private readonly taken: Set<string>;

  /** @param taken names already used (e.g. screenshots earlier commands wrote into the same bundle). */
  constructor(taken: Iterable<string> = []) {
    this.taken = new Set(taken);
  }

  /** Returns a sanitised name not handed out before, and reserves it. */
  next(raw: string): string {
    const base = sanitizeScreenshotName(raw);
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base}-${n}`;
    this.taken.add(name);
    return name;
  }
}
