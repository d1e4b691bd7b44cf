/**
 * Which secret values can be redacted without harm. Redaction replaces every occurrence of a
 * secret, so a value that is short or that the bundle itself spells (a field name, a schema name, a
 * status word) would rewrite the bundle's own structure and turn a good run into `bundle-invalid`,
 * or destroy unrelated text. Such a value is refused before boot with `secret-unsafe` instead.
 */
import {
  ARTIFACT_MANIFEST_SCHEMA,
  ARTIFACT_METADATA_SCHEMA,
  ARTIFACT_REVIEW_SCHEMA,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA,
} from "../artifact-bundle/bundle-schemas.js";
import { BUNDLE_KINDS, BUNDLE_PATHS } from "../artifact-bundle/bundle-layout.js";
import { SECRET_ENCODED_FORMS_MIN_CHARS } from "../defaults.js";
import { RUNTIME_DETERMINISM_SCHEMA } from "../determinism.js";
import { RUNTIME_EPISODE_ACTION_SCHEMA, RUNTIME_EPISODE_OBSERVATION_SCHEMA, RUNTIME_EPISODE_TRACE_SCHEMA } from "../episode/episode-constants.js";
import { WpCodeboxError } from "../errors.js";
import { RUNTIME_POLICY_SCHEMA } from "../policy.js";
import { REDACTED, encodedForms } from "../redaction.js";
import type { ArtifactRef, DbErrorRecord, ExecutionError, ExecutionResult, RuntimeEvent, RuntimeInfo } from "../runtime.js";
import { WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA } from "../artifact-bundle/runtime-snapshot.js";
import { PHPUNIT_RESULTS_SCHEMA, RECIPE_MATRIX_SUMMARY_SCHEMA } from "../test-results.js";
import { WORDPRESS_STATE_EXPORT_SCHEMA, WORDPRESS_STATE_SECTION_SCHEMA } from "../wordpress-state.js";
import type { WordPressChoiceRecord, WordPressChosenBy, WordPressSourceKind } from "../wordpress-choice.js";

/**
 * Shortest secret value, in characters (code points), that may be declared: its base64 and hex
 * are redacted too, and it is long enough not to turn up by chance in unrelated text.
 */
export const SECRET_MIN_CHARS = SECRET_ENCODED_FORMS_MIN_CHARS;

/** Every field of a type, so that the compiler flags a field added to it and missing here. */
type Fields<T> = Record<keyof Required<T>, true>;
const RESULT_FIELDS: Fields<ExecutionResult> = { id: true, command: true, args: true, status: true, exitCode: true, stdout: true, stderr: true, stdoutBytes: true, stderrBytes: true, truncated: true, json: true, error: true, startedAt: true, finishedAt: true, durationMs: true, artifactRefs: true, dbErrors: true, backgroundErrors: true };
const ERROR_FIELDS: Fields<ExecutionError> = { code: true, message: true, data: true };
const REF_FIELDS: Fields<ArtifactRef> = { path: true, kind: true, sha256: true, bytes: true };
const DB_ERROR_FIELDS: Fields<DbErrorRecord> = { query: true, message: true };
const EVENT_FIELDS: Fields<RuntimeEvent> = { at: true, type: true, data: true };
const WORDPRESS_FIELDS: Fields<WordPressChoiceRecord> = { version: true, source: true, chosenBy: true };
/** The values `RuntimeInfo.wordpress` spells (`source`, `chosenBy`). */
const WORDPRESS_VALUES: readonly (WordPressSourceKind | WordPressChosenBy)[] = ["bundled", "release", "custom", "named", "latest", "offline-cached", "offline-bundled"];
const INFO_FIELDS: Fields<RuntimeInfo> = { id: true, backend: true, wordpressVersion: true, wordpress: true, phpVersion: true, phpExtensions: true, siteUrl: true, bootMode: true, bootDurationMs: true, mounts: true, policy: true, plugins: true, themes: true, determinism: true, defines: true };

/** The JSON Schemas of what a bundle's own files hold (their field names, constants and ids). */
const STRUCTURE_SCHEMAS: readonly unknown[] = [
  ARTIFACT_MANIFEST_SCHEMA,
  ARTIFACT_METADATA_SCHEMA,
  ARTIFACT_REVIEW_SCHEMA,
  RUNTIME_REFERENCE_MANIFEST_SCHEMA,
  RUNTIME_POLICY_SCHEMA,
  RUNTIME_DETERMINISM_SCHEMA,
  PHPUNIT_RESULTS_SCHEMA,
  RECIPE_MATRIX_SUMMARY_SCHEMA,
];

