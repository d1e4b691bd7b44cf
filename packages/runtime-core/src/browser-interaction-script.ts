/**
 * Browser interaction scripts: an ordered list of steps that drive a
 * WordPress UI. The step contract is declared once, as TypeBox schemas; the JSON Schema, the
 * TypeScript types and the validator all come from it. Nothing here knows about Playwright: the
 * executor lives in `@wp-codebox/runtime-playground`.
 */
import { readJsonArg } from "./command-registry.js";
import { isMissingInputFile, readInputFileSync } from "./input-files.js";
import { screenshotImageProblem } from "./png-header.js";
import { assertBrowserBaselines, browserScriptFolder } from "./browser-baselines.js";
import { Type, type Static, type TObject, type TProperties, type TSchema } from "@sinclair/typebox";
import { WpCodeboxError } from "./errors.js";
import { validateAgainstSchema } from "./schema-validation.js";

/** Schema id of a browser interaction script (a JSON array of steps). */
export const BROWSER_INTERACTION_SCRIPT_SCHEMA_ID = "wp-codebox/browser-interaction-script/v1";

/** Every step kind, in the order the step reference (docs/reference/browser-steps.md) lists them. */
export const BROWSER_STEP_KINDS = [
  "navigate",
  "click",
  "fill",
  "type",
  "press",
  "drag",
  "hover",
  "select",
  "waitFor",
  "evaluate",
  "expect",
  "screenshot",
  "capture",
] as const;

/** One of the 13 step kinds. */
export type BrowserStepKind = (typeof BROWSER_STEP_KINDS)[number];

/** States an `expect` step can assert on the (first) element matching its selector. */
export const BROWSER_EXPECT_STATES = [
  "visible",
  "hidden",
  "attached",
  "detached",
  "enabled",
  "disabled",
  "checked",
  "unchecked",
  "editable",
] as const;

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

const Selector = Type.String({ minLength: 1, description: "Playwright selector: CSS, text=…, or role=button[name='Save']" });
const LoadState = literals(["load", "domcontentloaded", "networkidle"] as const);

/** Fields every step may carry. */
const commonStepFields = {
  timeout: Type.Optional(
    Type.Number({ minimum: 0, description: "Per-step limit in ms; overrides step-timeout. 0 = no per-step limit (the total budget still applies)." }),
  ),
  description: Type.Optional(Type.String({ description: "Free text shown in step records." })),
};

function step<K extends BrowserStepKind, P extends TProperties>(kind: K, properties: P) {
  return Type.Object(
    { kind: Type.Literal(kind), ...properties, ...commonStepFields },
    { additionalProperties: false, title: kind },
  );
}

