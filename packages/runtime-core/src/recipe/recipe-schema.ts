/**
 * The workspace recipe contract `wp-codebox/workspace-recipe/v1`, declared once as a
 * TypeBox schema; the JSON Schema (`wp-codebox schema recipe`), the TypeScript types and the
 * structural validation all come from it. Semantic checks (commands, args, mounts, scripts) live in
 * `validate-recipe.ts`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WP_DEFINES_SCHEMA } from "../wp-defines.js";
import { ENV_NAME_PATTERN } from "../environment.js";
import { RUNTIME_POLICY_INPUT_SCHEMA } from "../policy.js";
import { BACKEND_NAMES } from "../runtime.js";

/** Schema id of a recipe document. */
export const WORKSPACE_RECIPE_SCHEMA_ID = "wp-codebox/workspace-recipe/v1";

/** A WordPress version in a recipe: `X.Y`, `X.Y.Z` or `latest` (non-bundled ones come from the release mirror). */
const WP_VERSION = Type.String({
  pattern: "^(\\d+\\.\\d+(\\.\\d+)?|latest)$",
  description: "WordPress X.Y, X.Y.Z or latest: a bundled build, else a release fetched once from the mirror (checksum-verified, cached).",
});
/** A PHP version `X.Y`; which ones exist is the backend's to say (`wp-codebox doctor` lists them). */
const PHP_VERSION = Type.String({ pattern: "^\\d+\\.\\d+$", description: 'PHP version "X.Y"; default 8.3. Which versions exist is the backend\'s to say (wp-codebox doctor lists them).' });

const DURATION = Type.Union([Type.String({ minLength: 1 }), Type.Integer({ minimum: 0 })], {
  description: 'Wall-clock limit: "30s", "500ms", "2m", or a number of ms; 0 = none.',
});

/** One JSON-path equality check: `path` is `$`, `$.a.b`, `$.items[0].id` or `$["odd key"]`. */
export const RECIPE_JSON_EXPECTATION_SCHEMA = Type.Object(
  {
    path: Type.String({ minLength: 1, description: "JSONPath subset into the result's json: $.a.b[0]" }),
    equals: Type.Unknown({ description: "Deep-equal to this JSON value." }),
  },
  { additionalProperties: false },
);

/** What a step must produce. With no `status`, `"ok"` is expected. */
export const RECIPE_EXPECT_SCHEMA = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal("ok"), Type.Literal("error"), Type.Literal("timed-out")], { description: 'Result status; default "ok".' })),
    exitCode: Type.Optional(Type.Integer({ description: "Exact exit code." })),
    errorCode: Type.Optional(Type.String({ minLength: 1, description: 'Exact error.code, e.g. "php-fatal".' })),
    stdoutContains: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], { description: "Substring(s) stdout must contain." })),
    stdoutMatches: Type.Optional(Type.String({ minLength: 1, description: "JavaScript regular expression stdout must match." })),
    json: Type.Optional(Type.Union([RECIPE_JSON_EXPECTATION_SCHEMA, Type.Array(RECIPE_JSON_EXPECTATION_SCHEMA, { minItems: 1 })])),
    assertions: Type.Optional(Type.Literal("all-passed", { description: "Every browser expect/evaluate assertion passed." })),
    tests: Type.Optional(Type.Literal("all-passed", { description: "wordpress.phpunit: at least one test ran and none failed or errored." })),
    dbErrors: Type.Optional(Type.Integer({ minimum: 0, description: "Exact number of database errors the step caused (result.dbErrors); 0 demands none." })),
  },
  { additionalProperties: false },
);
export type RecipeExpect = Static<typeof RECIPE_EXPECT_SCHEMA>;
export type RecipeJsonExpectation = Static<typeof RECIPE_JSON_EXPECTATION_SCHEMA>;

/**
 * One command to run. `args` is an object, each value of a JSON type its argument's format takes
 * (`flattenCommandArgs`; `null` = not given), or a raw `key=value` list.
 */
export const RECIPE_STEP_SCHEMA = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    command: Type.String({ minLength: 1, description: "Command id (wp-codebox commands)." }),
    args: Type.Optional(
      Type.Union([
        Type.Record(Type.String({ pattern: "^[a-z][a-z0-9-]*$" }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.Unknown()), Type.Object({})])),
        Type.Array(Type.String()),
      ]),
    ),
    timeout: Type.Optional(DURATION),
    expect: Type.Optional(RECIPE_EXPECT_SCHEMA),
  },
  { additionalProperties: false },
);
export type RecipeStep = Static<typeof RECIPE_STEP_SCHEMA>;

