/**
 * Debian's PHP command line, confined: one process per run, OPcache's file cache in the site's
 * own internal folder so a later run does not compile WordPress again.
 */
import { PHP_LIMITS, confinedCommand, type Bind } from "./bubblewrap.js";
import { startConfined, type ConfinedProcess } from "./confined-process.js";
import { SANDBOX_PATHS, phpBinds, type SiteLayout } from "./native-site.js";
import type { NativeTools } from "./native-tools.js";

/** PHP settings of every run: errors to stderr (logged, not displayed, as on a server), OPcache's file cache. */
export const PHP_INI = [
  "memory_limit=512M",
  "display_errors=0",
  "log_errors=1",
  "error_reporting=E_ALL",
  "html_errors=0",
  "opcache.enable_cli=1",
  `opcache.file_cache=${SANDBOX_PATHS.internal}/opcache`,
  "opcache.file_cache_only=1",
  "opcache.validate_timestamps=1",
  // A file the sandbox changed is compiled again at once, not up to 2 s later.
  "opcache.revalidate_freq=0",
];

/** One PHP run of a site. */
export interface PhpRun {
  tools: NativeTools;
  layout: SiteLayout;
  /** Host folder of the WordPress tree (bound read-only at /wordpress). */
  treeDir: string;
  /** The caller's mounts. */
  extraBinds?: Bind[];
  /** Sandbox path of the script, and its arguments. */
  script: string;
  args?: string[];
  /** Environment variables PHP sees (`getenv()`). */
  env?: Record<string, string>;
  /** Bytes kept per output stream. */
  capBytes: number;
  /** Killed after this many ms (0 or absent: never). */
  deadlineMs?: number;
  /** PHP settings after `PHP_INI` (they win). */
  ini?: string[];
}

/** Starts a confined `php` run. */
export function startPhp(run: PhpRun): ConfinedProcess {
  const ini = [...PHP_INI, ...(run.ini ?? [])].flatMap((setting) => ["-d", setting]);
  const argv = confinedCommand(
    run.tools,
    { binds: [...phpBinds(run.layout, run.treeDir), ...(run.extraBinds ?? [])], chdir: SANDBOX_PATHS.wordpress, limits: PHP_LIMITS, uid: run.layout.uid, ...(run.env ? { env: run.env } : {}) },
    [run.tools.php, ...ini, run.script, ...(run.args ?? [])],
  );
  return startConfined(argv, run.capBytes, run.deadlineMs ?? 0);
}
