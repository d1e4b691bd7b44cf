/**
 * What a recipe, episode script or batch task file may reach on the host. Those files may come
 * from someone else, so every host path they name must resolve (symlinks followed) inside the
 * file's own folder or inside a folder the person running it granted with `--allow-path`, and
 * outbound network their policy asks for must be granted with `--allow-network`. A file's policy
 * can only narrow what the command line grants. Paths typed on the command line itself
 * (`run --plugin ./x`) are not checked here: the person running the command named them.
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { flattenCommandArgs } from "./command-input.js";
import { getCommandDefinition } from "./command-registry.js";
import { WpCodeboxError } from "./errors.js";
import type { NetworkPolicy } from "./runtime.js";
import { jsonPointerToken, type SchemaIssue } from "./schema-validation.js";

/** What the command line (or a Node API caller) grants beyond the file's own folder. */
export interface HostAccessGrants {
  /** `--allow-path DIR` (repeatable): host folders or files a file may name; relative to `cwd`. */
  allowPaths?: readonly string[];
  /**
   * `--allow-network ORIGIN` (repeatable): hosts a file's policy may reach: `*` (every host),
   * `*.example.com` (its subdomains), `example.com`, or an origin such as `http://127.0.0.1:8080`
   * (its host; the sandbox's network guard matches host names, so a grant covers every port).
   */
  allowNetwork?: readonly string[];
}

/** Grants resolved for one file: `plan`s print this as `hostAccess`. */
export interface HostAccess {
  /** The file's own folder with symlinks resolved: always reachable. */
  folder: string;
  /** Granted host paths, absolute with symlinks resolved. */
  allowPaths: string[];
  /** Granted hosts (`*`, `*.example.com`, `example.com`), lower-cased. */
  allowNetwork: string[];
}

/** A path outside the file's folder that a grant let through (what `recipe plan` shows as widened). */
export interface HostPathUse {
  /** JSON pointer of the field that named it. */
  pointer: string;
  /** The path with symlinks resolved. */
  path: string;
  /** The `--allow-path` entry that covers it. */
  allowedBy: string;
}

/** `path-not-allowed: …` / `network-not-allowed: …`: how host-access issues start. */
export const PATH_NOT_ALLOWED = "path-not-allowed";
export const NETWORK_NOT_ALLOWED = "network-not-allowed";

/** Resolves symlinks of the longest existing prefix of `path` and appends the rest. */
export function realPathOf(path: string): string {
  const abs = resolve(path);
  let existing = abs;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = dirname(existing);
    if (parent === existing) break;
    rest.unshift(basename(existing));
    existing = parent;
  }
  let real: string;
  try {
    real = realpathSync(existing);
  } catch {
    real = existing;
  }
  return rest.length ? join(real, ...rest) : real;
}

/** An IPv4 address (or a run of digits and dots), or an IPv6 one (it has a colon). */
function isIpLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(":");
}

function isInside(path: string, root: string): boolean {
  if (path === root) return true;
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/**
 * Parses one `--allow-network` value into the host pattern it grants.
 * @param text - `*`, `*.example.com`, `example.com`, `127.0.0.1:8080`, `[::1]`, or an origin
 *   `http://127.0.0.1:8080`.
 * @returns `*`, `*.example.com` or a host name, lower-cased (brackets of IPv6 removed).
 * @throws WpCodeboxError `invalid-argument` for an empty value, a URL with a path, or a value
 *   with characters no host has.
 */
export function parseNetworkGrant(text: string): string {
  const value = text.trim().toLowerCase();
  const bad = (why: string): never => {
    throw new WpCodeboxError("invalid-argument", `--allow-network ${JSON.stringify(text)}: ${why}. Give "*" (every host), a host such as example.com or *.example.com, or an origin such as http://127.0.0.1:8080.`, { allowNetwork: text });
  };
  if (value === "*") return "*";
  if (value === "") return bad("is empty");
  let host: string;
  if (value.includes("://")) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return bad("is not a URL");
    }
    if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash || url.username) return bad("names more than an origin (scheme, host, port)");
    host = url.hostname.replace(/^\[|\]$/g, "");
  } else if (value.startsWith("[")) {
    const end = value.indexOf("]");
    host = end > 0 ? value.slice(1, end) : bad("has an unclosed [");
  } else {
    host = value.split(":").length === 2 ? value.slice(0, value.indexOf(":")) : value;
  }
  if (!/^(\*\.)?[a-z0-9._:-]+$/.test(host) || host.startsWith(".") || host.endsWith(".")) return bad("is not a host name");
  if (host.startsWith("*.") && isIpLiteral(host.slice(2))) return bad("puts a wildcard on an IP address; a wildcard covers subdomains of a DNS name only");
  return host;
}

