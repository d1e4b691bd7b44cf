/**
 * The episode script `wp-codebox/episode-script/v1` run by `wp-codebox episode run`:
 * runtime fields, mounts, reset observations, steps (`{ action, observe? }`, `{ snapshot: true }`,
 * `{ observe }`) and artifact options. Declared once with TypeBox; validation lists every issue.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WP_DEFINES_SCHEMA } from "../wp-defines.js";
import { flattenCommandArgs, type PlannedAction } from "../command-input.js";
import { ENV_NAME_PATTERN } from "../environment.js";
import { WpCodeboxError } from "../errors.js";
import { BACKEND_NAMES, type ObservationSpec } from "../runtime.js";
import { validateAgainstSchema, type SchemaIssue } from "../schema-validation.js";
import { EPISODE_DEFAULT_CLOCK, EPISODE_DEFAULT_SEED } from "../determinism.js";
import { MAX_DURATION_MS } from "../durations.js";

/** Schema id of an episode script. */
export const EPISODE_SCRIPT_SCHEMA = "wp-codebox/episode-script/v1" as const;

/** An observation request: `type` plus type-specific fields (e.g. `sections` for `wordpress-state`). */
export const EpisodeScriptObservationSchema = Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true });

/**
 * An action: `command` and `args` as `["key=value", …]` or an object (string/number/boolean values
 * become `key=value`; an object or array value for `k` becomes `k-json=<inline JSON>`), optional
 * `kind` (default `command`), `timeoutMs` and replay intent fields.
 */
export const EpisodeScriptActionSchema = Type.Object(
  {
    kind: Type.Optional(Type.Union([Type.Literal("command"), Type.Literal("filesystem"), Type.Literal("http"), Type.Literal("browser")])),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.Unknown())])),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DURATION_MS, description: "Wall-clock limit of the command in ms (0 = none)." })),
    method: Type.Optional(Type.String({ minLength: 1 })),
    url: Type.Optional(Type.String({ minLength: 1 })),
    path: Type.Optional(Type.String({ minLength: 1 })),
    operation: Type.Optional(Type.String({ minLength: 1 })),
    selector: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const EpisodeScriptActionStepSchema = Type.Object(
  { name: Type.Optional(Type.String()), action: EpisodeScriptActionSchema, observe: Type.Optional(EpisodeScriptObservationSchema) },
  { additionalProperties: false },
);
export const EpisodeScriptSnapshotStepSchema = Type.Object({ name: Type.Optional(Type.String()), snapshot: Type.Literal(true) }, { additionalProperties: false });
export const EpisodeScriptObserveStepSchema = Type.Object({ name: Type.Optional(Type.String()), observe: EpisodeScriptObservationSchema }, { additionalProperties: false });

