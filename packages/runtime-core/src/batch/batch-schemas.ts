/**
 * The batch contracts, declared once as TypeBox schemas: one line of a task file
 * (`wp-codebox/batch-task/v1`, `wp-codebox schema batch-task`) and the aggregate report a batch
 * writes to `DIR/report.json` (`wp-codebox/batch-report/v1`, `wp-codebox schema batch-report`).
 * The batch runner itself lives in `@wp-codebox/batch`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { BACKEND_NAMES } from "../runtime.js";

/** Schema id of one task line. */
export const BATCH_TASK_SCHEMA_ID = "wp-codebox/batch-task/v1";
/** Schema id of `DIR/report.json`. */
export const BATCH_REPORT_SCHEMA_ID = "wp-codebox/batch-report/v1";

/**
 * A task id: it names the bundle folder `DIR/<id>/` and the BullMQ job, so it is a safe file name
 * (letters, digits, `.`, `_`, `-`; at most 128 characters; no leading dot) and not all digits
 * (BullMQ refuses integer job ids).
 */
export const BATCH_TASK_ID_PATTERN = "^(?![0-9]+$)[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$";
/** Longest task id, also for the ids of matrix cells (`<id>.wp-6.5-php-8.2`). */
export const BATCH_TASK_ID_MAX_LENGTH = 128;

const DURATION = Type.Union([Type.String({ minLength: 1 }), Type.Integer({ minimum: 1 })], {
  description: 'Wall-clock limit of the whole task (boot to verified bundle): "90s", "500ms", "2m", or a number of ms.',
});

/** Per-task overrides of the runtime the recipe or episode script names. */
export const BATCH_TASK_RUNTIME_SCHEMA = Type.Object(
  {
    backend: Type.Optional(
      Type.Union(BACKEND_NAMES.map((name) => Type.Literal(name)), {
        description: 'The backend that runs the task: "playground" or "native" (replaces the file\'s runtime.backend; default playground).',
      }),
    ),
    wp: Type.Optional(
      Type.String({
        pattern: "^([0-9]+\\.[0-9]+(\\.[0-9]+)?|latest)$",
        description: "WordPress X.Y, X.Y.Z or latest (replaces the file's runtime.wp, and a matrix recipe's wp axis).",
      }),
    ),
    php: Type.Optional(
      Type.String({ pattern: "^\\d+\\.\\d+$", description: 'PHP "X.Y" (replaces the file\'s runtime.php, and a matrix recipe\'s php axis); which versions exist is the backend\'s to say.' }),
    ),
    clock: Type.Optional(Type.String({ minLength: 1, description: 'Where the sandbox\'s virtual clock starts (ISO-8601 instant with a timezone), or "real" (replaces the file\'s runtime.clock).' })),
    seed: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Seed of every source of randomness; refused with a policy that allows outbound network (replaces the file's runtime.seed)." }),
    ),
  },
  { additionalProperties: false },
);

/**
 * One line of `tasks.jsonl`: exactly one of `recipe` (a workspace recipe file) or `episode` (an
 * episode script). Paths are relative to the task file.
 */
export const BATCH_TASK_SCHEMA = Type.Object(
  {
    id: Type.String({ pattern: BATCH_TASK_ID_PATTERN, description: "Unique in the file; the bundle folder and the BullMQ job id." }),
    recipe: Type.Optional(Type.String({ minLength: 1, description: "Workspace recipe file (wp-codebox/workspace-recipe/v1), relative to the task file." })),
    episode: Type.Optional(Type.String({ minLength: 1, description: "Episode script (wp-codebox/episode-script/v1), relative to the task file." })),
    runtime: Type.Optional(BATCH_TASK_RUNTIME_SCHEMA),
    timeout: Type.Optional(DURATION),
  },
  { $id: BATCH_TASK_SCHEMA_ID, title: "WP Codebox batch task (one line of tasks.jsonl)", additionalProperties: false },
);
export type BatchTask = Static<typeof BATCH_TASK_SCHEMA>;

/** What happened to one task. `bundle` is null when no bundle was written (the sandbox crashed, the task timed out, the inputs could not be read). */
export const BATCH_TASK_RESULT_SCHEMA = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal("recipe"), Type.Literal("episode")]),
    status: Type.Union([Type.Literal("passed"), Type.Literal("failed")]),
    matrix: Type.Optional(
      Type.Object(
        { task: Type.String({ description: "The id on the task-file line." }), wp: Type.Union([Type.String(), Type.Null()]), php: Type.Union([Type.String(), Type.Null()]) },
        { additionalProperties: false, description: "Set for one cell of a matrix recipe: the line's id and the cell's versions (null: the recipe's default)." },
      ),
    ),
    exitCode: Type.Integer({ description: "What `recipe run` / `episode run` would exit with: 0 passed, 1 failed, 2 invalid input, 3 environment, 70 internal." }),
    durationMs: Type.Integer({ minimum: 0, description: "Of the last attempt, boot to verified bundle." }),
    bundle: Type.Union([Type.Object({ id: Type.String(), digest: Type.String() }, { additionalProperties: false }), Type.Null()]),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false })),
    attempts: Type.Optional(Type.Integer({ minimum: 1, description: "Queue mode: how many times a worker started the task." })),
    resumed: Type.Optional(Type.Boolean({ description: "True when an earlier run's verified bundle was kept." })),
  },
  { additionalProperties: false },
);
export type BatchTaskResult = Static<typeof BATCH_TASK_RESULT_SCHEMA>;

/** `DIR/report.json`: tasks in task-file order. */
export const BATCH_REPORT_SCHEMA = Type.Object(
  {
    schema: Type.Literal(BATCH_REPORT_SCHEMA_ID),
    tasksFile: Type.String(),
    artifactsDir: Type.String(),
    mode: Type.Union([Type.Literal("local"), Type.Literal("queue")]),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, description: "Local mode: sandboxes at once." })),
    queue: Type.Optional(Type.String({ description: "Queue mode: the Redis URL (password removed) and queue name." })),
    startedAt: Type.String(),
    finishedAt: Type.String(),
    durationMs: Type.Integer({ minimum: 0 }),
    counts: Type.Object({ total: Type.Integer(), passed: Type.Integer(), failed: Type.Integer(), resumed: Type.Integer() }, { additionalProperties: false }),
    tasks: Type.Array(BATCH_TASK_RESULT_SCHEMA),
  },
  { $id: BATCH_REPORT_SCHEMA_ID, title: "WP Codebox batch report", additionalProperties: false },
);
export type BatchReport = Static<typeof BATCH_REPORT_SCHEMA>;
