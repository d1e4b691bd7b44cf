/**
 * PHP extensions the php-wasm build ships beside PHP itself (`@php-wasm/node-X-Y/<mode>/extensions/`),
 * which a sandbox loads when asked (`--php-extension NAME`, recipe `runtime.extensions`, or the
 * Node create spec's `extensions`). Rule: only what the installed package ships is offered, and
 * asking for anything else is refused before boot with the list.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { existsSync, readdirSync } from "node:fs";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

const require = createRequire(import.meta.url);

/**
 * Extensions loaded when the caller names none: `intl`, as plain Playground CLI does, so
 * `Collator`, `NumberFormatter` and `Normalizer` work as on most hosts. Pass an empty list
 * (`extensions: []`, recipe `"extensions": []`) for a sandbox without it.
 */
export const DEFAULT_PHP_EXTENSIONS: readonly string[] = ["intl"];

/** Shipped extensions that are never offered: xdebug is a debugger that connects to an IDE. */
const NOT_OFFERED = new Set(["xdebug"]);

/** php-wasm's build flavour in this Node: JSPI when the engine has it, else Asyncify (Node 20, 22). */
export function phpWasmMode(): "jspi" | "asyncify" {
  return "Suspending" in WebAssembly ? "jspi" : "asyncify";
}

/**
 * The extensions this machine can load into PHP `phpVersion`, sorted.
 * @returns e.g. `["intl"]` under Asyncify, `["intl", "memcached", "redis"]` under JSPI; `[]` when
 *   the PHP build package is not installed.
 */
export function availablePhpExtensions(phpVersion: string): string[] {
  let dir: string;
  try {
    dir = dirname(require.resolve(`@php-wasm/node-${phpVersion.replace(".", "-")}/package.json`));
  } catch {
    return [];
  }
  const extensions = join(dir, phpWasmMode(), "extensions");
  if (!existsSync(extensions)) return [];
  return readdirSync(extensions, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !NOT_OFFERED.has(e.name) && existsSync(join(extensions, e.name, `${e.name}.so`)))
    .map((e) => e.name)
    .sort();
}

/** The name that asks for no extension at all (`--php-extension none`), the same as an empty list. */
export const NO_PHP_EXTENSIONS = "none";

/**
 * Resolves what a create spec asks for into the list to load.
 * @param requested - names from `--php-extension` / `runtime.extensions`; `undefined` = the default;
 *   `[]` or `["none"]` = no extension.
 * @returns the names, deduplicated, in request order.
 * @throws WpCodeboxError `invalid-argument` (exit 2) when `none` is combined with other names
 *   (data `{ option: "extensions", requested }`); `php-extension-unavailable` (exit 2) naming
 *   every unknown one and listing the available ones.
 */
export function resolvePhpExtensions(requested: readonly string[] | undefined, phpVersion: string): string[] {
  const available = availablePhpExtensions(phpVersion);
  if (requested === undefined) return DEFAULT_PHP_EXTENSIONS.filter((name) => available.includes(name));
  const names = [...new Set(requested.map((n) => n.trim().toLowerCase()))];
  if (names.includes(NO_PHP_EXTENSIONS)) {
    const others = names.filter((n) => n !== NO_PHP_EXTENSIONS);
    if (others.length === 0) return [];
    throw new WpCodeboxError(
      "invalid-argument",
      `PHP extension "none" (load no extension) cannot be combined with other extensions (${others.join(", ")}): give none alone, or only the extensions to load.`,
      { option: "extensions", requested: names },
    );
  }
  const unknown = names.filter((n) => !available.includes(n));
  if (unknown.length) {
    throw new WpCodeboxError(
      "php-extension-unavailable",
      `PHP extension${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} ${unknown.length > 1 ? "are" : "is"} not available for PHP ${phpVersion} here. Available: ${available.join(", ") || "none"}${unknown.includes("xdebug") ? " (xdebug is not offered: it needs an IDE connection)" : ""}.`,
      { requested: names, unknown, available, phpVersion },
    );
  }
  return names;
}
