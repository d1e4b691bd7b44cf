/**
 * Finds consumer-domain fields (reward, grader, scenario, …) in a trace, outside the free-form
 * `data` / `metadata` objects where callers may put anything.
 */
import { jsonPointerToken, type SchemaIssue } from "../schema-validation.js";
import { EPISODE_DOMAIN_FIELDS, EPISODE_FREE_FORM_KEYS } from "./episode-constants.js";
import { isRecord } from "./json-value.js";

/** Escapes one JSON pointer segment (RFC 6901). */
export function pointerSegment(key: string | number): string {
  return jsonPointerToken(String(key));
}

/**
 * Returns one issue per domain field found in `value`, with its JSON pointer path. Members named
 * `data` or `metadata` are not descended into: they are free-form.
 */
export function findEpisodeDomainFields(value: unknown, path = ""): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const visit = (v: unknown, at: string): void => {
    if (Array.isArray(v)) {
      v.forEach((item, i) => visit(item, `${at}/${i}`));
      return;
    }
    if (!isRecord(v)) return;
    for (const [key, child] of Object.entries(v)) {
      const childPath = `${at}/${pointerSegment(key)}`;
      if (EPISODE_DOMAIN_FIELDS.includes(key)) {
        issues.push({
          path: childPath,
          message: `domain field "${key}" is not allowed in a runtime episode trace; keep it in the consumer's own schema or inside a free-form "data"/"metadata" object`,
        });
        continue;
      }
      if (EPISODE_FREE_FORM_KEYS.includes(key)) continue;
      visit(child, childPath);
    }
  };
  visit(value, path);
  return issues;
}
