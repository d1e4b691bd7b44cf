/**
 * Which Node versions the dependencies declare (`engines.node` in their package.json), and whether
 * a given Node version satisfies each. `doctor` reports it, so the `EBADENGINE` warnings npm prints
 * on install are explained by the tool itself.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The lowest Node major wp-codebox itself supports (the root package's `engines.node`). */
export const MIN_NODE_MAJOR = 20;

/** The packages the product loads at run time whose `engines.node` decides Node support. */
export const ENGINE_CHECKED_PACKAGES = [
  "@php-wasm/node",
  "@php-wasm/universal",
  "@wp-playground/wordpress",
  "@wp-playground/blueprints",
  "playwright-core",
  "@modelcontextprotocol/sdk",
  "bullmq",
] as const;

/** One dependency's declaration and whether `node` satisfies it (`undefined`: a range this check does not read). */
export interface EngineDeclaration {
  name: string;
  version: string;
  engines: string;
  satisfied: boolean | undefined;
}

function parts(version: string): number[] {
  return version.replace(/^v/, "").split(".").map((p) => Number.parseInt(p, 10) || 0);
}

function atLeast(version: string, minimum: string): boolean {
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i += 1) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

/**
 * Whether `version` satisfies an `engines.node` range. Reads the forms dependencies use: `>=X.Y.Z`,
 * `^X.Y.Z`, several of them joined by `||`, and `*`.
 * @returns true or false, or undefined for a range in another form.
 * @example satisfiesEngine("20.20.2", ">=24.18.0") // false
 */
export function satisfiesEngine(version: string, range: string): boolean | undefined {
  const alternatives = range.split("||").map((r) => r.trim());
  let unknown = false;
  for (const alternative of alternatives) {
    if (alternative === "*" || alternative === "") return true;
    const min = /^>=\s*v?(\d+(?:\.\d+){0,2})$/.exec(alternative);
    const caret = /^\^\s*v?(\d+(?:\.\d+){0,2})$/.exec(alternative);
    if (min && atLeast(version, min[1]!)) return true;
    if (caret && atLeast(version, caret[1]!) && parts(version)[0] === parts(caret[1]!)[0]) return true;
    if (!min && !caret) unknown = true;
  }
  return unknown ? undefined : false;
}

/** The package.json of `name` as Node would find it from this file (undefined when not installed). */
function readPackageJson(name: string, from: string): { version?: string; engines?: { node?: string } } | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, "node_modules", name, "package.json");
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as { version?: string; engines?: { node?: string } };
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The `engines.node` declarations of `ENGINE_CHECKED_PACKAGES` that are installed, each checked
 * against `nodeVersion`. Packages without `engines.node` are left out.
 * @param nodeVersion - e.g. `process.versions.node` ("20.20.2").
 */
export function dependencyEngines(nodeVersion: string, from: string = dirname(fileURLToPath(import.meta.url))): EngineDeclaration[] {
  const out: EngineDeclaration[] = [];
  for (const name of ENGINE_CHECKED_PACKAGES) {
    const pkg = readPackageJson(name, from);
    const engines = pkg?.engines?.node;
    if (!pkg || !engines) continue;
    out.push({ name, version: pkg.version ?? "unknown", engines, satisfied: satisfiesEngine(nodeVersion, engines) });
  }
  return out;
}

/**
 * The doctor's sentence about Node: supported by wp-codebox (major ≥ `MIN_NODE_MAJOR`), and which
 * dependencies declare a newer Node than this one.
 */
export function describeNodeSupport(nodeVersion: string, declarations: readonly EngineDeclaration[]): { supported: boolean; dependenciesSatisfied: boolean; detail: string } {
  const supported = parts(nodeVersion)[0]! >= MIN_NODE_MAJOR;
  if (!supported) return { supported, dependenciesSatisfied: false, detail: `Node ${nodeVersion} is too old: install Node ${MIN_NODE_MAJOR} or newer.` };
  const unmet = declarations.filter((d) => d.satisfied === false);
  if (unmet.length === 0) return { supported, dependenciesSatisfied: true, detail: `Node ${nodeVersion}: every dependency supports it` };
  const ranges = [...new Set(unmet.map((d) => d.engines))].join(", ");
  return {
    supported,
    dependenciesSatisfied: false,
    detail:
      `Node ${nodeVersion}: wp-codebox runs and is tested on it, but ${unmet.map((d) => `${d.name} ${d.version}`).join(", ")} declare node ${ranges}, ` +
      `which is why npm install prints EBADENGINE warnings; a Node that meets ${ranges} satisfies every dependency.`,
  };
}
