/**
 * JSON Schema validation (Ajv, draft 2020-12 compatible subset used by TypeBox) with issues
 * reported as `{ path, message }`, where `path` is a JSON pointer (`/steps/2/selector`).
 */
import { createRequire } from "node:module";
import type { TSchema } from "@sinclair/typebox";

/** What we use of an Ajv instance. */
interface AjvType {
  compile(schema: object): import("ajv").ValidateFunction;
  validateSchema(schema: object): boolean | Promise<unknown>;
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
    ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
    addFormats(ajv);
  }
  return ajv;
}
const cache = new WeakMap<object, import("ajv").ValidateFunction>();

/**
 * Whether `schema` is a valid JSON Schema document (checked against the meta-schema, nothing is
 * compiled or kept): an untrusted schema is passed on to other JSON Schema tools only when it is.
 */
export function isValidJsonSchema(schema: unknown): boolean {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return false;
  try {
    return getAjv().validateSchema(schema) === true;
  } catch {
    return false;
  }
}

/** Keywords that say nothing about validity. */
const ANNOTATIONS = new Set(["title", "description", "default", "examples", "$id", "$schema", "$comment", "readOnly", "writeOnly", "deprecated"]);
const patterns = new Map<string, RegExp>();

/** The RegExp of a schema pattern (with the "u" flag, as Ajv compiles them); undefined when it does not compile. */
function regex(pattern: string): RegExp | undefined {
  let re = patterns.get(pattern);
  if (!re) {
    try {
      re = new RegExp(pattern, "u");
    } catch {
      return undefined;
    }
    patterns.set(pattern, re);
  }
  return re;
}

/** `YYYY-MM-DDTHH:MM:SS[.fff]Z` naming a real instant (a subset of what RFC 3339 date-time allows). */
function isoUtcTimestamp(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$/.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days && hour <= 23 && minute <= 59 && second <= 59;
}

/**
 * A quick check for the common case, a valid document: true only when `value` certainly satisfies
 * `schema`, judged on the plain JSON Schema keywords TypeBox emits for objects, arrays, strings,
 * numbers, records, literals and unions, plus UTC `date-time` stamps. Anything else (other
 * formats, `$ref`, tuples, an object holding `undefined`, a non-finite number, object items under
 * `uniqueItems` or `enum`) answers false, and Ajv decides. Compiling
 * Ajv's validators costs ~0.2 s of CPU per process, more than everything else a `run --attach`
 * does; documents that pass here never load Ajv at all, and every error report still comes from Ajv.
 */
