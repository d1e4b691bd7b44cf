/**
 * MCP resources of a session: the site URL, the administrator's login link, and the files of the
 * bundles `collect_artifacts` wrote in this session (each bundle's `manifest.json` lists them).
 * URIs: `wp-codebox://site/url`, `wp-codebox://site/login`, and
 * `wp-codebox://bundles/<bundle folder>/<bundle path>` (the folder relative to the session's
 * bundle folder). Only files a bundle's manifest names (and the manifest and metadata themselves)
 * are read, inside the session folder, each capped at `ARTIFACT_READ_CAP_BYTES`.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { ARTIFACT_READ_CAP_BYTES, WpCodeboxError, bundlePathProblem, isTextContentType, quoteValue } from "@wp-codebox/runtime-core";
import type { McpSandbox } from "./mcp-sandbox.js";

export const SITE_URL_RESOURCE = "wp-codebox://site/url";
export const LOGIN_URL_RESOURCE = "wp-codebox://site/login";
const BUNDLES_PREFIX = "wp-codebox://bundles/";

/** One `resources/list` entry. */
export interface McpResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/** One `resources/read` content. */
export type McpResourceContent = { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string };

/** The bundle folders (relative to `sessionDir`, `/`-separated) that hold a manifest, up to 4 levels deep. */
function bundleFolders(sessionDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 4 || found.length >= 1000) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.isFile() && e.name === "manifest.json") && dir !== sessionDir) {
      found.push(relative(sessionDir, dir).split(sep).join("/"));
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(join(dir, e.name), depth + 1);
  };
  if (existsSync(sessionDir)) walk(sessionDir, 0);
  return found.sort();
}

/** The files of one bundle: its manifest's entries plus manifest.json and metadata.json. */
function bundleFiles(bundleDir: string): { path: string; contentType: string; bytes?: number }[] {
  let manifest: { files?: { path?: unknown; contentType?: unknown; bytes?: unknown }[] };
  try {
    manifest = JSON.parse(readFileSync(join(bundleDir, "manifest.json"), "utf8"));
  } catch {
    return [];
  }
  const files = [
    { path: "manifest.json", contentType: "application/json" },
    { path: "metadata.json", contentType: "application/json" },
  ];
  for (const f of manifest.files ?? []) {
    if (typeof f.path === "string" && bundlePathProblem(f.path) === undefined) {
      files.push({ path: f.path, contentType: typeof f.contentType === "string" ? f.contentType : "application/octet-stream", ...(typeof f.bytes === "number" ? { bytes: f.bytes } : {}) });
    }
  }
  return files;
}

/**
 * The resources of the session: the site URL and login link once the sandbox is up (they need the
 * boot), and every file of this session's bundles.
 */
export async function listSessionResources(sandbox: McpSandbox): Promise<McpResource[]> {
  const resources: McpResource[] = [];
  if (sandbox.booted) {
    resources.push({ uri: SITE_URL_RESOURCE, name: "site-url", title: "Site URL", description: "The sandboxed site's URL.", mimeType: "text/plain" });
    if (await sandbox.loginUrl().catch(() => undefined)) {
      resources.push({ uri: LOGIN_URL_RESOURCE, name: "login-link", title: "Login link", description: "Opens the site logged in as the administrator (a secret of this session: do not share it).", mimeType: "text/plain" });
    }
  }
  for (const folder of bundleFolders(sandbox.sessionDir)) {
    for (const file of bundleFiles(resolve(sandbox.sessionDir, folder))) {
      resources.push({ uri: `${BUNDLES_PREFIX}${folder}/${file.path}`, name: `${folder}/${file.path}`, mimeType: file.contentType, ...(file.bytes !== undefined ? { size: file.bytes } : {}) });
    }
  }
  return resources;
}

/**
 * Reads one resource of the session.
 * @throws WpCodeboxError `artifact-not-found` (not a resource of this session),
 *   `artifact-too-large` (a bundle file over `ARTIFACT_READ_CAP_BYTES`).
 */
export async function readSessionResource(sandbox: McpSandbox, uri: string): Promise<McpResourceContent> {
  if (uri === SITE_URL_RESOURCE) return { uri, mimeType: "text/plain", text: (await sandbox.info()).siteUrl };
  if (uri === LOGIN_URL_RESOURCE) {
    const link = await sandbox.loginUrl();
    if (link) return { uri, mimeType: "text/plain", text: link };
  }
  const notFound = (): never => {
    throw new WpCodeboxError("artifact-not-found", `No resource ${quoteValue(uri)} in this session. List them with resources/list.`, { uri });
  };
  if (!uri.startsWith(BUNDLES_PREFIX)) notFound();
  const rest = uri.slice(BUNDLES_PREFIX.length);
  const folder = bundleFolders(sandbox.sessionDir).find((f) => rest.startsWith(`${f}/`));
  if (folder === undefined) return notFound();
  const bundleDir = resolve(sandbox.sessionDir, folder);
  const entry = bundleFiles(bundleDir).find((f) => f.path === rest.slice(folder.length + 1));
  if (!entry) return notFound();
  const file = resolve(bundleDir, entry.path);
  // The bundle's own files only: a link that leads out of the session folder is not followed.
  const real = existsSync(file) ? realpathSync(file) : notFound();
  if (relative(realpathSync(sandbox.sessionDir), real).startsWith("..")) notFound();
  const bytes = statSync(real).size;
  if (bytes > ARTIFACT_READ_CAP_BYTES) {
    throw new WpCodeboxError("artifact-too-large", `${uri} is ${bytes} bytes, over the ${ARTIFACT_READ_CAP_BYTES}-byte read limit; read it from ${file}.`, { uri, bytes, maxBytes: ARTIFACT_READ_CAP_BYTES });
  }
  const content = readFileSync(real);
  return isTextContentType(entry.contentType) ? { uri, mimeType: entry.contentType, text: content.toString("utf8") } : { uri, mimeType: entry.contentType, blob: content.toString("base64") };
}
