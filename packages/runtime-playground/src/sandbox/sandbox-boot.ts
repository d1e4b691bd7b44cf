/**
 * Booting one sandbox: what the backend resolved beforehand (`PlaygroundRuntimeSetup`), the
 * sandbox's own files (a private copy of wp-content, a workspace, the caller's mounts), the boot
 * options of its PHP workers, and the activation of `--plugin`/`--theme` inputs once WordPress runs.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SELF_CALL_MIN_TIMEOUT_MS, WpCodeboxError, pluginActivationOutputNotice, pluginActivationOutputs, type PluginActivationOutput, type ResolvedMount, type RuntimeDeterminism, type RuntimePolicy, type WordPressChoiceRecord } from "@wp-codebox/runtime-core";
import type { PhpWorkerHost } from "../worker/php-worker-host.js";
import type { WorkerBootOptions, WorkerMount, WorkerRunResult } from "../worker/php-worker-protocol.js";
import { phpProgram } from "../php-source/php-assets.js";
import { ContentSync } from "./content-sync.js";
import { sandboxTempBase, sweepStaleSandboxDirs, trackSandboxDir } from "./sandbox-dirs.js";
import { selfHostPorts, type SandboxOrigin } from "../worker/sandbox-origin.js";
import { DEFERRED_REQUESTS_DIR, fastForwardCronPhp } from "../php-source/site-php.js";
import { type WpCliPharSource, outcomeFromRun, withFatalRecorder, phpValue } from "@wp-codebox/commands";

/** Everything the backend resolved before boot. */
export interface PlaygroundRuntimeSetup {
  siteDir: string;
  /** The installed site's packed OPcache seed (opcache-seed.ts), when it has one. */
  opcacheSeedPack?: string;
  /**
   * The installed site has no seed yet (its first boot; the installer saved none): the sandbox's
   * first worker compiles core from `precompile` (while the site installs, on a first boot), and
   * the sandbox saves its OPcache as the seed at `pack` once booted, before any of the caller's
   * code runs. Cleared once done.
   */
  seedOpcache?: { pack: string; precompile: { treeDir: string; scripts: string[] } };
  wordpressRelease: string;
  /** Set when WordPress came from a release mirror (`--wp` beyond the bundled builds). */
  wordpressSource?: { requested: string; release: string; checksum: { algorithm: string; value: string; url: string }; fetched: boolean };
  /** The WordPress booted, where it came from and how it was chosen (`RuntimeInfo.wordpress`). */
  wordpress?: WordPressChoiceRecord;
  phpVersion: string;
  /** PHP extensions each worker loads (resolved: `resolvePhpExtensions`). */
  phpExtensions: string[];
  bootMode: "installed" | "cached";
  policy: RuntimePolicy;
  mounts: ResolvedMount[];
  plugins: string[];
  themes: string[];
  env: Record<string, string>;
  secretEnv: Record<string, string>;
  siteOptions: Record<string, string>;
  sqliteZipPath: string;
  constants: Record<string, string | number | boolean | null>;
  /** The caller's own constants (`--define`), part of `constants` too: recorded in `info().defines`. */
  defines?: Record<string, string | number | boolean | null>;
  cwd: string;
  outputCapBytes?: number;
  /** Limit of one site request in ms (`0` = none); default `DEFAULT_SITE_REQUEST_TIMEOUT_MS`. */
  siteRequestTimeoutMs?: number;
  /** Where `wordpress.wp-cli` looks for wp-cli.phar (flag, then env, then cache dir). */
  wpCli?: WpCliPharSource;
  /** Screenshot steps with `compare` write their baselines instead of comparing (`--update-baselines`). */
  updateBaselines?: boolean;
  /** PHP workers serving HTTP in parallel (browser traffic); 1 = a single worker (default). */
  workers?: number;
  /** Evidence bytes kept in memory before large values spill to the sandbox directory (evidence-spill.ts). */
  evidenceMemoryBytes?: number;
  /** Clock, seed and origin (resolved by `resolveDeterminism`); default real clock, host entropy, loopback origin. */
  determinism?: RuntimeDeterminism;
  onProgress?: (message: string) => void;
}

