#!/usr/bin/env node
// Enforces the one-way layering: cli → runtime-playground | runtime-native → commands → runtime-core.
// runtime-core must not import Playground, php-wasm, Playwright or the other packages; commands (the
// catalog commands written once against CommandContext) may use Playwright but no backend.
// Inside runtime-core, commands and runtime-playground, each folder of src/ declares which sibling folders
// it may import (FOLDER_RULES below, one list per folder like Playwright's DEPS.list); the
// declared graph must be one-way, and a declaration nothing uses any more is reported as stale.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Per-folder import rules: for each package's src/, folder name → the sibling folders its files may
 * import through relative paths. "." is the files directly in src/ (the package entry, src/index.ts,
 * may import every folder and is not checked). A folder always may import itself.
 */
export const FOLDER_RULES = {
  "packages/runtime-core/src": {
    // Contracts and pure helpers every folder builds on: errors, runtime types, digests, policy, mounts.
    ".": [],
    "batch": ["."],
    "plugin-check": [],
    // Bundle layout, writer and verifier, the report page rendered into a bundle, runtime snapshots.
    "artifact-bundle": [".", "batch"],
    "episode": [".", "artifact-bundle"],
    "secrets": [".", "artifact-bundle", "episode"],
    "recipe": [".", "secrets"],
    // Planning and running a session (command, recipe, episode script): the top of runtime-core.
    "session": [".", "artifact-bundle", "episode", "recipe", "secrets"],
  },
  "packages/commands/src": {
    // The PHP value encoder, the asset reader, the missing-extension hint.
    "php-source": [],
    // The Playwright executor of browser steps (no sandbox: it is handed an origin and cookies).
    "browser": [],
    "commands": ["browser", "php-source"],
    "state-export": ["commands", "php-source"],
    // The observations (runtime facts, results, state, HTTP, abilities) of every backend.
    "observations": ["commands", "state-export"],
  },
  "packages/runtime-playground/src": {
    "php-source": [],
    "fs": [],
    "site": [],
    "worker": ["fs", "php-source", "site"],
    // wp-cli: Playground's own (php-wasm cannot start processes); the shared handlers are in @wp-codebox/commands.
    "commands": ["php-source", "site"],
    "evidence": ["worker"],
    "sandbox": ["commands", "evidence", "php-source", "site", "worker"],
    // playground-backend.ts: the backend object, built on the sandbox and the site builds.
    ".": ["sandbox", "site", "worker"],
  },
};

