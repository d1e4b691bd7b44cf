/**
 * JSON Schema validation (Ajv, draft 2020-12 compatible subset used by TypeBox) with issues
 * reported as `{ path, message }`, where `path` is a JSON pointer (`/steps/2/selector`).
 */
import AjvModule from "ajv";
import addFormatsModule from "ajv-formats";
import type { TSchema } from "@sinclair/typebox";

/** One validation problem: JSON pointer to the bad field and what is wrong with it. */
export interface SchemaIssue {
  path: string;
  message: string;
}

const Ajv = (AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule;
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
const ajv = new (Ajv as unknown as new (o: object) => import("ajv").default)({ allErrors: true, strict: false });
(addFormats as unknown as (a: unknown) => void)(ajv);
const cache = new WeakMap<object, import("ajv").ValidateFunction>();

/**
 * Validates `value` against `schema` and returns every issue (empty array when valid).
 * `additionalProperties: false` violations name the unknown field in the path.
 */
export function validateAgainstSchema(schema: TSchema | object, value: unknown): SchemaIssue[] {
  let validate = cache.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    cache.set(schema, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    let path = e.instancePath || "";
    if (e.keyword === "additionalProperties") {
      path = `${path}/${(e.params as { additionalProperty: string }).additionalProperty}`;
      return { path: path || "/", message: "unknown field" };
    }
    if (e.keyword === "required") {
      path = `${path}/${(e.params as { missingProperty: string }).missingProperty}`;
      return { path, message: "is required" };
    }
    return { path: path || "/", message: e.message ?? "is invalid" };
  });
}
