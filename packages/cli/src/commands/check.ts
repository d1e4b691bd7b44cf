/**
 * `wp-codebox check PLUGIN_DIR`: mounts the plugin (read-only, not activated), runs
 * `wordpress.check` in a fresh sandbox, writes and verifies the bundle, prints a human summary
 * on stderr and, with `--json`, the report on stdout. Exit 1 when a finding is at or above
 * `--fail-on`.
 */
import { existsSync } from "node:fs";
import { basename, resolve } from "node:path";
import { CHECK_SEVERITIES, WpCodeboxError, type PluginCheckReport } from "@wp-codebox/runtime-core";
import type { RunOptions, RunOutcome } from "./run.js";

/** Options of `runPluginCheck`: the runtime options of `run`, the plugin folder and the check's own. */
export interface PluginCheckOptions extends Omit<RunOptions, "command" | "args" | "plugins"> {
  /** Host path of the plugin: a folder with a main plugin file, or a single-file plugin. */
  pluginDir: string;
  /** Also open each admin page the plugin added in Chromium. Default false. */
  browser?: boolean;
  /** `error` (default), `warning` or `notice`. */
  failOn?: string;
  /** Limit of each surface, a duration ("60s", "90000"); default the catalog's (60 s). */
  surfaceTimeout?: string;
  /** Fail below this percentage (an integer 0-100) of the plugin's callbacks run. */
  minCallbackCoverage?: string;
  /** `callbacks` (default) or `lines`. */
  coverage?: string;
}

/** What a check produced: the run (result, bundle) and, when the check ran, its report. */
export interface PluginCheckOutcome {
  outcome: RunOutcome;
  report?: PluginCheckReport;
}

/**
 * Runs a plugin check in a fresh sandbox and writes its bundle.
 * @throws WpCodeboxError `invalid-argument` (missing plugin path, bad --fail-on) before booting,
 *   and whatever `prepareRun` throws for the runtime flags.
 */
export async function runPluginCheck(options: PluginCheckOptions): Promise<PluginCheckOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const source = resolve(cwd, options.pluginDir);
  if (!existsSync(source)) {
    throw new WpCodeboxError("invalid-argument", `Plugin ${options.pluginDir} does not exist (resolved to ${source}): pass the plugin's folder or its single PHP file.`, { path: source });
  }
  const failOn = options.failOn ?? "error";
  if (!(CHECK_SEVERITIES as readonly string[]).includes(failOn)) {
    throw new WpCodeboxError("invalid-argument", `--fail-on must be one of ${CHECK_SEVERITIES.join(", ")}, got "${failOn}".`, { failOn });
  }
  if (options.minCallbackCoverage !== undefined && !(/^\d{1,3}$/.test(options.minCallbackCoverage) && Number(options.minCallbackCoverage) <= 100)) {
    throw new WpCodeboxError("invalid-argument", `--min-callback-coverage must be a whole percentage from 0 to 100, got "${options.minCallbackCoverage}".`, { minCallbackCoverage: options.minCallbackCoverage });
  }
  if (options.coverage !== undefined && !["callbacks", "lines"].includes(options.coverage)) {
    throw new WpCodeboxError("invalid-argument", `--coverage must be callbacks or lines, got "${options.coverage}".`, { coverage: options.coverage });
  }
  const name = basename(source);
  const { runCommand } = await import("./run.js");
  const { pluginDir: _plugin, browser, failOn: _failOn, surfaceTimeout, minCallbackCoverage, coverage, ...runtime } = options;
  const outcome = await runCommand({
    ...runtime,
    command: "wordpress.check",
    args: [`plugin=${name}`, `browser=${browser === true}`, `fail-on=${failOn}`, ...(surfaceTimeout !== undefined ? [`surface-timeout=${surfaceTimeout}`] : []), ...(minCallbackCoverage !== undefined ? [`min-callback-coverage=${minCallbackCoverage}`] : []), ...(coverage !== undefined ? [`coverage=${coverage}`] : [])],
    // Mounted, not activated: the check activates it itself, after the inventory of the site without it.
    mounts: [...(options.mounts ?? []), `${source}:/wordpress/wp-content/plugins/${name}:ro`],
  });
  const json = outcome.result.json as PluginCheckReport | undefined;
  return { outcome, ...(json && typeof json === "object" && "findings" in json ? { report: json } : {}) };
}
