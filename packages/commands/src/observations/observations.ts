/**
 * The observations, one implementation for every backend: `runtime-info`, `mounts`,
 * `command-result`, `wordpress-state`, `http-response`, `browser-result`, `runtime-events`,
 * `runtime-logs`, `abilities`. Each returns `{ type, data, artifactRefs? }`; payloads that belong in files
 * (WordPress state sections) are returned as `files` for the runtime to add to its bundle.
 */
import {
  WpCodeboxError,
  createRedactor,
  isBrowserCommand,
  OBSERVATION_TYPES,
  normalizeWordPressStateRequest,
  type ArtifactFile,
  type ArtifactRef,
  type ExecutionResult,
  type ObservationSpec,
  type RuntimeEvent,
  type RuntimeInfo,
} from "@wp-codebox/runtime-core";
import type { CommandContext } from "../commands/command-context.js";
import type { PhpRunResult } from "../commands/php-results.js";
import { httpRequest } from "../commands/http-request.js";
import { listAbilities } from "../commands/ability.js";
import { exportWordPressState } from "../state-export/export-wordpress-state.js";

/** `{ type, data, artifactRefs? }` plus files the runtime must add to its bundle. */
export interface RuntimeObservation {
  type: string;
  data: unknown;
  artifactRefs?: Required<ArtifactRef>[];
  files?: ArtifactFile[];
}

/** What observers read from the runtime. */
export interface ObservationHost {
  info(): RuntimeInfo;
  results(): readonly ExecutionResult[];
  events(): readonly RuntimeEvent[];
  secrets: readonly string[];
  runPhp(code: string): Promise<PhpRunResult>;
  /** A command context for helpers that need one (HTTP). */
  context(): CommandContext;
  /** Next free bundle folder `files/observations/<prefix>-<0001>`. */
  nextDirectory(prefix: string): string;
}

/** The replay-relevant runtime facts (no ids, timings or host paths). */
function runtimeFacts(info: RuntimeInfo): Record<string, unknown> {
  return {
    backend: info.backend,
    wordpressVersion: info.wordpressVersion,
    phpVersion: info.phpVersion,
    siteUrl: info.siteUrl,
    plugins: [...info.plugins],
    themes: [...info.themes],
    policy: info.policy,
    mounts: info.mounts.map((m) => ({ target: m.target, mode: m.mode, kind: m.kind })),
    ...(info.determinism ? { determinism: { ...info.determinism } } : {}),
  };
}

function str(spec: ObservationSpec, key: string): string | undefined {
  const v = spec[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new WpCodeboxError("invalid-argument", `Observation ${spec.type}: "${key}" must be a string.`, { type: spec.type, key });
  return v;
}

/**
 * Answers one observation request.
 * - `runtime-info`: backend, versions, site URL, plugins, themes, policy, mounts.
 * - `mounts`: `{ mounts: [{ target, mode, kind }] }`.
 * - `command-result`: `{ id? }` selects a result (default the last): the ExecutionResult, or `null` when none ran.
 * - `wordpress-state`: the WordPress state export (options, users, posts, plugins, …; `normalizeWordPressStateRequest` lists the request fields).
 * - `http-response`: `{ path | url, method?, as?, headers?, body? }` runs a request in the sandbox:
 *   `{ method, path, status, headers, body, bodyBytes }` (body parsed when JSON). Not recorded as a command.
 * - `browser-result`: the last browser command's `{ id, command, status, summary }`, or `null`.
 * - `runtime-events`: `{ events }` (lifecycle events so far).
 * - `runtime-logs`: `{ entries: [{ id, command, status, stderr }] }` for commands with stderr output.
 * - `abilities`: `{ available, abilities: [{ name, label, description, inputSchema, outputSchema,
 *   annotations }] }`, the site's registered abilities (`available` false before WordPress 6.9).
 * @throws WpCodeboxError `observation-unsupported` (unknown type), `invalid-state-request`,
 *   `invalid-argument`, `state-export-failed`.
 */
export async function observeRuntime(host: ObservationHost, spec: ObservationSpec): Promise<RuntimeObservation> {
  switch (spec.type) {
    case "runtime-info":
      return { type: spec.type, data: runtimeFacts(host.info()) };
    case "mounts":
      return { type: spec.type, data: { mounts: runtimeFacts(host.info()).mounts } };
    case "command-result": {
      const id = str(spec, "id");
      const results = host.results();
      const result = id === undefined ? results.at(-1) : results.find((r) => r.id === id);
      if (id !== undefined && !result) throw new WpCodeboxError("invalid-argument", `No command result with id ${id} in this runtime. Pass an id from an ExecutionResult.`, { id });
      return { type: spec.type, data: result ?? null };
    }
    case "wordpress-state": {
      const config = normalizeWordPressStateRequest(spec);
      const exported = await exportWordPressState((code) => host.runPhp(code), config, { directory: host.nextDirectory("wordpress-state"), secrets: host.secrets });
      return { type: spec.type, data: exported.data, artifactRefs: exported.artifactRefs, files: exported.files };
    }
    case "http-response": {
      const args: Record<string, string> = {};
      for (const key of ["path", "url", "method", "as", "body"]) {
        const v = str(spec, key);
        if (v !== undefined) args[key] = v;
      }
      if (spec.headers !== undefined) args["headers-json"] = JSON.stringify(spec.headers);
      args["expect-status"] = "0"; // observe any status; the observer never fails on HTTP >= 400
      const outcome = await httpRequest(host.context(), args);
      const json = outcome.json as { status?: unknown; headers: Record<string, string>; body: unknown; bodyBytes: number } | undefined;
      if (!json || typeof json.status !== "number") {
        // No response came back at all (the request could not be made): say why, not a TypeError.
        throw new WpCodeboxError("http-error", `The http-response observation got no response: ${outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : outcome.stderr.slice(0, 300) || "the request printed nothing"}`);
      }
      return {
        type: spec.type,
        data: {
          method: (args.method ?? "GET").toUpperCase(),
          path: args.path ?? args.url,
          as: args.as ?? "admin",
          status: json.status,
          headers: json.headers,
          body: json.body ?? outcome.stdout,
          bodyBytes: json.bodyBytes,
          // A response that came with a problem (a PHP fatal behind a 500) carries it.
          ...(outcome.error ? { error: outcome.error } : {}),
        },
      };
    }
    case "browser-result": {
      const last = [...host.results()].reverse().find((r) => isBrowserCommand(r.command));
      return { type: spec.type, data: last ? { id: last.id, command: last.command, status: last.status, summary: last.json ?? null, ...(last.error ? { error: last.error } : {}) } : null };
    }
    case "runtime-events":
      return { type: spec.type, data: { events: host.events().map((e) => ({ ...e })) } };
    case "runtime-logs": {
      const redactor = createRedactor(host.secrets);
      const entries = host.results().filter((r) => r.stderr.length > 0).map((r) => ({ id: r.id, command: r.command, status: r.status, stderr: redactor.redact(r.stderr) }));
      return { type: spec.type, data: { entries } };
    }
    case "abilities":
      return { type: spec.type, data: await listAbilities(host.context()) };
    default:
      throw new WpCodeboxError(
        "observation-unsupported",
        `The ${host.info().backend} runtime cannot observe "${spec.type}". Use one of: ${OBSERVATION_TYPES.join(", ")}.`,
        { type: spec.type, supported: [...OBSERVATION_TYPES] },
      );
  }
}