const NavigateStep = step("navigate", {
  url: Type.String({ minLength: 1, description: "Absolute URL, or a path resolved against the sandbox origin." }),
  waitUntil: Type.Optional(literals(["load", "domcontentloaded", "networkidle", "commit"] as const)),
});
const ClickStep = step("click", { selector: Selector });
const FillStep = step("fill", { selector: Selector, value: Type.String() });
const TypeStep = step("type", { selector: Selector, value: Type.String({ description: "Typed key by key." }) });
const PressStep = step("press", {
  key: Type.String({ minLength: 1, description: "Playwright key name, e.g. Enter, Tab, Control+A." }),
  selector: Type.Optional(Selector),
});
const DragStep = step("drag", {
  from: Selector,
  to: Type.Union([
    Selector,
    Type.Object(
      { x: Type.Number(), y: Type.Number() },
      { additionalProperties: false, description: "Viewport coordinates in CSS pixels." },
    ),
  ]),
});
const HoverStep = step("hover", { selector: Selector });
const SelectValueStep = step("select", { selector: Selector, value: Type.String() });
const SelectValuesStep = step("select", { selector: Selector, values: Type.Array(Type.String()) });
const WaitForSelectorStep = step("waitFor", {
  selector: Selector,
  state: Type.Optional(literals(["attached", "detached", "visible", "hidden"] as const)),
});
const WaitForUrlStep = step("waitFor", {
  url: Type.String({ minLength: 1, description: "URL or Playwright glob (**/wp-admin/**); paths resolve against the sandbox origin." }),
});
const WaitForLoadStateStep = step("waitFor", { loadState: LoadState });
const EvaluateStep = step("evaluate", {
  expression: Type.String({ minLength: 1, description: "Page JavaScript; needs the wordpress.browser-actions.evaluate capability." }),
  assert: Type.Optional(Type.Unknown({ description: "When present, the result must deep-equal this JSON value." })),
});
const ExpectStep = step("expect", {
  selector: Selector,
  state: literals(BROWSER_EXPECT_STATES),
  text: Type.Optional(Type.String({ description: "The first match's text must contain this." })),
  count: Type.Optional(Type.Integer({ minimum: 0, description: "Exact number of matching elements." })),
});
const ScreenshotStep = step("screenshot", {
  name: Type.Optional(Type.String({ minLength: 1 })),
  selector: Type.Optional(Selector),
  fullPage: Type.Optional(Type.Boolean()),
  compare: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1024, description: "Baseline PNG, relative to the script's folder (and inside it). The step then fails unless the screenshot matches it." }),
  ),
  threshold: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, description: "With compare: per-pixel colour distance (YIQ) under which pixels count as equal, 0 to 1. Default 0.2 (Playwright's)." }),
  ),
  maxDiffPixels: Type.Optional(Type.Integer({ minimum: 0, description: "With compare: differing pixels allowed. Default 0." })),
  maxDiffPixelRatio: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, description: "With compare: differing pixels allowed as a share of all pixels, 0 to 1. Default 0." }),
  ),
  mask: Type.Optional(
    Type.Array(Selector, { minItems: 1, maxItems: 100, description: "Elements painted over (#FF00FF) before the screenshot is taken, e.g. dates." }),
  ),
});

/** Fields of a screenshot step that only mean something with `compare`. */
const COMPARE_ONLY_FIELDS = ["threshold", "maxDiffPixels", "maxDiffPixelRatio"] as const;
const CaptureStep = step("capture", { what: Type.Optional(literals(["html", "console", "network", "all"] as const)) });

/**
 * Variants per kind. Kinds with several shapes (`select`, `waitFor`) pick their variant by which
 * field is present — the same role `kind` plays one level up, so an issue points at one branch.
 */
const VARIANTS: { [K in BrowserStepKind]: { schema: TObject; when?: string }[] } = {
  navigate: [{ schema: NavigateStep }],
  click: [{ schema: ClickStep }],
  fill: [{ schema: FillStep }],
  type: [{ schema: TypeStep }],
  press: [{ schema: PressStep }],
  drag: [{ schema: DragStep }],
  hover: [{ schema: HoverStep }],
  select: [
    { schema: SelectValueStep, when: "value" },
    { schema: SelectValuesStep, when: "values" },
  ],
  waitFor: [
    { schema: WaitForSelectorStep, when: "selector" },
    { schema: WaitForUrlStep, when: "url" },
    { schema: WaitForLoadStateStep, when: "loadState" },
  ],
  evaluate: [{ schema: EvaluateStep }],
  expect: [{ schema: ExpectStep }],
  screenshot: [{ schema: ScreenshotStep }],
  capture: [{ schema: CaptureStep }],
};

const BrowserInteractionStepSchema = Type.Union(
  [
    NavigateStep,
    ClickStep,
    FillStep,
    TypeStep,
    PressStep,
    DragStep,
    HoverStep,
    SelectValueStep,
    SelectValuesStep,
    WaitForSelectorStep,
    WaitForUrlStep,
    WaitForLoadStateStep,
    EvaluateStep,
    ExpectStep,
    ScreenshotStep,
    CaptureStep,
  ],
  { description: "One step; the branch is chosen by kind (select and waitFor by which field is present)." },
);

/**
 * JSON Schema of a browser interaction script: an array of steps, a union discriminated on `kind`
 * (`select` and `waitFor` have one branch per shape). `$id` is `wp-codebox/browser-interaction-script/v1`.
 */
export const BROWSER_INTERACTION_SCRIPT_SCHEMA = Type.Array(BrowserInteractionStepSchema, {
  $id: BROWSER_INTERACTION_SCRIPT_SCHEMA_ID,
  title: "wp-codebox browser interaction script",
});