const rules = [
  { dir: "packages/runtime-core/src", forbidden: [/^@wp-playground\//, /^@php-wasm\//, /^playwright/, /^@wp-codebox\/(commands|runtime-playground|runtime-native|live|mcp|cli|batch)$/] },
  // The shared command handlers run on any backend through CommandContext: no backend, no php-wasm.
  { dir: "packages/commands/src", forbidden: [/^@wp-playground\//, /^@php-wasm\//, /^@wp-codebox\/(runtime-playground|runtime-native|live|mcp|cli|batch)$/] },
  { dir: "packages/runtime-playground/src", forbidden: [/^@wp-codebox\/(runtime-native|live|mcp|cli|batch)$/] },
  // The native backend (Debian PHP, MariaDB, bubblewrap) stands beside Playground: it never imports it.
  { dir: "packages/runtime-native/src", forbidden: [/^@wp-playground\//, /^@php-wasm\//, /^playwright/, /^@wp-codebox\/(runtime-playground|live|mcp|cli|batch)$/] },
  // The live helper (serve, pool, attach client) drives any backend through runtime-core's Runtime.
  { dir: "packages/live/src", forbidden: [/^@wp-codebox\/(runtime-playground|cli)$/, /^@wp-playground\//, /^@php-wasm\//, /^playwright/] },
  // The MCP server drives any Runtime: the CLI hands it the backend (local or attached).
  { dir: "packages/mcp/src", forbidden: [/^@wp-playground\//, /^@php-wasm\//, /^playwright/, /^@wp-codebox\/(runtime-playground|live|cli)$/] },
  // batch sits between the backend and the CLI: it may use runtime-core and runtime-playground.
  { dir: "packages/batch/src", forbidden: [/^@wp-codebox\/cli$/, /^@wp-playground\//, /^@php-wasm\//, /^playwright/] },
];
/**
 * Modules a package may load only through a dynamic `import()`, because loading them costs every
 * command that never uses them: the CLI starts no batch without the batch package's index, which
 * brings BullMQ and ioredis (~0.35 s of a run's start on a 2-core machine); the command catalog
 * (loaded by every run) reads a PHPUnit configuration's XML and compares screenshots only in the
 * commands that do (their XML parser and PNG codec, ~25 ms of every start).
 */
export const STATIC_IMPORT_RULES = [
  { dir: "packages/cli/src", forbidden: [/^@wp-codebox\/batch$/, /^bullmq$/, /^ioredis$/] },
  { dir: "packages/commands/src", forbidden: [/\/phpunit-config\.js$/, /\/compare-screenshots\.js$/, /^fast-xml-parser$/, /^pngjs$/, /^pixelmatch$/], except: [/phpunit-config\.ts$/, /compare-screenshots\.ts$/] },
];
const importRe = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
// Type-only imports are erased by the compiler: they load nothing.
const staticImportRe = /(?:import|export)\s(?!type\s)[^'"]*?from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm;

/**
 * The static imports of the files under `dir` that a pattern of `forbidden` matches, as problem lines.
 * @param dir - absolute path of a src/ folder.
 */
export function checkStaticImports(dir, forbidden, except = []) {
  const problems = [];
  for (const file of files(dir)) {
    if (except.some((re) => re.test(file))) continue;
    for (const m of readFileSync(file, "utf8").matchAll(staticImportRe)) {
      const spec = m[1] ?? m[2];
      if (forbidden.some((re) => re.test(spec))) problems.push(`static import: ${relative(process.cwd(), file)} imports ${spec}; load it with import() where it is used`);
    }
  }
  return problems;
}

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) yield path;
  }
}

const specifiers = (source) => [...source.matchAll(importRe)].map((m) => m[1] ?? m[2]);
const folderOf = (rel) => (rel.includes(sep) ? rel.split(sep)[0] : ".");

/**
 * Checks one src/ tree against its folder rules. Returns problem lines (empty when it obeys):
 * a cross-folder relative import the importer's rule does not allow, a folder without a rule,
 * a rule for a folder that does not exist, an allowed dependency no file uses (stale), and a
 * cycle in the declared graph.
 * @param srcDir - absolute path of the package's src/ folder.
 * @param rules - folder name → allowed sibling folders, as in FOLDER_RULES.
 */
export function checkFolderRules(srcDir, rules) {
  const problems = [];
  // Folders holding source files (an empty folder left behind by a move is not one).
  const folders = new Set([...files(srcDir)].map((f) => relative(srcDir, f)).filter((rel) => rel !== "index.ts").map(folderOf));
  const used = new Map([...folders].map((f) => [f, new Set()]));
  for (const file of files(srcDir)) {
    const rel = relative(srcDir, file);
    if (rel === "index.ts") continue;
    const from = folderOf(rel);
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) continue;
      const target = relative(srcDir, resolve(dirname(file), spec));
      if (target.startsWith("..")) continue;
      const to = folderOf(target);
      if (to === from) continue;
      used.get(from)?.add(to);
      if (rules[from] && !rules[from].includes(to)) problems.push(`folder violation: ${relative(process.cwd(), file)} imports ${spec} (${from}/ may import: ${rules[from].join(", ") || "no sibling folder"})`);
    }
  }
  for (const folder of folders) if (!rules[folder]) problems.push(`no folder rule: ${srcDir} has ${folder}/ but the rules do not declare it`);
  for (const [folder, allowed] of Object.entries(rules)) {
    if (!folders.has(folder)) {
      problems.push(`stale folder rule: ${folder}/ no longer exists in ${srcDir}`);
      continue;
    }
    for (const dep of allowed) if (!used.get(folder).has(dep)) problems.push(`stale folder rule: ${folder}/ may import ${dep}/ but no file there does`);
  }
  // The declared graph reads one way: depth-first search for a back edge.
  const state = new Map();
  const visit = (folder, path) => {
    if (state.get(folder) === "done") return;
    if (state.get(folder) === "open") return problems.push(`folder cycle: ${[...path, folder].join(" → ")}`);
    state.set(folder, "open");
    for (const dep of rules[folder] ?? []) visit(dep, [...path, folder]);
    state.set(folder, "done");
  };
  for (const folder of Object.keys(rules)) visit(folder, []);
  return problems;
}

/** Runs every package rule and every folder rule under `root`; returns the problem lines. */
export function checkLayers(root) {
  const problems = [];
  for (const rule of rules) {
    for (const file of files(join(root, rule.dir))) {
      for (const spec of specifiers(readFileSync(file, "utf8"))) {
        if (rule.forbidden.some((re) => re.test(spec))) problems.push(`layer violation: ${relative(root, file)} imports ${spec}`);
      }
    }
  }
  for (const [dir, folderRules] of Object.entries(FOLDER_RULES)) {
    if (existsSync(join(root, dir))) problems.push(...checkFolderRules(join(root, dir), folderRules));
  }
  for (const rule of STATIC_IMPORT_RULES) problems.push(...checkStaticImports(join(root, rule.dir), rule.forbidden, rule.except));
  return problems;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
  const problems = checkLayers(root);
  for (const line of problems) console.error(line);
  if (problems.length) process.exit(1);
  console.error("layers ok: runtime-core imports no backend, the backends import neither each other nor the CLI; folder rules hold");
}
