/** `wp-codebox schema <name>`: the published JSON Schemas of wp-codebox's contracts. */
import {
  ARTIFACT_MANIFEST_SCHEMA,
  ARTIFACT_METADATA_SCHEMA,
  ARTIFACT_REVIEW_SCHEMA,
  BATCH_REPORT_SCHEMA,
  BATCH_TASK_SCHEMA,
  BROWSER_INTERACTION_SCRIPT_SCHEMA,
  COMMAND_CATALOG_SCHEMA,
  EPISODE_SCRIPT_JSON_SCHEMA,
  RUNTIME_EPISODE_TRACE_JSON_SCHEMA,
  RUNTIME_POLICY_INPUT_SCHEMA,
  RUNTIME_POLICY_SCHEMA_ID,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA,
  WORKSPACE_RECIPE_SCHEMA,
  PLUGIN_CHECK_REPORT_SCHEMA,
  PHPUNIT_RESULTS_SCHEMA,
  RECIPE_MATRIX_SUMMARY_SCHEMA,
  WpCodeboxError,
  quoteValue,
} from "@wp-codebox/runtime-core";

const DRAFT = "http://json-schema.org/draft-07/schema#";

/** Schema name → [schema object, id, one-line description]. The policy schema is the input form (every field optional). */
const SCHEMAS: Record<string, { schema: object; id?: string; description: string }> = {
  policy: { schema: RUNTIME_POLICY_INPUT_SCHEMA, id: RUNTIME_POLICY_SCHEMA_ID, description: "a runtime policy as --policy takes it" },
  "command-catalog": { schema: COMMAND_CATALOG_SCHEMA, description: "output of wp-codebox commands --json" },
  "browser-script": { schema: BROWSER_INTERACTION_SCRIPT_SCHEMA, description: "steps of wordpress.browser-actions" },
  "episode-trace": { schema: RUNTIME_EPISODE_TRACE_JSON_SCHEMA, description: "files/runtime-episode-trace.json" },
  "artifact-manifest": { schema: ARTIFACT_MANIFEST_SCHEMA, description: "a bundle's manifest.json" },
  "artifact-metadata": { schema: ARTIFACT_METADATA_SCHEMA, description: "a bundle's metadata.json" },
  "artifact-review": { schema: ARTIFACT_REVIEW_SCHEMA, description: "a bundle's files/review.json" },
  "reference-manifest": { schema: RUNTIME_REFERENCE_MANIFEST_SCHEMA, description: "a bundle's files/runtime-reference-manifest.json" },
  recipe: { schema: WORKSPACE_RECIPE_SCHEMA, description: "a workspace recipe (wp-codebox recipe run)" },
  "episode-script": { schema: EPISODE_SCRIPT_JSON_SCHEMA, description: "an episode script (wp-codebox episode run)" },
  "plugin-check-report": { schema: PLUGIN_CHECK_REPORT_SCHEMA, description: "files/check/report.json of wp-codebox check" },
  "batch-task": { schema: BATCH_TASK_SCHEMA, description: "one line of a batch task file (wp-codebox batch tasks.jsonl)" },
  "batch-report": { schema: BATCH_REPORT_SCHEMA, description: "DIR/report.json of wp-codebox batch" },
  "phpunit-results": { schema: PHPUNIT_RESULTS_SCHEMA, description: "files/phpunit/test-results.json of wordpress.phpunit" },
  "recipe-matrix-summary": { schema: RECIPE_MATRIX_SUMMARY_SCHEMA, description: "matrix-summary.json of a recipe run with runtime.matrix" },
};

/** Every name `getSchema` accepts, in listing order. */
export const SCHEMA_NAMES: readonly string[] = Object.freeze(Object.keys(SCHEMAS));

/** `name — description` lines for help text and error messages. */
export function describeSchemaNames(): string {
  return SCHEMA_NAMES.map((n) => `  ${n.padEnd(20)} ${SCHEMAS[n]!.description}`).join("\n");
}

/**
 * The JSON Schema (draft-07) published under `name`, as a plain JSON value.
 * @throws WpCodeboxError `invalid-argument` for an unknown name, listing the known ones.
 * @example await getSchema("policy") // { $schema: "http://json-schema.org/draft-07/schema#", $id: "wp-codebox/runtime-policy/v1", ... }
 */
export async function getSchema(name: string): Promise<Record<string, unknown>> {
  const entry = Object.hasOwn(SCHEMAS, name) ? SCHEMAS[name] : undefined;
  if (!entry) {
    throw new WpCodeboxError("invalid-argument", `Unknown schema ${quoteValue(name)}. Known schemas: ${SCHEMA_NAMES.join(", ")}. Run "wp-codebox schema --help" for descriptions.`, {
      name,
      known: [...SCHEMA_NAMES],
    });
  }
  // JSON round trip drops TypeBox's symbol-keyed metadata.
  const plain = JSON.parse(JSON.stringify(entry.schema)) as Record<string, unknown>;
  const { $schema: _ignored, $id, ...rest } = plain;
  return { $schema: DRAFT, $id: $id ?? entry.id ?? `wp-codebox/${name}/v1`, ...rest };
}
