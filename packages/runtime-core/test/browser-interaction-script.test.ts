import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BROWSER_INTERACTION_SCRIPT_SCHEMA,
  BROWSER_INTERACTION_SCRIPT_SCHEMA_ID,
  BROWSER_STEP_KINDS,
  WpCodeboxError,
  assertValidBrowserInteractionScript,
  browserInteractionScriptUsesEvaluate,
  normalizeLegacyBrowserActions,
  validateAgainstSchema,
  validateBrowserInteractionScript,
  type BrowserInteractionStep,
} from "@wp-codebox/runtime-core";

/** One valid example per kind (and per shape for select / waitFor). */
const everyKind: BrowserInteractionStep[] = [
  { kind: "navigate", url: "/wp-admin/", waitUntil: "domcontentloaded", timeout: 5000, description: "open admin" },
  { kind: "click", selector: "role=button[name='Save']" },
  { kind: "fill", selector: "#caption", value: "smoke test" },
  { kind: "type", selector: "#caption", value: "abc" },
  { kind: "press", key: "Enter" },
  { kind: "press", key: "Tab", selector: "#caption" },
  { kind: "drag", from: ".a", to: ".b" },
  { kind: "drag", from: ".reactEasyCrop_CropArea", to: { x: 40, y: 40 } },
  { kind: "hover", selector: "text=Menu" },
  { kind: "select", selector: "#color", value: "red" },
  { kind: "select", selector: "#colors", values: ["red", "blue"] },
  { kind: "waitFor", selector: ".notice", state: "visible" },
  { kind: "waitFor", url: "**/wp-admin/**" },
  { kind: "waitFor", loadState: "networkidle" },
  { kind: "evaluate", expression: "document.title" },
  { kind: "evaluate", expression: "1 + 1", assert: 2 },
  { kind: "evaluate", expression: "null", assert: null },
  { kind: "expect", selector: ".crop-confirm", state: "visible", text: "Done", count: 1 },
  { kind: "screenshot", name: "after-crop", fullPage: true },
  { kind: "screenshot", selector: "#panel" },
  { kind: "screenshot", name: "home", compare: "baselines/home.png", threshold: 0.1, maxDiffPixels: 20, maxDiffPixelRatio: 0.01, mask: [".date", "#random"] },
  { kind: "capture", what: "html" },
  { kind: "capture" },
];

test("schema id and every kind are published", () => {
  assert.equal(BROWSER_INTERACTION_SCRIPT_SCHEMA.$id, BROWSER_INTERACTION_SCRIPT_SCHEMA_ID);
  assert.equal(BROWSER_INTERACTION_SCRIPT_SCHEMA_ID, "wp-codebox/browser-interaction-script/v1");
  assert.equal(BROWSER_STEP_KINDS.length, 13);
  const branchKinds = new Set(
    (BROWSER_INTERACTION_SCRIPT_SCHEMA.items.anyOf as { properties: { kind: { const: string } } }[]).map((b) => b.properties.kind.const),
  );
  assert.deepEqual([...branchKinds].sort(), [...BROWSER_STEP_KINDS].sort());
  assert.deepEqual(new Set(everyKind.map((s) => s.kind)), new Set(BROWSER_STEP_KINDS));
});

test("every kind validates, and the published JSON Schema agrees with the validator", () => {
  const result = validateBrowserInteractionScript(everyKind);
  assert.deepEqual(result.issues, []);
  assert.equal(result.valid, true);
  assert.equal(result.steps.length, everyKind.length);
  assert.deepEqual(validateAgainstSchema(BROWSER_INTERACTION_SCRIPT_SCHEMA, everyKind), []);
  // The plain JSON Schema rejects what the validator rejects (no drift between the two).
  for (const bad of [[{ kind: "click" }], [{ kind: "nope" }], [{ kind: "select", selector: "s" }], [{ kind: "click", selector: "a", x: 1 }]]) {
    assert.equal(validateBrowserInteractionScript(bad).valid, false);
    assert.notDeepEqual(validateAgainstSchema(BROWSER_INTERACTION_SCRIPT_SCHEMA, bad), []);
  }
  // The schema survives being written as JSON and read back (what the CLI publishes).
  // ($id is dropped: the shared Ajv instance refuses a second schema with the same id.)
  const { $id, ...published } = JSON.parse(JSON.stringify(BROWSER_INTERACTION_SCRIPT_SCHEMA)) as { $id: string };
  assert.equal($id, BROWSER_INTERACTION_SCRIPT_SCHEMA_ID);
  assert.deepEqual(validateAgainstSchema(published, everyKind), []);
  assert.notDeepEqual(validateAgainstSchema(published, [{ kind: "click" }]), []);
});

test("an invalid script: every issue is reported with its index and field", () => {
  const result = validateBrowserInteractionScript([
    { kind: "navigate", url: "/" },
    { kind: "teleport", selector: "#x" },
    { kind: "click" },
    { kind: "drag", from: ".a" },
    { kind: "fill", selector: "#a", value: 3 },
  ]);
  assert.equal(result.valid, false);
  assert.deepEqual(result.steps, []);
  assert.deepEqual(
    result.issues.map(({ index, field }) => ({ index, field })),
    [
      { index: 1, field: "kind" },
      { index: 2, field: "selector" },
      { index: 3, field: "to" },
      { index: 4, field: "value" },
    ],
  );
  assert.match(result.issues[0]!.message, /unknown step kind "teleport"/);
  assert.equal(result.issues[1]!.message, "is required");
  assert.equal(result.issues[1]!.path, "/2/selector");
  assert.equal(result.issues[3]!.message, "must be a string (got 3)");

  const topLevel = validateBrowserInteractionScript({ steps: [] });
  assert.equal(topLevel.valid, false);
  assert.deepEqual(topLevel.issues.map(({ index, field }) => ({ index, field })), [{ index: -1, field: "" }]);
  assert.match(topLevel.issues[0]!.message, /must be an array/);
});

