/**
 * PHP programs that ship with this package as `.php` files under `assets/` (not template strings),
 * so they can be read, linted and tested as PHP. The folder sits beside `src/` and `dist/`, so the
 * same relative path works from the TypeScript sources and from the compiled build.
 */
import { readFileSync } from "node:fs";

const cache = new Map<string, string>();

/**
 * The source of `assets/<name>`, e.g. `phpAsset("plugin-check/actions.php")`.
 * @throws Error when the file is missing (a packaging bug).
 */
export function phpAsset(name: string): string {
  let source = cache.get(name);
  if (source === undefined) {
    source = readFileSync(new URL(`../../assets/${name}`, import.meta.url), "utf8");
    cache.set(name, source);
  }
  return source;
}

/**
 * A PHP program made of variable assignments followed by an asset's code. Every value goes
 * through `encode` (the one PHP value encoder), never into the source as text.
 * @param vars - PHP variable name (without `$`) → PHP expression produced by the encoder.
 */
export function phpProgram(vars: Record<string, string>, ...assets: string[]): string {
  const lines = ["<?php"];
  for (const [name, expression] of Object.entries(vars)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a PHP variable name: ${name}`);
    lines.push(`$${name} = ${expression};`);
  }
  for (const asset of assets) lines.push(phpAsset(asset).replace(/^<\?php\s*/, ""));
  return lines.join("\n");
}
