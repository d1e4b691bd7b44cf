/**
 * The `outputSchema` of every tool: the shape of the `structuredContent` it returns. A call that
 * is refused before it runs (bad input, policy, an unknown tool) returns `{ error }` instead, so
 * each schema allows that too (`anyOf`): MCP clients check structuredContent against the schema
 * on every result, errors included.
 */

/** A JSON Schema object (`type: "object"` at the top, as MCP requires of `outputSchema`). */
export type ToolOutputSchema = { type: "object" } & Record<string, unknown>;

const OBJECT = { type: "object" };
const STRING = { type: "string" };
const INTEGER = { type: "integer" };

/** `{ code, message, data? }` of a failure. */
const ERROR = {
  type: "object",
  properties: { code: STRING, message: STRING, data: {} },
  required: ["code", "message"],
};

/** What a refused or failed call returns as structuredContent. */
export const REFUSAL_OUTPUT_SCHEMA = {
  type: "object",
  properties: { error: ERROR },
  required: ["error"],
} as const;

function orRefusal(success: Record<string, unknown>): ToolOutputSchema {
  return { type: "object", anyOf: [success, REFUSAL_OUTPUT_SCHEMA] };
}

/**
 * The structuredContent of a catalog command or ability tool: the recorded step, with the
 * command's parsed JSON output as `json` (shaped by `jsonSchema` when given: an ability's own
 * output schema).
 */
export function stepOutputSchema(jsonSchema?: Record<string, unknown>): ToolOutputSchema {
  return orRefusal({
    type: "object",
    properties: {
      step: STRING,
      command: STRING,
      args: { type: "array", items: STRING },
      status: { type: "string", enum: ["ok", "error", "timed-out"] },
      exitCode: INTEGER,
      stdout: STRING,
      stderr: STRING,
      json: jsonSchema && Object.keys(jsonSchema).length ? jsonSchema : {},
      error: ERROR,
      truncated: OBJECT,
      durationMs: { type: "number" },
      artifactRefs: { type: "array", items: { type: "object", properties: { path: STRING, kind: STRING }, required: ["path"] } },
      execution: { type: "object", properties: { id: STRING, digest: STRING }, required: ["id"] },
    },
    required: ["step", "command", "args", "status", "exitCode", "stdout", "stderr", "durationMs", "artifactRefs", "execution"],
  });
}

const SNAPSHOT = { type: "object", properties: { id: STRING, digest: STRING, semantics: STRING }, required: ["id"] };

/** Output schemas of the episode tools, by tool name. */
export const EPISODE_OUTPUT_SCHEMAS: Record<string, ToolOutputSchema> = {
  reset: orRefusal({ type: "object", properties: { reset: { type: "object", properties: { id: STRING }, required: ["id"] } }, required: ["reset"] }),
  observe: orRefusal({
    type: "object",
    properties: {
      observation: { type: "object", properties: { id: STRING, type: STRING, digest: STRING, artifactRefs: { type: "array" } }, required: ["id", "type"] },
      data: {},
    },
    required: ["observation"],
  }),
  snapshot: orRefusal({ type: "object", properties: { snapshot: SNAPSHOT }, required: ["snapshot"] }),
  restore: orRefusal({ type: "object", properties: { snapshot: SNAPSHOT }, required: ["snapshot"] }),
  collect_artifacts: orRefusal({
    type: "object",
    properties: {
      bundle: {
        type: "object",
        properties: {
          directory: STRING,
          id: STRING,
          digest: STRING,
          valid: { type: "boolean" },
          violations: { type: "array" },
          trace: { type: "object", properties: { id: STRING, digest: STRING, steps: INTEGER }, required: ["id", "steps"] },
        },
        required: ["directory", "id", "digest", "valid", "violations", "trace"],
      },
    },
    required: ["bundle"],
  }),
};
