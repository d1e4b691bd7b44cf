/**
 * `wp-codebox mcp`: serves the Model Context Protocol over stdio for agents. The runtime flags are
 * validated exactly like `run`'s before anything boots; the policy defaults to every runnable
 * command (no page JavaScript, no network), as for a sandbox created without a policy. With
 * `--attach` the tools drive a `wp-codebox serve` sandbox instead, under serve's policy.
 */
import { resolve } from "node:path";
import { createMcpSandbox, serveMcpOverStdio, type McpStdioOutcome } from "@wp-codebox/mcp";
import type { RuntimeBackend, RuntimeCreateSpec, RuntimePolicy } from "@wp-codebox/runtime-core";
import { OFFLINE_NOTICE_PREFIX } from "@wp-codebox/runtime-core";
import { PLAYGROUND_OBSERVATION_TYPES, defaultPolicy } from "@wp-codebox/runtime-playground";
import { createBackend } from "./backends.js";
import { prepareRun, type RunOptions } from "./run.js";

/** Inputs of `wp-codebox mcp`: `run`'s runtime flags plus the bundle base directory. */
export interface McpOptions extends Omit<RunOptions, "command" | "args" | "timeout" | "artifactsDir" | "interrupt" | "backend"> {
  /**
   * Base directory of `collect_artifacts` bundles; default `./wp-codebox-artifacts`. Each server
   * session writes into a fresh `mcp-<UTC time>-<random>` folder there, so the base may hold
   * earlier sessions' bundles.
   */
  artifactsDir?: string;
  /** Boot on the first tool call instead of at start. */
  lazyBoot?: boolean;
  /** Control URL of a `wp-codebox serve` to drive instead of booting (no runtime flags then). */
  attach?: string;
  /** Control token for `attach`; default `$WP_CODEBOX_TOKEN`. */
  token?: string;
  /** Server version reported to clients. */
  version?: string;
  log: (message: string) => void;
}

/**
 * Validates the runtime flags, then serves MCP on stdin/stdout until stdin closes or a signal
 * arrives; the sandbox is disposed before this returns.
 * With `attach`, the serve sandbox is attached before the server starts (a wrong token or a
 * stopped serve fails here, not on every tool call), is not reset, and is detached at the end.
 * @throws WpCodeboxError what `prepareRun` throws for the runtime flags (nothing booted); with
 *   `attach`: `missing-argument` (no token), `attach-unreachable`, `attach-unauthorized`,
 *   `pool-exhausted`.
 */
export async function runMcpServer(options: McpOptions): Promise<McpStdioOutcome> {
  const cwd = options.cwd ?? process.cwd();
  let backend: RuntimeBackend;
  let createSpec: RuntimeCreateSpec = {};
  let policy: RuntimePolicy;
  let observationTypes: readonly string[] = PLAYGROUND_OBSERVATION_TYPES;
  let detach: (() => Promise<void>) | undefined;
  if (options.attach !== undefined) {
    const { attach } = await import("./attach.js");
    const runtime = await attach(
      { control: options.attach, ...(options.token !== undefined ? { token: options.token } : {}), ...(options.processEnv ? { processEnv: options.processEnv } : {}) },
      {
        // An agent's session outlives a suspended laptop: a lost session is replaced on the next call.
        reattach: true,
        onReattach: (e) =>
          options.log(
            `Session ${e.previousSession} was gone (${e.reason}); attached again as ${e.session} on sandbox ${e.sandbox}: ` +
              (e.stateKept ? "serve's shared sandbox, its state is as the earlier session left it" : "a pooled sandbox, freshly reset: what the earlier session did to the site is gone"),
          ),
      },
    );
    options.log(`Attached to ${runtime.info().siteUrl} (sandbox ${runtime.sandboxId}); its state is kept (call reset for a fresh site)`);
    policy = runtime.info().policy;
    let handedOut = false;
    backend = {
      kind: "attached",
      // The episode creates its runtime once; reset and restore then act on the same sandbox.
      create: async () => {
        if (handedOut) return runtime.fork();
        handedOut = true;
        return runtime;
      },
    };
    detach = () => runtime.dispose();
  } else {
    // The same validation as `run` (mounts, plugins, PHP/WordPress versions, policy, env).
    // --artifacts is the base of the session folders, not a bundle directory: it may hold earlier sessions.
    const { artifactsDir: _base, backendName, ...runtimeFlags } = options;
    backend = createBackend(backendName, { cwd, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
    const supports = backend.supports;
    // The flags are checked for this backend; the placeholder command itself never runs.
    const prepared = prepareRun({ ...runtimeFlags, cwd, policy: options.policy ?? JSON.stringify(defaultPolicy()), command: "inspect-mounted-inputs", args: [], backend: { ...backend, supports: undefined } });
    const { onProgress: _ignored, ...spec } = prepared.createSpec;
    // Boot progress stays quiet on the MCP server's stderr, except the line that says which WordPress an offline default is.
    createSpec = { ...spec, onProgress: (message) => (message.startsWith(OFFLINE_NOTICE_PREFIX) ? options.log(message) : undefined) };
    policy = prepared.policy;
    if (supports) {
      // Tools the backend cannot run are listed as UNAVAILABLE and refused (policy-denied) without a call into the sandbox.
      const unavailable = policy.commands.filter((c) => !supports.commands.includes(c));
      policy = { ...policy, commands: policy.commands.filter((c) => supports.commands.includes(c)) };
      createSpec = { ...createSpec, policy };
      observationTypes = PLAYGROUND_OBSERVATION_TYPES.filter((t) => supports.observations.includes(t));
      if (unavailable.length) options.log(`The ${backend.kind} backend runs ${supports.commands.join(", ")}: ${unavailable.length} other tool(s) are unavailable (--backend playground runs them all)`);
    }
  }
  const sandbox = createMcpSandbox({
    backend,
    createSpec,
    artifactsDir: resolve(cwd, options.artifactsDir ?? "wp-codebox-artifacts"),
    log: options.log,
    attached: options.attach !== undefined,
  });
  try {
    return await serveMcpOverStdio({
      sandbox,
      policy,
      observationTypes,
      eagerBoot: options.lazyBoot !== true,
      cwd,
      ...(options.version ? { version: options.version } : {}),
      log: options.log,
    });
  } finally {
    // Detach even when no tool was ever called (the episode never took the runtime).
    if (detach) {
      options.log("Detaching from the serve sandbox (it keeps running)");
      await detach().catch(() => undefined);
    }
  }
}
