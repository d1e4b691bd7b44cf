/**
 * The runtime policy: which capabilities a run may use, and its network, filesystem
 * and secrets rules. Enforced by the runtime on every execute; this module parses and checks it.
 */
import { isAbsolute, resolve } from "node:path";
import { Type, type Static } from "@sinclair/typebox";
import { PolicyDeniedError, WpCodeboxError, quoteValue } from "./errors.js";
import { isMissingInputFile, readInputTextSync } from "./input-files.js";
import { parseJsonText } from "./json-syntax.js";
import { BROWSER_EVALUATE_CAPABILITY, allCapabilities } from "./command-registry.js";
import { validateAgainstSchema } from "./schema-validation.js";
import type { RuntimePolicy } from "./runtime.js";

/** Schema id of the policy document. */
export const RUNTIME_POLICY_SCHEMA_ID = "wp-codebox/runtime-policy/v1";

const NETWORK_SCHEMA = Type.Union([
  Type.Literal("deny"),
  Type.Literal("allow"),
  Type.Object({ allowHosts: Type.Array(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
]);
const FILESYSTEM_SCHEMA = Type.Union([Type.Literal("readonly-mounts"), Type.Literal("readwrite-mounts")]);
const SECRETS_SCHEMA = Type.Union([Type.Literal("none"), Type.Literal("scoped")]);

/**
 * What a caller may write (`--policy`, recipe `policy`): every field optional, no unknown fields.
 * `{"commands": ["wordpress.run-php"]}` is a complete policy.
 */
export const RUNTIME_POLICY_INPUT_SCHEMA = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    commands: Type.Optional(Type.Array(Type.String())),
    network: Type.Optional(NETWORK_SCHEMA),
    filesystem: Type.Optional(FILESYSTEM_SCHEMA),
    secrets: Type.Optional(SECRETS_SCHEMA),
  },
  { additionalProperties: false },
);
export type RuntimePolicyInput = Static<typeof RUNTIME_POLICY_INPUT_SCHEMA>;

/** The normalised policy (`RuntimePolicy`): every field present. */
export const RUNTIME_POLICY_SCHEMA = Type.Object(
  {
    commands: Type.Array(Type.String()),
    network: NETWORK_SCHEMA,
    filesystem: FILESYSTEM_SCHEMA,
    secrets: SECRETS_SCHEMA,
  },
  { additionalProperties: false, $id: RUNTIME_POLICY_SCHEMA_ID },
);

// Compile-time drift check: the schema and the hand-written `RuntimePolicy` in runtime.ts agree.
type Equal<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const POLICY_SCHEMA_MATCHES_TYPE: Equal<Static<typeof RUNTIME_POLICY_SCHEMA>, RuntimePolicy> = true;
void POLICY_SCHEMA_MATCHES_TYPE;

/** Defaults for omitted fields. */
export const DEFAULT_RUNTIME_POLICY: Readonly<RuntimePolicy> = Object.freeze({
  commands: [],
  network: "deny",
  filesystem: "readwrite-mounts",
  secrets: "none",
});

/** Options for `normalizePolicy`. */
export interface NormalizePolicyOptions {
  /** Values for omitted fields; default `DEFAULT_RUNTIME_POLICY`. */
  defaults?: Partial<RuntimePolicy>;
  /** Where the policy came from, for messages (e.g. a file path or "--policy"). */
  source?: string;
}

/**
 * Validates a caller's policy and fills omitted fields with defaults (`network: "deny"`,
 * `filesystem: "readwrite-mounts"`, `secrets: "none"`, `commands: []`). `undefined`/`null` means
 * "all defaults". Capability ids are de-duplicated; host names lower-cased.
 * @returns a complete `RuntimePolicy` (a fresh object).
 * @throws WpCodeboxError `invalid-policy` listing every issue as `path: message` (wrong types,
 *   unknown fields, capability ids not in the command catalog); `data.issues` holds them.
 */
export function normalizePolicy(input: unknown, options: NormalizePolicyOptions = {}): RuntimePolicy {
  const defaults = { ...DEFAULT_RUNTIME_POLICY, ...options.defaults };
  const value = input ?? {};
  const issues = validateAgainstSchema(RUNTIME_POLICY_INPUT_SCHEMA, value);
  const known = allCapabilities();
  const typed = value as RuntimePolicyInput;
  if (issues.length === 0) {
    (typed.commands ?? []).forEach((capability, index) => {
      if (!known.includes(capability)) {
        issues.push({ path: `/commands/${index}`, message: `unknown capability "${capability}"; known: ${known.join(", ")}` });
      }
    });
  }
  if (issues.length > 0) {
    const where = options.source ? ` (${options.source})` : "";
    throw new WpCodeboxError(
      "invalid-policy",
      `Invalid policy${where}:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join("\n")}\nAllowed fields: commands, network ("deny" | "allow" | {"allowHosts": [...]}), filesystem ("readonly-mounts" | "readwrite-mounts"), secrets ("none" | "scoped").`,
      { issues, source: options.source ?? null },
    );
  }
  const network = typed.network ?? defaults.network;
  return {
    commands: [...new Set(typed.commands ?? defaults.commands)],
    network: typeof network === "string" ? network : { allowHosts: network.allowHosts.map((h) => h.toLowerCase()) },
    filesystem: typed.filesystem ?? defaults.filesystem,
    secrets: typed.secrets ?? defaults.secrets,
  };
}

/**
 * Parses `--policy FILE|JSON`: text starting with `{` is inline JSON; anything else (optionally
 * prefixed with `@`) is a file path resolved against `cwd`.
 * @returns the normalised policy.
 * @throws WpCodeboxError `invalid-policy` for a missing file, bad JSON, or any `normalizePolicy` issue;
 *   `input-file-invalid` / `input-file-too-large` for a file that is not a regular file or is over 1 MiB.
 */
export function parsePolicyArg(text: string, cwd: string, options: Omit<NormalizePolicyOptions, "source"> = {}): RuntimePolicy {
  const trimmed = text.trim();
  let json = trimmed;
  let source = "--policy (inline JSON)";
  // Inline JSON that is not an object (`[]`, `"x"`, `42`) is a policy mistake, not a file name.
  const inlineJson = /^[[\]"]|^-?\d|^(true|false|null)$/.test(trimmed);
  if (!trimmed.startsWith("{") && !inlineJson) {
    const file = trimmed.startsWith("@") ? trimmed.slice(1) : trimmed;
    const full = isAbsolute(file) ? file : resolve(cwd, file);
    source = full;
    try {
      json = readInputTextSync(full, "policy");
    } catch (error) {
      if (!isMissingInputFile(error)) throw error;
      throw new WpCodeboxError(
        "invalid-policy",
        `Cannot read policy file ${quoteValue(full)}: it does not exist. Pass inline JSON ('{"commands":[...]}') or an existing file.`,
        { source: full },
        { cause: error },
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = parseJsonText(json);
  } catch (error) {
    throw new WpCodeboxError("invalid-policy", `Invalid policy JSON in ${source}: ${(error as Error).message}.`, { source }, { cause: error });
  }
  return normalizePolicy(parsed, { ...options, source });
}

/** True when the policy grants `capability` (exact id match). */
export function hasCapability(policy: RuntimePolicy, capability: string): boolean {
  return policy.commands.includes(capability);
}

/**
 * The capability a command invocation needs that the policy does not grant, or undefined: the
 * command's own, then `wordpress.browser-actions.evaluate` for a browser script with an evaluate
 * step. The same rule the runtime enforces on `execute`, asked before boot.
 */
export function missingCapability(policy: RuntimePolicy, needs: { capability: string; usesEvaluate?: boolean }): string | undefined {
  if (!hasCapability(policy, needs.capability)) return needs.capability;
  if (needs.usesEvaluate && !hasCapability(policy, BROWSER_EVALUATE_CAPABILITY)) return BROWSER_EVALUATE_CAPABILITY;
  return undefined;
}

/**
 * Throws unless the policy grants `capability` (exact id, e.g. `wordpress.browser-actions.evaluate`).
 * @throws PolicyDeniedError (`policy-denied`, `data.capability` names the missing capability).
 */
export function assertCapability(policy: RuntimePolicy, capability: string): void {
  if (!hasCapability(policy, capability)) throw new PolicyDeniedError(capability);
}

/**
 * Whether outbound traffic to `host` is allowed. `host` may be a host name, `host:port`, or a URL.
 * `"deny"` → false, `"allow"` → true; `{ allowHosts }` matches host names case-insensitively,
 * exactly, or by suffix for entries written `*.example.com` (subdomains only).
 */
export function isHostAllowed(policy: RuntimePolicy, host: string): boolean {
  if (policy.network === "deny") return false;
  if (policy.network === "allow") return true;
  const name = hostName(host);
  if (!name) return false;
  const literal = isIpLiteral(name);
  return policy.network.allowHosts.some((entry) => {
    const e = entry.toLowerCase();
    // A wildcard names subdomains: an address is not one (`*.0.0.1` must not allow 127.0.0.1).
    if (e.startsWith("*.")) return !literal && name.endsWith(e.slice(1)) && name.length > e.length - 1;
    return name === e;
  });
}

/** Whether `name` is an IP address literal: IPv6 (has a colon) or dotted numbers (decimal or 0x hex labels, as URL parsers accept). */
function isIpLiteral(name: string): boolean {
  if (name.includes(":")) return true;
  return name.split(".").every((label) => /^(0x[0-9a-f]*|[0-9]+)$/.test(label));
}

function hostName(host: string): string {
  const text = host.trim().toLowerCase();
  if (text.includes("://")) {
    try {
      return new URL(text).hostname.replace(/^\[|\]$/g, "");
    } catch {
      return "";
    }
  }
  if (text.startsWith("[")) return text.slice(1, text.indexOf("]"));
  const colons = text.split(":").length - 1;
  return colons === 1 ? text.slice(0, text.indexOf(":")) : text;
}