/** Property names, `const` and `enum` strings and `$id`s of a JSON Schema, at any depth. */
function schemaWords(schema: unknown, into: Set<string>): void {
  if (Array.isArray(schema)) {
    for (const item of schema) schemaWords(item, into);
    return;
  }
  if (schema === null || typeof schema !== "object") return;
  const node = schema as Record<string, unknown>;
  if (node.properties && typeof node.properties === "object") for (const key of Object.keys(node.properties)) into.add(key);
  for (const value of [node.const, node.$id, ...(Array.isArray(node.enum) ? node.enum : [])]) if (typeof value === "string") into.add(value);
  for (const value of Object.values(node)) if (value !== null && typeof value === "object") schemaWords(value, into);
}

let structureWords: readonly string[] | undefined;

/**
 * The words a bundle spells itself, lower case: field names, constants and ids of the bundle
 * schemas (manifest, metadata, review, reference manifest, policy, determinism, test results), the
 * fields of a command result, an event and the runtime info, the fixed bundle paths and kinds,
 * the other schema names (episode trace, snapshot, state export), and `[REDACTED]` itself.
 */
export function bundleStructureWords(): readonly string[] {
  if (structureWords) return structureWords;
  const words = new Set<string>();
  for (const schema of STRUCTURE_SCHEMAS) schemaWords(schema, words);
  for (const fields of [RESULT_FIELDS, ERROR_FIELDS, REF_FIELDS, DB_ERROR_FIELDS, EVENT_FIELDS, INFO_FIELDS, WORDPRESS_FIELDS]) for (const key of Object.keys(fields)) words.add(key);
  for (const value of [...Object.values(BUNDLE_PATHS), ...Object.values(BUNDLE_KINDS)]) words.add(value);
  for (const id of [RUNTIME_EPISODE_TRACE_SCHEMA, RUNTIME_EPISODE_ACTION_SCHEMA, RUNTIME_EPISODE_OBSERVATION_SCHEMA, WORDPRESS_RUNTIME_SNAPSHOT_SCHEMA, WORDPRESS_STATE_EXPORT_SCHEMA, WORDPRESS_STATE_SECTION_SCHEMA]) words.add(id);
  for (const value of WORDPRESS_VALUES) words.add(value);
  words.add(REDACTED);
  structureWords = [...words].map((w) => w.toLowerCase());
  return structureWords;
}

/**
 * Why a secret value cannot be redacted safely, or undefined when it can. The empty value is
 * fine (there is nothing to redact). The reason never quotes the value nor the word it matched.
 * - shorter than `SECRET_MIN_CHARS` (8) characters: redacting it would destroy unrelated text,
 *   and its base64 and hex could not be redacted;
 * - the value, or one of its redacted forms (base64, hex, escapes), occurs in any letter case in a
 *   word the bundle spells itself (`bundleStructureWords`): redacting it would rewrite the
 *   bundle's own fields and names.
 */
export function secretValueProblem(value: string): string | undefined {
  if (value.length === 0) return undefined;
  if ([...value].length < SECRET_MIN_CHARS) {
    return `the value is shorter than ${SECRET_MIN_CHARS} characters, too short to redact without destroying unrelated text. Use a longer value, or pass it with --env if it is not a secret.`;
  }
  const words = bundleStructureWords();
  const forms = encodedForms(value).map((f) => f.toLowerCase());
  if (forms.some((form) => words.some((word) => word.includes(form)))) {
    return "the value occurs in the bundle's own structure (a field name, schema name, file name or status word), so redacting it would rewrite the bundle itself. Use a longer, random value.";
  }
  return undefined;
}

/**
 * Checks secret values before a sandbox boots (see `secretValueProblem`).
 * @param secrets - variable name → secret value.
 * @param flag - names the source in the message, e.g. `"--secret-env"`.
 * @throws WpCodeboxError `secret-unsafe` (`data.name`; never the value) `"<flag> <name>: <problem>"`
 *   for the first unsafe value; with several, `data.names` lists every unsafe one.
 */
export function assertSecretsSafe(secrets: Record<string, string>, flag: string): void {
  const bad = Object.entries(secrets).flatMap(([name, value]) => {
    const problem = secretValueProblem(value);
    return problem ? [{ name, problem }] : [];
  });
  if (bad.length === 0) return;
  const first = bad[0]!;
  const more = bad.length > 1 ? ` (also ${bad.slice(1).map((b) => b.name).join(", ")})` : "";
  throw new WpCodeboxError("secret-unsafe", `${flag} ${first.name}: ${first.problem}${more}`, { name: first.name, names: bad.map((b) => b.name) });
}
