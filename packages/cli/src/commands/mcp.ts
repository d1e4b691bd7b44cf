/**
 * `wp-codebox mcp`: serves the Model Context Protocol over stdio for agents. The runtime flags are
 * validated exactly like `run`'s before anything boots; the policy defaults to every runnable
 * command (no page JavaScript, no network), as for a sandbox created without a policy.
 */
import { resolve } from "node:path";
import { createMcpSandbox, serveMcpOverStdio, type McpStdioOutcome } from "@wp-codebox/mcp";
import { PLAYGROUND_OBSERVATION_TYPES, createPlaygroundBackend, defaultPolicy } from "@wp-codebox/runtime-playground";
import { prepareRun, type RunOptions } from "./run.js";

/** Inputs of `wp-codebox mcp`: `run`'s runtime flags plus the bundle base directory. */
export interface McpOptions extends Omit<RunOptions, "command" | "args" | "timeout" | "artifactsDir" | "interrupt" | "backend"> {
  /** Base directory of `collect_artifacts` bundles; default `./wp-codebox-artifacts`. */
  artifactsDir?: string;
  /** Boot on the first tool call instead of at start. */
  lazyBoot?: boolean;
  /** Server version reported to clients. */
  version?: string;
  log: (message: string) => void;
}

/**
 * Validates the runtime flags, then serves MCP on stdin/stdout until stdin closes or a signal
 * arrives; the sandbox is disposed before this returns.
 * @throws WpCodeboxError what `prepareRun` throws for the runtime flags (nothing booted).
 */
export async function runMcpServer(options: McpOptions): Promise<McpStdioOutcome> {
  const cwd = options.cwd ?? process.cwd();
  const policy = options.policy ?? JSON.stringify(defaultPolicy());
  // The same validation as `run` (mounts, plugins, PHP/WordPress versions, policy, env).
  const prepared = prepareRun({ ...options, cwd, policy, command: "inspect-mounted-inputs", args: [] });
  const backend = createPlaygroundBackend({ cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
  const { onProgress: _ignored, ...createSpec } = prepared.createSpec;
  const sandbox = createMcpSandbox({
    backend,
    createSpec,
    artifactsDir: resolve(cwd, options.artifactsDir ?? "wp-codebox-artifacts"),
    log: options.log,
  });
  return serveMcpOverStdio({
    sandbox,
    policy: prepared.policy,
    observationTypes: PLAYGROUND_OBSERVATION_TYPES,
    eagerBoot: options.lazyBoot !== true,
    ...(options.version ? { version: options.version } : {}),
    log: options.log,
  });
}
