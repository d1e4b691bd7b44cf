/**
 * Finds a Chromium executable without downloading anything: `WP_CODEBOX_CHROMIUM`, then
 * Playwright's installed browsers, then the system's Chromium.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

// playwright-core takes ~0.3 s to load: only load it when a browser is actually looked for.
const requireLazily = createRequire(import.meta.url);
import { WpCodeboxError } from "@wp-codebox/runtime-core";

/** Where the executable came from: the env override, Playwright's browser cache, or the system package. */
export type ChromiumSource = "env" | "playwright" | "system";

/** A Chromium executable that exists on disk. */
export interface ChromiumLocation {
  executablePath: string;
  source: ChromiumSource;
}

/** Options for {@link findChromium}; all exist so tests can exercise the discovery order. */
export interface FindChromiumOptions {
  /** Environment to read `WP_CODEBOX_CHROMIUM` from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Path of Playwright's installed Chromium. Default: `chromium.executablePath()` from playwright-core. */
  playwrightExecutablePath?: () => string | undefined;
  /** System locations tried last, in order. Default: `["/usr/bin/chromium"]` (Debian's package). */
  systemPaths?: readonly string[];
}

/** Debian's `chromium` package (`apt-get install -y chromium`). */
export const SYSTEM_CHROMIUM_PATHS: readonly string[] = ["/usr/bin/chromium"];

const INSTALL_HINT = "install it with: apt-get install -y chromium, or set WP_CODEBOX_CHROMIUM=/path/to/chrome";

function playwrightPath(): string | undefined {
  try {
    return (requireLazily("playwright-core") as typeof import("playwright-core")).chromium.executablePath();
  } catch {
    return undefined;
  }
}

/**
 * Resolves the Chromium to launch. Order: `WP_CODEBOX_CHROMIUM` → Playwright's installed browsers
 * (only if that file exists) → `/usr/bin/chromium`. Never downloads a browser.
 * @returns `{ executablePath, source }`.
 * @throws WpCodeboxError `browser-unavailable` when `WP_CODEBOX_CHROMIUM` points at a missing file
 * (an explicit setting is never silently ignored) or when no candidate exists; the message says how
 * to install one. `data.tried` lists the paths checked.
 * @example const { executablePath } = findChromium();
 */
export function findChromium(options: FindChromiumOptions = {}): ChromiumLocation {
  const env = options.env ?? process.env;
  const override = env.WP_CODEBOX_CHROMIUM?.trim();
  if (override) {
    if (existsSync(override)) return { executablePath: override, source: "env" };
    throw new WpCodeboxError(
      "browser-unavailable",
      `WP_CODEBOX_CHROMIUM is set to ${override}, which does not exist: point it at a Chromium/Chrome executable, or unset it to use the system Chromium (${INSTALL_HINT}).`,
      { tried: [override] },
    );
  }
  const tried: string[] = [];
  const fromPlaywright = (options.playwrightExecutablePath ?? playwrightPath)();
  if (fromPlaywright) {
    tried.push(fromPlaywright);
    if (existsSync(fromPlaywright)) return { executablePath: fromPlaywright, source: "playwright" };
  }
  for (const candidate of options.systemPaths ?? SYSTEM_CHROMIUM_PATHS) {
    tried.push(candidate);
    if (existsSync(candidate)) return { executablePath: candidate, source: "system" };
  }
  throw new WpCodeboxError("browser-unavailable", `No Chromium found (checked ${tried.join(", ") || "nothing"}): ${INSTALL_HINT}.`, {
    tried,
  });
}
