// Every package entry names what it exports: a new export is a visible line in the entry and in
// docs/reference/api.md (kept current by test/docs.test.ts), never something `export *` picked up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
