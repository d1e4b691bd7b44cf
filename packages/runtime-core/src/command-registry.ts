/**
 * The command catalog as data: which commands exist, their `key=value` args, the
 * capability each needs, and whether recipes may use it. The policy decides which of them a run
 * may execute; the backend decides how.
 */
import { isAbsolute, resolve } from "node:path";
import { Type, type Static } from "@sinclair/typebox";
import { WpCodeboxError, quoteValue } from "./errors.js";
import { isMissingInputFile, readInputTextSync, type InputReadOptions } from "./input-files.js";
import { parseJsonText } from "./json-syntax.js";
import { parseDuration } from "./durations.js";
import { BROWSER_COMMAND_TIMEOUT_MARGIN_MS, DEFAULT_BROWSER_TOTAL_TIMEOUT_MS, DEFAULT_CHECK_SURFACE_TIMEOUT_MS, DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_PHPUNIT_TIMEOUT_MS } from "./defaults.js";

/** Schema id of `commandCatalog()` output (`wp-codebox commands --json`). */
export const COMMAND_CATALOG_SCHEMA_ID = "wp-codebox/command-catalog/v1";

/** Value formats of command args; `parseCommandArgs` checks the ones it can check offline. */
export const ARG_FORMATS = [
  "text", // any string
  "path", // a host file path, relative to the caller's working directory (or the recipe's)
  "json", // inline JSON or `@path` (see `readJsonArg`)
  "duration", // "500ms" | "3s" | "2m" | "1500" (ms)
  "enum", // one of `values`
  "integer",
  "boolean", // "true" | "false"
  "list", // comma-separated values
  "actor", // "admin" | "anonymous" | "user:<id-or-login>"
  "viewport", // "<width>x<height>" in CSS pixels
  "url", // absolute URL or sandbox-relative path starting with "/"
] as const;

/** TypeBox schema of one accepted argument. */
export const COMMAND_ARGUMENT_SCHEMA = Type.Object(
  {
    name: Type.String({ pattern: "^[a-z][a-z0-9-]*$" }),
    required: Type.Boolean(),
    format: Type.Union(ARG_FORMATS.map((f) => Type.Literal(f))),
    values: Type.Optional(Type.Array(Type.String())),
    description: Type.String(),
  },
  { additionalProperties: false },
);
export type CommandArgument = Static<typeof COMMAND_ARGUMENT_SCHEMA>;

/**
 * What a command does, which decides how it is run and recorded: `php` runs PHP in the worker,
 * `http` sends a request to the site, `browser` drives Chromium, `state` exports WordPress state,
 * `inspect` reads the runtime's own facts, `capability` is a policy-only grant (not runnable).
 */
export const COMMAND_KINDS = ["php", "http", "browser", "state", "inspect", "capability"] as const;

