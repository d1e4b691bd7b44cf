/**
 * The documentation is derived from the code or checked against it: the pages under
 * docs/reference/ are what `npm run docs` renders now (so docs/reference/api.md, each package's
 * export list, makes every API change a visible diff), the error reference lists exactly the codes
 * of the one registry (both directions), every code the source raises is registered, and every
 * relative link of README.md and docs/ leads to a file (and heading) that exists.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ERROR_CODES } from "@wp-codebox/runtime-core";
import { renderReferences } from "../scripts/docs-reference.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

function* files(dir: string, suffix: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!["node_modules", "dist", "fixtures"].includes(name)) yield* files(path, suffix);
    } else if (name.endsWith(suffix)) yield path;
  }
}

test("the generated reference pages are current (run npm run docs when this fails)", () => {
  const stale = Object.entries(renderReferences()).filter(([path, text]) => !existsSync(join(root, path)) || read(path) !== text).map(([path]) => path);
  assert.deepEqual(stale, []);
});

test("the error reference lists every registered code in its category, and only those", () => {
  const page = read("docs/reference/errors.md");
  const documented = new Map<string, string>();
  let category = "";
  for (const line of page.split("\n")) {
    const heading = /^## (\w+) \(exit \d+\)$/.exec(line);
    if (heading) category = heading[1]!;
    const row = /^\| `([a-z0-9-]+)` \|/.exec(line);
    if (row && category) documented.set(row[1]!, category);
  }
  const registered = new Map<string, string>(Object.entries(ERROR_CODES));
  assert.deepEqual([...registered].filter(([code, c]) => documented.get(code) !== c), [], "registered codes missing from the page or under another category");
  assert.deepEqual([...documented.keys()].filter((code) => !registered.has(code)), [], "documented codes that are not registered");
});

test("every error code a source file raises is in the registry", () => {
  // Three ways code names a failure: a thrown WpCodeboxError or CliExitError, and an error object's `code:`.
  const patterns = [/new (?:WpCodeboxError|CliExitError|PolicyDeniedError)\(\s*"([a-z0-9-]+)"/g, /\bcode: "([a-z][a-z0-9-]*)"/g];
  const unregistered: string[] = [];
  const sources = [...files(join(root, "packages"), ".ts")].filter((f) => f.includes(`${"/src/"}`) && !f.endsWith(".d.ts"));
  assert.ok(sources.length > 50, "found the package sources");
  for (const file of sources) {
    const text = readFileSync(file, "utf8");
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) if (!Object.hasOwn(ERROR_CODES, m[1]!)) unregistered.push(`${relative(root, file)}: ${m[1]}`);
    }
  }
  assert.deepEqual(unregistered, []);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fence = !fence;
    const m = !fence && /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

test("every relative link in README.md and docs/ resolves, headings included", () => {
  const pages = ["README.md", ...[...files(join(root, "docs"), ".md")].map((f) => relative(root, f))];
  assert.ok(pages.length > 10, "found the docs pages");
  const broken: string[] = [];
  let links = 0;
  for (const page of pages) {
    const text = read(page).replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      links += 1;
      const [path, fragment] = target.split("#") as [string, string | undefined];
      const file = path ? join(root, dirname(page), path) : join(root, page);
      if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
      else if (fragment && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(fragment)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  assert.ok(links > 30, `checked ${links} links`);
  assert.deepEqual(broken, []);
});

test("README is a front page: at most 200 lines, its first commands set up, run the main job and run the tests", () => {
  const readme = read("README.md");
  assert.ok(readme.split("\n").length <= 200, `README.md has ${readme.split("\n").length} lines`);
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  assert.match(firstBlock, /npm install && npx wp-codebox run --command wordpress\.run-php/);
  assert.match(firstBlock, /^npm test$/m);
});
