/**
 * The web server of a native sandbox, behind the loopback front (`startSandboxHttpServer`): it
 * maps a request's path into the sandbox's file tree (WordPress at `/`, wp-content, the mounts),
 * serves static files itself and sends PHP to php-cgi over FastCGI, the way a web server with
 * WordPress's rewrite rules would: a `.php` file runs (with PATH_INFO after it), a folder runs its
 * `index.php` (a folder path without its slash is redirected to it), an existing file is sent as
 * it is, anything else runs WordPress's `/index.php`, which routes pretty permalinks and 404s.
 *
 * Containment: a path with a dot segment or a dotfile (`..`, `.htaccess`, `.git`), a NUL, or
 * naming `wp-config.php` is refused (403/404) before any file is looked at, and so is a file of PHP
 * code under another extension (`.phtml`, `.inc`…); a file is served or run only when its real
 * path, symlinks resolved, lies inside the folder its bind maps from.
 */
import { realpathSync, statSync } from "node:fs";
import { readSandboxFile } from "./sandbox-files.js";
import { extname, join, posix } from "node:path";
import type { ResolvedMount } from "@wp-codebox/runtime-core";
import type { FastCgiResponse } from "./fastcgi-client.js";
import { SANDBOX_PATHS } from "./native-site.js";

/** A request to the site, as the loopback front and `NativeRuntime.http` pass it. */
export interface SiteRequest {
  method: string;
  /** Absolute URL (any origin: only its path and query are used). */
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** The fatal error a page died of (from PHP's log on FastCGI's STDERR). */
export interface PageFatal {
  type: number;
  message: string;
  file: string;
  line: number;
}

/** An answer of the site: the shape Playground's loopback answers have. */
export interface SiteResponse {
  status: number;
  /** Lower-case names, each with its values (several `set-cookie` stay several). */
  headers: Record<string, string[]>;
  /** The body: at most the cap's bytes, `bytes` counted in full. */
  body: { data: Uint8Array; bytes: number; truncated: boolean };
  /** PHP's error log for the request (FastCGI STDERR); empty for a static file. */
  stderr: string;
  fatal?: PageFatal;
  /** How it was answered: a static file, PHP, or refused by the front. */
  servedBy: "static" | "php" | "front";
}

/** What the router decided for a path. */
export type Route =
  | { kind: "refuse"; status: 400 | 403 | 404 }
  | { kind: "redirect"; location: string }
  | { kind: "static"; hostPath: string; root: string; relative: string }
  | { kind: "php"; scriptName: string; pathInfo: string };

/** Content types of the static files WordPress sites serve. */
const CONTENT_TYPES: Record<string, string> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".xml": "application/xml",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".avif": "image/avif",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".eot": "application/vnd.ms-fontobject",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".mp3": "audio/mpeg",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".wasm": "application/wasm",
};

/** Names of PHP code other than `.php` (`.phtml`, `.php7`, `.phar`, `.inc`): never served as files. */
const SOURCE_LIKE = /\.(phtml|php\d|phps|phar|inc)$/i;

/** One folder of the URL space: a sandbox path prefix and the host folder (or file) behind it. */
interface UrlBind {
  target: string;
  source: string;
}

/**
 * Maps sandbox paths under /wordpress to host paths: the mounts, wp-content, the WordPress tree
 * (longest target first).
 */
export class SiteFiles {
  private readonly binds: UrlBind[];
  constructor(treeDir: string, contentDir: string, mounts: readonly ResolvedMount[]) {
    this.binds = [
      ...mounts.filter((m) => m.target === SANDBOX_PATHS.wordpress || m.target.startsWith(`${SANDBOX_PATHS.wordpress}/`)).map((m) => ({ target: m.target, source: m.source })),
      { target: SANDBOX_PATHS.content, source: contentDir },
      { target: SANDBOX_PATHS.wordpress, source: treeDir },
    ].sort((a, b) => b.target.length - a.target.length);
  }