/** Creates the sandbox's temporary folder under `sandboxTempBase()` (removed at dispose, or at process exit if never disposed; after a SIGKILL, by the next sandbox created there). */
export function createSandboxDir(): string {
  const base = sandboxTempBase();
  // Folders of sandboxes whose process was killed before it could clean up.
  sweepStaleSandboxDirs(base);
  const sandboxDir = mkdtempSync(join(base, "wp-codebox-"));
  trackSandboxDir(sandboxDir);
  return sandboxDir;
}

/** Host folder mounted at `/wordpress/wp-content`. */
export function sandboxContentDir(sandboxDir: string): string {
  return join(sandboxDir, "wp-content");
}

/**
 * Host folders of the sandbox's copy-on-write layer over the shared core (`copy-on-write-fs.ts`):
 * the entries it wrote or created, and its deletion markers.
 */
export function sandboxCoreLayers(sandboxDir: string): { upper: string; whiteouts: string } {
  return { upper: join(sandboxDir, "core-upper"), whiteouts: join(sandboxDir, "core-whiteouts") };
}

/** Host folder of the evidence a long-lived sandbox moved out of memory (`evidence-spill.ts`); never mounted. */
export function sandboxEvidenceDir(sandboxDir: string): string {
  return join(sandboxDir, "evidence");
}

/** Host folder mounted at `/workspace`. */
export function sandboxWorkspaceDir(sandboxDir: string): string {
  return join(sandboxDir, "workspace");
}

/**
 * Fills the sandbox folder: a copy of the installed site's wp-content, an empty workspace, and the
 * mounts. Read-only mounts are private copies (the sandbox may change them, the host never sees
 * it); read-write mounts are the host folders themselves, mounted in every worker.
 * @returns the worker mounts of the read-write mounts.
 */
export function populateSandboxDir(sandboxDir: string, setup: Pick<PlaygroundRuntimeSetup, "siteDir" | "mounts">): WorkerMount[] {
  const contentDir = sandboxContentDir(sandboxDir);
  const workspaceDir = sandboxWorkspaceDir(sandboxDir);
  // Timestamps kept: PHP sees the files' own mtimes, not the boot's (a theme's pattern cache, or a
  // plugin's filemtime() cache-buster, would otherwise depend on when the sandbox booted).
  cpSync(join(setup.siteDir, "wp-content"), contentDir, { recursive: true, preserveTimestamps: true });
  mkdirSync(workspaceDir, { recursive: true });
  for (const mount of setup.mounts) {
    const hostTarget = hostPathFor(mount.target, contentDir, workspaceDir);
    if (mount.mode === "readonly") {
      cpSync(mount.source, hostTarget, { recursive: true, dereference: false, preserveTimestamps: true });
    } else if (mount.kind === "directory" && mount.target !== "/workspace") {
      // A mount of the whole /workspace takes the place of the sandbox's own workspace folder.
      mkdirSync(hostTarget, { recursive: true });
    }
  }
  return readWriteWorkerMounts(setup.mounts);
}

/** The worker mounts of the read-write mounts: the host folders themselves (known before the sandbox folder is filled). */
export function readWriteWorkerMounts(mounts: readonly ResolvedMount[]): WorkerMount[] {
  return mounts.filter((mount) => mount.mode !== "readonly").map((mount) => ({ hostPath: mount.source, vfsPath: mount.target }));
}

/**
 * Puts the sandbox's own `/workspace` back as `populateSandboxDir` made it: emptied, then the
 * read-only mounts under it copied again and the mount points of read-write ones made. A read-write
 * mount of the whole `/workspace` is the host's folder and keeps its content, as read-write mounts
 * always do. Call it only while no worker runs (they mount the folder).
 */
export function resetWorkspaceDir(sandboxDir: string, setup: Pick<PlaygroundRuntimeSetup, "mounts">): void {
  const workspaceDir = sandboxWorkspaceDir(sandboxDir);
  rmSync(workspaceDir, { recursive: true, force: true });
  mkdirSync(workspaceDir, { recursive: true });
  for (const mount of setup.mounts) {
    if (mount.target.startsWith("/wordpress/wp-content/")) continue;
    const hostTarget = hostPathFor(mount.target, sandboxContentDir(sandboxDir), workspaceDir);
    if (mount.mode === "readonly") cpSync(mount.source, hostTarget, { recursive: true, dereference: false, preserveTimestamps: true });
    else if (mount.kind === "directory" && mount.target !== "/workspace") mkdirSync(hostTarget, { recursive: true });
  }
}

