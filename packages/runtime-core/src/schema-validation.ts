/**
 * JSON Schema validation (Ajv, draft 2020-12 compatible subset used by TypeBox) with issues
 * reported as `{ path, message }`, where `path` is a JSON pointer (`/steps/2/selector`).
 */
import { createRequire } from "node:module";
import type { TSchema } from "@sinclair/typebox";

/** What we use of an Ajv instance. */
interface AjvType {
  compile(schema: object): import("ajv").ValidateFunction;
}

/** One validation problem: JSON pointer to the bad field and what is wrong with it. */
export interface SchemaIssue {
  path: string;
  message: string;
}

// Ajv is loaded on the first validation, not at import: it is ~50 ms of start-up that commands
// which never validate a document (`run --attach`, `--version`) should not pay.
const require = createRequire(import.meta.url);
let ajv: AjvType | undefined;
function getAjv(): AjvType {
  if (!ajv) {
    const AjvModule = require("ajv") as { default?: unknown };
    const formatsModule = require("ajv-formats") as { default?: unknown };
    const Ajv = (AjvModule.default ?? AjvModule) as new (o: object) => AjvType;
    const addFormats = (formatsModule.default ?? formatsModule) as (a: unknown) => void;
    ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
  }
  return ajv;
}
const cache = new WeakMap<object, import("ajv").ValidateFunction>();

/**
 * Validates `value` against `schema` and returns every issue (empty array when valid).
 * `additionalProperties: false` violations name the unknown field in the path.
 */
export function validateAgainstSchema(schema: TSchema | object, value: unknown): SchemaIssue[] {
  let validate = cache.get(schema);
  if (!validate) {
    validate = getAjv().compile(schema);
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