export type NavigateStep = Static<typeof NavigateStep>;
export type ClickStep = Static<typeof ClickStep>;
export type FillStep = Static<typeof FillStep>;
export type TypeStep = Static<typeof TypeStep>;
export type PressStep = Static<typeof PressStep>;
export type DragStep = Static<typeof DragStep>;
export type HoverStep = Static<typeof HoverStep>;
export type EvaluateStep = Static<typeof EvaluateStep>;
export type ExpectStep = Static<typeof ExpectStep>;
export type ScreenshotStep = Static<typeof ScreenshotStep>;
export type CaptureStep = Static<typeof CaptureStep>;
/** One step of a browser interaction script (discriminated on `kind`). */
export type BrowserInteractionStep = Static<typeof BrowserInteractionStepSchema>;
/** A state an `expect` step asserts. */

/**
 * One problem in a script.
 * - `index`: step index (0-based); `-1` when the top level itself is wrong.
 * - `field`: the step field at fault, nested fields dotted (`to.x`); `""` for the whole step.
 * - `path`: the same location as a JSON pointer from the script root (`/2/selector`).
 */
export interface BrowserScriptIssue {
  index: number;
  field: string;
  path: string;
  message: string;
}

/** Result of validating a script: `steps` holds the input (typed) when `valid`, else `[]`. */
export interface BrowserInteractionScriptValidation {
  valid: boolean;
  steps: BrowserInteractionStep[];
  issues: BrowserScriptIssue[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isKind = (v: unknown): v is BrowserStepKind => typeof v === "string" && (BROWSER_STEP_KINDS as readonly string[]).includes(v);

function stepIssue(index: number, pointer: string, message: string): BrowserScriptIssue {
  const field = pointer.replace(/^\//, "").split("/").filter(Boolean).join(".");
  return { index, field, path: `/${index}${pointer === "/" ? "" : pointer}`, message };
}

/** Runs the per-variant schema (`validateAgainstSchema` already folds unions into one issue per field). */
function schemaIssues(index: number, schema: TSchema, value: unknown): BrowserScriptIssue[] {
  return validateAgainstSchema(schema, value).map((issue) => stepIssue(index, issue.path, issue.message));
}

function validateStep(index: number, value: unknown): BrowserScriptIssue[] {
  if (!isRecord(value)) return [stepIssue(index, "/", "must be an object with a kind field")];
  if (!("kind" in value)) return [stepIssue(index, "/kind", `is required (one of ${BROWSER_STEP_KINDS.join(", ")})`)];
  if (!isKind(value.kind)) {
    return [stepIssue(index, "/kind", `unknown step kind ${JSON.stringify(value.kind)}; expected one of ${BROWSER_STEP_KINDS.join(", ")}`)];
  }
  const variants = VARIANTS[value.kind];
  if (value.kind === "screenshot" && !("compare" in value)) {
    const stray = COMPARE_ONLY_FIELDS.filter((f) => f in value);
    if (stray.length) return [stepIssue(index, `/${stray[0]}`, `${stray.join(", ")} only apply with compare (a baseline PNG to compare with)`)];
  }
  if (variants.length === 1) return schemaIssues(index, variants[0]!.schema, value);
  const present = variants.filter((v) => v.when !== undefined && v.when in value);
  const names = variants.map((v) => v.when).join(", ");
  if (present.length === 1) return schemaIssues(index, present[0]!.schema, value);
  if (present.length === 0) return [stepIssue(index, `/${variants[0]!.when}`, `${value.kind} needs exactly one of: ${names}`)];
  return [stepIssue(index, `/${present[1]!.when}`, `${value.kind} takes only one of: ${names} (got ${present.map((v) => v.when).join(" and ")})`)];
}

/**
 * Validates a browser interaction script against `wp-codebox/browser-interaction-script/v1` and
 * returns every problem, not just the first.
 * @param input parsed JSON (the `steps-json` payload).
 * @returns `{ valid, steps, issues }`: `steps` is the typed input when valid (else `[]`); each
 * issue is `{ index, field, path, message }` (`index` -1 and `field` "" when the top level is not
 * an array). Unknown kinds, missing or mistyped fields and unknown fields are all reported.
 * @example
 * const { valid, issues } = validateBrowserInteractionScript([{ kind: "click" }]);
 * // valid === false; issues[0] → { index: 0, field: "selector", path: "/0/selector", message: "is required" }
 */
export function validateBrowserInteractionScript(input: unknown): BrowserInteractionScriptValidation {
  if (!Array.isArray(input)) {
    const got = input === null ? "null" : typeof input;
    return { valid: false, steps: [], issues: [{ index: -1, field: "", path: "", message: `must be an array of steps (got ${got})` }] };
  }
  const issues = input.flatMap((value, index) => validateStep(index, value));
  return issues.length ? { valid: false, steps: [], issues } : { valid: true, steps: input as BrowserInteractionStep[], issues };
}

/** Formats issues one per line as `path: message` (`/2/selector: is required`). */
export function formatBrowserScriptIssues(issues: readonly BrowserScriptIssue[]): string {
  return issues.map((i) => `${i.path || "/"}: ${i.message}`).join("\n");
}

/**
 * Returns the steps when valid, otherwise throws.
 * @throws WpCodeboxError `invalid-steps-json` with `data.issues` listing every problem.
 */
export function assertValidBrowserInteractionScript(input: unknown): BrowserInteractionStep[] {
  const result = validateBrowserInteractionScript(input);
  if (result.valid) return result.steps;
  throw new WpCodeboxError(
    "invalid-steps-json",
    `The browser interaction script is invalid (${BROWSER_INTERACTION_SCRIPT_SCHEMA_ID}):\n${formatBrowserScriptIssues(result.issues)}\nFix the steps listed above and run again.`,
    { issues: result.issues.map((i) => ({ ...i })) },
  );
}

/**
 * Whether any step runs caller-supplied page JavaScript, i.e. needs the policy capability
 * `wordpress.browser-actions.evaluate` on top of `wordpress.browser-actions`.
 */
export function browserInteractionScriptUsesEvaluate(steps: readonly { kind: string }[]): boolean {
  return steps.some((s) => s.kind === "evaluate");
}

/**
 * Translates the legacy `actions-json` shape into steps, then validates them.
 *
 * Legacy actions are `{ type | action, url?, selector?, value?, key?, ms?, timeout? }` with
 * `type` in navigate | click | fill | press | wait | capture. Mapping:
 * - `navigate` → `navigate {url}`; `click` → `click {selector}`; `fill` → `fill {selector, value}`;
 *   `press` → `press {key (or value), selector?}`.
 * - `wait` with `selector` → `waitFor {selector}`; with `url` → `waitFor {url}`; with only `ms` (a
 *   fixed sleep) or nothing → `waitFor {loadState: "load"}`. Fixed sleeps are deliberately not
 *   reproduced: every locator step already waits for its element, so a sleep only adds time and
 *   flakiness. The original `ms` is kept in the step's `description`.
 * - `capture` → `capture {what}` where `what` is `value` when it is html|console|network|all,
 *   else `all`; `capture` with `value: "screenshot"` → `screenshot {name?: selector}`.
 * - legacy `timeout` (ms) becomes the step's `timeout`.
 * @param actions parsed `actions-json` payload.
 * @returns the same shape as {@link validateBrowserInteractionScript}; issues use the legacy
 * action's index, and an unknown action type is reported on field `type`.
 */
export function normalizeLegacyBrowserActions(actions: unknown): BrowserInteractionScriptValidation {
  if (!Array.isArray(actions)) return validateBrowserInteractionScript(actions);
  const issues: BrowserScriptIssue[] = [];
  const steps = actions.map((action, index): unknown => {
    if (!isRecord(action)) return action;
    const type = action.type ?? action.action;
    const common: Record<string, unknown> = {};
    if (action.timeout !== undefined) common.timeout = action.timeout;
    if (typeof action.description === "string") common.description = action.description;
    const opt = (key: string, value: unknown) => (value === undefined ? {} : { [key]: value });
    switch (type) {
      case "navigate":
        return { kind: "navigate", url: action.url, ...common };
      case "click":
        return { kind: "click", selector: action.selector, ...common };
      case "fill":
        return { kind: "fill", selector: action.selector, value: action.value, ...common };
      case "press":
        return { kind: "press", key: action.key ?? action.value, ...opt("selector", action.selector), ...common };
      case "wait": {
        if (action.selector !== undefined) return { kind: "waitFor", selector: action.selector, ...common };
        if (action.url !== undefined) return { kind: "waitFor", url: action.url, ...common };
        const note = action.ms !== undefined ? `legacy wait ms=${String(action.ms)} (fixed sleeps are not reproduced)` : undefined;
        return { kind: "waitFor", loadState: "load", ...common, ...(note && common.description === undefined ? { description: note } : {}) };
      }
      case "capture": {
        if (action.value === "screenshot") return { kind: "screenshot", ...opt("name", action.selector ?? action.name), ...common };
        const what = ["html", "console", "network", "all"].includes(action.value as string) ? action.value : "all";
        return { kind: "capture", what, ...common };
      }
      default:
        issues.push({
          index,
          field: "type",
          path: `/${index}/type`,
          message: `unknown legacy action ${JSON.stringify(type)}; expected one of navigate, click, fill, press, wait, capture`,
        });
        return undefined;
    }
  });
  const checked = steps.flatMap((s, index) => (s === undefined ? [] : validateStep(index, s)));
  const all = [...issues, ...checked].sort((a, b) => a.index - b.index);
  return all.length ? { valid: false, steps: [], issues: all } : { valid: true, steps: steps as BrowserInteractionStep[], issues: [] };
}

/**
 * Refuses a baseline a screenshot comparison must not decode (see `screenshotImageProblem`).
 * @throws WpCodeboxError `input-file-invalid` with `data: { path, compare }`.
 */
export function assertScreenshotImage(bytes: Uint8Array, compare: string, path: string): void {
  const problem = screenshotImageProblem(bytes, `The baseline ${compare}`);
  if (problem) throw new WpCodeboxError("input-file-invalid", `${problem} (${path}).`, { path, compare });
}

/**
 * Reads a command's browser script from its args: `steps-json` (an array, or `{ "steps": [...] }`)
 * or the legacy `actions-json`, each inline JSON or `@path` relative to `cwd`.
 * `compare` paths of screenshot steps must stay inside the script file's folder (`cwd` for
 * inline steps); a baseline that exists must be a regular file under the `baseline-image` cap.
 * @returns the validated steps.
 * @throws `invalid-json-arg` (unreadable JSON), `invalid-steps-json` listing every issue with its
 *   step index and field, `path-not-allowed` for a baseline outside the script's folder,
 *   `input-file-invalid` / `input-file-too-large` for a baseline that is no regular file, too big, not
 *   a PNG, interlaced, or over `SCREENSHOT_MAX_PIXELS` pixels by its header.
 */
export function readBrowserScriptArgs(args: Record<string, string | undefined>, cwd: string): BrowserInteractionStep[] {
  const legacy = args["steps-json"] === undefined;
  const raw = readJsonArg((legacy ? args["actions-json"] : args["steps-json"]) ?? "[]", cwd);
  const input = raw && typeof raw === "object" && !Array.isArray(raw) && "steps" in raw ? (raw as { steps: unknown }).steps : raw;
  const report = legacy ? normalizeLegacyBrowserActions(input) : validateBrowserInteractionScript(input);
  if (!report.valid) {
    throw new WpCodeboxError(
      "invalid-steps-json",
      `The browser script has ${report.issues.length} problem(s); fix them and run again:\n${formatBrowserScriptIssues(report.issues)}`,
      // `within`: where the steps sit inside the argument's JSON ("/steps" for `{ "steps": [...] }`).
      { argument: legacy ? "actions-json" : "steps-json", within: input === raw ? "" : "/steps", issues: report.issues },
    );
  }
  // Baselines that exist are checked like every other input file (regular, under the cap) before
  // boot, and so is what their header claims: decoding a baseline cannot be stopped once begun.
  for (const baseline of assertBrowserBaselines(report.steps, browserScriptFolder(args, cwd)).values()) {
    let bytes: Buffer;
    try {
      bytes = readInputFileSync(baseline.path, "baseline-image");
    } catch (error) {
      if (isMissingInputFile(error)) continue;
      throw error;
    }
    assertScreenshotImage(bytes, baseline.compare, baseline.path);
  }
  return report.steps as BrowserInteractionStep[];
}
