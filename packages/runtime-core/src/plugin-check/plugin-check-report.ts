/**
 * The contract of `wp-codebox check` / `wordpress.check`: what a plugin added to WordPress (its
 * inventory), which surfaces were exercised, and the findings, each pointing at the bundle file
 * that proves it. Declared once here as TypeBox schemas; the types are derived from them.
 */
import { Type, type Static } from "@sinclair/typebox";

/** Schema id of `files/check/report.json`. */
export const PLUGIN_CHECK_REPORT_SCHEMA_ID = "wp-codebox/plugin-check-report/v1";

/** Severities, most severe first. `--fail-on X` fails on X and everything before it. */
export const CHECK_SEVERITIES = ["error", "warning", "notice"] as const;
export type CheckSeverity = (typeof CHECK_SEVERITIES)[number];

/**
 * Kinds of finding. PHP kinds follow PHP's error levels; `deprecated` covers both PHP's
 * E_DEPRECATED and WordPress's `_deprecated_*()` notices; `doing-it-wrong` is WordPress's
 * `_doing_it_wrong()`; `http-error` is a response ≥ 500 with no PHP fatal to explain it;
 * `timeout` is a surface that did not finish within the per-surface limit (its PHP worker was
 * stopped and replaced); `admin-notice` is an error or warning notice (`notice-error`,
 * `notice-warning`, or the older `error` class) on a wp-admin screen that the same screen did not
 * show before activation; `requirements` is a `Requires at least` / `Requires PHP` the sandbox does
 * not meet (the plugin is then not activated: the finding names the flag that fixes it);
 * `blocked-request` is an outbound HTTP request the plugin made that the sandbox's network policy
 * blocked (always `cause: "sandbox"`).
 */
export const CHECK_FINDING_KINDS = [
  "php-fatal",
  "php-warning",
  "php-notice",
  "deprecated",
  "doing-it-wrong",
  "db-error",
  "http-error",
  "timeout",
  "js-error",
  "console-error",
  "failed-request",
  "activation-output",
  "leftover",
  "admin-notice",
  "requirements",
  "blocked-request",
] as const;
export type CheckFindingKind = (typeof CHECK_FINDING_KINDS)[number];

/** Kinds of surface a check exercises. */
export const CHECK_SURFACE_KINDS = [
  "activation",
  "admin-load",
  "admin-page",
  "admin-page-browser",
  "rest-route",
  "shortcode",
  "block",
  "cron-hook",
  "content-setup",
  "post-type-archive",
  "post-type-single",
  "deactivation",
  "uninstall",
  "front-end",
  "login-screen",
  "admin-screen",
  "importer",
] as const;
export type CheckSurfaceKind = (typeof CHECK_SURFACE_KINDS)[number];

const SOURCE_LOCATION = Type.Object({ file: Type.String(), line: Type.Integer() }, { additionalProperties: false });

/**
 * The arguments one handler of a REST route declares (`args` of `register_rest_route`), reduced
 * to what choosing the smallest valid request needs.
 */
export const REST_ARG_SCHEMA = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    required: Type.Optional(Type.Boolean()),
    default: Type.Optional(Type.Unknown()),
    enum: Type.Optional(Type.Array(Type.Unknown())),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    minLength: Type.Optional(Type.Integer()),
    minItems: Type.Optional(Type.Integer()),
    format: Type.Optional(Type.String()),
    pattern: Type.Optional(Type.String()),
    items: Type.Optional(Type.Unknown()),
    properties: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);
export type RestArg = Static<typeof REST_ARG_SCHEMA>;

