/**
 * Checking a step's `expect` block against its `ExecutionResult`, and the small JSONPath subset
 * the `json` expectation uses (`$`, `.name`, `[0]`, `["odd key"]`).
 */
import { isDeepStrictEqual } from "node:util";
import type { ExecutionResult } from "../runtime.js";
import type { RecipeExpect } from "./recipe-schema.js";

/** One checked expectation; `name` is the `expect` key (`json[1]` for the second json check). */
export interface ExpectationCheck {
  name: string;
  passed: boolean;
  expected: unknown;
  actual: unknown;
  message: string;
}

/**
 * Parses a JSONPath of the supported subset into segments.
 * @returns the keys and indexes after `$`, or an error message saying what is supported.
 * @example parseJsonPath("$.items[0].id") // { segments: ["items", 0, "id"] }
 */
export function parseJsonPath(path: string): { segments: (string | number)[] } | { error: string } {
  const supported = 'use $, .name, [0] or ["key"], e.g. $.items[0].id';
  if (!path.startsWith("$")) return { error: `must start with "$"; ${supported}` };
  const segments: (string | number)[] = [];
  const re = /\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  let at = 1;
  while (at < path.length) {
    re.lastIndex = at;
    const m = re.exec(path);
    if (!m) return { error: `cannot read "${path.slice(at)}" at position ${at}; ${supported}` };
    if (m[1] !== undefined) segments.push(m[1]);
    else if (m[2] !== undefined) segments.push(Number(m[2]));
    else segments.push(JSON.parse(m[3]!) as string);
    at = re.lastIndex;
  }
  return { segments };
}

/** Reads a parsed path from a JSON value; `found: false` when a segment is missing. */
export function readJsonPath(value: unknown, segments: readonly (string | number)[]): { found: boolean; value?: unknown } {
  let current: unknown = value;
  for (const segment of segments) {
    if (typeof segment === "number") {
      if (!Array.isArray(current) || segment >= current.length) return { found: false };
      current = current[segment];
    } else {
      if (current === null || typeof current !== "object" || Array.isArray(current) || !Object.hasOwn(current, segment)) return { found: false };
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return { found: true, value: current };
}

const clip = (text: string, max = 2000) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

/**
 * Checks every expectation of `expect` against `result`. A missing `status` expects `"ok"`.
 * @returns one check per expectation, in a fixed order: status, exitCode, errorCode,
 *   stdoutContains, stdoutMatches, json, assertions, tests, dbErrors.
 */
export function checkExpectations(expect: RecipeExpect | undefined, result: ExecutionResult): ExpectationCheck[] {
  const e = expect ?? {};
  const checks: ExpectationCheck[] = [];
  const add = (name: string, passed: boolean, expected: unknown, actual: unknown, message: string) => checks.push({ name, passed, expected, actual, message });
  const wantStatus = e.status ?? "ok";
  add(
    "status",
    result.status === wantStatus,
    wantStatus,
    result.status,
    result.status === wantStatus
      ? `status is ${wantStatus}`
      : `expected status ${wantStatus}, got ${result.status}${result.error ? ` (${result.error.code}: ${result.error.message})` : ""}`,
  );
  if (e.exitCode !== undefined) add("exitCode", result.exitCode === e.exitCode, e.exitCode, result.exitCode, `expected exit code ${e.exitCode}, got ${result.exitCode}`);
  if (e.errorCode !== undefined) {
    const actual = result.error?.code ?? null;
    add("errorCode", actual === e.errorCode, e.errorCode, actual, `expected error.code ${e.errorCode}, got ${actual ?? "no error"}`);
  }
  if (e.stdoutContains !== undefined) {
    const wanted = Array.isArray(e.stdoutContains) ? e.stdoutContains : [e.stdoutContains];
    const missing = wanted.filter((w) => !result.stdout.includes(w));
    add("stdoutContains", missing.length === 0, e.stdoutContains, clip(result.stdout), missing.length ? `stdout does not contain ${missing.map((m) => JSON.stringify(m)).join(", ")}` : "stdout contains every expected substring");
  }
  if (e.stdoutMatches !== undefined) {
    const passed = new RegExp(e.stdoutMatches).test(result.stdout);
    add("stdoutMatches", passed, e.stdoutMatches, clip(result.stdout), passed ? `stdout matches /${e.stdoutMatches}/` : `stdout does not match /${e.stdoutMatches}/`);
  }
  if (e.json !== undefined) {
    const list = Array.isArray(e.json) ? e.json : [e.json];
    list.forEach((j, i) => {
      const name = Array.isArray(e.json) ? `json[${i}]` : "json";
      const parsed = parseJsonPath(j.path);
      if ("error" in parsed) return add(name, false, { path: j.path, equals: j.equals }, null, `json path ${j.path} ${parsed.error}`);
      if (result.json === undefined) return add(name, false, { path: j.path, equals: j.equals }, null, `the result has no json (stdout was not a JSON object or array), so ${j.path} cannot be read`);
      const read = readJsonPath(result.json, parsed.segments);
      if (!read.found) return add(name, false, { path: j.path, equals: j.equals }, { path: j.path, found: false }, `${j.path} does not exist in the result's json`);
      const passed = isDeepStrictEqual(read.value, j.equals);
      add(name, passed, { path: j.path, equals: j.equals }, { path: j.path, value: read.value }, passed ? `${j.path} equals ${JSON.stringify(j.equals)}` : `${j.path} is ${JSON.stringify(read.value)}, expected ${JSON.stringify(j.equals)}`);
    });
  }
  if (e.assertions !== undefined) {
    const block = (result.json as { assertions?: { total?: number; passed?: number; failed?: number } } | undefined)?.assertions;
    if (!block || typeof block.failed !== "number") {
      add("assertions", false, "all-passed", null, "the result has no browser assertions block: use assertions only on wordpress.browser-actions steps");
    } else {
      const actual = { total: block.total, passed: block.passed, failed: block.failed };
      add("assertions", block.failed === 0, "all-passed", actual, block.failed === 0 ? `all ${block.total} assertions passed` : `${block.failed} of ${block.total} assertions failed`);
    }
  }
  if (e.tests !== undefined) {
    const block = (result.json as { tests?: { tests?: number; passed?: number; failures?: number; errors?: number } } | undefined)?.tests;
    if (!block || typeof block.tests !== "number") {
      add("tests", false, "all-passed", null, "the result has no test counts: use tests only on wordpress.phpunit steps");
    } else {
      const actual = { tests: block.tests, passed: block.passed, failures: block.failures, errors: block.errors };
      const broken = (block.failures ?? 0) + (block.errors ?? 0);
      const passed = broken === 0 && block.tests > 0;
      add("tests", passed, "all-passed", actual, passed ? `all ${block.tests} tests passed` : block.tests === 0 ? "no test ran" : `${broken} of ${block.tests} tests failed or errored`);
    }
  }
  if (e.dbErrors !== undefined) {
    const list = result.dbErrors ?? [];
    const first = list[0];
    add(
      "dbErrors",
      list.length === e.dbErrors,
      e.dbErrors,
      list.length,
      list.length === e.dbErrors
        ? `${list.length} database error${list.length === 1 ? "" : "s"}`
        : `expected ${e.dbErrors} database error${e.dbErrors === 1 ? "" : "s"}, got ${list.length}${first ? ` (first: ${first.message} in ${clip(first.query, 200)})` : ""}`,
    );
  }
  return checks;
}
