#!/usr/bin/env node
// Enforces the one-way layering: cli → runtime-playground | runtime-native → runtime-core.
// runtime-core must not import Playground, php-wasm, Playwright or the other packages.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const rules = [
  { dir: "packages/runtime-core/src", forbidden: [/^@wp-playground\//, /^@php-wasm\//, /^playwright/, /^@wp-codebox\/(runtime-playground|runtime-native|live|mcp|cli|batch)$/] },
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
const importRe = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) yield path;
  }
}

let violations = 0;
for (const rule of rules) {
  for (const file of files(rule.dir)) {
    const source = readFileSync(file, "utf8");
    for (const m of source.matchAll(importRe)) {
      const spec = m[1] ?? m[2];
      if (rule.forbidden.some((re) => re.test(spec))) {
        console.error(`layer violation: ${file} imports ${spec}`);
        violations++;
      }
    }
  }
}
if (violations) process.exit(1);
console.error("layers ok: runtime-core imports no backend, the backends import neither each other nor the CLI");
