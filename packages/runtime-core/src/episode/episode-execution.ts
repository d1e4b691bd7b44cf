/**
 * The execution record of a step: what `runtime.execute` returned (or threw), reduced to JSON with
 * a digest that ignores timing (start/finish times and durations never change the digest).
 */
import { Type, type Static } from "@sinclair/typebox";
import { domainDigest } from "../digest.js";
import { serializeError } from "../errors.js";
import type { ExecutionResult } from "../runtime.js";
import { RUNTIME_EPISODE_EXECUTION_DIGEST_DOMAIN } from "./episode-constants.js";
import { Sha256HexSchema } from "./episode-refs.js";
import { omitKeys, pad4, redactSecrets, toJsonValue } from "./json-value.js";

/** How a step's execution ended. */
export const RuntimeEpisodeExecutionStatusSchema = Type.Union([Type.Literal("ok"), Type.Literal("error"), Type.Literal("timed-out")]);
export type RuntimeEpisodeExecutionStatus = Static<typeof RuntimeEpisodeExecutionStatusSchema>;

/**
 * A step's execution: `id`, `command`, `args`, `status` (`ok` | `error` | `timed-out`), `exitCode`
 * (`-1` when `execute` threw and nothing ran), captured `stdout`/`stderr` (secrets redacted), the
 * command's structured output as free-form `data` (ExecutionResult.json), `error?` `{ code, message,
 * data? }`, `truncated?`, `artifactRefs?`, `durationMs` (ms; timing, not digested) and `digest`
 * over the record minus `id`, `digest`, `durationMs`.
 */
export const RuntimeEpisodeExecutionSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    command: Type.String({ minLength: 1 }),
    args: Type.Array(Type.String()),
    status: RuntimeEpisodeExecutionStatusSchema,
    exitCode: Type.Integer(),
    stdout: Type.String(),
    stderr: Type.String(),
    data: Type.Optional(Type.Unknown()),
    error: Type.Optional(
      Type.Object(
        { code: Type.String({ minLength: 1 }), message: Type.String(), data: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
        { additionalProperties: false },
      ),
    ),
    truncated: Type.Optional(Type.Object({ stdout: Type.Boolean(), stderr: Type.Boolean() }, { additionalProperties: false })),
    artifactRefs: Type.Optional(
      Type.Array(
        Type.Object(
          { path: Type.String({ minLength: 1 }), kind: Type.String(), sha256: Type.Optional(Sha256HexSchema), bytes: Type.Optional(Type.Integer({ minimum: 0 })) },
          { additionalProperties: false },
        ),
      ),
    ),
    durationMs: Type.Number({ minimum: 0 }),
    digest: Sha256HexSchema,
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeExecution = Static<typeof RuntimeEpisodeExecutionSchema>;

/** Fields left out of an execution digest (identity and timing). */
const EXECUTION_NON_DIGEST_FIELDS = ["id", "digest", "durationMs"] as const;

/** Recomputes an execution digest: SHA-256 over the record minus `id`, `digest`, `durationMs`. */
export function episodeExecutionDigest(execution: Omit<RuntimeEpisodeExecution, "id" | "digest"> | RuntimeEpisodeExecution): string {
  return domainDigest(RUNTIME_EPISODE_EXECUTION_DIGEST_DOMAIN, omitKeys(execution, EXECUTION_NON_DIGEST_FIELDS));
}

/** What happened when a step executed: the runtime's result, or what `execute` threw. */
export type EpisodeExecutionOutcome =
  | { result: ExecutionResult; durationMs?: number }
  | { thrown: unknown; command: string; args: string[]; durationMs: number };

/**
 * Builds the execution record of step `position` (1-based): id `execution-<0001>-<16 hex of digest>`.
 * A thrown error becomes `status: "error"`, `exitCode: -1` and `error: { code, message, data }`
 * (`WpCodeboxError` codes kept, anything else `internal-error`). Values of `secrets` are replaced by
 * `[redacted]` before the digest is computed.
 */
export function createEpisodeExecution(outcome: EpisodeExecutionOutcome, position: number, secrets: readonly string[] = []): RuntimeEpisodeExecution {
  let record: Omit<RuntimeEpisodeExecution, "id" | "digest">;
  if ("thrown" in outcome) {
    const error = serializeError(outcome.thrown);
    record = {
      command: outcome.command,
      args: [...outcome.args],
      status: "error",
      exitCode: -1,
      stdout: "",
      stderr: "",
      error: { code: error.code, message: error.message, ...(error.data && Object.keys(error.data).length > 0 ? { data: toJsonValue(error.data) as Record<string, unknown> } : {}) },
      durationMs: outcome.durationMs,
    };
  } else {
    const r = outcome.result;
    record = {
      command: r.command,
      args: [...r.args],
      status: r.status,
      exitCode: r.exitCode,
      stdout: r.stdout,
      stderr: r.stderr,
      durationMs: Number.isFinite(r.durationMs) && r.durationMs >= 0 ? r.durationMs : (outcome.durationMs ?? 0),
    };
    if (r.json !== undefined) record.data = toJsonValue(r.json);
    if (r.error) record.error = toJsonValue(r.error) as RuntimeEpisodeExecution["error"];
    if (r.truncated) record.truncated = { stdout: r.truncated.stdout, stderr: r.truncated.stderr };
    if (r.artifactRefs && r.artifactRefs.length > 0) record.artifactRefs = toJsonValue(r.artifactRefs) as RuntimeEpisodeExecution["artifactRefs"];
  }
  record = redactSecrets(record, secrets);
  const digest = episodeExecutionDigest(record);
  return { id: `execution-${pad4(position)}-${digest.slice(0, 16)}`, ...record, digest };
}
