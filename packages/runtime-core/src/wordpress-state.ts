/**
 * The WordPress state export contracts: the request (`{ type: "wordpress-state", sections?, … }`),
 * the inline observation data `wp-codebox/wordpress-state-export/v1` and the per-section artifact
 * `wp-codebox/wordpress-state-section/v1`, each declared once with TypeBox.
 *
 * Each section's fields are declared here, once, and nothing else may appear in its data; where a
 * choice was ours (`rest-routes`, `abilities`, the shape of `activeTheme`, which users fields are
 * "safe"), the reason is stated next to the schema.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { WpCodeboxError } from "./errors.js";
import { validateAgainstSchema, type SchemaIssue } from "./schema-validation.js";

/** Schema id of the inline observation data. */
export const WORDPRESS_STATE_EXPORT_SCHEMA = "wp-codebox/wordpress-state-export/v1" as const;
/** Schema id of one artifact-backed section. */
export const WORDPRESS_STATE_SECTION_SCHEMA = "wp-codebox/wordpress-state-section/v1" as const;
/** Artifact kind of a section file under `files/observations/`. */
export const WORDPRESS_STATE_SECTION_KIND = "wordpress-state-section" as const;

/** Every section, in export order. */
export const WORDPRESS_STATE_SECTIONS = ["summary", "posts", "terms", "menus", "templates", "media", "options", "users", "rest-routes", "abilities"] as const;
export type WordPressStateSection = (typeof WORDPRESS_STATE_SECTIONS)[number];

/** User fields that are never identity: allowed with the default `redaction: "safe"`. */
export const WORDPRESS_STATE_SAFE_USER_FIELDS = ["roles", "caps"] as const;
/** Identity fields a caller may request with `redaction: "none"`. Passwords and activation keys are never exported. */
export const WORDPRESS_STATE_IDENTITY_USER_FIELDS = ["user_login", "display_name", "user_email", "user_nicename", "user_url", "user_registered", "first_name", "last_name", "nickname"] as const;
/** `userFields` when the caller names none. Decision (seed silent): roles only, the least a caller usually needs. */
export const WORDPRESS_STATE_DEFAULT_USER_FIELDS = ["roles"] as const;

const SectionName = Type.Union(WORDPRESS_STATE_SECTIONS.map((s) => Type.Literal(s)));
const UserField = Type.Union([...WORDPRESS_STATE_SAFE_USER_FIELDS, ...WORDPRESS_STATE_IDENTITY_USER_FIELDS].map((s) => Type.Literal(s)));

/**
 * An observation request for WordPress state.
 * - `sections`: allowlist; default `["summary"]`.
 * - `optionNames`: options to export (the `options` section exports nothing else).
 * - `userFields`: per-user fields; identity fields need `redaction: "none"`. Default `["roles"]`.
 * - `includeContent`: post/template/template-part bodies and the global stylesheet; default false (hashes only).
 * - `redaction`: `"safe"` (default) or `"none"`.
 */
export const WordPressStateRequestSchema = Type.Object(
  {
    type: Type.Literal("wordpress-state"),
    sections: Type.Optional(Type.Array(SectionName, { uniqueItems: true })),
    optionNames: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    userFields: Type.Optional(Type.Array(UserField, { uniqueItems: true })),
    includeContent: Type.Optional(Type.Boolean()),
    redaction: Type.Optional(Type.Union([Type.Literal("safe"), Type.Literal("none")])),
  },
  { additionalProperties: false },
);
export type WordPressStateRequest = Static<typeof WordPressStateRequestSchema>;

/** The normalised request, as recorded in the export's `config`. */
export const WordPressStateConfigSchema = Type.Object(
  {
    sections: Type.Array(SectionName),
    optionNames: Type.Array(Type.String()),
    userFields: Type.Array(Type.String()),
    includeContent: Type.Boolean(),
    redaction: Type.Union([Type.Literal("safe"), Type.Literal("none")]),
  },
  { additionalProperties: false },
);
export type WordPressStateConfig = Static<typeof WordPressStateConfigSchema>;

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Hash = Type.String({ pattern: "^[0-9a-f]{64}$" });
const strict = { additionalProperties: false } as const;