/** TypeBox schema of one catalog entry. */
export const COMMAND_DEFINITION_SCHEMA = Type.Object(
  {
    id: Type.String(),
    summary: Type.String(),
    kind: Type.Union(COMMAND_KINDS.map((k) => Type.Literal(k))),
    capability: Type.String(),
    /** Wall-clock limit of one run when the caller gives none, in ms (`0` = none). */
    defaultTimeoutMs: Type.Integer({ minimum: 0 }),
    args: Type.Array(COMMAND_ARGUMENT_SCHEMA),
    /** Groups of args of which exactly one must be given (e.g. `code` | `code-file`). */
    exactlyOneOf: Type.Optional(Type.Array(Type.Array(Type.String()))),
    /** Groups of args of which at most one may be given. */
    atMostOneOf: Type.Optional(Type.Array(Type.Array(Type.String()))),
    output: Type.Object(
      { description: Type.String(), jsonFields: Type.Array(Type.String()) },
      { additionalProperties: false },
    ),
    recipe: Type.Boolean(),
    runnable: Type.Boolean(),
    examples: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);
export type CommandDefinition = Static<typeof COMMAND_DEFINITION_SCHEMA>;

/** TypeBox schema of `commandCatalog()` (`wp-codebox/command-catalog/v1`). */
export const COMMAND_CATALOG_SCHEMA = Type.Object(
  {
    schema: Type.Literal(COMMAND_CATALOG_SCHEMA_ID),
    commands: Type.Array(COMMAND_DEFINITION_SCHEMA),
  },
  { additionalProperties: false, $id: COMMAND_CATALOG_SCHEMA_ID },
);
export type CommandCatalog = Static<typeof COMMAND_CATALOG_SCHEMA>;

function arg(
  name: string,
  format: CommandArgument["format"],
  description: string,
  extra: { required?: boolean; values?: string[] } = {},
): CommandArgument {
  return {
    name,
    required: extra.required ?? false,
    format,
    ...(extra.values ? { values: extra.values } : {}),
    description,
  };
}

/** The capability that lets a browser script run page JavaScript (`evaluate` steps). */
export const BROWSER_EVALUATE_CAPABILITY = "wordpress.browser-actions.evaluate";

/** A browser command carries its own total budget (`timeout` arg); the outer limit adds a margin to it. */
const BROWSER_DEFAULT_TIMEOUT_MS = DEFAULT_BROWSER_TOTAL_TIMEOUT_MS + BROWSER_COMMAND_TIMEOUT_MARGIN_MS;

const AS_ARG = arg("as", "actor", 'Who acts: "admin" (default), "anonymous", or "user:<id-or-login>".');
/** Whether a fatal in a background request the command set off (WP-Cron, a loopback) fails it ("fail", default) or is only listed ("record"). */
export const BACKGROUND_ERRORS_ARG = arg(
  "background-errors",
  "enum",
  'A PHP fatal in a request this command set off in the background (a WP-Cron run, a loopback to the site): "fail" (default) makes the result an error (php-fatal); "record" only lists it in backgroundErrors.',
  { values: ["fail", "record"] },
);
const VIEWPORT_ARG = arg("viewport", "viewport", 'Browser viewport "<width>x<height>" in CSS pixels (default 1280x720).');

/** Every command and policy-only capability, in catalog order. */
export const COMMAND_DEFINITIONS: readonly CommandDefinition[] = Object.freeze([
  {
    id: "wordpress.run-php",
    summary: "Run PHP code inside the sandbox, with WordPress loaded (default) or bare.",
    kind: "php",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "wordpress.run-php",
    args: [
      arg("code", "text", "PHP source, starting with <?php."),
      arg("code-file", "path", "Host path of a PHP file to run (relative to the working directory or recipe)."),
      arg("bootstrap", "enum", 'Load WordPress first ("wordpress", default) or run bare PHP ("none").', {
        values: ["wordpress", "none"],
      }),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
    ],
    exactlyOneOf: [["code", "code-file"]],
    output: {
      description: 'stdout, stderr, exit code; a fatal error gives status "error" with error.code "php-fatal" and file:line.',
      jsonFields: [],
    },
    recipe: true,
    runnable: true,
    examples: ["code=<?php echo get_bloginfo('name');", "code-file=./probe.php bootstrap=none"],
  },
  {
    id: "wordpress.wp-cli",
    summary: "Run a WP-CLI command (needs a wp-cli.phar: `wp-codebox wp-cli install` once, or --wp-cli-phar / WP_CODEBOX_WP_CLI_PHAR).",
    kind: "php",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "wordpress.wp-cli",
    args: [arg("command", "text", 'WP-CLI arguments without the leading "wp", e.g. "plugin list --format=json".', { required: true }), BACKGROUND_ERRORS_ARG],
    output: {
      description:
        'WP-CLI stdout, stderr and exit code; JSON output (--format=json) is parsed into result.json. A non-zero exit is status "error" with wp-cli-failed; commands that need mysql, mysqldump or another process are refused before boot with wp-cli-unsupported.',
      jsonFields: [],
    },
    recipe: true,
    runnable: true,
    examples: ["command=plugin list --format=json"],
  },
  {
    id: "wordpress.phpunit",
    summary: "Run the plugin's PHPUnit suite inside the sandbox, from the plugin's folder (PHPUnit from vendor/bin/phpunit or phpunit=PATH).",
    kind: "php",
    defaultTimeoutMs: DEFAULT_PHPUNIT_TIMEOUT_MS,
    capability: "wordpress.phpunit",
    args: [
      arg("config", "text", "PHPUnit configuration file, relative to the plugin folder (default: PHPUnit's own lookup, phpunit.xml then phpunit.xml.dist)."),
      arg("filter", "text", "PHPUnit --filter: a test name pattern or /regex/."),
      arg("testsuite", "text", "PHPUnit --testsuite: run only the named suite(s)."),
      arg("phpunit", "path", "A PHPUnit entry script on this machine, e.g. /usr/bin/phpunit (Debian) or another project's vendor/bin/phpunit; mounted read-only. Default: the plugin's vendor/bin/phpunit."),
      arg("bootstrap", "enum", '"plugin" (default): the bootstrap in the plugin\'s config; "wordpress": WordPress is loaded with the plugin active before the tests run (the config\'s bootstrap is replaced by the plugin\'s vendor/autoload.php, if any).', {
        values: ["plugin", "wordpress"],
      }),
      arg("plugin", "text", "Which mounted plugin folder to run from, when there are several (default the first --plugin)."),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
    ],
    output: {
      description:
        'PHPUnit\'s output on stdout; files/phpunit/junit.xml (PHPUnit\'s --log-junit) and files/phpunit/test-results.json (counts, failing tests with file:line). status "error" (tests-failed) when a test fails or errors; exit 3 phpunit-unavailable when no PHPUnit is found.',
      jsonFields: ["tests", "failures", "phpunit", "exitCode"],
    },
    recipe: true,
    runnable: true,
    examples: ["phpunit=/usr/bin/phpunit", "config=phpunit.xml.dist filter=test_saves_option bootstrap=wordpress"],
  },
  {
    id: "wordpress.http-request",
    summary: "Send an HTTP request to the sandboxed site (other origins only if the policy allows the host).",
    kind: "http",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "wordpress.http-request",
    args: [
      arg("method", "enum", "HTTP method (default GET).", {
        values: ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
      }),
      arg("path", "text", 'Sandbox-relative path, e.g. "/?p=1" or "/wp-admin/".'),
      arg("url", "url", "Absolute URL; the sandbox origin unless the policy's network rule allows the host."),
      arg("headers-json", "json", "Request headers as a JSON object (inline or @file)."),
      arg("body", "text", "Raw request body."),
      arg("body-json", "json", "JSON request body (inline or @file); sets Content-Type: application/json."),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
      arg("expect-status", "integer", 'Expected HTTP status; a different status gives status "error" (http-error).'),
    ],
    exactlyOneOf: [["path", "url"]],
    atMostOneOf: [["body", "body-json"]],
    output: { description: "Response status, headers, body (capped) and timing.", jsonFields: ["status", "headers", "body", "durationMs"] },
    recipe: true,
    runnable: true,
    examples: ["path=/wp-json/ expect-status=200", "method=POST path=/wp-admin/admin-ajax.php body=action=ping"],
  },
  {
    id: "wordpress.rest-request",
    summary: "Dispatch a REST API request in-process (rest_do_request), no HTTP involved.",
    kind: "php",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "wordpress.rest-request",
    args: [
      arg("method", "enum", "HTTP method (default GET).", { values: ["GET", "POST", "PUT", "PATCH", "DELETE"] }),
      arg("route", "text", 'REST route, e.g. "/wp/v2/posts".', { required: true }),
      arg("params-json", "json", "Query parameters as a JSON object (inline or @file)."),
      arg("body-json", "json", "Body parameters as a JSON object (inline or @file)."),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
    ],
    output: { description: "REST response status, headers and data.", jsonFields: ["status", "headers", "data"] },
    recipe: true,
    runnable: true,
    examples: ["route=/wp/v2/posts params-json={\"per_page\":1}"],
  },
  {
    id: "wordpress.browser-actions",
    summary: "Drive a headless browser through a step script (wp-codebox/browser-interaction-script/v1).",
    kind: "browser",
    defaultTimeoutMs: BROWSER_DEFAULT_TIMEOUT_MS,
    capability: "wordpress.browser-actions",
    args: [
      arg("steps-json", "json", "Steps array or script object (inline or @file)."),
      arg("actions-json", "json", "Legacy actions array; normalised to steps."),
      arg("url", "url", "Start URL (sandbox-relative or absolute); default /wp-admin/."),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
      arg("step-timeout", "duration", "Default timeout of each step (default 15s)."),
      arg("timeout", "duration", "Total budget of the command (default 120s)."),
      VIEWPORT_ARG,
      arg("capture", "list", 'Extra evidence to capture: comma-separated "html", "console", "network", "all".'),
    ],
    exactlyOneOf: [["steps-json", "actions-json"]],
    output: {
      description: "Per-step records, the assertions block, and screenshots under files/browser/.",
      jsonFields: ["steps", "assertions", "finalUrl"],
    },
    recipe: true,
    runnable: true,
    examples: ['steps-json=[{"kind":"navigate","url":"/wp-admin/"}] step-timeout=10s'],
  },
  {
    id: "wordpress.browser-probe",
    summary: "Open one page in a headless browser and report status, title, console errors and a screenshot.",
    kind: "browser",
    defaultTimeoutMs: BROWSER_DEFAULT_TIMEOUT_MS,
    capability: "wordpress.browser-probe",
    args: [
      arg("url", "url", "Page to open (sandbox-relative or absolute); default /."),
      arg("wait-for", "text", "Selector to wait for after load."),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
      arg("capture", "list", 'Extra evidence to capture: comma-separated "html", "console", "network", "all".'),
      VIEWPORT_ARG,
    ],
    output: {
      description: "Status, title, final URL, console errors, screenshot.",
      jsonFields: ["status", "title", "finalUrl", "consoleErrors", "screenshot"],
    },
    recipe: true,
    runnable: true,
    examples: ["url=/wp-admin/ wait-for=#wpadminbar"],
  },
  {
    id: "wordpress.ability",
    summary: "Run a registered ability of the WordPress Abilities API (WordPress 6.9+): wp_get_ability(name)->execute(input).",
    kind: "php",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "wordpress.ability",
    args: [
      arg("name", "text", 'Ability name, "namespace/ability-name", e.g. "core/get-site-info".', { required: true }),
      arg("input-json", "json", "The ability's input as JSON (inline or @file), checked by WordPress against the ability's input schema; default none (null)."),
      AS_ARG,
      BACKGROUND_ERRORS_ARG,
    ],
    output: {
      description:
        'The ability\'s output as result.json. A WP_Error (invalid input, no permission, the ability\'s own failure) is status "error" with ability-failed and the WP_Error code and message; an unknown name is ability-not-found listing the registered names; WordPress before 6.9 is abilities-unavailable.',
      jsonFields: [],
    },
    recipe: true,
    runnable: true,
    examples: ["name=core/get-site-info", 'name=core/get-site-info input-json={"fields":["name","version"]}'],
  },
  {
    id: "wordpress.state-export",
    summary: "Export WordPress state (wp-codebox/wordpress-state-export/v1).",
    kind: "state",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "wordpress.state-export",
    args: [
      arg(
        "sections",
        "list",
        "Comma-separated sections: summary, posts, terms, menus, templates, media, options, users, rest-routes, abilities (default summary).",
      ),
      arg("redaction", "enum", 'Redaction level: "safe" (default) or "none".', { values: ["safe", "none"] }),
      arg("include-content", "boolean", "Include post content (default false)."),
      arg("option-names", "list", "Comma-separated option names to export (options are only exported when named)."),
      arg("user-fields", "list", 'Comma-separated user identity fields (only with redaction=none).'),
    ],
    output: { description: "The state export summary; sections as bundle artifacts.", jsonFields: ["schema", "sections", "artifacts"] },
    recipe: true,
    runnable: true,
    examples: ["sections=summary,posts,options option-names=blogname"],
  },
  {
    id: "wordpress.check",
    summary: "Activate a plugin, inventory what it added, exercise every surface and WordPress's own screens (front end as anonymous and subscriber, login, core wp-admin) against their state before activation, and report each fatal, warning, notice, deprecation, database error, HTTP 5xx, admin notice, JavaScript error and uninstall leftover.",
    kind: "php",
    defaultTimeoutMs: DEFAULT_CHECK_TIMEOUT_MS,
    capability: "wordpress.check",
    args: [
      arg("plugin", "text", 'The plugin under wp-content/plugins: its folder (e.g. "my-plugin") or main file ("my-plugin/my-plugin.php", "hello.php").', { required: true }),
      arg("browser", "boolean", 'Also open every admin page the plugin added in Chromium and report JavaScript errors, console errors and failed requests (default "false").'),
      arg("fail-on", "enum", 'Lowest severity that makes the command fail (default "error").', { values: ["error", "warning", "notice"] }),
      arg("uninstall", "boolean", 'Deactivate and uninstall at the end and list what the plugin left behind (default "true").'),
      arg("surface-timeout", "duration", `Limit of each surface (an admin page, a REST route, a front-end visit, a cron hook) (default "${DEFAULT_CHECK_SURFACE_TIMEOUT_MS / 1000}s"). A surface that takes longer is a "timeout" error finding; its PHP worker is stopped and replaced, and the check goes on.`),
      arg("min-callback-coverage", "integer", "Fail the check when fewer than this percentage (0-100) of the plugin's callbacks ran (report coverage.percent)."),
      arg("coverage", "enum", 'What coverage to measure: "callbacks" (default: which of the plugin\'s callbacks ran) or "lines" (line coverage of the plugin\'s files, which needs Xdebug; where it cannot load, coverage.lines says why).', { values: ["callbacks", "lines"] }),
    ],
    output: {
      description: 'files/check/report.json (wp-codebox/plugin-check-report/v1) and files/check/junit.xml; status "error" (check-failed) when a finding is at or above fail-on.',
      jsonFields: ["status", "counts", "inventory", "findings", "surfaces"],
    },
    recipe: true,
    runnable: true,
    examples: ["plugin=my-plugin", "plugin=my-plugin browser=true fail-on=warning"],
  },
  {
    id: "inspect-mounted-inputs",
    summary: "List the resolved mounts (host source, sandbox target, mode, kind).",
    kind: "inspect",
    defaultTimeoutMs: DEFAULT_COMMAND_TIMEOUT_MS,
    capability: "inspect-mounted-inputs",
    args: [],
    output: { description: "The resolved mounts.", jsonFields: ["mounts"] },
    recipe: true,
    runnable: true,
  },
  {
    id: BROWSER_EVALUATE_CAPABILITY,
    summary: "Policy-only capability: run caller-supplied page JavaScript (evaluate steps). Not a runnable command.",
    kind: "capability",
    defaultTimeoutMs: 0,
    capability: BROWSER_EVALUATE_CAPABILITY,
    args: [],
    output: { description: "None: grants evaluate steps inside wordpress.browser-actions.", jsonFields: [] },
    recipe: false,
    runnable: false,
  },
] satisfies CommandDefinition[]);

const BY_ID = new Map(COMMAND_DEFINITIONS.map((d) => [d.id, d]));

/** True when `id` is a catalog command of kind `browser` (it drives Chromium); false for unknown ids. */
export function isBrowserCommand(id: string): boolean {
  return BY_ID.get(id)?.kind === "browser";
}

/** Every command id in catalog order (runnable and policy-only). */
export function commandIds(): string[] {
  return COMMAND_DEFINITIONS.map((d) => d.id);
}

/**
 * Looks up a command or policy-only capability.
 * @throws WpCodeboxError `unknown-command` listing every known id.
 */
export function getCommandDefinition(id: string): CommandDefinition {
  const def = BY_ID.get(id);
  if (!def) {
    const known = COMMAND_DEFINITIONS.filter((d) => d.runnable).map((d) => d.id);
    throw new WpCodeboxError(
      "unknown-command",
      `Unknown command ${quoteValue(id)}. Known commands: ${known.join(", ")}. Run "wp-codebox commands" for details.`,
      { command: id, known },
    );
  }
  return def;
}

/** Every capability id a policy may grant (the catalog's capabilities, de-duplicated, in order). */
export function allCapabilities(): string[] {
  return [...new Set(COMMAND_DEFINITIONS.map((d) => d.capability))];
}

/**
 * The catalog printed by `wp-codebox commands --json`.
 * @returns `{ schema: "wp-codebox/command-catalog/v1", commands }`, a deep copy (safe to mutate).
 */
export function commandCatalog(): CommandCatalog {
  return { schema: COMMAND_CATALOG_SCHEMA_ID, commands: structuredClone([...COMMAND_DEFINITIONS]) as CommandDefinition[] };
}

/**
 * The `invalid-argument` error for a key a command does not take, listing the keys it takes.
 * @param prefix - what the message starts with (default the command id; MCP gives the tool name).
 */
export function unknownArgumentError(def: CommandDefinition, key: string, prefix: string = def.id): WpCodeboxError {
  const valid = def.args.map((a) => a.name);
  return new WpCodeboxError("invalid-argument", `${prefix}: unknown argument ${quoteValue(key)}. Valid keys: ${valid.length ? valid.join(", ") : "(none: this command takes no args)"}.`, {
    command: def.id,
    argument: key,
    valid,
  });
}

/**
 * Parses flat `key=value` args against a command's definition. Each arg is split at the first `=`
 * (values may contain `=`). Formats are checked where possible offline (`enum`, `integer`,
 * `boolean`, `duration`, `actor`, `viewport`); `json` args are read later with `readJsonArg`.
 * @param id - command id, e.g. `wordpress.run-php`.
 * @param args - `["code=<?php echo 1;", "bootstrap=none"]`.
 * @returns key → raw string value.
 * @throws WpCodeboxError `unknown-command` (unknown or policy-only id), `invalid-argument` (no `=`,
 *   unknown key, duplicate key, bad format, conflicting args), `missing-argument` (a required arg or
 *   one of an exactly-one-of group is absent). Messages name the arg and list the valid ones.
 * @example parseCommandArgs("wordpress.run-php", ["code=<?php echo 1;"]) // { code: "<?php echo 1;" }
 */
export function parseCommandArgs(id: string, args: readonly string[]): Record<string, string> {
  const def = getCommandDefinition(id);
  if (!def.runnable) {
    throw new WpCodeboxError(
      "unknown-command",
      `${quoteValue(id)} is a policy-only capability, not a runnable command: grant it in the policy's "commands" list instead.`,
      { command: id },
    );
  }
  const valid = def.args.map((a) => a.name);
  const validText = valid.length ? valid.join(", ") : "(none: this command takes no args)";
  const out: Record<string, string> = {};
  for (const raw of args) {
    const eq = raw.indexOf("=");
    if (eq <= 0) {
      throw new WpCodeboxError(
        "invalid-argument",
        `${id}: argument ${quoteValue(raw)} must have the form key=value. Valid keys: ${validText}.`,
        { command: id, argument: raw, valid },
      );
    }
    const key = raw.slice(0, eq);
    const value = raw.slice(eq + 1);
    const spec = def.args.find((a) => a.name === key);
    if (!spec) throw unknownArgumentError(def, key);
    if (Object.hasOwn(out, key)) {
      throw new WpCodeboxError("invalid-argument", `${id}: argument "${key}" is given more than once; give it once.`, {
        command: id,
        argument: key,
      });
    }
    checkFormat(id, spec, value);
    out[key] = value;
  }
  for (const spec of def.args) {
    if (spec.required && !Object.hasOwn(out, spec.name)) {
      throw new WpCodeboxError(
        "missing-argument",
        `${id}: missing required argument "${spec.name}" (${spec.description}). Valid keys: ${validText}.`,
        { command: id, argument: spec.name, valid },
      );
    }
  }
  for (const group of def.exactlyOneOf ?? []) {
    const given = group.filter((k) => Object.hasOwn(out, k));
    if (given.length === 0) {
      throw new WpCodeboxError(
        "missing-argument",
        `${id}: give exactly one of ${group.map((k) => `"${k}"`).join(" or ")}. Valid keys: ${validText}.`,
        { command: id, argument: group.join("|"), valid },
      );
    }
    if (given.length > 1) {
      throw new WpCodeboxError(
        "invalid-argument",
        `${id}: give only one of ${group.map((k) => `"${k}"`).join(" or ")}, not ${given.map((k) => `"${k}"`).join(" and ")}.`,
        { command: id, argument: given.join("|") },
      );
    }
  }
  for (const group of def.atMostOneOf ?? []) {
    const given = group.filter((k) => Object.hasOwn(out, k));
    if (given.length > 1) {
      throw new WpCodeboxError(
        "invalid-argument",
        `${id}: give at most one of ${group.map((k) => `"${k}"`).join(" or ")}, not ${given.map((k) => `"${k}"`).join(" and ")}.`,
        { command: id, argument: given.join("|") },
      );
    }
  }
  return out;
}

function checkFormat(id: string, spec: CommandArgument, value: string): void {
  const bad = (expected: string): never => {
    throw new WpCodeboxError("invalid-argument", `${id}: argument "${spec.name}" has invalid value ${quoteValue(value)}: expected ${expected}.`, {
      command: id,
      argument: spec.name,
      value,
    });
  };
  // No path or login holds a NUL byte; PHP and the file system would cut the value there.
  if ((spec.format === "path" || spec.format === "actor") && value.includes("\0")) bad(spec.format === "path" ? "a path without NUL bytes" : "a login or id without NUL bytes");
  switch (spec.format) {
    case "enum":
      if (!spec.values?.includes(value)) bad(`one of ${spec.values?.join(", ")}`);
      break;
    case "integer":
      if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) bad(`an integer (at most ${Number.MAX_SAFE_INTEGER} either side of 0)`);
      break;
    case "boolean":
      if (value !== "true" && value !== "false") bad('"true" or "false"');
      break;
    case "duration":
      try {
        parseDuration(value);
      } catch (error) {
        // parseDuration says what is wrong (no unit, too long) and what is allowed.
        throw new WpCodeboxError("invalid-argument", `${id}: argument "${spec.name}": ${(error as Error).message}`, { command: id, argument: spec.name, value });
      }
      break;
    case "actor":
      if (!/^(admin|anonymous|user:[\s\S]+)$/.test(value)) bad('"admin", "anonymous" or "user:<id-or-login>"');
      break;
    case "viewport":
      if (!/^[1-9]\d{0,4}x[1-9]\d{0,4}$/.test(value)) bad('"<width>x<height>", e.g. "1280x720"');
      break;
    default:
      if (spec.required && value === "") bad("a non-empty value");
  }
}

