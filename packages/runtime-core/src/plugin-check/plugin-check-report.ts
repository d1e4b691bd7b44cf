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
 * not meet (the plugin is then not activated: the finding names the flag that fixes it).
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
      { options: Type.Array(Type.String()), tables: Type.Array(Type.String()), cronHooks: Type.Array(Type.String()) },
      { additionalProperties: false },
    ),
    uninstall: Type.Union([Type.Literal("uninstall.php"), Type.Literal("uninstall-hook"), Type.Literal("none")]),
    surfaces: Type.Array(CHECK_SURFACE_SCHEMA),
    findings: Type.Array(CHECK_FINDING_SCHEMA),
  },
  { additionalProperties: false, $id: PLUGIN_CHECK_REPORT_SCHEMA_ID },
);
export type PluginCheckReport = Static<typeof PLUGIN_CHECK_REPORT_SCHEMA>;