/**
 * Resolves grants for a file: the file's folder and every `--allow-path` with symlinks resolved.
 * @param folder - the folder relative paths in the file resolve against (the file's folder).
 * @param grants - `allowPaths` relative to `cwd`; `allowNetwork` as `parseNetworkGrant` takes.
 * @param cwd - base of relative `allowPaths`; default `process.cwd()`.
 * @throws WpCodeboxError `invalid-argument` for an `--allow-path` that does not exist or an
 *   `--allow-network` value that is no host (see `parseNetworkGrant`).
 */
export function resolveHostAccess(folder: string, grants: HostAccessGrants = {}, cwd: string = process.cwd()): HostAccess {
  const allowPaths = (grants.allowPaths ?? []).map((p) => {
    const abs = resolve(cwd, p);
    if (!existsSync(abs)) throw new WpCodeboxError("invalid-argument", `--allow-path ${p}: ${abs} does not exist. Grant an existing folder or file.`, { allowPath: p });
    return realpathSync(abs);
  });
  return { folder: realPathOf(folder), allowPaths: [...new Set(allowPaths)], allowNetwork: [...new Set((grants.allowNetwork ?? []).map(parseNetworkGrant))] };
}

/**
 * Whether a file may name `path`: inside its folder, or inside a granted path (both compared
 * with symlinks resolved, so a link inside the folder that points out is outside).
 * @returns `{ allowed: true, real, allowedBy? }` (`real` the path with symlinks resolved,
 *   `allowedBy` the grant when outside the folder) or `{ allowed: false, real, message }`, the
 *   message starting `path-not-allowed:` and naming the `--allow-path` that would allow it.
 */
export function checkHostPath(path: string, access: HostAccess): { allowed: true; real: string; allowedBy?: string } | { allowed: false; real: string; message: string } {
  const real = realPathOf(path);
  if (isInside(real, access.folder)) return { allowed: true, real };
  const grant = access.allowPaths.find((root) => isInside(real, root));
  if (grant !== undefined) return { allowed: true, real, allowedBy: grant };
  const via = real === resolve(path) ? "" : ` (${path} leads there through a symlink)`;
  return {
    allowed: false,
    real,
    message: `${PATH_NOT_ALLOWED}: ${real}${via} is outside the file's folder ${access.folder}; a shared file may only name paths inside its own folder. If you trust it, run again with --allow-path ${dirname(real)} (or a folder above it).`,
  };
}

/**
 * Collects host-path checks for one file into issues and widened uses.
 * @returns `check(pointer, path)`: true when allowed (an issue is pushed otherwise), plus the
 *   list of paths a grant let through.
 */
export function hostPathChecker(access: HostAccess, issues: SchemaIssue[]): { check: (pointer: string, path: string) => boolean; widened: HostPathUse[] } {
  const widened: HostPathUse[] = [];
  const check = (pointer: string, path: string): boolean => {
    const result = checkHostPath(path, access);
    if (!result.allowed) {
      issues.push({ path: pointer, message: result.message });
      return false;
    }
    if (result.allowedBy !== undefined && !widened.some((w) => w.pointer === pointer && w.path === result.real)) widened.push({ pointer, path: result.real, allowedBy: result.allowedBy });
    return true;
  };
  return { check, widened };
}

