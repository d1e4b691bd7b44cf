/**
 * The wp-codebox MCP server: `tools/list` gives one tool per catalog command, the episode tools
 * (`reset`, `observe`, `snapshot`, `restore`, `collect_artifacts`) and, once the sandbox is up, one
 * tool per ability the site registers (WordPress 6.9+; `notifications/tools/list_changed` when
 * they appear); `tools/call` runs them in the session's sandbox. Every tool declares its
 * `outputSchema` and behaviour annotations; the site URL, the login link and the session's bundle
 * files are resources (`resources/list`, `resources/read`). Results carry the execution record as `structuredContent` with a text summary;
 * the screenshots a result names come back as image content (each read on its own, capped). A call made with a `progressToken` gets
 * `notifications/progress` while it runs; a cancelled call stops its command.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ARTIFACT_READ_CAP_BYTES, checkCommandInput, getCommandDefinition, serializeError, WpCodeboxError, quoteValue, type RuntimePolicy } from "@wp-codebox/runtime-core";
import type { McpSandbox } from "./mcp-sandbox.js";
import { commandForToolName, commandTools, toolInputToArgs, type McpToolDescription } from "./tool-schemas.js";
import { ABILITY_COMMAND, abilityCommandArgs, abilityForToolName, abilityInputFromArguments, abilityTools } from "./ability-tools.js";
import { listSessionResources, readSessionResource } from "./mcp-resources.js";
import { EPISODE_OUTPUT_SCHEMAS } from "./tool-output-schemas.js";

/** Options of `createWpCodeboxMcpServer`. */
export interface WpCodeboxMcpServerOptions {
  sandbox: McpSandbox;
  /** The policy, when known before boot (local sandboxes); otherwise read from the runtime. */
  policy?: RuntimePolicy;
  /** Observation types the backend supports, listed in the `observe` tool's schema. */
  observationTypes?: readonly string[];
  /** How often a running call reports progress, in ms; default 1000. */
  progressIntervalMs?: number;
  /** Largest screenshot returned as image content, in bytes; default and ceiling `ARTIFACT_READ_CAP_BYTES` (5 MiB). */
  imageCapBytes?: number;
  /** Characters of stdout/stderr kept in the text summary; default 20000 (the full text is in structuredContent). */
  summaryChars?: number;
  /** Server version reported at initialize. */
  version?: string;
  /** Base of relative `code-file` and `@file` tool arguments; default `process.cwd()`. */
  cwd?: string;
  log?: (message: string) => void;
}

const INSTRUCTIONS = [
  "wp-codebox: a disposable WordPress sandbox (WordPress Playground: PHP in WebAssembly + SQLite), offline.",
  "Each catalog command is a tool (wordpress_run_php, wordpress_rest_request, wordpress_browser_actions, …) taking the command's arguments by name.",
  "On WordPress 6.9+ each ability the site registers is a tool too, named after the ability with its / as __ (core/get-site-info → core__get-site-info), taking the ability's own input; they are listed once the sandbox is up.",
  "Resources: the site URL (wp-codebox://site/url), the administrator's login link (wp-codebox://site/login) and the files of the bundles collect_artifacts wrote (wp-codebox://bundles/…).",
  "Episode tools: reset (back to the freshly booted site), observe, snapshot / restore (by snapshot id), collect_artifacts (writes a verifiable bundle and returns its directory).",
  "Tools the sandbox policy does not grant are marked UNAVAILABLE and refused with error code policy-denied.",
].join(" ");

/** MCP behaviour hints of the episode tools: observe and snapshot only read; reset and restore throw away the site's state. */
const EPISODE_ANNOTATIONS: Record<string, Record<string, unknown>> = {
  reset: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  observe: { readOnlyHint: true, openWorldHint: false },
  snapshot: { readOnlyHint: true, openWorldHint: false },
  restore: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  collect_artifacts: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};

