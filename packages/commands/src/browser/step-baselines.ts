/**
 * Host side of screenshot baselines: reading them before a run (bounded, confined to the script's
 * folder) and, under `--update-baselines`, writing the new ones after it.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import {
  WpCodeboxError,
  assertBrowserBaselines,
  assertScreenshotImage,
  checkHostPath,
  isMissingInputFile,
  readInputFileSync,
  resolveHostAccess,
  type BrowserInteractionStep,
} from "@wp-codebox/runtime-core";
import type { BrowserScreenshot } from "./browser-script-outcome.js";
import type { StepBaseline } from "./run-step.js";

/** Refuses `path` (symlinks resolved) unless it is inside `folder`. @throws WpCodeboxError `path-not-allowed` */
function confineTo(folder: string): (path: string) => void {
  const access = resolveHostAccess(folder);
  return (path) => {
    const checked = checkHostPath(path, access);
    if (!checked.allowed) throw new WpCodeboxError("path-not-allowed", `baseline ${checked.real} is outside the script's folder ${access.folder}.`, { path: checked.real });
  };
}

/**
 * The baselines of `steps` (screenshot steps with `compare`), resolved against `folder`.
 * @param update - `--update-baselines`: nothing is read (the files are about to be replaced).
 * @returns step index → `{ compare, path, bytes? }`; `bytes` absent when the file does not exist.
 * @throws WpCodeboxError `path-not-allowed` (outside the folder, also when a symlink is swapped in
 *   before the read), `input-file-invalid` (not a regular file; not a PNG, interlaced or over
 *   `SCREENSHOT_MAX_PIXELS` by its header), `input-file-too-large` (over 32 MiB).
 */
export function readStepBaselines(steps: readonly BrowserInteractionStep[], folder: string, update: boolean): Map<number, StepBaseline> {
  const confine = confineTo(folder);
  const out = new Map<number, StepBaseline>();
  for (const [index, baseline] of assertBrowserBaselines(steps, folder)) {
    if (update) {
      out.set(index, { compare: baseline.compare, path: baseline.path });
      continue;
    }
    try {
      const bytes = readInputFileSync(baseline.path, "baseline-image", { confine });
      // Checked again here: the file may have changed since the check before boot.
      assertScreenshotImage(bytes, baseline.compare, baseline.path);
      out.set(index, { compare: baseline.compare, path: baseline.path, bytes: new Uint8Array(bytes) });
    } catch (error) {
      if (!isMissingInputFile(error)) throw error;
      out.set(index, { compare: baseline.compare, path: baseline.path });
    }
  }
  return out;
}

/**
 * Writes each screenshot marked `updateBaseline` to that path, creating folders inside `folder`.
 * The file is written beside the target and renamed over it, so a symlink at the target is
 * replaced, never followed.
 * @returns the host paths written, in step order.
 * @throws WpCodeboxError `path-not-allowed` when a path (or a folder created for it) resolves outside `folder`.
 */
export function writeUpdatedBaselines(screenshots: readonly BrowserScreenshot[], folder: string): string[] {
  const confine = confineTo(folder);
  const written: string[] = [];
  for (const shot of screenshots) {
    if (shot.updateBaseline === undefined) continue;
    const target = shot.updateBaseline;
    confine(target);
    mkdirSync(dirname(target), { recursive: true });
    confine(dirname(target));
    const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      writeFileSync(temp, shot.bytes, { flag: "wx" });
      renameSync(temp, target);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    written.push(target);
  }
  return written;
}
