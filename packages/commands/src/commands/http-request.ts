/**
 * `wordpress.http-request`: an HTTP request served inside the sandbox (no host network).
 * Requests to other origins need the policy's network rule to allow the host; even then they
 * are refused here because the sandbox has no outbound transport of its own.
 */
import { WpCodeboxError, PolicyDeniedError, isHostAllowed, readJsonArg } from "@wp-codebox/runtime-core";
import { parseJsonMaybe, text, type CommandHandler } from "./command-context.js";
import { phpFatalError } from "./run-php.js";

/** Maps an HTTP status to a result: ≥ 400 is an error unless `expect-status` says otherwise. */
export function httpStatusOutcome(status: number, expected: string | undefined): { ok: boolean; message?: string } {
  if (expected !== undefined) {
    const want = Number(expected);
    if (!Number.isInteger(want)) throw new WpCodeboxError("invalid-argument", `expect-status must be an HTTP status code such as 200, got "${expected}".`);
    return status === want ? { ok: true } : { ok: false, message: `expected HTTP ${want}, got ${status}` };
  }
  return status < 400 ? { ok: true } : { ok: false, message: `HTTP ${status}` };
}

export const httpRequest: CommandHandler = async (ctx, args) => {
  const method = (args.method ?? "GET").toUpperCase();
  if (args.path === undefined && args.url === undefined) {
    throw new WpCodeboxError("missing-argument", "wordpress.http-request needs path=/some/path or url=http://…; add one.");
  }
  const origin = new URL(ctx.siteUrl);
  const target = args.url !== undefined ? new URL(args.url) : new URL(args.path!.startsWith("/") ? args.path! : `/${args.path}`, origin);
  if (target.origin !== origin.origin) {
    if (!isHostAllowed(ctx.policy, target.hostname)) throw new PolicyDeniedError(`network:${target.hostname}`, `The runtime policy does not allow network access to ${target.hostname}. Use a sandbox path (path=/…) or allow the host in the policy's network rule.`);
    throw new WpCodeboxError("invalid-argument", `wordpress.http-request only reaches the sandbox (${origin.origin}); ${target.origin} is outside it.`);
  }
  const headers: Record<string, string> = {};
  if (args["headers-json"] !== undefined) {
    const parsed = readJsonArg(args["headers-json"], ctx.cwd);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new WpCodeboxError("invalid-json-arg", "headers-json must be a JSON object of header names to string values.");
    for (const [k, v] of Object.entries(parsed)) headers[k.toLowerCase()] = String(v);
  }
  let body: Uint8Array | undefined;
  if (args["body-json"] !== undefined) {
    body = new TextEncoder().encode(JSON.stringify(readJsonArg(args["body-json"], ctx.cwd)));
    headers["content-type"] ??= "application/json";
  } else if (args.body !== undefined) {
    body = new TextEncoder().encode(args.body);
    headers["content-type"] ??= "application/x-www-form-urlencoded";
  }
  const actor = await ctx.resolveActor(args.as);
  if (actor.userId > 0) {
    const auth = await ctx.authFor(actor);
    const cookie = auth.cookies.map((c) => `${c.name}=${c.value}`).join("; ");
    headers.cookie = headers.cookie ? `${headers.cookie}; ${cookie}` : cookie;
    headers["x-wp-nonce"] ??= auth.restNonce;
  }
  const started = Date.now();
  // A request to the site: the site request limit applies, as to one from a browser.
  const response = await ctx.http({ method, url: target.toString(), headers, body }, { siteRequestLimit: true });
  const bodyText = text(response.body.data);
  const parsed = response.body.truncated ? undefined : parseJsonMaybe(bodyText);
  const verdict = httpStatusOutcome(response.status, args["expect-status"]);
  const flatHeaders = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, v.join(", ")]));
  // A request that died of a PHP fatal error failed, whatever status reached the client.
  const failed = response.fatal ? phpFatalError(response.fatal, { status: response.status, url: `${target.pathname}${target.search}` }) : undefined;
  const ok = verdict.ok && !failed;
  return {
    status: ok ? "ok" : "error",
    exitCode: ok ? 0 : 1,
    stdout: bodyText,
    stderr: "",
    stdoutBytes: response.body.bytes,
    stderrBytes: 0,
    truncated: { stdout: response.body.truncated, stderr: false },
    json: { status: response.status, headers: flatHeaders, body: parsed ?? null, bodyBytes: response.body.bytes, timingMs: Date.now() - started },
    ...(failed ? { error: failed } : verdict.ok ? {} : { error: { code: "http-error", message: `${method} ${target.pathname}${target.search}: ${verdict.message}.`, data: { status: response.status } } }),
  };
};