  /**
   * The host path of a sandbox path and what it is, or undefined when it does not exist or its real
   * path (symlinks resolved) leaves the folder its bind maps from.
   */
  lookup(sandboxPath: string): { hostPath: string; root: string; relative: string; kind: "file" | "dir" } | undefined {
    const bind = this.binds.find((b) => sandboxPath === b.target || sandboxPath.startsWith(`${b.target}/`));
    if (!bind) return undefined;
    const hostPath = join(bind.source, sandboxPath.slice(bind.target.length));
    let real: string;
    let root: string;
    try {
      real = realpathSync(hostPath);
      root = realpathSync(bind.source);
    } catch {
      return undefined;
    }
    if (real !== root && !real.startsWith(`${root}/`)) return undefined;
    const stat = statSync(real, { throwIfNoEntry: false });
    if (!stat) return undefined;
    const relative = real === root ? "" : real.slice(root.length + 1);
    if (stat.isDirectory()) return { hostPath: real, root, relative, kind: "dir" };
    return stat.isFile() ? { hostPath: real, root, relative, kind: "file" } : undefined;
  }

  /** True when the sandbox path exists as a folder bind target (a mount point). */
  isMountPoint(sandboxPath: string): boolean {
    return this.binds.some((b) => b.target === sandboxPath);
  }
}

/**
 * Decides what serves a request path (the raw, still percent-encoded path of the URL).
 * @param rawPath - starts with "/".
 */
export function routeRequest(files: SiteFiles, rawPath: string, query: string): Route {
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return { kind: "refuse", status: 400 };
  }
  if (!path.startsWith("/") || path.includes("\0") || path.includes("\\")) return { kind: "refuse", status: 400 };
  const segments = path.split("/").slice(1);
  // Dot segments (`..` once decoded) and dotfiles (.htaccess, .git, .env) are never served.
  if (segments.some((s) => s.startsWith("."))) return { kind: "refuse", status: 403 };
  if (segments.some((s) => s.toLowerCase() === "wp-config.php")) return { kind: "refuse", status: 404 };
  const sandbox = (p: string) => posix.join(SANDBOX_PATHS.wordpress, p);
  // A .php script (any letter case: never sent as source), maybe with PATH_INFO after it
  // (/index.php/2024/hello/): the first segment ending in .php that is a file.
  for (let i = 0; i < segments.length; i++) {
    if (!/\.php$/i.test(segments[i]!)) continue;
    const scriptName = `/${segments.slice(0, i + 1).join("/")}`;
    if (files.lookup(sandbox(scriptName))?.kind === "file") {
      const rest = segments.slice(i + 1);
      return { kind: "php", scriptName, pathInfo: rest.length ? `/${rest.join("/")}` : "" };
    }
    // A .php path naming no script is WordPress's (its 404 page), as with its rewrite rules.
    if (i === segments.length - 1) return { kind: "php", scriptName: "/index.php", pathInfo: "" };
  }
  // Other files PHP may read as code are not served as text either.
  if (SOURCE_LIKE.test(path)) return { kind: "refuse", status: 403 };
  const found = files.lookup(sandbox(path));
  if (found?.kind === "dir") {
    if (!path.endsWith("/")) return { kind: "redirect", location: `${rawPath}/${query ? `?${query}` : ""}` };
    const index = files.lookup(sandbox(`${path}index.php`));
    if (index?.kind === "file") return { kind: "php", scriptName: `${path}index.php`, pathInfo: "" };
    // The site's root folder always runs WordPress; another folder without an index is not listed.
    return path === "/" ? { kind: "php", scriptName: "/index.php", pathInfo: "" } : { kind: "refuse", status: 403 };
  }
  if (found?.kind === "file") return { kind: "static", hostPath: found.hostPath, root: found.root, relative: found.relative };
  return { kind: "php", scriptName: "/index.php", pathInfo: "" };
}

/**
 * The CGI parameters of a PHP request: the script, the URI as sent, the site's host (`siteOrigin`'s,
 * whatever Host the client sent), HTTPS off, the client at 127.0.0.1, and every request header as
 * `HTTP_*` (names with characters other than letters, digits and `-` are dropped, and so is
 * `Proxy`, so no header can pose as another parameter).
 */