/**
 * Reads a structured (`*-json`) argument value: inline JSON, or `@path` naming a JSON file.
 * @param value - `'{"a":1}'` or `"@payload.json"`.
 * @param cwd - directory `@path` is resolved against (the caller's working directory, or the
 *   recipe's directory inside a recipe).
 * @param options - `confine`: checks the real path of the file opened (see `readInputFileSync`).
 * @returns the parsed JSON value.
 * @throws WpCodeboxError `invalid-json-arg` when the JSON does not parse or the file does not exist;
 *   `input-file-invalid` (not a regular file, unreadable) or `input-file-too-large` (over 16 MiB);
 *   whatever `confine` throws.
 */
export function readJsonArg(value: string, cwd: string, options: InputReadOptions = {}): unknown {
  let text = value;
  let source = "inline value";
  if (value.startsWith("@")) {
    const file = value.slice(1);
    const full = isAbsolute(file) ? file : resolve(cwd, file);
    source = `file ${quoteValue(full)}`;
    try {
      text = readInputTextSync(full, "arg-file", options);
    } catch (error) {
      if (!isMissingInputFile(error)) throw error;
      throw new WpCodeboxError(
        "invalid-json-arg",
        `Cannot read JSON ${source}: it does not exist. Check the path (relative to ${cwd}).`,
        { path: full },
        { cause: error },
      );
    }
  }
  try {
    return parseJsonText(text);
  } catch (error) {
    throw new WpCodeboxError(
      "invalid-json-arg",
      `Invalid JSON in ${source}: ${(error as Error).message}. Pass inline JSON or @path to a JSON file.`,
      { source },
      { cause: error },
    );
  }
}