/** `summary`. `activeTheme` is the stylesheet slug (seed silent on its shape); `postCounts[type][status]` counts every post row. */
export const WordPressStateSummarySchema = Type.Object(
  {
    siteUrl: Type.String(),
    homeUrl: Type.String(),
    wordpressVersion: Type.String(),
    activeTheme: Type.String(),
    activePlugins: Type.Array(Type.String()),
    postCounts: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
  },
  strict,
);
/** `posts`: public post types except attachments, ascending id, `auto-draft` rows left out. */
export const WordPressStatePostSchema = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String(),
    slug: Type.String(),
    status: Type.String(),
    title: Type.String(),
    contentHash: Hash,
    modifiedGmt: Nullable(Type.String()),
    content: Type.Optional(Type.String()),
  },
  strict,
);
export const WordPressStateTermSchema = Type.Object(
  { id: Type.Integer(), taxonomy: Type.String(), slug: Type.String(), name: Type.String(), parent: Type.Integer(), count: Type.Integer() },
  strict,
);
export const WordPressStateMenuSchema = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    items: Type.Array(
      Type.Object({ id: Type.Integer(), title: Type.String(), url: Type.String(), parentId: Type.Integer(), object: Type.String(), type: Type.String() }, strict),
    ),
  },
  strict,
);
export const WordPressStateTemplatesSchema = Type.Object(
  {
    theme: Type.String(),
    templates: Type.Array(
      Type.Object(
        { id: Type.String(), slug: Type.String(), theme: Type.String(), type: Type.String(), source: Type.String(), contentHash: Hash, content: Type.Optional(Type.String()) },
        strict,
      ),
    ),
    templateParts: Type.Array(
      Type.Object(
        { id: Type.String(), slug: Type.String(), theme: Type.String(), area: Type.String(), source: Type.String(), contentHash: Hash, content: Type.Optional(Type.String()) },
        strict,
      ),
    ),
    globalStyles: Type.Object({ stylesheetHash: Nullable(Hash), stylesheet: Type.Optional(Type.String()) }, strict),
  },
  strict,
);
export const WordPressStateMediaSchema = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    title: Type.String(),
    status: Type.String(),
    mimeType: Type.String(),
    sourceUrl: Type.String(),
    altText: Type.String(),
    metadataHash: Hash,
  },
  strict,
);
/** `users`: `id` and `redacted` always; `roles`/`caps` (cap names granted, sorted) and identity fields only when requested. */
export const WordPressStateUserSchema = Type.Object(
  {
    id: Type.Integer(),
    redacted: Type.Boolean(),
    roles: Type.Optional(Type.Array(Type.String())),
    caps: Type.Optional(Type.Array(Type.String())),
    ...Object.fromEntries(WORDPRESS_STATE_IDENTITY_USER_FIELDS.map((f) => [f, Type.Optional(Type.String())])),
  },
  strict,
);
/** `rest-routes` (seed silent): every registered route, sorted, with its namespace and HTTP methods. */
export const WordPressStateRestRouteSchema = Type.Object({ route: Type.String(), namespace: Type.String(), methods: Type.Array(Type.String()) }, strict);
/** `abilities` (seed silent): the Abilities API's registered abilities; an empty list where WordPress has no such API (6.5). */
export const WordPressStateAbilitySchema = Type.Object({ name: Type.String(), label: Type.String(), description: Type.String() }, strict);

/** The `data` schema of each section. */
export const WORDPRESS_STATE_SECTION_DATA_SCHEMAS: Record<WordPressStateSection, TSchema> = {
  summary: WordPressStateSummarySchema,
  posts: Type.Array(WordPressStatePostSchema),
  terms: Type.Array(WordPressStateTermSchema),
  menus: Type.Array(WordPressStateMenuSchema),
  templates: WordPressStateTemplatesSchema,
  media: Type.Array(WordPressStateMediaSchema),
  options: Type.Record(Type.String(), Type.Unknown()),
  users: Type.Array(WordPressStateUserSchema),
  "rest-routes": Type.Array(WordPressStateRestRouteSchema),
  abilities: Type.Array(WordPressStateAbilitySchema),
};

/** A section artifact: `{ schema, version: 1, section, data }`. */
export const WordPressStateSectionFileSchema = Type.Object(
  { schema: Type.Literal(WORDPRESS_STATE_SECTION_SCHEMA), version: Type.Literal(1), section: SectionName, data: Type.Unknown() },
  strict,
);