/**
 * The host paths a command invocation names through its args, as the catalog's formats say:
 * every `path` argument (a leading `@` dropped), every `json` argument written `@file`, and with
 * `textFiles` every other argument written `@file` (recipes read those files into the value).
 * @param args - flat `key=value` args.
 * @param keys - per arg, the key it came from (for pointers); default the arg's own key.
 * @returns `[{ index, key, path }]`, `path` absolute (resolved against `baseDir`); empty for an
 *   unknown command (its own error comes from the catalog).
 */
export function commandArgHostPaths(command: string, args: readonly string[], baseDir: string, options: { keys?: readonly string[]; textFiles?: boolean } = {}): { index: number; key: string; path: string }[] {
  let definition;
  try {
    definition = getCommandDefinition(command);
  } catch {
    return [];
  }
  const out: { index: number; key: string; path: string }[] = [];
  args.forEach((raw, index) => {
    const eq = raw.indexOf("=");
    if (eq <= 0) return;
    const name = raw.slice(0, eq);
    const value = raw.slice(eq + 1);
    const spec = definition.args.find((a) => a.name === name);
    if (!spec) return;
    const file = spec.format === "path" ? (value.startsWith("@") ? value.slice(1) : value) : value.startsWith("@") && value.length > 1 && (spec.format === "json" || options.textFiles) ? value.slice(1) : undefined;
    if (file === undefined || file === "") return;
    out.push({ index, key: options.keys?.[index] ?? name, path: resolve(baseDir, file) });
  });
  return out;
}

/**
 * What a file's network rule asks for that the grants do not give.
 * `"deny"` needs nothing; `"allow"` (every host) needs the grant `*`; each `allowHosts` entry needs
 * `*`, the same host, or a `*.domain` grant covering it (`*.a.com` covers `x.a.com` and `*.x.a.com`).
 * @param pointer - JSON pointer of the policy's `network` field, e.g. `/policy/network`.
 * @returns issues whose messages start `network-not-allowed:`; empty when everything is granted.
 */
export function networkAccessIssues(network: NetworkPolicy, access: Pick<HostAccess, "allowNetwork">, pointer: string): SchemaIssue[] {
  const grants = access.allowNetwork;
  if (network === "deny" || grants.includes("*")) return [];
  const granted = grants.length ? `the command line grants ${grants.join(", ")}` : "the command line grants no network";
  if (network === "allow") {
    return [{ path: pointer, message: `${NETWORK_NOT_ALLOWED}: the file's policy allows outbound network to every host, but ${granted}. If you trust it, run again with --allow-network '*', or narrow the policy to {"allowHosts": [...]} and grant those hosts with --allow-network HOST.` }];
  }
  // A wildcard covers subdomains of a DNS name, never an IP address that happens to end alike.
  const covers = (grant: string, host: string) => grant === host || (grant.startsWith("*.") && !isIpLiteral(host.replace(/^\*\./, "")) && host.endsWith(grant.slice(1)) && host.length > grant.length - 1);
  const issues: SchemaIssue[] = [];
  network.allowHosts.forEach((entry, i) => {
    const host = entry.toLowerCase();
    if (grants.some((g) => covers(g, host))) return;
    issues.push({ path: `${pointer}/allowHosts/${i}`, message: `${NETWORK_NOT_ALLOWED}: the file's policy allows outbound network to ${host}, but ${granted}. If you trust it, run again with --allow-network ${host}.` });
  });
  return issues;
}

/**
 * The code a list of file issues is refused with: `path-not-allowed` when any issue is a path the
 * file may not name, else `network-not-allowed` when any is ungranted network, else `fallback`.
 */
