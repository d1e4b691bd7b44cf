/**
 * Routes every request of a browser context: the sandbox origin passes, other hosts are aborted
 * unless allowed, and every request is recorded.
 */
import type { BrowserContext, Request, Route } from "playwright-core";
import { PHP_FATAL_HEADER, type BrowserNetworkEntry, type BrowserPhpFatal } from "./browser-script-outcome.js";
import { BLOCKED_HEADER } from "./egress-proxy.js";

/** Hosts besides the sandbox origin pages may reach: `"all"`, or names (`example.com`, `cdn.example.com:8443`, `*.example.com`). */
export type BrowserAllowedHosts = "all" | readonly string[];

/**
 * Whether `url` may be requested. The sandbox origin (scheme + host + port of `baseUrl`) always
 * may; non-HTTP(S) URLs (data:, blob:) never leave the browser and pass. Other hosts must match an
 * entry of `allowedHosts` by hostname, by `host:port`, or by a `*.` suffix wildcard.
 */
export function isRequestAllowed(url: string, sandboxOrigin: string, allowedHosts: BrowserAllowedHosts): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:" && parsed.protocol !== "ws:" && parsed.protocol !== "wss:") return true;
  if (parsed.origin === sandboxOrigin) return true;
  if (allowedHosts === "all") return true;
  const hostname = parsed.hostname.toLowerCase();
  const host = parsed.host.toLowerCase();
  return allowedHosts.some((entry) => {
    const e = entry.trim().toLowerCase();
    if (e.startsWith("*.")) return hostname.endsWith(e.slice(1));
    return e === hostname || e === host;
  });
}

/** What {@link installNetworkGuard} hands back: the live log, and the step index setter used for entries. */
export interface NetworkGuard {
  /** Every request in start order; entries are updated in place as responses arrive. */
  readonly entries: BrowserNetworkEntry[];
  /** Waits until every finished request's response has been read into its entry. */
  flush(): Promise<void>;
  /** Removes the route and listeners. */
  uninstall(): Promise<void>;
}

/**
 * Installs the guard on `context`. Must run before the first page is opened.
 * Redirect hops are not seen by Playwright routes, so the context must also use the run's
 * {@link startEgressProxy} proxy; a hop it refuses is recorded here as `blocked` too.
 * @param currentStep returns the index of the step running now (recorded on each entry).
 */
export async function installNetworkGuard(
  context: BrowserContext,
  sandboxOrigin: string,
  allowedHosts: BrowserAllowedHosts,
  currentStep: () => number,
): Promise<NetworkGuard> {
  const entries: BrowserNetworkEntry[] = [];
  const byRequest = new Map<Request, BrowserNetworkEntry>();

  const record = (request: Request): BrowserNetworkEntry => {
    let entry = byRequest.get(request);
    if (!entry) {
      entry = { url: request.url(), method: request.method(), resourceType: request.resourceType(), status: null, stepIndex: currentStep() };
      byRequest.set(request, entry);
      entries.push(entry);
    }
    return entry;
  };

  const handler = async (route: Route, request: Request): Promise<void> => {
    const entry = record(request);
    if (!isRequestAllowed(request.url(), sandboxOrigin, allowedHosts)) {
      entry.status = "blocked";
      await route.abort("blockedbyclient").catch(() => undefined);
      return;
    }
    await route.continue().catch(() => undefined);
  };
  const onRequest = (request: Request) => void record(request);
  const pending = new Set<Promise<void>>();
  const onFinished = (request: Request) => {
    const entry = record(request);
    const reading = request
      .response()
      .then((response) => {
        if (entry.status === "blocked") return;
        const headers = response?.headers() ?? {};
        entry.status = headers[BLOCKED_HEADER] ? "blocked" : (response?.status() ?? entry.status);
        const fatal = headers[PHP_FATAL_HEADER];
        if (fatal) {
          try {
            const parsed = JSON.parse(Buffer.from(fatal, "base64").toString("utf8")) as { message: string; file: string; line: number };
            entry.phpFatal = { message: parsed.message, file: parsed.file, line: parsed.line };
          } catch {
            entry.phpFatal = { message: "PHP fatal error (details unreadable)", file: "", line: 0 };
          }
        }
      })
      .catch(() => undefined)
      .finally(() => pending.delete(reading));
    pending.add(reading);
  };
  const onFailed = (request: Request) => {
    const entry = record(request);
    if (entry.status === "blocked") return;
    if (!isRequestAllowed(request.url(), sandboxOrigin, allowedHosts)) {
      entry.status = "blocked"; // refused by the egress proxy (a redirect hop or a tunnel)
      return;
    }
    entry.status = "failed";
    const failure = request.failure()?.errorText;
    if (failure) entry.failure = failure;
  };

  await context.route("**/*", handler);
  context.on("request", onRequest);
  context.on("requestfinished", onFinished);
  context.on("requestfailed", onFailed);
  return {
    entries,
    async flush() {
      while (pending.size) await Promise.all([...pending]);
    },
    async uninstall() {
      context.off("request", onRequest);
      context.off("requestfinished", onFinished);
      context.off("requestfailed", onFailed);
      await context.unroute("**/*", handler).catch(() => undefined);
    },
  };
}

/** The PHP fatal errors of the requests step `index` made, from the log. */
export function stepPhpFatals(entries: readonly BrowserNetworkEntry[], index: number): BrowserPhpFatal[] {
  return entries
    .filter((e) => e.stepIndex === index && e.phpFatal)
    .map((e) => ({ url: e.url, status: typeof e.status === "number" ? e.status : null, ...e.phpFatal! }));
}

/** The message of a step that failed because a page load died of a PHP fatal error. */
export function phpFatalStepMessage(kind: string, index: number, fatals: readonly BrowserPhpFatal[]): string {
  const f = fatals[0]!;
  const more = fatals.length > 1 ? ` (and ${fatals.length - 1} more)` : "";
  return `${kind} step ${index}: PHP fatal error while serving ${new URL(f.url).pathname}${f.status !== null ? ` (HTTP ${f.status})` : ""}: ${f.message.split("\n")[0]}${f.file ? ` (${f.file}:${f.line})` : ""}${more}`;
}
