// Every package entry names what it exports: a new export is a visible line in the entry and in
// docs/reference/api.md (kept current by test/docs.test.ts), never something `export *` picked up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { entryExports } from "../scripts/docs-reference.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

function* entries(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* entries(path);
    else if (name === "index.ts") yield path;
  }
}

test("no package entry or folder entry uses export *", () => {
  const roots = [join(ROOT, "src"), ...readdirSync(join(ROOT, "packages")).map((p) => join(ROOT, "packages", p, "src"))];
  const files = roots.flatMap((r) => [...entries(r)]);
  assert.ok(files.length >= 8, `found the entries: ${files.length}`);
  const offenders = files.flatMap((f) => readFileSync(f, "utf8").split("\n").map((line, i) => [f, i + 1, line] as const)).filter(([, , line]) => /^\s*export\s*\*/.test(line));
  assert.deepEqual(offenders.map(([f, n]) => `${f.slice(ROOT.length)}:${n}`), []);
});

/** The export lists docs/reference/api.md records, by entry name. */
function snapshot(): Map<string, { values: string[]; types: string[] }> {
  const out = new Map<string, { values: string[]; types: string[] }>();
  let current: { values: string[]; types: string[] } | undefined;
  let list: "values" | "types" = "values";
  for (const line of readFileSync(join(ROOT, "docs/reference/api.md"), "utf8").split("\n")) {
    const heading = /^## `([^`]+)`$/.exec(line);
    if (heading) out.set(heading[1]!, (current = { values: [], types: [] }));
    else if (line === "Values:") list = "values";
    else if (line === "Types:") list = "types";
    else if (current && /^- `[^`]+`$/.test(line)) current[list].push(line.slice(3, -1));
  }
  return out;
}

test("each package entry exports exactly the names docs/reference/api.md records (an API change is a diff there: npm run docs)", () => {
  const recorded = snapshot();
  const exports = entryExports();
  // Every workspace publishes at least its main entry, and the snapshot names no entry that is gone.
  const workspaces = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[] }).workspaces;
  assert.ok(exports.length >= workspaces.length + 1, `entries found: ${exports.map((e) => e.name).join(", ")}`);
  assert.deepEqual([...recorded.keys()].sort(), exports.map((e) => e.name).sort(), "entries in the snapshot");
  const changes = exports.flatMap(({ name, values, types }) => {
    const was = recorded.get(name) ?? { values: [], types: [] };
    const now = new Set([...values, ...types]);
    const before = new Set([...was.values, ...was.types]);
    return [...[...now].filter((n) => !before.has(n)).map((n) => `${name}: + ${n}`), ...[...before].filter((n) => !now.has(n)).map((n) => `${name}: - ${n}`)];
  });
  assert.deepEqual(changes, []);
});

// What the compiler calls a value must be one at run time too: a constant re-exported through
// `export type` (or `export type *`) is listed as a value yet is missing from the loaded module,
// and the root entry re-exporting it fails to load under the `source` condition.
test("each package entry, loaded, exports exactly the values docs/reference/api.md records", async () => {
  const recorded = snapshot();
  const entries = entryExports();
  assert.ok(entries.length >= 8, `entries found: ${entries.length}`);
  const problems: string[] = [];
  for (const { name, source } of entries) {
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(pathToFileURL(join(ROOT, source)).href)) as Record<string, unknown>;
    } catch (error) {
      problems.push(`${name}: does not load: ${(error as Error).message}`);
      continue;
    }
    const runtime = new Set(Object.keys(loaded));
    const values = new Set(recorded.get(name)?.values ?? []);
    for (const v of values) if (!runtime.has(v)) problems.push(`${name}: ${v} is recorded as a value but the loaded entry has no such export`);
    for (const v of runtime) if (!values.has(v)) problems.push(`${name}: ${v} is exported at run time but not recorded as a value`);
  }
  assert.deepEqual(problems, []);
});
