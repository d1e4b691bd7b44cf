/**
 * PHP programs that ship as `.php` files under a package's `assets/` folder (not template strings),
 * so they can be read, linted and tested as PHP. The folder sits beside `src/` and `dist/`, so the
 * same relative path works from the TypeScript sources and from the compiled build.
 */
import { readFileSync } from "node:fs";

/** Reads and assembles the PHP programs of one or more `assets/` folders. */
export interface PhpAssets {
  /**
   * The source of `<assets>/<name>`, e.g. `phpAsset("plugin-check/actions.php")`, from the first
   * folder that has it.
   * @throws Error when no folder has the file (a packaging bug).
   */
  phpAsset(name: string): string;
  /**
   * A PHP program made of variable assignments followed by assets' code. Every value goes
   * through `phpValue` (the one PHP value encoder), never into the source as text.
   * @param vars - PHP variable name (without `$`) → PHP expression produced by the encoder.
   * @throws Error for a name that is not a PHP variable name, or a missing asset.
   */
  phpProgram(vars: Record<string, string>, ...assets: string[]): string;
}

/**
 * The asset reader over `folders` (file URLs ending in `/`), searched in order: a backend passes
 * its own folder first and `COMMAND_ASSETS_URL` after it, so its programs can include the shared
 * ones (the actor helpers).
 */
export function phpAssets(...folders: URL[]): PhpAssets {
  const cache = new Map<string, string>();
  const phpAsset = (name: string): string => {
    let source = cache.get(name);
    if (source !== undefined) return source;
    for (const folder of folders) {
      try {
        source = readFileSync(new URL(name, folder), "utf8");
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    if (source === undefined) throw new Error(`PHP asset ${name} is missing from ${folders.map((f) => f.pathname).join(", ")}`);
    cache.set(name, source);
    return source;
  };
  const phpProgram = (vars: Record<string, string>, ...assets: string[]): string => {
    const lines = ["<?php"];
    for (const [name, expression] of Object.entries(vars)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a PHP variable name: ${name}`);
      lines.push(`$${name} = ${expression};`);
    }
    for (const asset of assets) lines.push(phpAsset(asset).replace(/^<\?php\s*/, ""));
    return lines.join("\n");
  };
  return { phpAsset, phpProgram };
}

/** This package's `assets/` folder (the command programs and the actor helpers). */
export const COMMAND_ASSETS_URL = new URL("../../assets/", import.meta.url);

/** The reader of this package's own assets. */
export const { phpAsset, phpProgram } = phpAssets(COMMAND_ASSETS_URL);