/** A host path mounted into the sandbox; `mode` defaults to `"readonly"` in recipes. */
export const RECIPE_MOUNT_SCHEMA = Type.Object(
  {
    source: Type.String({ minLength: 1, description: "Host path, relative to the recipe file." }),
    target: Type.String({ minLength: 1, description: "Sandbox path under /wordpress/wp-content/ or /workspace/." }),
    mode: Type.Optional(Type.Union([Type.Literal("readonly"), Type.Literal("readwrite")])),
  },
  { additionalProperties: false },
);
export type RecipeMount = Static<typeof RECIPE_MOUNT_SCHEMA>;

/** `wp-codebox/workspace-recipe/v1`. Paths are relative to the recipe file. */
export const WORKSPACE_RECIPE_SCHEMA = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: "Editor hint; ignored." })),
    schema: Type.Literal(WORKSPACE_RECIPE_SCHEMA_ID),
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    runtime: Type.Optional(
      Type.Object(
        {
          backend: Type.Optional(
            Type.Union(BACKEND_NAMES.map((name) => Type.Literal(name)), {
              description: 'The backend that boots the sandbox: "playground" (default) or "native" (Debian\'s PHP and a private MariaDB under bubblewrap; wordpress.run-php steps only); --backend overrides it.',
            }),
          ),
          wp: Type.Optional(WP_VERSION),
          php: Type.Optional(PHP_VERSION),
          clock: Type.Optional(Type.String({ minLength: 1, description: 'Virtual clock start (ISO-8601 instant with timezone) or "real" (default). --clock overrides it.' })),
          seed: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Seed of every source of randomness; refused with a policy that allows outbound network. --seed overrides it." })),
          extensions: Type.Optional(
            Type.Array(Type.String({ minLength: 1, pattern: "^[a-z0-9_]+$" }), {
              uniqueItems: true,
              description: 'PHP extensions to load from those the PHP build ships, e.g. ["intl"]. Default ["intl"]; [] loads none.',
            }),
          ),
          defines: Type.Optional(WP_DEFINES_SCHEMA),
          matrix: Type.Optional(
            Type.Object(
              {
                wp: Type.Optional(Type.Array(WP_VERSION, { minItems: 1, uniqueItems: true })),
                php: Type.Optional(Type.Array(PHP_VERSION, { minItems: 1, uniqueItems: true })),
              },
              {
                additionalProperties: false,
                description: "Run the recipe once per combination (every wp × every php), one bundle per cell and a summary; replaces runtime.wp / runtime.php for the axes it names.",
              },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    inputs: Type.Optional(
      Type.Object(
        {
          plugins: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "Plugin folders or single files: mounted read-only and activated." })),
          themes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "Theme folders: mounted read-only and activated." })),
          mounts: Type.Optional(Type.Array(RECIPE_MOUNT_SCHEMA)),
          runtimeEnv: Type.Optional(Type.Record(Type.String({ pattern: ENV_NAME_PATTERN }), Type.String(), { description: "Environment variables visible to PHP." })),
          secretEnv: Type.Optional(
            Type.Array(Type.String({ pattern: ENV_NAME_PATTERN, writeOnly: true }), { description: "Names of the caller's environment variables passed to PHP and redacted from every artifact." }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    policy: Type.Optional(RUNTIME_POLICY_INPUT_SCHEMA),
    setup: Type.Optional(Type.Array(RECIPE_STEP_SCHEMA, { description: "Run first; each must meet its expectations (default status ok)." })),
    steps: Type.Array(RECIPE_STEP_SCHEMA, { minItems: 1 }),
    artifacts: Type.Optional(
      Type.Object(
        {
          directory: Type.Optional(Type.String({ minLength: 1, description: "Bundle directory, relative to the recipe; default ./wp-codebox-artifacts/<run id>." })),
          includeRuntimeSnapshotBundles: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, $id: WORKSPACE_RECIPE_SCHEMA_ID },
);
export type WorkspaceRecipe = Static<typeof WORKSPACE_RECIPE_SCHEMA>;