/** What a plugin added, by category; each list holds only what was not there before activation. */
export const PLUGIN_INVENTORY_SCHEMA = Type.Object(
  {
    adminPages: Type.Array(
      Type.Object(
        {
          slug: Type.String(),
          parent: Type.Union([Type.String(), Type.Null()]),
          title: Type.String(),
          url: Type.String({ description: "Sandbox-relative URL of the page, e.g. /wp-admin/tools.php?page=x" }),
          callback: Type.Optional(SOURCE_LOCATION),
        },
        { additionalProperties: false },
      ),
    ),
    restRoutes: Type.Array(
      Type.Object(
        {
          route: Type.String(),
          methods: Type.Array(Type.String()),
          pathParams: Type.Boolean({ description: "The route has path parameters, so it has no parameter-free URL." }),
          namespaceIndex: Type.Optional(
            Type.Boolean({ description: "WordPress's own index of a namespace (/{namespace}), which it adds for every namespace that has routes: exercised like the others, not counted as one of the plugin's routes." }),
          ),
          callback: Type.Optional(SOURCE_LOCATION),
          endpoints: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  methods: Type.Array(Type.String()),
                  args: Type.Record(Type.String(), REST_ARG_SCHEMA),
                  callback: Type.Optional(SOURCE_LOCATION),
                },
                { additionalProperties: false },
              ),
              { description: "Each handler of the route: its methods, declared arguments and callback." },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    shortcodes: Type.Array(Type.Object({ tag: Type.String(), callback: Type.Optional(SOURCE_LOCATION) }, { additionalProperties: false })),
    blocks: Type.Array(
      Type.Object({ name: Type.String(), dynamic: Type.Boolean(), callback: Type.Optional(SOURCE_LOCATION) }, { additionalProperties: false }),
    ),
    cronHooks: Type.Array(
      Type.Object(
        { hook: Type.String(), schedule: Type.Union([Type.String(), Type.Null()]), args: Type.Array(Type.Unknown()) },
        { additionalProperties: false },
      ),
    ),
    ajaxActions: Type.Array(Type.Object({ action: Type.String(), nopriv: Type.Boolean() }, { additionalProperties: false })),
    postTypes: Type.Array(
      Type.Object({ name: Type.String(), public: Type.Boolean(), hasArchive: Type.Boolean() }, { additionalProperties: false }),
    ),
    taxonomies: Type.Array(Type.Object({ name: Type.String(), public: Type.Boolean() }, { additionalProperties: false })),
    options: Type.Array(Type.String()),
    tables: Type.Array(Type.String()),
    importers: Type.Array(
      Type.Object(
        { id: Type.String(), name: Type.String(), url: Type.String({ description: "Sandbox-relative URL of its screen, /wp-admin/admin.php?import=<id>" }), callback: Type.Optional(SOURCE_LOCATION) },
        { additionalProperties: false },
      ),
    ),
    callbacks: Type.Array(
      Type.Object({ hook: Type.String(), file: Type.String(), line: Type.Integer() }, { additionalProperties: false }),
      { description: "The plugin's callbacks on hooks (actions and filters share one registry in WordPress), each where it is defined." },
    ),
    files: Type.Array(
      Type.String({
        description:
          "Paths relative to wp-content/ (folders end in /): the entries of wp-content/, plugins/, mu-plugins/ and themes/, and everything under uploads/ (bounded), without the checked plugin's own folder and the check's own files.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type PluginInventory = Static<typeof PLUGIN_INVENTORY_SCHEMA>;

/** One problem, deduplicated: the same kind, message, file and line on several surfaces is one finding. */
export const CHECK_FINDING_SCHEMA = Type.Object(
  {
    severity: Type.Union(CHECK_SEVERITIES.map((s) => Type.Literal(s))),
    kind: Type.Union(CHECK_FINDING_KINDS.map((k) => Type.Literal(k))),
    /** The first surface it was seen on. */
    surface: Type.String(),
    message: Type.String(),
    file: Type.Optional(Type.String()),
    line: Type.Optional(Type.Integer()),
    /** Bundle-relative path of the file that proves it (response body, log, screenshot). */
    evidence: Type.String(),
    /**
     * `sandbox`: caused by the sandbox itself (an outbound request its network policy blocked, a
     * PHP extension its build lacks), not by the plugin alone. Listed, and never fails the check.
     */
    cause: Type.Optional(Type.Literal("sandbox")),
    /** Where core raised it when `file:line` is the plugin's calling frame (a warning core raised on the plugin's behalf). */
    raisedAt: Type.Optional(SOURCE_LOCATION),
    /** Every surface it was seen on, and how often in all. */
    surfaces: Type.Array(Type.String()),
    occurrences: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type CheckFinding = Static<typeof CHECK_FINDING_SCHEMA>;

/** One exercised (or skipped) surface. */
export const CHECK_SURFACE_SCHEMA = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union(CHECK_SURFACE_KINDS.map((k) => Type.Literal(k))),
    target: Type.String({ description: "URL, route, tag, block name or hook that was exercised." }),
    actor: Type.String(),
    status: Type.Union([Type.Literal("passed"), Type.Literal("failed"), Type.Literal("skipped")]),
    httpStatus: Type.Optional(Type.Integer()),
    durationMs: Type.Integer({ minimum: 0 }),
    findings: Type.Integer({ minimum: 0 }),
    evidence: Type.Optional(Type.String()),
    skippedReason: Type.Optional(Type.String()),
    how: Type.Optional(
      Type.String({ description: "How the step was run: for deactivation and uninstall, the wp-admin request or code path; for REST routes, the requests made." }),
    ),
    editor: Type.Optional(
      Type.Union([Type.Literal("block"), Type.Literal("classic")], { description: "Which editor post-new.php showed (a plugin may swap the block editor for the classic one)." }),
    ),
  },
  { additionalProperties: false },
);
export type CheckSurface = Static<typeof CHECK_SURFACE_SCHEMA>;

const SEVERITY_COUNTS = Type.Object(
  { error: Type.Integer({ minimum: 0 }), warning: Type.Integer({ minimum: 0 }), notice: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

/** Kinds of callback coverage counts: hook callbacks (`hook`; admin-page and cron-hook ones apart), shortcodes, REST handlers, block render callbacks. */
export const COVERAGE_CALLBACK_KINDS = ["hook", "admin-page", "cron-hook", "shortcode", "rest", "block"] as const;

/** Which of the plugin's callbacks ran during the check. */
export const CHECK_COVERAGE_SCHEMA = Type.Object(
  {
    registered: Type.Integer({ minimum: 0 }),
    ran: Type.Integer({ minimum: 0 }),
    /** ran / registered × 100, rounded down to one decimal; 100 when nothing is registered. */
    percent: Type.Number({ minimum: 0, maximum: 100 }),
    /** `--min-callback-coverage`: the check fails below it. */
    minPercent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    callbacks: Type.Array(
      Type.Object(
        {
          kind: Type.Union(COVERAGE_CALLBACK_KINDS.map((k) => Type.Literal(k))),
          name: Type.String({ description: "The hook, shortcode tag, REST methods and route, or block name." }),
          file: Type.String(),
          line: Type.Integer(),
          ran: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    /** `--coverage lines`: whether line coverage was measured, and why not. */
    lines: Type.Optional(Type.Object({ available: Type.Boolean(), reason: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type CheckCoverage = Static<typeof CHECK_COVERAGE_SCHEMA>;

/** `files/check/report.json`. */
export const PLUGIN_CHECK_REPORT_SCHEMA = Type.Object(
  {
    schema: Type.Literal(PLUGIN_CHECK_REPORT_SCHEMA_ID),
    plugin: Type.Object(
      { file: Type.String(), name: Type.String(), version: Type.String(), active: Type.Boolean({ description: "Active after activation." }) },
      { additionalProperties: false },
    ),
    failOn: Type.Union(CHECK_SEVERITIES.map((s) => Type.Literal(s))),
    /** `failed` when a finding is at or above `failOn`. */
    status: Type.Union([Type.Literal("passed"), Type.Literal("failed")]),
    counts: SEVERITY_COUNTS,
    countsBySurface: Type.Record(Type.String(), SEVERITY_COUNTS),
    inventory: PLUGIN_INVENTORY_SCHEMA,
    /** What was still there after deactivation and uninstall (also reported as `leftover` findings). */
    leftovers: Type.Object(
      { options: Type.Array(Type.String()), tables: Type.Array(Type.String()), cronHooks: Type.Array(Type.String()), files: Type.Array(Type.String()) },
      { additionalProperties: false },
    ),
    uninstall: Type.Union([Type.Literal("uninstall.php"), Type.Literal("uninstall-hook"), Type.Literal("none")]),
    surfaces: Type.Array(CHECK_SURFACE_SCHEMA),
    findings: Type.Array(CHECK_FINDING_SCHEMA),
    coverage: Type.Optional(CHECK_COVERAGE_SCHEMA),
  },
  { additionalProperties: false, $id: PLUGIN_CHECK_REPORT_SCHEMA_ID },
);
export type PluginCheckReport = Static<typeof PLUGIN_CHECK_REPORT_SCHEMA>;