/** The script. Relative mount/plugin/theme paths resolve against the script's folder. */
export const EpisodeScriptSchema = Type.Object(
  {
    schema: Type.Literal(EPISODE_SCRIPT_SCHEMA),
    runtime: Type.Optional(
      Type.Object(
        {
          backend: Type.Optional(
            Type.Union(BACKEND_NAMES.map((name) => Type.Literal(name)), {
              description: 'The backend that boots the sandbox: "playground" (default) or "native" (Debian\'s PHP and a private MariaDB under bubblewrap); --backend overrides it.',
            }),
          ),
          wp: Type.Optional(Type.String()),
          wordpress: Type.Optional(Type.String()),
          php: Type.Optional(Type.String()),
          extensions: Type.Optional(
            Type.Array(Type.String({ minLength: 1, pattern: "^[a-z0-9_]+$" }), { uniqueItems: true, description: 'PHP extensions to load from those the PHP build ships; default ["intl"], [] loads none.' }),
          ),
          clock: Type.Optional(Type.String({ minLength: 1, description: `Virtual clock start (ISO-8601 instant) or "real"; default ${EPISODE_DEFAULT_CLOCK}.` })),
          seed: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: `Seed of every source of randomness; default ${EPISODE_DEFAULT_SEED} (none when the policy allows outbound network).` })),
          origin: Type.Optional(Type.Union([Type.Literal("stable"), Type.Literal("loopback")], { description: "Site origin: stable http://wp-codebox.test (default when deterministic) or loopback http://127.0.0.1:PORT." })),
          defines: Type.Optional(WP_DEFINES_SCHEMA),
        },
        { additionalProperties: false },
      ),
    ),
    plugins: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    themes: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    mounts: Type.Optional(
      Type.Array(
        Type.Object(
          { source: Type.String({ minLength: 1 }), target: Type.String({ minLength: 1 }), mode: Type.Optional(Type.Union([Type.Literal("readonly"), Type.Literal("readwrite")])) },
          { additionalProperties: false },
        ),
      ),
    ),
    policy: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    env: Type.Optional(Type.Record(Type.String({ pattern: ENV_NAME_PATTERN }), Type.String())),
    secretEnv: Type.Optional(Type.Array(Type.String({ pattern: ENV_NAME_PATTERN, writeOnly: true }))),
    resetObservations: Type.Optional(Type.Array(EpisodeScriptObservationSchema)),
    steps: Type.Array(Type.Union([EpisodeScriptActionStepSchema, EpisodeScriptSnapshotStepSchema, EpisodeScriptObserveStepSchema]), { minItems: 1 }),
    artifacts: Type.Optional(Type.Object({ directory: Type.Optional(Type.String()), includeRuntimeSnapshotBundles: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
  },
  { $id: EPISODE_SCRIPT_SCHEMA, title: "WP Codebox episode script", additionalProperties: false },
);
export type EpisodeScript = Static<typeof EpisodeScriptSchema>;
export type EpisodeScriptStep = EpisodeScript["steps"][number];

/** The published JSON Schema of `wp-codebox/episode-script/v1` (the object the validator uses). */
export const EPISODE_SCRIPT_JSON_SCHEMA = EpisodeScriptSchema;

/**
 * Validates a parsed script and lists every issue with its JSON pointer. Each step is checked
 * against the branch its keys select (`action` → action step, `snapshot` → snapshot step,
 * `observe` alone → observe step), so an issue names the bad field rather than "no branch matched".
 * @returns `{ valid, issues: [{ path, message }] }`.
 */
export function validateEpisodeScript(input: unknown): { valid: boolean; issues: SchemaIssue[] } {
  const top = validateAgainstSchema(Type.Omit(EpisodeScriptSchema, ["steps"]), input && typeof input === "object" && !Array.isArray(input) ? { ...(input as object), steps: undefined } : input).filter(
    (i) => !i.path.startsWith("/steps"),
  );
  const issues = [...top];
  const steps = (input as { steps?: unknown })?.steps;
  if (!Array.isArray(steps)) issues.push({ path: "/steps", message: steps === undefined ? "is required" : "must be an array of steps" });
  else if (steps.length === 0) issues.push({ path: "/steps", message: "must have at least one step" });
  else {
    steps.forEach((step, i) => {
      const at = `/steps/${i}`;
      if (!step || typeof step !== "object" || Array.isArray(step)) return void issues.push({ path: at, message: "must be an object: { action, observe? } | { snapshot: true } | { observe }" });
      const s = step as Record<string, unknown>;
      const schema = "action" in s ? EpisodeScriptActionStepSchema : "snapshot" in s ? EpisodeScriptSnapshotStepSchema : "observe" in s ? EpisodeScriptObserveStepSchema : undefined;
      if (!schema) return void issues.push({ path: at, message: "needs one of action, snapshot or observe" });
      for (const issue of validateAgainstSchema(schema, s)) issues.push({ path: `${at}${issue.path === "/" ? "" : issue.path}`, message: issue.message });
    });
  }
  return { valid: issues.length === 0, issues };
}

/**
 * Flattens action args: a string array is kept; an object becomes `key=value` / `key-json=<JSON>`
 * strings, and with `command` a string under a JSON argument's base name goes to that argument
 * (see `flattenCommandArgs`).
 */
export function episodeScriptArgs(args: string[] | Record<string, unknown> | undefined, command = ""): string[] {
  return flattenCommandArgs(command, args).args;
}

/** One episode script step, validated. */
export type PlannedEpisodeStep =
  | { index: number; name?: string; kind: "action"; action: PlannedAction & { intent: Record<string, unknown> }; observe?: ObservationSpec }
  | { index: number; name?: string; kind: "snapshot" }
  | { index: number; name?: string; kind: "observe"; observe: ObservationSpec };
