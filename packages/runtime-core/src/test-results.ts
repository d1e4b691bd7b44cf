/**
 * Contracts of test runs: the counts of a `wordpress.phpunit` run (`files/phpunit/test-results.json`,
 * `wp-codebox/phpunit-results/v1`, repeated in `files/review.json` `tests`) and the summary of a
 * matrix recipe run (`matrix-summary.json`, `wp-codebox/recipe-matrix-summary/v1`). Declared once
 * as TypeBox schemas; the types derive from them.
 */
import { Type, type Static } from "@sinclair/typebox";

/** Schema id of `files/phpunit/test-results.json` (and of `wordpress.phpunit`'s `result.json`). */
export const PHPUNIT_RESULTS_SCHEMA_ID = "wp-codebox/phpunit-results/v1";
/** Schema id of a matrix recipe run's `matrix-summary.json`. */
export const RECIPE_MATRIX_SUMMARY_SCHEMA_ID = "wp-codebox/recipe-matrix-summary/v1";

const COUNT = Type.Integer({ minimum: 0 });

/** Counts of a test run; `passed` = tests − failures − errors − skipped − incomplete. */
export const TEST_COUNTS_SCHEMA = Type.Object(
  {
    tests: COUNT,
    assertions: COUNT,
    failures: COUNT,
    errors: COUNT,
    skipped: COUNT,
    incomplete: COUNT,
    warnings: COUNT,
    risky: COUNT,
    passed: COUNT,
  },
  { additionalProperties: false },
);
export type TestCounts = Static<typeof TEST_COUNTS_SCHEMA>;

/** One failing (`failure`: an assertion) or erroring (`error`: an exception) test. */
export const PHPUNIT_FAILURE_SCHEMA = Type.Object(
  {
    name: Type.String({ description: "Class::method" }),
    kind: Type.Union([Type.Literal("failure"), Type.Literal("error")]),
    type: Type.String({ description: "The exception class PHPUnit logged." }),
    message: Type.String(),
    file: Type.String({ description: "Relative to the plugin folder when inside it, else the sandbox path." }),
    line: Type.Integer({ minimum: 0, description: "The failing line: the first trace frame in the test's own file, else the test method's line." }),
    location: Type.String({ description: "file:line" }),
    sandboxFile: Type.String(),
  },
  { additionalProperties: false },
);
export type PhpunitFailure = Static<typeof PHPUNIT_FAILURE_SCHEMA>;

/** `files/phpunit/test-results.json`. */
export const PHPUNIT_RESULTS_SCHEMA = Type.Object(
  {
    schema: Type.Literal(PHPUNIT_RESULTS_SCHEMA_ID),
    plugin: Type.String({ description: "The plugin folder the suite ran from." }),
    phpunit: Type.Object(
      {
        version: Type.Union([Type.String(), Type.Null()]),
        source: Type.Union([Type.Literal("arg"), Type.Literal("plugin")], { description: '"arg": phpunit=PATH; "plugin": the plugin\'s vendor/bin/phpunit.' }),
        entry: Type.String(),
      },
      { additionalProperties: false },
    ),
    bootstrap: Type.Union([Type.Literal("plugin"), Type.Literal("wordpress")]),
    testsLibrary: Type.Union(
      [
        Type.Object(
          {
            dir: Type.String({ description: "WP_TESTS_DIR inside the sandbox." }),
            from: Type.Union([Type.Literal("env"), Type.Literal("vendor"), Type.Literal("tmp")], {
              description:
                '"env": the host\'s WP_TESTS_DIR; "vendor": the plugin\'s vendor/wp-phpunit/wp-phpunit; "tmp": the host\'s ${TMPDIR:-/tmp}/wordpress-tests-lib (install-wp-tests.sh\'s default place), mounted at sys_get_temp_dir()/wordpress-tests-lib in the sandbox.',
            }),
            installed: Type.Boolean({ description: "Whether the sandbox ran the library's includes/install.php before PHPUnit." }),
            multisite: Type.Optional(
              Type.Boolean({
                description:
                  "Whether that install set up a network: the host's WP_MULTISITE is \"1\", or the PHPUnit configuration file sets WP_MULTISITE=1 (an <env> the host's value does not override, or one with force=\"true\") or a true WP_TESTS_MULTISITE constant.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: "The WordPress core test library offered to the plugin's bootstrap; null when there is none." },
    ),
    config: Type.Union([Type.String(), Type.Null()]),
    filter: Type.Union([Type.String(), Type.Null()]),
    testsuite: Type.Union([Type.String(), Type.Null()]),
    exitCode: Type.Integer({ description: "PHPUnit's exit code: 0 passed, 1 failures, 2 errors." }),
    tests: TEST_COUNTS_SCHEMA,
    failures: Type.Array(PHPUNIT_FAILURE_SCHEMA),
  },
  { additionalProperties: false, $id: PHPUNIT_RESULTS_SCHEMA_ID },
);
export type PhpunitResults = Static<typeof PHPUNIT_RESULTS_SCHEMA>;

/** One cell of a matrix run. */
export const RECIPE_MATRIX_CELL_SCHEMA = Type.Object(
  {
    id: Type.String({ description: "wp-<wp>-php-<php>: the cell's bundle folder." }),
    wp: Type.Union([Type.String(), Type.Null()]),
    php: Type.Union([Type.String(), Type.Null()]),
    outcome: Type.Union([Type.Literal("passed"), Type.Literal("failed")]),
    exitCode: Type.Integer(),
    summary: Type.String(),
    tests: Type.Union([
      Type.Object({ total: COUNT, passed: COUNT, failed: COUNT, errors: COUNT, skipped: COUNT }, { additionalProperties: false }),
      Type.Null(),
    ], { description: "The cell's wordpress.phpunit counts (from its review.json); null when it ran none." }),
    bundle: Type.Object({ directory: Type.String(), id: Type.String(), digest: Type.String(), valid: Type.Boolean() }, { additionalProperties: false }),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type RecipeMatrixCell = Static<typeof RECIPE_MATRIX_CELL_SCHEMA>;

/** `matrix-summary.json`. */
export const RECIPE_MATRIX_SUMMARY_SCHEMA = Type.Object(
  {
    schema: Type.Literal(RECIPE_MATRIX_SUMMARY_SCHEMA_ID),
    recipe: Type.Object({ path: Type.String(), name: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }, { additionalProperties: false }),
    outcome: Type.Union([Type.Literal("passed"), Type.Literal("failed")]),
    counts: Type.Object({ cells: COUNT, passed: COUNT, failed: COUNT }, { additionalProperties: false }),
    cells: Type.Array(RECIPE_MATRIX_CELL_SCHEMA),
  },
  { additionalProperties: false, $id: RECIPE_MATRIX_SUMMARY_SCHEMA_ID },
);
export type RecipeMatrixSummary = Static<typeof RECIPE_MATRIX_SUMMARY_SCHEMA>;
