/**
 * The Debian programs the native backend runs, where they are, and which Debian package provides
 * each: a missing one is `native-backend-unavailable` (exit 3) naming the packages to install.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

/** Host paths of the programs the native backend runs. */
export interface NativeTools {
  php: string;
  /** PHP's FastCGI server (the sandbox's web server runs pages through it). */
  phpCgi: string;
  mariadbd: string;
  mariadbInstallDb: string;
  /** Snapshots: the dump tool and the client that loads a dump. */
  mariadbDump: string;
  mariadb: string;
  bwrap: string;
  prlimit: string;
  setpriv: string;
  /** The relay between PHP's network namespace and the sandbox's sockets (`native-network.ts`). */
  socat: string;
}

/** Where Debian installs them. */
export const DEFAULT_NATIVE_TOOLS: Readonly<NativeTools> = Object.freeze({
  php: "/usr/bin/php",
  phpCgi: "/usr/bin/php-cgi",
  mariadbd: "/usr/sbin/mariadbd",
  mariadbInstallDb: "/usr/bin/mariadb-install-db",
  mariadbDump: "/usr/bin/mariadb-dump",
  mariadb: "/usr/bin/mariadb",
  bwrap: "/usr/bin/bwrap",
  prlimit: "/usr/bin/prlimit",
  setpriv: "/usr/bin/setpriv",
  socat: "/usr/bin/socat",
});

/** The Debian package of each program (`apt-get install -y …`). */
const PACKAGE_OF: Record<keyof NativeTools, string> = {
  php: "php-cli",
  phpCgi: "php-cgi",
  mariadbd: "mariadb-server",
  mariadbInstallDb: "mariadb-server",
  mariadbDump: "mariadb-client",
  mariadb: "mariadb-client",
  bwrap: "bubblewrap",
  prlimit: "util-linux",
  setpriv: "util-linux",
  socat: "socat",
};

/**
 * The Debian packages the native backend needs: PHP with the extensions WordPress uses, MariaDB,
 * bubblewrap. `.ci/run` installs the same list.
 */
export const NATIVE_DEBIAN_PACKAGES: readonly string[] = [
  "php-cli",
  "php-cgi",
  "php-mysql",
  "php-curl",
  "php-gd",
  "php-intl",
  "php-mbstring",
  "php-xml",
  "php-zip",
  "mariadb-server",
  // mariadb-dump and the mariadb client (snapshots); Debian's mariadb-server pulls it in anyway.
  "mariadb-client",
  "bubblewrap",
  // The relay that gives PHP its own site (and the policy proxy) inside its empty network.
  "socat",
];

/** What `doctor` and the backend's preflight learn about the host. */
export interface NativeToolsStatus {
  ok: boolean;
  tools: NativeTools;
  /** Debian packages to install (empty when `ok`). */
  missingPackages: string[];
  /** Debian's PHP version `"X.Y"`, when PHP runs. */
  phpVersion?: string;
  /** PHP extensions of that PHP (`php -m`), lower-case. */
  phpExtensions?: string[];
}

const statusCache = new Map<string, NativeToolsStatus>();

/**
 * Checks that every program exists and that Debian's PHP has mysqli (php-mysql). Runs `php` once
 * per tool set (cached for the process).
 */
export function nativeToolsStatus(tools: NativeTools = DEFAULT_NATIVE_TOOLS): NativeToolsStatus {
  const key = JSON.stringify(tools);
  const cached = statusCache.get(key);
  if (cached) return cached;
  const missing = new Set<string>();
  for (const [name, path] of Object.entries(tools) as [keyof NativeTools, string][]) {
    if (!existsSync(path)) missing.add(PACKAGE_OF[name]);
  }
  let phpVersion: string | undefined;
  let phpExtensions: string[] | undefined;
  if (existsSync(tools.php)) {
    const probe = spawnSync(tools.php, ["-r", 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION, "\\n", implode(",", array_map("strtolower", get_loaded_extensions()));'], { encoding: "utf8", timeout: 20_000 });
    const [version, extensions] = (probe.stdout ?? "").split("\n");
    if (probe.status === 0 && version) {
      phpVersion = version.trim();
      phpExtensions = (extensions ?? "").split(",").filter(Boolean);
      const wanted: Record<string, string> = { mysqli: "php-mysql", curl: "php-curl", gd: "php-gd", intl: "php-intl", mbstring: "php-mbstring", dom: "php-xml", zip: "php-zip" };
      for (const [extension, pkg] of Object.entries(wanted)) if (!phpExtensions.includes(extension)) missing.add(pkg);
    } else {
      missing.add("php-cli");
    }
  }
  if (existsSync(tools.bwrap) && missing.size === 0) {
    // bubblewrap may be installed but not usable (no user namespaces in a container).
    const bw = spawnSync(tools.bwrap, ["--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "/usr/bin/true"], { timeout: 20_000 });
    if (bw.status !== 0) missing.add("bubblewrap (installed, but it cannot create namespaces here)");
  }
  const status: NativeToolsStatus = {
    ok: missing.size === 0,
    tools: { ...tools },
    missingPackages: [...missing],
    ...(phpVersion ? { phpVersion } : {}),
    ...(phpExtensions ? { phpExtensions } : {}),
  };
  statusCache.set(key, status);
  return status;
}

/**
 * @throws `native-backend-unavailable` naming the Debian packages to install.
 */
export function assertNativeTools(tools: NativeTools = DEFAULT_NATIVE_TOOLS): NativeToolsStatus & { phpVersion: string } {
  const status = nativeToolsStatus(tools);
  if (!status.ok || !status.phpVersion) {
    throw new WpCodeboxError(
      "native-backend-unavailable",
      `--backend native needs Debian packages that are not installed: ${status.missingPackages.join(", ")}. Install them with: apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`,
      { missingPackages: status.missingPackages, install: [...NATIVE_DEBIAN_PACKAGES] },
    );
  }
  return status as NativeToolsStatus & { phpVersion: string };
}

/** Debian's MariaDB version (`mariadbd --version`), for cache keys. */
export function mariadbVersion(tools: NativeTools): string {
  const out = spawnSync(tools.mariadbd, ["--version"], { encoding: "utf8", timeout: 20_000 }).stdout ?? "";
  return /Ver\s+(\S+)/.exec(out)?.[1] ?? "unknown";
}