/** An entry of the export's `artifacts` map. */
export const WordPressStateArtifactEntrySchema = Type.Object({ artifact: Type.String(), sha256: Hash, bytes: Type.Integer({ minimum: 0 }) }, strict);

/**
 * The inline observation data: `schema`, `version: 1`, `generatedAt` (ISO-8601, presentation),
 * the normalised `config`, compact `sections` summaries (the `summary` section in full, counts and
 * keys for the others) and `artifacts { <section>: { artifact, sha256, bytes } }`.
 */
export const WordPressStateExportSchema = Type.Object(
  {
    schema: Type.Literal(WORDPRESS_STATE_EXPORT_SCHEMA),
    version: Type.Literal(1),
    generatedAt: Type.String(),
    config: WordPressStateConfigSchema,
    sections: Type.Record(Type.String(), Type.Unknown()),
    artifacts: Type.Record(Type.String(), WordPressStateArtifactEntrySchema),
  },
  { $id: WORDPRESS_STATE_EXPORT_SCHEMA, additionalProperties: false },
);
export type WordPressStateExport = Static<typeof WordPressStateExportSchema>;

/**
 * Validates and normalises a state request (from `observe()` or the command's args).
 * @returns the config with defaults: sections `["summary"]`, optionNames `[]`, userFields `["roles"]`,
 *   includeContent false, redaction `"safe"`.
 * @throws WpCodeboxError `invalid-state-request` listing every issue as `path: message`; also when
 *   an identity user field is requested without `redaction: "none"`.
 */
export function normalizeWordPressStateRequest(request: unknown): WordPressStateConfig {
  const issues: SchemaIssue[] = validateAgainstSchema(WordPressStateRequestSchema, request);
  const r = (issues.length === 0 ? request : {}) as WordPressStateRequest;
  const redaction = r.redaction ?? "safe";
  const userFields = [...(r.userFields ?? WORDPRESS_STATE_DEFAULT_USER_FIELDS)];
  const identity = userFields.filter((f) => (WORDPRESS_STATE_IDENTITY_USER_FIELDS as readonly string[]).includes(f));
  if (issues.length === 0 && identity.length > 0 && redaction !== "none") {
    issues.push({ path: "/userFields", message: `identity fields ${identity.join(", ")} are exported only with redaction: "none"` });
  }
  if (issues.length > 0) {
    throw new WpCodeboxError(
      "invalid-state-request",
      `Invalid wordpress-state request: ${issues.map((i) => `${i.path || "/"}: ${i.message}`).join("; ")}. Sections are ${WORDPRESS_STATE_SECTIONS.join(", ")}; identity user fields need redaction "none".`,
      { issues },
    );
  }
  const sections = r.sections && r.sections.length > 0 ? WORDPRESS_STATE_SECTIONS.filter((s) => r.sections!.includes(s)) : ["summary" as const];
  return { sections, optionNames: [...(r.optionNames ?? [])], userFields, includeContent: r.includeContent ?? false, redaction };
}

/** Turns the `wordpress.state-export` command args (`sections=a,b`, `include-content=true`, …) into a request. */
export function wordPressStateRequestFromArgs(args: Record<string, string>): WordPressStateRequest {
  const list = (v: string | undefined) => (v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter((s) => s.length > 0));
  const request: Record<string, unknown> = { type: "wordpress-state" };
  if (args.sections !== undefined) request.sections = list(args.sections);
  if (args["option-names"] !== undefined) request.optionNames = list(args["option-names"]);
  if (args["user-fields"] !== undefined) request.userFields = list(args["user-fields"]);
  if (args["include-content"] !== undefined) request.includeContent = ["1", "true", "yes"].includes(args["include-content"].toLowerCase());
  if (args.redaction !== undefined) request.redaction = args.redaction;
  return request as WordPressStateRequest;
}

/** Checks one section's data against its declared fields; returns issues as `{ path, message }`. */
export function validateWordPressStateSection(section: WordPressStateSection, data: unknown): SchemaIssue[] {
  return validateAgainstSchema(WORDPRESS_STATE_SECTION_DATA_SCHEMAS[section], data);
}