/**
 * What a fast `reset()` restores wp-content from: the installed site's wp-content with the
 * read-only mounts under wp-content over it; read-write directory mounts there are left alone.
 * Stamped now, so files changed from here on are the ones to restore.
 */
export function sandboxContentSync(sandboxDir: string, setup: Pick<PlaygroundRuntimeSetup, "siteDir" | "mounts">): ContentSync {
  const inContent = (target: string) => target.startsWith("/wordpress/wp-content/");
  const rel = (target: string) => target.slice("/wordpress/wp-content/".length);
  const contentSync = new ContentSync(
    sandboxContentDir(sandboxDir),
    [{ source: join(setup.siteDir, "wp-content"), target: "" }, ...setup.mounts.filter((m) => m.mode === "readonly" && inContent(m.target)).map((m) => ({ source: m.source, target: rel(m.target) }))],
    setup.mounts.filter((m) => m.mode !== "readonly" && m.kind === "directory" && inContent(m.target)).map((m) => ({ target: rel(m.target) })),
  );
  contentSync.stampNow();
  return contentSync;
}

function hostPathFor(target: string, contentDir: string, workspaceDir: string): string {
  if (target.startsWith("/wordpress/wp-content/")) return join(contentDir, target.slice("/wordpress/wp-content/".length));
  return join(workspaceDir, target.slice("/workspace".length));
}

/**
 * Boot options of a PHP worker of this sandbox (the pool adds mounts and a process id). The
 * environment (`env` and `secretEnv`) reaches PHP through a must-use plugin that sets it; the
 * sandbox's own site (`origin`, and the server port that takes PHP's requests to it) through
 * constants the self-call must-use plugin reads.
 */
export function workerBootOptions(
  setup: PlaygroundRuntimeSetup,
  sandboxDir: string,
  self: { origin: SandboxOrigin; selfCallPort: number },
): Omit<WorkerBootOptions, "mounts" | "processId"> {
  const env = { ...setup.env, ...setup.secretEnv };
  const muPlugin = Object.keys(env).length
    ? `<?php\nforeach (${phpValue(env, "environment")} as $k => $v) { putenv($k . '=' . $v); $_ENV[$k] = $v; }\n`
    : undefined;
  return {
    phpVersion: setup.phpVersion,
    extensions: setup.phpExtensions,
    siteUrl: self.origin.siteUrl,
    origin: self.origin,
    selfCallPort: self.selfCallPort,
    coreDir: setup.siteDir,
    coreLayers: sandboxCoreLayers(sandboxDir),
    contentDir: sandboxContentDir(sandboxDir),
    workspaceDir: sandboxWorkspaceDir(sandboxDir),
    opcacheSeedPack: setup.opcacheSeedPack,
    ...(setup.seedOpcache ? { precompile: setup.seedOpcache.precompile } : {}),
    installMode: "do-not-attempt-installing",
    sqliteZipPath: setup.sqliteZipPath,
    // Through Playground's constants file (JSON), never spliced into PHP source.
    constants: {
      ...setup.constants,
      WP_CODEBOX_SELF_HOSTS: selfHostPorts(self.origin).join(" "),
      WP_CODEBOX_SELF_CALL_TIMEOUT: SELF_CALL_MIN_TIMEOUT_MS / 1000,
      WP_CODEBOX_DEFERRED_DIR: DEFERRED_REQUESTS_DIR,
    },
    muPlugin,
    network: setup.policy.network,
  };
}

/** What `assets/sandbox/activate-inputs.php` prints: the activation report, or what was being done when PHP ended. */
interface ActivationReport {
  plugins: { dir: string; error: string | null; output?: string; outputBytes?: number }[];
  themes: { dir: string; error: string | null }[];
  ended?: { kind: string; name: string };
}