export function certainlyValid(schema: unknown, value: unknown): boolean {
  if (schema === true || (typeof schema === "object" && schema !== null && Object.keys(schema).length === 0)) return true;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return false;
  const s = schema as Record<string, unknown>;
  for (const key of Object.keys(s)) {
    if (ANNOTATIONS.has(key)) continue;
    switch (key) {
      case "type": {
        const t = s.type;
        const ok =
          t === "object" ? typeof value === "object" && value !== null && !Array.isArray(value)
          : t === "array" ? Array.isArray(value)
          : t === "string" ? typeof value === "string"
          : t === "boolean" ? typeof value === "boolean"
          : t === "null" ? value === null
          : t === "number" ? Number.isFinite(value)
          : t === "integer" ? Number.isInteger(value)
          : false;
        if (!ok) return false;
        break;
      }
      case "properties":
      case "patternProperties":
      case "required":
      case "additionalProperties": {
        if (typeof value !== "object" || value === null || Array.isArray(value)) {
          // Object keywords do not apply to other types; without "type" that is rare enough to defer.
          return false;
        }
        const object = value as Record<string, unknown>;
        const properties = (s.properties ?? {}) as Record<string, unknown>;
        const patterned = Object.entries((s.patternProperties ?? {}) as Record<string, unknown>);
        const matching = (name: string): unknown[] | undefined => {
          const subs: unknown[] = [];
          for (const [pattern, sub] of patterned) {
            const re = regex(pattern);
            if (!re) return undefined;
            if (re.test(name)) subs.push(sub);
          }
          return subs;
        };
        if (key === "properties") {
          for (const [name, sub] of Object.entries(properties)) {
            if (!Object.prototype.hasOwnProperty.call(object, name)) continue;
            if (object[name] === undefined || !certainlyValid(sub, object[name])) return false;
          }
        } else if (key === "patternProperties") {
          for (const name of Object.keys(object)) {
            const subs = matching(name);
            if (!subs) return false;
            for (const sub of subs) if (object[name] === undefined || !certainlyValid(sub, object[name])) return false;
          }
        } else if (key === "required") {
          if (!Array.isArray(s.required)) return false;
          for (const name of s.required as unknown[]) {
            if (typeof name !== "string" || !Object.prototype.hasOwnProperty.call(object, name) || object[name] === undefined) return false;
          }
        } else {
          const extra = s.additionalProperties;
          if (extra === true) break;
          for (const name of Object.keys(object)) {
            if (Object.prototype.hasOwnProperty.call(properties, name)) continue;
            const subs = matching(name);
            if (!subs) return false;
            if (subs.length > 0) continue;
            if (extra === false || object[name] === undefined || !certainlyValid(extra, object[name])) return false;
          }
        }
        break;
      }
      case "items": {
        if (!Array.isArray(value) || typeof s.items !== "object" || s.items === null || Array.isArray(s.items)) return false;
        for (const item of value) if (!certainlyValid(s.items, item)) return false;
        break;
      }
      case "minItems":
      case "maxItems": {
        if (!Array.isArray(value) || typeof s[key] !== "number") return false;
        if (key === "minItems" ? value.length < (s[key] as number) : value.length > (s[key] as number)) return false;
        break;
      }
      case "minLength":
      case "maxLength": {
        if (typeof value !== "string" || typeof s[key] !== "number") return false;
        // JSON Schema counts code points, as Ajv does.
        const length = [...value].length;
        if (key === "minLength" ? length < (s[key] as number) : length > (s[key] as number)) return false;
        break;
      }
      case "pattern": {
        if (typeof value !== "string" || typeof s.pattern !== "string") return false;
        const re = regex(s.pattern);
        if (!re || !re.test(value)) return false;
        break;
      }
      case "uniqueItems": {
        if (s.uniqueItems === false) break;
        if (!Array.isArray(value) || s.uniqueItems !== true) return false;
        // Primitives only: comparing objects is Ajv's business.
        if (value.some((item) => typeof item === "object" && item !== null)) return false;
        if (new Set(value).size !== value.length) return false;
        break;
      }
      case "format": {
        // Only the timestamps we write ourselves (toISOString): UTC, "T", "Z".
        if (s.format !== "date-time" || typeof value !== "string" || !isoUtcTimestamp(value)) return false;
        break;
      }
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum": {
        const bound = s[key];
        if (!Number.isFinite(value) || typeof bound !== "number") return false;
        const n = value as number;
        const ok = key === "minimum" ? n >= bound : key === "maximum" ? n <= bound : key === "exclusiveMinimum" ? n > bound : n < bound;
        if (!ok) return false;
        break;
      }
      case "const":
      case "enum": {
        const options = key === "const" ? [s.const] : s.enum;
        if (!Array.isArray(options)) return false;
        // Primitives only: deep equality of objects is Ajv's business.
        if (typeof value === "object" && value !== null) return false;
        if (!options.some((option) => option === value && (typeof value !== "number" || Number.isFinite(value)))) return false;
        break;
      }
      case "anyOf": {
        if (!Array.isArray(s.anyOf) || !s.anyOf.some((sub) => certainlyValid(sub, value))) return false;
        break;
      }
      case "allOf": {
        if (!Array.isArray(s.allOf) || !s.allOf.every((sub) => certainlyValid(sub, value))) return false;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

/** The value at JSON pointer `pointer` (Ajv's instancePath) inside `root`. */
function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** One key as a JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function jsonPointerToken(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** ` (got "ro")` for a primitive value (shortened), ` (got an object)` and so on otherwise; "" for undefined. */
export function gotText(value: unknown): string {
  if (value === undefined) return "";
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
    const text = JSON.stringify(value);
    return ` (got ${text.length > 60 ? `${text.slice(0, 57)}…` : text})`;
  }
  return ` (got ${Array.isArray(value) ? "an array" : "an object"})`;
}

/** JSON Schema type name → words: "object" → "an object", "integer" → "an integer". */
function typeText(type: string): string {
  return type === "null" ? "null" : `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

/** `must be X`, `must be X or Y`, `must be one of X, Y, or Z` (already-formatted choices). */
function choiceText(choices: readonly string[]): string {
  if (choices.length === 1) return `must be ${choices[0]}`;
  if (choices.length === 2) return `must be ${choices[0]} or ${choices[1]}`;
  return `must be one of ${choices.slice(0, -1).join(", ")}, or ${choices.at(-1)}`;
}


/**
 * Validates `value` against `schema` and returns every issue (empty array when valid).
 * `additionalProperties: false` violations name the unknown field in the path. A value outside a
 * `const` or `enum`, or outside a union of them (TypeBox's `Union([Literal(…), …])`, which Ajv
 * reports as one error per branch plus the anyOf), is one issue naming the allowed values and the
 * value given: `must be "readonly" or "readwrite" (got "ro")`. A union the value is of no branch
 * of is one issue naming each branch's literal or type (`must be one of "deny", "allow", or an
 * object (got 5)`); where the value is of some branches' type, only their errors are reported.
 * Type, pattern and range errors say what was given too, except for a schema marked `writeOnly`.
 */
export function validateAgainstSchema(schema: TSchema | object, value: unknown): SchemaIssue[] {
  if (certainlyValid(schema, value)) return [];
  let validate = cache.get(schema);
  if (!validate) {
    validate = getAjv().compile(schema);
    cache.set(schema, validate);
  }
  if (validate(value)) return [];
  const errors = validate.errors ?? [];
  type AjvIssue = (typeof errors)[number];
  const isLiteral = (e: AjvIssue) => e.keyword === "const" || e.keyword === "enum";
  const allowedOf = (e: AjvIssue): unknown[] =>
    e.keyword === "const" ? [(e.params as { allowedValue: unknown }).allowedValue] : [...((e.params as { allowedValues: unknown[] }).allowedValues ?? [])];
  // Ajv reports a union (anyOf/oneOf) as every branch's errors plus its own. A branch whose
  // errors all sit at the union's path and are type or literal mismatches is one the value is
  // not of at all; the others are branches the value is of, and their errors are the problem.
  const dropped = new Set<AjvIssue>();
  const unionText = new Map<AjvIssue, string>();
  for (const e of errors) {
    if (e.keyword !== "anyOf" && e.keyword !== "oneOf") continue;
    const branches = new Map<string, AjvIssue[]>();
    for (const b of errors) {
      if (b === e || !b.schemaPath.startsWith(`${e.schemaPath}/`)) continue;
      const index = b.schemaPath.slice(e.schemaPath.length + 1).split("/")[0]!;
      branches.set(index, [...(branches.get(index) ?? []), b]);
    }
    if (branches.size === 0) continue;
    const mismatched = [...branches.values()].filter((list) => list.every((b) => b.instancePath === e.instancePath && (isLiteral(b) || b.keyword === "type")));
    if (mismatched.length === branches.size) {
      // The value is of no branch: one issue naming what each branch takes.
      const literals = mismatched.flatMap((list) => list.filter(isLiteral).flatMap(allowedOf));
      const types = mismatched.filter((list) => !list.some(isLiteral)).flatMap((list) => list.filter((b) => b.keyword === "type").map((b) => typeText((b.params as { type: string }).type)));
      unionText.set(e, `${choiceText([...new Set(literals.map((l) => JSON.stringify(l))), ...new Set(types)])}${gotText(valueAt(value, e.instancePath))}`);
    } else {
      // Only the branches the value is of say what is wrong with it.
      dropped.add(e);
    }
    for (const list of mismatched) list.forEach((b) => dropped.add(b));
  }
  // A literal with its type (TypeBox's Literal(true) is `{ type, const }`) fails both keywords for
  // a value of another type: the literal alone says what is wanted.
  const node = (e: AjvIssue) => e.schemaPath.slice(0, e.schemaPath.lastIndexOf("/"));
  for (const e of errors) {
    if (e.keyword === "type" && errors.some((l) => isLiteral(l) && l.instancePath === e.instancePath && node(l) === node(e))) dropped.add(e);
  }
  return errors
    .filter((e) => !dropped.has(e))
    .map((e) => {
      let path = e.instancePath || "";
      if (e.keyword === "additionalProperties") {
        path = `${path}/${(e.params as { additionalProperty: string }).additionalProperty}`;
        return { path: path || "/", message: "unknown field" };
      }
      if (e.keyword === "required") {
        path = `${path}/${(e.params as { missingProperty: string }).missingProperty}`;
        return { path, message: "is required" };
      }
      // A `writeOnly` value (the name of a secret, where a secret's value is the likeliest slip) is never repeated.
      const got = (e.parentSchema as { writeOnly?: unknown } | undefined)?.writeOnly === true ? " (the value given is not shown)" : gotText(valueAt(value, e.instancePath));
      const union = unionText.get(e);
      if (union) return { path: path || "/", message: union };
      if (isLiteral(e)) return { path: path || "/", message: `${choiceText(allowedOf(e).map((a) => JSON.stringify(a)))}${got}` };
      if (e.keyword === "type") return { path: path || "/", message: `must be ${String((e.params as { type: string }).type).split(",").map(typeText).join(" or ")}${got}` };
      if (e.keyword === "uniqueItems") {
        const { i, j } = e.params as { i: number; j: number };
        return { path: path || "/", message: `must not repeat an item (items ${Math.min(i, j)} and ${Math.max(i, j)} are the same)` };
      }
      return { path: path || "/", message: `${e.message ?? "is invalid"}${["pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"].includes(e.keyword) ? got : ""}` };
    });
}
