/**
 * Runs the state export script in the sandbox and turns its output into the inline
 * `wp-codebox/wordpress-state-export/v1` data plus one `wp-codebox/wordpress-state-section/v1`
 * artifact per exported section, with the same SHA-256 in the data and in the artifact refs.
 */
import {
  WORDPRESS_STATE_EXPORT_SCHEMA,
  WORDPRESS_STATE_SECTION_KIND,
  WORDPRESS_STATE_SECTION_SCHEMA,
  WpCodeboxError,
  createRedactor,
  sha256Hex,
  validateWordPressStateSection,
  type ArtifactFile,
  type ArtifactRef,
  type WordPressStateConfig,
  type WordPressStateExport,
  type WordPressStateSection,
} from "@wp-codebox/runtime-core";
import type { PhpRunResult } from "../commands/php-results.js";
import { outcomeFromRun, withFatalRecorder } from "../commands/run-php.js";
import { stateExportPhp } from "./state-export-php.js";

/** What an export produced: the inline data, the section files and refs to them (`sha256`, `bytes` set). */
export interface WordPressStateExportResult {
  data: WordPressStateExport;
  files: ArtifactFile[];
  artifactRefs: Required<ArtifactRef>[];
}

/** Note recorded in the `abilities` summary when WordPress has no Abilities API (before 6.9). */
export const ABILITIES_UNAVAILABLE_NOTE = "This WordPress has no Abilities API (wp_get_abilities() is undefined): the list is empty.";

function sectionSummary(section: WordPressStateSection, data: unknown, abilitiesAvailable: boolean): unknown {
  switch (section) {
    case "summary":
      return data;
    case "options":
      return { keys: Object.keys(data as object) };
    case "templates": {
      const t = data as { theme: string; templates: unknown[]; templateParts: unknown[]; globalStyles: { stylesheetHash: string | null } };
      return { theme: t.theme, templates: t.templates.length, templateParts: t.templateParts.length, globalStylesHash: t.globalStyles.stylesheetHash };
    }
    case "users":
      return { count: (data as unknown[]).length, redacted: (data as { redacted: boolean }[]).every((u) => u.redacted) };
    case "menus":
      return { count: (data as unknown[]).length, items: (data as { items: unknown[] }[]).reduce((n, m) => n + m.items.length, 0) };
    case "rest-routes":
      return { count: (data as unknown[]).length, namespaces: [...new Set((data as { namespace: string }[]).map((r) => r.namespace).filter((n) => n))].sort() };
    case "abilities":
      return { count: (data as unknown[]).length, available: abilitiesAvailable, ...(abilitiesAvailable ? {} : { note: ABILITIES_UNAVAILABLE_NOTE }) };
    default:
      return { count: (data as unknown[]).length };
  }
}

/**
 * Exports WordPress state.
 * @param runPhp runs PHP in the sandbox (WordPress is loaded by the script itself).
 * @param config the normalised request (`normalizeWordPressStateRequest`).
 * @param options.directory bundle folder for the section files, e.g. `files/observations/wordpress-state-0001`.
 * @param options.secrets values replaced by `[REDACTED]` in the section files before hashing.
 * @throws WpCodeboxError `state-export-failed` when the script fails or returns fields outside the
 *   section's declared fields (`WORDPRESS_STATE_SECTION_DATA_SCHEMAS`; `data.issues`).
 */
export async function exportWordPressState(
  runPhp: (code: string) => Promise<PhpRunResult>,
  config: WordPressStateConfig,
  options: { directory: string; secrets: readonly string[] },
): Promise<WordPressStateExportResult> {
  const outcome = outcomeFromRun(await runPhp(withFatalRecorder(stateExportPhp(config))));
  const output = outcome.json as { sections?: Record<string, unknown>; abilitiesAvailable?: boolean; generatedAt?: string } | undefined;
  if (outcome.status !== "ok" || !output || typeof output.sections !== "object") {
    throw new WpCodeboxError(
      "state-export-failed",
      `The WordPress state export failed inside the sandbox: ${outcome.error?.message ?? outcome.stdout.slice(0, 300) ?? "no output"}. A plugin may print output or die during load; check it with wordpress.run-php.`,
      { error: outcome.error ?? null },
    );
  }
  const issues = config.sections.flatMap((s) => validateWordPressStateSection(s, output.sections![s]).map((i) => ({ path: `/${s}${i.path === "/" ? "" : i.path}`, message: i.message })));
  if (issues.length > 0) {
    throw new WpCodeboxError("state-export-failed", `The state export returned data outside the section contract: ${issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join("; ")} (a wp-codebox bug; please report it).`, { issues });
  }
  const redactor = createRedactor(options.secrets);
  const files: ArtifactFile[] = [];
  const artifactRefs: Required<ArtifactRef>[] = [];
  const sections: Record<string, unknown> = {};
  const artifacts: WordPressStateExport["artifacts"] = {};
  for (const section of config.sections) {
    const data = output.sections[section];
    sections[section] = sectionSummary(section, data, output.abilitiesAvailable === true);
    // redactJson, not redact on the text: a secret that is also a number (a PIN, an id) must not leave invalid JSON.
    const content = `${redactor.redactJson({ schema: WORDPRESS_STATE_SECTION_SCHEMA, version: 1, section, data }, 2)}\n`;
    const bytes = Buffer.byteLength(content, "utf8");
    const sha256 = sha256Hex(content);
    const path = `${options.directory}/${section}.json`;
    files.push({ path, kind: WORDPRESS_STATE_SECTION_KIND, contentType: "application/json", content });
    artifactRefs.push({ path, kind: WORDPRESS_STATE_SECTION_KIND, sha256, bytes });
    artifacts[section] = { artifact: path, sha256, bytes };
  }
  const data: WordPressStateExport = {
    schema: WORDPRESS_STATE_EXPORT_SCHEMA,
    version: 1,
    // The sandbox's clock (virtual in a deterministic run), so equal runs export equal bytes.
    generatedAt: typeof output.generatedAt === "string" ? output.generatedAt : new Date().toISOString(),
    config,
    sections: redactor.redactValue(sections),
    artifacts,
  };
  return { data, files, artifactRefs };
}