export function hostAccessCode<T extends string>(issues: readonly { message: string }[], fallback: T): T | typeof PATH_NOT_ALLOWED | typeof NETWORK_NOT_ALLOWED {
  if (issues.some((i) => i.message.startsWith(`${PATH_NOT_ALLOWED}:`) || i.message.includes(`: ${PATH_NOT_ALLOWED}:`))) return PATH_NOT_ALLOWED;
  if (issues.some((i) => i.message.startsWith(`${NETWORK_NOT_ALLOWED}:`) || i.message.includes(`: ${NETWORK_NOT_ALLOWED}:`))) return NETWORK_NOT_ALLOWED;
  return fallback;
}

/** The parts of an episode script that name host paths or ask for network (loosely typed: checked before or beside its schema). */
interface EpisodeScriptHostFields {
  runtime?: { wordpress?: unknown };
  mounts?: unknown;
  plugins?: unknown;
  themes?: unknown;
  policy?: unknown;
  steps?: unknown;
}

/**
 * Every host path an episode script names (`runtime.wordpress`, `mounts[].source`, `plugins`,
 * `themes`, and each action's path and `@file` args) and its policy's network rule, checked
 * against `access`. Fields with the wrong shape are skipped (schema validation reports them).
 * @returns `{ issues, widened }`: issues start `path-not-allowed:` / `network-not-allowed:`.
 */
export function episodeScriptHostAccess(script: unknown, baseDir: string, access: HostAccess): { issues: SchemaIssue[]; widened: HostPathUse[] } {
  const issues: SchemaIssue[] = [];
  const { check, widened } = hostPathChecker(access, issues);
  if (!script || typeof script !== "object" || Array.isArray(script)) return { issues, widened };
  const s = script as EpisodeScriptHostFields;
  const abs = (p: string) => resolve(baseDir, p);
  const strings = (list: unknown) => (Array.isArray(list) ? list : []).map((v, i) => [v, i] as const).filter((e): e is readonly [string, number] => typeof e[0] === "string" && e[0] !== "");
  if (typeof s.runtime?.wordpress === "string" && s.runtime.wordpress !== "") check("/runtime/wordpress", abs(s.runtime.wordpress));
  (Array.isArray(s.mounts) ? s.mounts : []).forEach((m: unknown, i) => {
    const source = (m as { source?: unknown } | null)?.source;
    if (typeof source === "string" && source !== "") check(`/mounts/${i}/source`, abs(source));
  });
  for (const [p, i] of strings(s.plugins)) check(`/plugins/${i}`, abs(p));
  for (const [t, i] of strings(s.themes)) check(`/themes/${i}`, abs(t));
  (Array.isArray(s.steps) ? s.steps : []).forEach((step: unknown, i) => {
    const action = (step as { action?: { command?: unknown; args?: unknown } } | null)?.action;
    if (!action || typeof action.command !== "string") return;
    let flat: { args: string[]; keys: string[] };
    try {
      flat = flattenCommandArgs(action.command, action.args as string[] | Record<string, unknown> | undefined);
    } catch {
      return; // the plan reports the args' own problem
    }
    for (const { key, path } of commandArgHostPaths(action.command, flat.args, baseDir, { keys: flat.keys })) check(`/steps/${i}/action/args/${jsonPointerToken(key)}`, path);
  });
  const network = (s.policy as { network?: unknown } | null | undefined)?.network;
  if (network === "allow" || network === "deny") issues.push(...networkAccessIssues(network, access, "/policy/network"));
  else if (network && typeof network === "object" && Array.isArray((network as { allowHosts?: unknown }).allowHosts)) {
    const hosts = ((network as { allowHosts: unknown[] }).allowHosts).filter((h): h is string => typeof h === "string");
    issues.push(...networkAccessIssues({ allowHosts: hosts }, access, "/policy/network"));
  }
  return { issues, widened };
}