test("wrong types, unknown fields, non-object steps and ambiguous shapes", () => {
  const result = validateBrowserInteractionScript([
    { kind: "click", selector: "a", extra: true, timeout: "5s" },
    "click",
    { selector: "#a" },
    { kind: "drag", from: "#a", to: { x: "1", y: 2 } },
    { kind: "drag", from: "#a", to: 5 },
    { kind: "select", selector: "#s" },
    { kind: "select", selector: "#s", value: "a", values: ["b"] },
    { kind: "waitFor", url: "/x", state: "visible" },
    { kind: "waitFor" },
    { kind: "expect", selector: ".n", state: "shiny", count: 1.5 },
    { kind: "capture", what: "video" },
    { kind: "press", key: "Enter", timeout: -1 },
  ]);
  const got = result.issues.map(({ index, field, message }) => `${index} ${field}: ${message}`);
  assert.deepEqual(got, [
    "0 extra: unknown field",
    '0 timeout: must be a number (got "5s")',
    "1 : must be an object with a kind field",
    "2 kind: is required (one of navigate, click, fill, type, press, drag, hover, select, waitFor, evaluate, expect, screenshot, capture)",
    '3 to.x: must be a number (got "1")',
    "4 to: must be a string or an object (got 5)",
    "5 value: select needs exactly one of: value, values",
    "6 values: select takes only one of: value, values (got value and values)",
    "7 state: unknown field",
    "8 selector: waitFor needs exactly one of: selector, url, loadState",
    '9 state: must be one of "visible", "hidden", "attached", "detached", "enabled", "disabled", "checked", "unchecked", or "editable" (got "shiny")',
    "9 count: must be an integer (got 1.5)",
    '10 what: must be one of "html", "console", "network", or "all" (got "video")',
    "11 timeout: must be >= 0 (got -1)",
  ]);
});

test("assertValidBrowserInteractionScript throws invalid-steps-json listing every issue", () => {
  assert.deepEqual(assertValidBrowserInteractionScript([{ kind: "click", selector: "a" }]), [{ kind: "click", selector: "a" }]);
  assert.throws(
    () => assertValidBrowserInteractionScript([{ kind: "click" }, { kind: "hover" }]),
    (error: unknown) => {
      assert.ok(error instanceof WpCodeboxError);
      assert.equal(error.code, "invalid-steps-json");
      assert.match(error.message, /\/0\/selector: is required\n\/1\/selector: is required/);
      assert.equal((error.data.issues as unknown[]).length, 2);
      return true;
    },
  );
});

test("browserInteractionScriptUsesEvaluate", () => {
  assert.equal(browserInteractionScriptUsesEvaluate(everyKind), true);
  assert.equal(browserInteractionScriptUsesEvaluate(everyKind.filter((s) => s.kind !== "evaluate")), false);
  assert.equal(browserInteractionScriptUsesEvaluate([]), false);
});

test("normalizeLegacyBrowserActions maps the actions-json shape onto steps", () => {
  const result = normalizeLegacyBrowserActions([
    { type: "navigate", url: "/wp-admin/" },
    { action: "fill", selector: "#user_login", value: "admin" },
    { type: "press", key: "Enter", selector: "#user_pass" },
    { type: "press", value: "Tab" },
    { type: "click", selector: "#wp-submit", timeout: 5000 },
    { type: "wait", selector: "#wpadminbar" },
    { type: "wait", ms: 500 },
    { type: "wait", url: "**/wp-admin/**" },
    { type: "wait" },
    { type: "capture", value: "html" },
    { type: "capture" },
    { type: "capture", value: "screenshot", selector: "dashboard" },
  ]);
  assert.deepEqual(result.issues, []);
  assert.deepEqual(result.steps, [
    { kind: "navigate", url: "/wp-admin/" },
    { kind: "fill", selector: "#user_login", value: "admin" },
    { kind: "press", key: "Enter", selector: "#user_pass" },
    { kind: "press", key: "Tab" },
    { kind: "click", selector: "#wp-submit", timeout: 5000 },
    { kind: "waitFor", selector: "#wpadminbar" },
    { kind: "waitFor", loadState: "load", description: "legacy wait ms=500 (fixed sleeps are not reproduced)" },
    { kind: "waitFor", url: "**/wp-admin/**" },
    { kind: "waitFor", loadState: "load" },
    { kind: "capture", what: "html" },
    { kind: "capture", what: "all" },
    { kind: "screenshot", name: "dashboard" },
  ]);
});

test("normalizeLegacyBrowserActions reports unknown types and missing fields by index", () => {
  const result = normalizeLegacyBrowserActions([{ type: "click" }, { type: "scroll" }, { type: "navigate", url: "/" }, 7]);
  assert.equal(result.valid, false);
  assert.deepEqual(
    result.issues.map(({ index, field }) => ({ index, field })),
    [
      { index: 0, field: "selector" },
      { index: 1, field: "type" },
      { index: 3, field: "" },
    ],
  );
  assert.deepEqual(normalizeLegacyBrowserActions("nope").issues.map((i) => i.index), [-1]);
});
