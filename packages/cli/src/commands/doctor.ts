/**
 * `wp-codebox doctor`: is this machine ready to run sandboxes? Checks Node, the offline WordPress
 * builds, the cache directory (and whether an installed site is cached), PHP versions and the PHP
 * extensions they can load, Chromium
 * (optional: only browser commands need it), a WP-CLI phar (optional) and the Debian packages of
 * `--backend native` (optional).
 */
import { accessSync, constants, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { LATEST_CHECK_MAX_AGE_MS, chooseDefaultWordPress, isLatestCheckFresh } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import {
  DEFAULT_PHP_EXTENSIONS,
  DEFAULT_PHP_VERSION,
  DEFAULT_WORDPRESS_MIRROR,
  SUPPORTED_PHP_VERSIONS,
  availablePhpExtensions,
  cachedLatestCheck,
  findChromium,
  listCachedReleases,
  listCachedWpCli,
  listWordPressBuilds,
  pinnedDefaultWordPress,
  resolveCacheDir,
} from "@wp-codebox/runtime-playground";
import { dependencyEngines, describeNodeSupport } from "./node-support.js";

/** Schema id of the `doctor --json` report. */
export const DOCTOR_REPORT_SCHEMA_ID = "wp-codebox/doctor-report/v1";

/** One check. `required` checks that are not `ok` make the report fail (exit 3). */
export interface DoctorCheck {
  id: "node" | "wordpress-builds" | "wordpress-default" | "php" | "php-extensions" | "cache-dir" | "installed-site" | "chromium" | "wp-cli" | "native-backend";
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
    // A file where the folder (or a parent) should be cannot hold the cache, writable or not.
    if (!statSync(probe).isDirectory()) return false;
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
          ? `WordPress ${builds.map((b) => b.release).join(", ")} bundled, available offline (the offline floor of the default)`
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

  checks.push(defaultWordPressCheck(cacheDir, env));

  const sites = cachedSites(cacheDir);
  checks.push({
    id: "installed-site",
    required: false,
    status: sites.length > 0 ? "ok" : "missing",
    detail:
      sites.length > 0
        ? `${sites.length} installed site(s) cached: ${sites.map((s) => `WordPress ${s.release ?? "?"} / PHP ${s.php ?? "?"}`).join(", ")}; boots start from it`
        : "No installed site cached yet: the first run installs WordPress once (about 3 s on a 2-core machine, after any download), later boots take about 1 s.",
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

  // Optional: only --backend native needs Debian's PHP, MariaDB and bubblewrap.
  const native = nativeToolsStatus();
  checks.push({
    id: "native-backend",
    required: false,
    status: native.ok ? "ok" : "missing",
    detail: native.ok
      ? `--backend native is ready: Debian's PHP ${native.phpVersion}, MariaDB, bubblewrap.`
      : `--backend native needs Debian packages: ${native.missingPackages.join(", ")} (apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}); only that backend needs them.`,
    data: { packages: [...NATIVE_DEBIAN_PACKAGES], missingPackages: native.missingPackages, ...(native.phpVersion ? { phpVersion: native.phpVersion, phpExtensions: native.phpExtensions ?? [] } : {}) },
  });

  return { schema: DOCTOR_REPORT_SCHEMA_ID, ok: checks.every((c) => !c.required || c.status === "ok"), checks };
}

/**
 * The `wordpress-default` check: the bundled builds, the releases in the cache, and which WordPress
 * a run that names none boots now. "Current" means the newest release was confirmed by the mirror
 * less than a day ago (or the default is pinned); the doctor itself never asks the mirror.
 */
function defaultWordPressCheck(cacheDir: string, env: NodeJS.ProcessEnv): DoctorCheck {
  const bundled = (() => {
    try {
      return listWordPressBuilds().map((b) => b.release);
    } catch {
      return [];
    }
  })();
  const cached = listCachedReleases(cacheDir);
  const mirrorBase = env.WP_CODEBOX_WORDPRESS_MIRROR || DEFAULT_WORDPRESS_MIRROR;
  const mirror = mirrorBase.endsWith("/") ? mirrorBase : `${mirrorBase}/`;
  const offline = env.WP_CODEBOX_OFFLINE === "1";
  const check = cachedLatestCheck(cacheDir);
  const lastCheck = check && check.mirror === mirror ? check : undefined;
  const base = {
    bundled,
    cached: cached.map((c) => ({ version: c.release, path: c.zipPath, mirror: c.mirror, fetchedAt: c.fetchedAt })),
    mirror,
    offline,
    ...(lastCheck ? { latestCheck: { release: lastCheck.release, checkedAt: lastCheck.checkedAt ?? null } } : {}),
  };
  const listed = `bundled: ${bundled.join(", ") || "none"}; cached releases: ${cached.map((c) => c.release).join(", ") || "none"}`;
  let pinned: string | undefined;
  try {
    pinned = pinnedDefaultWordPress(env);
  } catch (error) {
    return { id: "wordpress-default", required: false, status: "missing", detail: `${(error as Error).message} (${listed})`, data: { ...base, default: null, current: false } };
  }
  if (pinned !== undefined) {
    return { id: "wordpress-default", required: false, status: "ok", detail: `default WordPress ${pinned}, pinned by WP_CODEBOX_WP (${listed})`, data: { ...base, default: { version: pinned, chosenBy: "named" }, current: true } };
  }
  const fresh = !offline && lastCheck !== undefined && isLatestCheckFresh(lastCheck.checkedAt, Date.now(), LATEST_CHECK_MAX_AGE_MS);
  if (fresh) {
    return {
      id: "wordpress-default",
      required: false,
      status: "ok",
      detail: `default WordPress ${lastCheck!.release}, the newest release at ${mirror} (checked ${lastCheck!.checkedAt}; asked again after a day) (${listed})`,
      data: { ...base, default: { version: lastCheck!.release, chosenBy: "latest" }, current: true },
    };
  }
  const fallback = bundled.length || cached.length ? chooseDefaultWordPress({ offline: true, cachedReleases: cached.map((c) => c.release), bundledReleases: bundled }) : undefined;
  const fallbackText = fallback ? `WordPress ${fallback.version}, the newest ${fallback.source === "release" ? "release in the cache" : "bundled build"}` : "nothing (no bundled build, no cached release)";
  return {
    id: "wordpress-default",
    required: false,
    status: "missing",
    detail: offline
      ? `offline (WP_CODEBOX_OFFLINE=1): the default is ${fallbackText}; whether a newer release exists is not checked (${listed})`
      : `the default is the newest release at ${mirror}, ${lastCheck ? `last checked ${lastCheck.checkedAt ?? "at an unknown time"}` : "never checked"}: the next run asks the mirror (and fetches it once); if the mirror cannot be reached it uses ${fallbackText} (${listed})`,
    // Online and unchecked, the default is not known until the mirror answers: only the fallback is.
    data: { ...base, default: offline && fallback ? { version: fallback.version, chosenBy: fallback.chosenBy } : null, fallback: fallback ? { version: fallback.version, chosenBy: fallback.chosenBy } : null, current: false },
  };
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