/** The episode tools' descriptions, with their output schemas and behaviour hints. */
export function episodeTools(observationTypes?: readonly string[]): McpToolDescription[] {
  return episodeToolInputs(observationTypes).map((tool) => ({
    ...tool,
    outputSchema: EPISODE_OUTPUT_SCHEMAS[tool.name]!,
    annotations: { title: tool.name, ...EPISODE_ANNOTATIONS[tool.name]! },
  }));
}

function episodeToolInputs(observationTypes?: readonly string[]): McpToolDescription[] {
  return [
    {
      name: "reset",
      description: "Return the sandbox to its freshly booted state (fast: no re-boot) and start a new episode trace. Returns the reset record with its observations.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
    },
    {
      name: "observe",
      description:
        "Record an observation of the sandbox (e.g. type runtime-info, mounts, wordpress-state with sections, command-result, runtime-logs, abilities) and return its data. Extra properties are passed to the observer.",
      inputSchema: {
        type: "object",
        properties: {
          type: observationTypes?.length
            ? { type: "string", enum: [...observationTypes], description: "Observation type." }
            : { type: "string", description: "Observation type, e.g. runtime-info." },
        },
        required: ["type"],
        additionalProperties: true,
      },
    },
    {
      name: "snapshot",
      description: "Capture the sandbox state (database and wp-content). Returns { id, digest, semantics }; pass the id to restore.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
    },
    {
      name: "restore",
      description: "Make the sandbox state equal to a snapshot taken in this session (hashes verified first).",
      inputSchema: {
        type: "object",
        properties: { snapshot: { type: "string", description: "Snapshot id returned by the snapshot tool." } },
        required: ["snapshot"],
        additionalProperties: false,
      },
    },
    {
      name: "collect_artifacts",
      description:
        "Write the artifact bundle of the session so far (every command result since the server started; the episode trace since the last reset), verify it, and return its directory, id, digest and verification.",
      inputSchema: {
        type: "object",
        properties: {
          directory: {
            type: "string",
            description:
              "Bundle folder name (new or empty), relative to this server session's folder <--artifacts base>/mcp-<UTC time>-<random>/; absolute paths and paths that leave that folder are refused (artifacts-dir-outside-base). Default: the next bundle-NNNN there.",
          },
          includeRuntimeSnapshotBundles: { type: "boolean", description: "Also store every snapshot's files in the bundle (default false)." },
        },
        additionalProperties: false,
      },
    },
  ];
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters in structuredContent)`;
}

/** A refused or failed call as a tool result; the text names the tool once (`tool: error[code]: message`). */
function errorResult(error: unknown, tool: string): CallToolResult {
  const e = serializeError(error);
  const prefix = e.message.startsWith(`${tool}:`) ? "" : `${tool}: `;
  return {
    content: [{ type: "text", text: `${prefix}error[${e.code}]: ${e.message}` }],
    structuredContent: { error: { code: e.code, message: e.message, ...(e.data && Object.keys(e.data).length ? { data: e.data } : {}) } },
    isError: true,
  };
}

/** Base64 of bytes or text. */
function base64(content: Uint8Array | string): string {
  return Buffer.from(typeof content === "string" ? Buffer.from(content, "utf8") : content).toString("base64");
}

/**
 * Creates the MCP server (not yet connected to a transport).
 * @example
 * const server = createWpCodeboxMcpServer({ sandbox });
 * await server.connect(new StdioServerTransport());
 */
export function createWpCodeboxMcpServer(options: WpCodeboxMcpServerOptions): Server {
  const { sandbox } = options;
  const log = options.log ?? (() => undefined);
  const interval = options.progressIntervalMs ?? 1000;
  const summaryChars = options.summaryChars ?? 20_000;
  const imageCapBytes = Math.min(options.imageCapBytes ?? ARTIFACT_READ_CAP_BYTES, ARTIFACT_READ_CAP_BYTES);
  const server = new Server(
    { name: "wp-codebox", version: options.version ?? "0.0.0" },
    { capabilities: { tools: { listChanged: true }, resources: { listChanged: true } }, instructions: INSTRUCTIONS },
  );

  const policy = async (): Promise<RuntimePolicy | undefined> => options.policy ?? sandbox.policy().catch(() => undefined);
  /** The site's abilities once the sandbox is up (never boots it); none without the API or when they cannot be read. */
  const abilities = async () => {
    if (!sandbox.booted) return [];
    try {
      return (await sandbox.abilities()).abilities;
    } catch (error) {
      log(`The site's abilities could not be listed: ${serializeError(error).message}`);
      return [];
    }
  };
  // The ability tools and the site resources exist once the sandbox is up: tell the client then.
  sandbox.onBooted?.(() => {
    server.sendToolListChanged().catch(() => undefined);
    server.sendResourceListChanged().catch(() => undefined);
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const granted = await policy();
    return { tools: [...commandTools(granted), ...episodeTools(options.observationTypes), ...abilityTools(await abilities(), granted)] };
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listSessionResources(sandbox) }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({ contents: [await readSessionResource(sandbox, request.params.uri)] }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const input = (request.params.arguments ?? {}) as Record<string, unknown>;
    const token = request.params._meta?.progressToken;
    const started = Date.now();
    let ticks = 0;
    const report = (message: string): void => {
      if (token === undefined) return;
      ticks += 1;
      extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: ticks, message } }).catch(() => undefined);
    };
    const timer =
      token === undefined
        ? undefined
        : setInterval(() => {
            const seconds = Math.round((Date.now() - started) / 1000);
            report(sandbox.booted ? `${name}: running (${seconds} s)` : `${name}: waiting for the sandbox to boot (${seconds} s)${sandbox.bootMessage ? `: ${sandbox.bootMessage}` : ""}`);
          }, interval);
    report(`${name}: started`);
    let result: CallToolResult | undefined;
    try {
      result = await callTool(name, input, extra.signal);
      return result;
    } catch (error) {
      result = errorResult(error, name);
      return result;
    } finally {
      const outcome = result?.isError ? `error ${String((result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code ?? "")}`.trim() : "ok";
      log(`${name}: ${outcome} in ${Date.now() - started} ms`);
      if (timer) clearInterval(timer);
    }
  });

  async function callTool(name: string, input: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const abilityName = abilityForToolName(name);
    const def = abilityName ? getCommandDefinition(ABILITY_COMMAND) : commandForToolName(name);
    if (def) {
      let args: string[];
      if (abilityName) {
        // The tool's arguments are the ability's input (or { input } for a non-object input schema).
        const ability = (await sandbox.abilities()).abilities.find((a) => a.name === abilityName);
        args = checkCommandInput(ABILITY_COMMAND, abilityCommandArgs(abilityName, abilityInputFromArguments(ability, input)), options.cwd ?? process.cwd()).args;
      } else {
        // Refused here, before a (lazy) boot or a step, if the command would refuse it.
        args = toolInputToArgs(def, input, options.cwd);
      }
      // A client that cancels the request (notifications/cancelled) stops the command.
      const { execution, refs } = await sandbox.step(def.id, args, { signal });
      const lines = [`${def.id}: ${execution.status} (exit ${execution.exitCode}) in ${Math.round(execution.durationMs)} ms — ${refs.step}`];
      if (execution.error) lines.push(`error[${execution.error.code}]: ${execution.error.message}`);
      if (execution.stdout) lines.push(`stdout:\n${clip(execution.stdout, summaryChars)}`);
      else if (execution.data !== undefined) lines.push(`json:\n${clip(JSON.stringify(execution.data, null, 2), summaryChars)}`);
      if (execution.stderr) lines.push(`stderr:\n${clip(execution.stderr, summaryChars)}`);
      const artifactRefs = execution.artifactRefs ?? [];
      if (artifactRefs.length) lines.push(`artifacts: ${artifactRefs.map((r) => r.path).join(", ")}`);
      const images: CallToolResult["content"] = [];
      const screenshots = artifactRefs.filter((r) => r.kind === "browser-screenshot" || /\.png$/.test(r.path)).map((r) => r.path);
      // Only the files the result names are read (attached: one read-artifact each), each capped.
      for (const read of await sandbox.files(screenshots, { maxBytes: imageCapBytes })) {
        if ("error" in read) lines.push(`image ${read.path} not attached: error[${read.error.code}]: ${read.error.message}`);
        else if (read.file.contentType.startsWith("image/")) images.push({ type: "image", data: base64(read.file.content), mimeType: read.file.contentType });
      }
      const content: CallToolResult["content"] = [{ type: "text", text: lines.join("\n") }, ...images];
      return {
        content,
        structuredContent: {
          step: refs.step,
          command: execution.command,
          args: execution.args,
          status: execution.status,
          exitCode: execution.exitCode,
          stdout: execution.stdout,
          stderr: execution.stderr,
          ...(execution.data !== undefined ? { json: execution.data } : {}),
          ...(execution.error ? { error: execution.error } : {}),
          ...(execution.truncated ? { truncated: execution.truncated } : {}),
          durationMs: execution.durationMs,
          artifactRefs,
          execution: { id: execution.id, digest: execution.digest },
        },
        isError: execution.status !== "ok",
      };
    }
    switch (name) {
      case "reset": {
        const reset = await sandbox.reset();
        return json(`Sandbox reset (${reset.id}); a new episode trace starts here.`, { reset });
      }
      case "observe": {
        if (typeof input.type !== "string" || input.type === "") throw new WpCodeboxError("missing-argument", 'observe: give "type", e.g. {"type": "runtime-info"}.', { argument: "type" });
        const { observation, data } = await sandbox.observe({ ...input, type: input.type });
        return json(`Observation ${observation.id} (${observation.type}):\n${clip(JSON.stringify(data, null, 2), summaryChars)}`, {
          observation: { id: observation.id, type: observation.type, digest: observation.digest, ...(observation.artifactRefs?.length ? { artifactRefs: observation.artifactRefs } : {}) },
          data,
        });
      }
      case "snapshot": {
        const snapshot = await sandbox.snapshot();
        return json(`Snapshot ${snapshot.id} (${snapshot.semantics}, sha256 ${snapshot.digest}). Restore it with restore {"snapshot": "${snapshot.id}"}.`, { snapshot });
      }
      case "restore": {
        if (typeof input.snapshot !== "string") throw new WpCodeboxError("missing-argument", 'restore: give "snapshot", the id returned by the snapshot tool.', { argument: "snapshot" });
        const snapshot = await sandbox.restore(input.snapshot);
        return json(`Restored snapshot ${snapshot.id}.`, { snapshot });
      }
      case "collect_artifacts": {
        const bundle = await sandbox.collect({
          ...(typeof input.directory === "string" ? { directory: input.directory } : {}),
          ...(typeof input.includeRuntimeSnapshotBundles === "boolean" ? { includeRuntimeSnapshotBundles: input.includeRuntimeSnapshotBundles } : {}),
        });
        // Its files are resources now.
        server.sendResourceListChanged().catch(() => undefined);
        return {
          ...json(
            `Bundle ${bundle.id} written to ${bundle.directory}: ${bundle.valid ? "verified" : `INVALID (${bundle.violations.map((v) => `${v.code} ${v.path}`).join("; ")})`}; trace ${bundle.trace.id} with ${bundle.trace.steps} step(s).`,
            { bundle },
          ),
          isError: !bundle.valid,
        };
      }
      default:
        throw new WpCodeboxError("unknown-command", `Unknown tool ${quoteValue(name)}. List the tools with tools/list.`, { tool: name });
    }
  }

  return server;
}

function json(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}