export function cgiParams(request: { method: string; rawPath: string; query: string; headers: Record<string, string>; bodyBytes: number }, route: { scriptName: string; pathInfo: string }, siteOrigin: string): Record<string, string> {
  const site = new URL(siteOrigin);
  const port = site.port || (site.protocol === "https:" ? "443" : "80");
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!/^[A-Za-z0-9-]+$/.test(name)) continue;
    const key = name.toUpperCase().replace(/-/g, "_");
    if (key === "HOST" || key === "PROXY" || key === "CONTENT_TYPE" || key === "CONTENT_LENGTH") continue;
    params[`HTTP_${key}`] = value;
  }
  Object.assign(params, {
    GATEWAY_INTERFACE: "CGI/1.1",
    SERVER_SOFTWARE: "wp-codebox",
    SERVER_PROTOCOL: "HTTP/1.1",
    REQUEST_METHOD: request.method,
    REQUEST_URI: `${request.rawPath}${request.query ? `?${request.query}` : ""}`,
    DOCUMENT_URI: route.scriptName,
    QUERY_STRING: request.query,
    DOCUMENT_ROOT: SANDBOX_PATHS.wordpress,
    SCRIPT_NAME: route.scriptName,
    SCRIPT_FILENAME: posix.join(SANDBOX_PATHS.wordpress, route.scriptName),
    PHP_SELF: `${route.scriptName}${route.pathInfo}`,
    HTTP_HOST: site.host,
    SERVER_NAME: site.hostname,
    SERVER_PORT: port,
    SERVER_ADDR: "127.0.0.1",
    REMOTE_ADDR: "127.0.0.1",
    REMOTE_PORT: "0",
    HTTPS: "off",
    REDIRECT_STATUS: "200",
    CONTENT_LENGTH: String(request.bodyBytes),
  });
  if (route.pathInfo) params.PATH_INFO = route.pathInfo;
  if (request.headers["content-type"] !== undefined) params.CONTENT_TYPE = request.headers["content-type"];
  return params;
}

/** A fatal or parse error in PHP's log lines (`PHP Fatal error:  … in /file:line` or `… on line N`). */
export function fatalFromLog(log: string): PageFatal | undefined {
  const m = /PHP (Fatal|Parse) error: +([\s\S]*?) in (\/[^\n]*?)(?: on line |:)(\d+)/.exec(log);
  if (!m) return undefined;
  const message = m[1] === "Parse" ? `syntax error: ${m[2]!.replace(/^syntax error, /, "")}` : m[2]!;
  return { type: m[1] === "Parse" ? 4 : 1, message: message.trim(), file: m[3]!, line: Number(m[4]) };
}

/**
 * A static file as an answer (body cut at `capBytes` bytes; HEAD gets none), or a 404 when it is no
 * longer a regular file. PHP can swap the file (or a folder on its way) for a link or a FIFO
 * between the router's check and this read, so the file is opened again below its bind's root
 * without following links and only a regular file is read.
 * @param file - `root` (the bind's host folder, links resolved) and `relative` (below it) from the router.
 */
export function staticResponse(file: { root: string; relative: string }, method: string, capBytes: number): SiteResponse {
  const read = file.relative === "" ? undefined : readSandboxFile(file.root, file.relative, method === "HEAD" ? 0 : capBytes);
  if (!read) return frontResponse(404, "wp-codebox: not found\n");
  const type = CONTENT_TYPES[extname(file.relative).toLowerCase()] ?? "application/octet-stream";
  const headers = { "content-type": [type], "content-length": [String(read.size)], "x-content-type-options": ["nosniff"] };
  if (method === "HEAD") return { status: 200, headers, body: { data: new Uint8Array(0), bytes: 0, truncated: false }, stderr: "", servedBy: "static" };
  return { status: 200, headers, body: { data: read.data, bytes: read.size, truncated: read.truncated }, stderr: "", servedBy: "static" };
}

/** A FastCGI answer as a site answer, with the fatal error its log names, if any. */
export function phpResponse(response: FastCgiResponse): SiteResponse {
  const fatal = fatalFromLog(response.stderr);
  return {
    status: response.status,
    headers: response.headers,
    body: { data: response.body, bytes: response.bodyBytes, truncated: response.truncated },
    stderr: response.stderr,
    ...(fatal ? { fatal } : {}),
    servedBy: "php",
  };
}

/** A short text answer from the front itself. */
export function frontResponse(status: number, text: string, headers: Record<string, string[]> = {}): SiteResponse {
  const data = new TextEncoder().encode(text);
  return { status, headers: { "content-type": ["text/plain; charset=utf-8"], "cache-control": ["no-store"], ...headers }, body: { data, bytes: data.length, truncated: false }, stderr: "", servedBy: "front" };
}
