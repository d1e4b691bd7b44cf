#!/usr/bin/env node
// Writes the generated reference pages under docs/reference/ (see scripts/docs-reference.ts).
// Usage: npm run docs            (writes them)
//        npm run docs -- --check (exit 1 and name the stale pages, writing nothing)
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderReferences } from "./docs-reference.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const stale: string[] = [];
for (const [path, text] of Object.entries(renderReferences())) {
  const file = join(root, path);
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (current === text) continue;
  stale.push(path);
  if (!check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}
if (check && stale.length) {
  console.error(`stale: ${stale.join(", ")}; run npm run docs`);
  process.exit(1);
}
console.log(stale.length ? `${check ? "stale" : "wrote"}: ${stale.join(", ")}` : "docs/reference is up to date");
