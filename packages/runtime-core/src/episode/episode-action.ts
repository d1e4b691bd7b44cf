/**
 * The action envelope `wp-codebox/runtime-episode-action/v1`: what a step asked the runtime to do.
 */
import { Type, type Static } from "@sinclair/typebox";
import { domainDigest } from "../digest.js";
import { WpCodeboxError } from "../errors.js";
import { validateAgainstSchema } from "../schema-validation.js";
import { RUNTIME_EPISODE_ACTION_SCHEMA } from "./episode-constants.js";
import { Sha256HexSchema } from "./episode-refs.js";
import { omitKeys, pad4 } from "./json-value.js";
import { MAX_DURATION_MS } from "../durations.js";

/** Action kinds. `command` is the compatibility primitive; the others keep higher-level intent. */
export const RuntimeEpisodeActionKindSchema = Type.Union([
  Type.Literal("command"),
  Type.Literal("filesystem"),
  Type.Literal("http"),
  Type.Literal("browser"),
]);
export type RuntimeEpisodeActionKind = Static<typeof RuntimeEpisodeActionKindSchema>;

const intentFields = {
  method: Type.Optional(Type.String({ minLength: 1 })),
  url: Type.Optional(Type.String({ minLength: 1 })),
  path: Type.Optional(Type.String({ minLength: 1 })),
  operation: Type.Optional(Type.String({ minLength: 1 })),
  selector: Type.Optional(Type.String({ minLength: 1 })),
  /** Wall-clock limit in ms passed to `execute`; part of the digest because it changes the outcome. */
  timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DURATION_MS, description: "Wall-clock limit of the command in ms (0 = none)." })),
};

/**
 * The action envelope: `schema`, stable `id`, `kind`, the executed `command` with flat string
 * `args`, optional replay intent (`method`, `url`, `path`, `operation`, `selector`, `timeoutMs`) and
 * `digest` = `domainDigest(schema, envelope minus id and digest)`.
 */
export const RuntimeEpisodeActionSchema = Type.Object(
  {
    schema: Type.Literal(RUNTIME_EPISODE_ACTION_SCHEMA),
    id: Type.String({ minLength: 1 }),
    kind: RuntimeEpisodeActionKindSchema,
    command: Type.String({ minLength: 1 }),
    args: Type.Array(Type.String()),
    ...intentFields,
    digest: Sha256HexSchema,
  },
  { additionalProperties: false },
);
export type RuntimeEpisodeAction = Static<typeof RuntimeEpisodeActionSchema>;

/** What a caller passes to `createEpisodeAction` / `episode.step`: `kind` defaults to `command`. */
export const RuntimeEpisodeActionInputSchema = Type.Object(
  {
    kind: Type.Optional(RuntimeEpisodeActionKindSchema),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Array(Type.String())),
    ...intentFields,
  },
  // Extra members (a previously built envelope's schema/id/digest) are ignored, not rejected.
  { additionalProperties: true },
);
export type RuntimeEpisodeActionInput = Static<typeof RuntimeEpisodeActionInputSchema>;

/** Fields left out of an action digest. */
const ACTION_NON_DIGEST_FIELDS = ["id", "digest"] as const;

/** Recomputes an action's digest: SHA-256 over its canonical payload minus `id` and `digest`. */
export function episodeActionDigest(action: Omit<RuntimeEpisodeAction, "id" | "digest"> | RuntimeEpisodeAction): string {
  return domainDigest(RUNTIME_EPISODE_ACTION_SCHEMA, omitKeys(action, ACTION_NON_DIGEST_FIELDS));
}

/**
 * Builds an action envelope with its digest and a stable id.
 * @param input `{ kind?: "command" (default) | "filesystem" | "http" | "browser", command, args?: string[] (default []), method?, url?, path?, operation?, selector?, timeoutMs? }`.
 * @param options.position 1-based step position; when given the id is `action-<0001>-<16 hex of digest>`,
 *   otherwise `action-<16 hex of digest>`. Same input and position → same id and digest.
 * @returns the envelope `{ schema, id, kind, command, args, …intent, digest }` (digest: 64 hex).
 * @throws WpCodeboxError `invalid-episode-action` when the input does not match the action shape
 *   (`data.issues` lists `{ path, message }`).
 * @example createEpisodeAction({ command: "wordpress.run-php", args: ["code=<?php echo 1;"] })
 */
export function createEpisodeAction(input: RuntimeEpisodeActionInput, options: { position?: number } = {}): RuntimeEpisodeAction {
  const issues = validateAgainstSchema(RuntimeEpisodeActionInputSchema, input);
  if (issues.length > 0) {
    throw new WpCodeboxError(
      "invalid-episode-action",
      `Invalid episode action: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}. Pass { command, args: string[] } and optional kind/method/url/path/operation/selector.`,
      { issues },
    );
  }
  const payload: Omit<RuntimeEpisodeAction, "id" | "digest"> = {
    schema: RUNTIME_EPISODE_ACTION_SCHEMA,
    kind: input.kind ?? "command",
    command: input.command,
    args: [...(input.args ?? [])],
  };
  for (const key of ["method", "url", "path", "operation", "selector"] as const) {
    if (input[key] !== undefined) payload[key] = input[key];
  }
  if (input.timeoutMs !== undefined) payload.timeoutMs = input.timeoutMs;
  const digest = episodeActionDigest(payload);
  const id = options.position === undefined ? `action-${digest.slice(0, 16)}` : `action-${pad4(options.position)}-${digest.slice(0, 16)}`;
  return { schema: payload.schema, id, ...omitKeys(payload, ["schema"]), digest } as RuntimeEpisodeAction;
}
