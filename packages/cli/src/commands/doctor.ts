/**
 * `wp-codebox doctor`: is this machine ready to run sandboxes? Checks Node, the offline WordPress
 * builds, the cache directory (and whether an installed site is cached), PHP versions and the PHP
 * extensions they can load, Chromium
 * (optional: only browser commands need it) and a WP-CLI phar (optional).
 */
import { accessSync, constants, existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { dependencyEngines, describeNodeSupport } from "./node-support.js";
import { DEFAULT_PHP_EXTENSIONS, DEFAULT_PHP_VERSION, SUPPORTED_PHP_VERSIONS, availablePhpExtensions, findChromium, listCachedWpCli, listWordPressBuilds, resolveCacheDir } from "@wp-codebox/runtime-playground";

/** Schema id of the `doctor --json` report. */
export const DOCTOR_REPORT_SCHEMA_ID = "wp-codebox/doctor-report/v1";

/** One check. `required` checks that are not `ok` make the report fail (exit 3). */
export interface DoctorCheck {
  id: "node" | "wordpress-builds" | "php" | "php-extensions" | "cache-dir" | "installed-site" | "chromium" | "wp-cli";
  required: boolean;
  status: "ok" | "missing";
  /** Human-readable finding, and what to do when something is missing. */
  detail: string;
  /** A file or directory the check found or looked at. */
  path?: string;
  /** Extra facts (versions, cached sites). */
  data?: Record<string, unknown>;
}

/** `{ schema, ok, checks }`; `ok` is false when a required check is missing. */
export interface DoctorReport {
  schema: typeof DOCTOR_REPORT_SCHEMA_ID;
  ok: boolean;
  checks: DoctorCheck[];
}

/** Options so tests can point the doctor at other places. */
export interface DoctorOptions {
  /** Default `resolveCacheDir()` (`$WP_CODEBOX_CACHE_DIR` or `~/.cache/wp-codebox`). */
  cacheDir?: string;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `process.versions.node`. */
  nodeVersion?: string;
}

function isWritable(dir: string): boolean {
  let probe = dir;
  while (!existsSync(probe)) {
    const parent = dirname(probe);
    if (parent === probe) return false;
    probe = parent;
  }
  try {
    accessSync(probe, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function cachedSites(cacheDir: string): { dir: string; release?: string; php?: string }[] {
  const sitesDir = join(cacheDir, "sites");
  if (!existsSync(sitesDir)) return [];
  const sites: { dir: string; release?: string; php?: string }[] = [];
  for (const entry of readdirSync(sitesDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const stamp = join(sitesDir, entry.name, ".wp-codebox-site.json");
    if (!existsSync(stamp)) continue; // staging or half-installed
    try {
      const parsed = JSON.parse(readFileSync(stamp, "utf8")) as { release?: string; php?: string };
      sites.push({ dir: join(sitesDir, entry.name), release: parsed.release, php: parsed.php });
    } catch {
      sites.push({ dir: join(sitesDir, entry.name) });
    }
  }
  return sites;
}

/**
 * Inspects the environment. Never boots WordPress and never downloads anything.
 * @returns the report; `ok` is false when Node < 20, no WordPress build is bundled, or the cache
 *   directory cannot be created or written.
 */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const checks: DoctorCheck[] = [];

  const nodeVersion = options.nodeVersion ?? process.versions.node;
  const engines = dependencyEngines(nodeVersion);
  const node = describeNodeSupport(nodeVersion, engines);
  checks.push({
    id: "node",
    required: true,
    status: node.supported ? "ok" : "missing",
    detail: node.detail,
    data: { version: nodeVersion, dependenciesSatisfied: node.dependenciesSatisfied, engines },
  });

  try {
    const builds = listWordPressBuilds();
    checks.push({
      id: "wordpress-builds",
      required: true,
      status: builds.length > 0 ? "ok" : "missing",
      detail:
        builds.length > 0
          ? `WordPress ${builds.map((b) => b.release).join(", ")} available offline (default ${builds[0]!.release})`
          : "No WordPress builds found in @wp-playground/wordpress-builds: run npm install in the wp-codebox checkout.",
      data: { versions: builds.map((b) => ({ version: b.version, release: b.release })) },
    });
  } catch (error) {
    checks.push({
      id: "wordpress-builds",
      required: true,
      status: "missing",
      detail: `Cannot read @wp-playground/wordpress-builds (${(error as Error).message}): run npm install in the wp-codebox checkout.`,
    });
  }

  checks.push({
    id: "php",
    required: true,
    status: "ok",
    detail: `PHP ${SUPPORTED_PHP_VERSIONS.join(", ")} (WebAssembly; default ${DEFAULT_PHP_VERSION})`,
    data: { versions: [...SUPPORTED_PHP_VERSIONS], default: DEFAULT_PHP_VERSION },
  });

  // What --php-extension may name, per PHP version (the build's own extensions directory).
  const extensions = Object.fromEntries(SUPPORTED_PHP_VERSIONS.map((v) => [v, availablePhpExtensions(v)]));
  const everywhere = [...new Set(Object.values(extensions).flat())].sort().filter((name) => Object.values(extensions).every((list) => list.includes(name)));
  const partial = Object.entries(extensions).filter(([, list]) => list.some((name) => !everywhere.includes(name)) || list.length === 0);
  checks.push({
    id: "php-extensions",
    required: false,
    status: everywhere.length > 0 ? "ok" : "missing",
    detail:
      (everywhere.length > 0 ? `${everywhere.join(", ")} for every PHP version` : "no loadable extensions found") +
      (partial.length ? `; ${partial.map(([v, list]) => `PHP ${v}: ${list.join(", ") || "none"}`).join("; ")}` : "") +
      ` (--php-extension NAME; loaded by default: ${DEFAULT_PHP_EXTENSIONS.join(", ") || "none"})`,
    data: { available: extensions, default: [...DEFAULT_PHP_EXTENSIONS] },
  });

  const cacheDir = options.cacheDir ?? resolveCacheDir();
  const writable = isWritable(cacheDir);
  checks.push({
    id: "cache-dir",
    required: true,
    status: writable ? "ok" : "missing",
    detail: writable
      ? `${existsSync(cacheDir) ? "exists" : "will be created"}, writable`
      : `Cannot create or write ${cacheDir}: fix its permissions or set WP_CODEBOX_CACHE_DIR to a writable directory.`,
    path: cacheDir,
  });

  const sites = cachedSites(cacheDir);
  checks.push({
    id: "installed-site",
    required: false,
    status: sites.length > 0 ? "ok" : "missing",
    detail:
      sites.length > 0
        ? `${sites.length} installed site(s) cached: ${sites.map((s) => `WordPress ${s.release ?? "?"} / PHP ${s.php ?? "?"}`).join(", ")}; boots start from it`
        : "No installed site cached yet: the first run installs WordPress once (about 20 s), later boots take about 2 s.",
    ...(sites.length > 0 ? { path: sites[0]!.dir } : { path: join(cacheDir, "sites") }),
    data: { sites },
  });

  try {
    const found = findChromium({ env });
    checks.push({ id: "chromium", required: false, status: "ok", detail: `found (${found.source})`, path: found.executablePath });
  } catch (error) {
    checks.push({
      id: "chromium",
      required: false,
      status: "missing",
      detail: `${(error as Error).message} Only wordpress.browser-actions and wordpress.browser-probe need it.`,
    });
  }

  // The same order wordpress.wp-cli resolves: env, the newest installed phar, <cache>/wp-cli.phar.
  const installed = listCachedWpCli(cacheDir);
  const phar = [env.WP_CODEBOX_WP_CLI_PHAR, installed[0]?.pharPath, join(cacheDir, "wp-cli.phar")].find((p): p is string => Boolean(p) && existsSync(p!));
  const pharCandidates = [env.WP_CODEBOX_WP_CLI_PHAR, `${join(cacheDir, "wp-cli")}/`, join(cacheDir, "wp-cli.phar")].filter((p): p is string => Boolean(p));
  const cachedList = installed.map((c) => c.version).join(", ");
  checks.push({
    id: "wp-cli",
    required: false,
    status: phar ? "ok" : "missing",
    detail: phar
      ? `wp-cli.phar found; wordpress.wp-cli uses it by default.${installed.length ? ` Cached by wp-cli install: WP-CLI ${cachedList}.` : ""}`
      : `No wp-cli.phar (checked ${pharCandidates.join(", ")}): only wordpress.wp-cli needs it; run \`wp-codebox wp-cli install\` (or set WP_CODEBOX_WP_CLI_PHAR=/path/to/wp-cli.phar).`,
    ...(phar ? { path: phar } : {}),
    data: { cached: installed.map((c) => ({ version: c.version, path: c.pharPath, sha512: c.sha512, url: c.url, fetchedAt: c.fetchedAt })) },
  });

  return { schema: DOCTOR_REPORT_SCHEMA_ID, ok: checks.every((c) => !c.required || c.status === "ok"), checks };
}

/** Human report: one line per check (`ok`, `missing`, or `optional` for a missing optional piece). */
export function formatDoctorReport(report: DoctorReport): string {
  const lines = report.checks.map((c) => {
    const mark = c.status === "ok" ? "ok      " : c.required ? "MISSING " : "optional";
    return `${mark} ${c.id.padEnd(16)} ${c.detail}${c.path ? ` [${c.path}]` : ""}`;
  });
  lines.push(report.ok ? "Ready: wp-codebox can boot WordPress here." : "Not ready: fix the MISSING items above.");
  return `${lines.join("\n")}\n`;
}