/** Why activation printed no report: PHP ended (exit/die) while activating `ended`, or the output was not the report. */
function activationEndedMessage(ended: ActivationReport["ended"] | undefined, stdout: string): string {
  if (!ended) return `Activating plugins/themes printed no report (output: ${JSON.stringify(stdout.slice(0, 300))}).`;
  const what = ended.kind === "plugin" || ended.kind === "theme" ? `while activating the ${ended.kind} ${ended.name}` : ended.kind === "site options" ? `while setting the site option ${ended.name}` : "while WordPress loaded";
  const subject = ended.kind === "plugin" || ended.kind === "theme" ? `The ${ended.kind} ${ended.name}` : "Something";
  return `PHP ended (exit or die) ${what}, so the sandbox could not finish activating its inputs. ${subject} must not call exit or die while it loads or activates.`;
}

/**
 * Activates `--plugin`/`--theme` inputs and applies site options, in the booted primary worker.
 * A plugin that printed while it was activated stays active, as in WordPress: `onOutput` is told,
 * and the progress says so (`pluginActivationOutputNotice`).
 * @returns true when there was something to activate.
 * @throws `boot-failed` naming every input that did not activate, with WordPress's reason, or the
 *   input during whose activation PHP ended (exit or die; `data.ended`).
 */
export async function activateInputs(host: PhpWorkerHost, setup: PlaygroundRuntimeSetup, onOutput?: (printed: PluginActivationOutput) => void): Promise<boolean> {
  const { plugins, themes, siteOptions } = setup;
  if (!plugins.length && !themes.length && !Object.keys(siteOptions).length) return false;
  setup.onProgress?.("Activating plugins and themes");
  const code = phpProgram(
    { wp_codebox_plugins: phpValue(plugins, "plugins"), wp_codebox_themes: phpValue(themes, "themes"), wp_codebox_site_options: phpValue(siteOptions, "site options") },
    "actors/admin-user.php",
    "sandbox/activate-inputs.php",
  );
  const outcome = outcomeFromRun(await host.call<WorkerRunResult>({ op: "run", code: withFatalRecorder(code), capBytes: 1 << 20 }));
  if (outcome.status !== "ok") {
    throw new WpCodeboxError("boot-failed", `Activating plugins/themes failed: ${outcome.error?.message ?? outcome.stderr}`, { error: outcome.error });
  }
  const report = outcome.json as ActivationReport | undefined;
  if (!report || !Array.isArray(report.plugins) || !Array.isArray(report.themes)) {
    throw new WpCodeboxError("boot-failed", activationEndedMessage(report?.ended, outcome.stdout), { ended: report?.ended ?? null });
  }
  const failed = [...report.plugins, ...report.themes].filter((r) => r.error);
  if (failed.length) {
    throw new WpCodeboxError(
      "boot-failed",
      `Could not activate: ${failed.map((f) => `${f.dir} (${f.error})`).join("; ")}. Check the plugin/theme header and that it loads without a fatal error.`,
      { failed },
    );
  }
  for (const printed of pluginActivationOutputs(report.plugins.map((p) => (p.output !== undefined ? { plugin: p.dir, output: p.output, outputBytes: p.outputBytes } : null)))) {
    setup.onProgress?.(pluginActivationOutputNotice(printed));
    onOutput?.(printed);
  }
  return true;
}

/**
 * Moves WordPress's recurring events that are overdue in the installed-site cache to their next
 * run after now: the cache is a site frozen in time, and a sandbox should start as a site whose
 * cron kept running, not by running days of core maintenance (update checks, Site Health) in the
 * background of its first command. Events that fall due later run as on a real site. On the
 * virtual clock it is part of the boot (work 0), so it shifts no later instant.
 * @returns how many events moved.
 * @throws `boot-failed` when the schedule could not be read or written.
 */
export async function fastForwardCron(host: PhpWorkerHost): Promise<number> {
  const run = await host.call<WorkerRunResult>({ op: "run", code: withFatalRecorder(fastForwardCronPhp()), capBytes: 1 << 16 }, { partOfBoot: true });
  const outcome = outcomeFromRun(run);
  if (outcome.status !== "ok") throw new WpCodeboxError("boot-failed", `Bringing WP-Cron's schedule up to date failed: ${outcome.error?.message ?? outcome.stderr}`, { error: outcome.error });
  return (outcome.json as { moved?: number } | undefined)?.moved ?? 0;
}
