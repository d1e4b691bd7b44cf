// scripts/check-layers.mjs: the per-folder import rules report a forbidden import, a folder
// without a rule, stale rules and a declared cycle, and the real tree obeys every rule.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-expect-error: a plain ES module script without declarations.
import { checkFolderRules, checkStaticImports } from "../scripts/check-layers.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Writes `files` (path under src/ → source) into a fresh temporary src/ folder. */
function tree(files: Record<string, string>): { src: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "check-layers-"));
  const src = join(dir, "src");
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), source);
  }
  return { src, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const BASE = {
  "index.ts": 'export { a } from "./low/a.js";\nexport { b } from "./high/b.js";\n',
  "low/a.ts": "export const a = 1;\n",
  "high/b.ts": 'import { a } from "../low/a.js";\nexport const b = a;\n',
};

const cases: { name: string; files: Record<string, string>; rules: Record<string, string[]>; expect: RegExp[] }[] = [
  { name: "a tree that obeys its rules", files: BASE, rules: { low: [], high: ["low"] }, expect: [] },
  {
    name: "an import the importer's rule does not allow",
    files: { ...BASE, "low/c.ts": 'import { b } from "../high/b.js";\nexport const c = b;\n' },
    rules: { low: [], high: ["low"] },
    expect: [/^folder violation: .*low\/c\.ts imports \.\.\/high\/b\.js \(low\/ may import: no sibling folder\)$/],
  },
  {
    name: "an allowed dependency no file uses",
    files: { ...BASE, "side/s.ts": "export const s = 1;\n" },
    rules: { low: [], high: ["low", "side"], side: [] },
    expect: [/^stale folder rule: high\/ may import side\/ but no file there does$/],
  },
  {
    name: "a rule for a folder that no longer exists",
    files: BASE,
    rules: { low: [], high: ["low"], gone: [] },
    expect: [/^stale folder rule: gone\/ no longer exists/],
  },
  {
    name: "a folder without a rule",
    files: { ...BASE, "new/n.ts": "export const n = 1;\n" },
    rules: { low: [], high: ["low"] },
    expect: [/^no folder rule: .* has new\/ but the rules do not declare it$/],
  },
  {
    name: "a cycle in the declared graph",
    files: { ...BASE, "low/c.ts": 'import { b } from "../high/b.js";\nexport const c = b;\n' },
    rules: { low: ["high"], high: ["low"] },
    expect: [/^folder cycle: low → high → low$/],
  },
];

for (const c of cases) {
  test(`folder rules: ${c.name}`, () => {
    const t = tree(c.files);
    try {
      const problems: string[] = checkFolderRules(t.src, c.rules);
      assert.equal(problems.length, c.expect.length, problems.join("\n"));
      c.expect.forEach((re, i) => assert.match(problems[i]!, re));
    } finally {
      t.done();
    }
  });
}

test("a violation and a stale entry in one tree are both reported", () => {
  const t = tree({ ...BASE, "low/c.ts": 'import { b } from "../high/b.js";\nexport const c = b;\n', "side/s.ts": "export const s = 1;\n" });
  try {
    const problems: string[] = checkFolderRules(t.src, { low: [], high: ["low", "side"], side: [] });
    assert.ok(problems.some((p) => p.startsWith("folder violation:")), problems.join("\n"));
    assert.ok(problems.some((p) => p.startsWith("stale folder rule: high/ may import side/")), problems.join("\n"));
  } finally {
    t.done();
  }
});

const STATIC_CASES: { name: string; source: string; reported: boolean }[] = [
  { name: "a static import", source: 'import { runLocalBatch } from "@wp-codebox/batch";\n', reported: true },
  { name: "a type-only import (erased)", source: 'import type { BatchOutcome } from "@wp-codebox/batch";\n', reported: false },
  { name: "a re-export", source: 'export { runLocalBatch } from "@wp-codebox/batch";\n', reported: true },
  { name: "a bare side-effect import", source: 'import "@wp-codebox/batch";\n', reported: true },
  { name: "a dynamic import()", source: 'const batch = await import("@wp-codebox/batch");\n', reported: false },
  { name: "a subpath of the package", source: 'import { createNamedBackend } from "@wp-codebox/batch/task-backend";\n', reported: false },
];

for (const c of STATIC_CASES) {
  test(`modules loaded only through import(): ${c.name} ${c.reported ? "is" : "is not"} reported`, () => {
    const t = tree({ "cli.ts": c.source });
    try {
      const problems: string[] = checkStaticImports(t.src, [/^@wp-codebox\/batch$/]);
      assert.equal(problems.length, c.reported ? 1 : 0, problems.join("\n"));
      if (c.reported) assert.match(problems[0]!, /^static import: .*cli\.ts imports @wp-codebox\/batch; load it with import\(\) where it is used$/);
    } finally {
      t.done();
    }
  });
}

test("modules loaded only through import(): a file the rule excepts (the lazily loaded module itself) may import them statically", () => {
  const t = tree({ "compare-screenshots.ts": 'import { PNG } from "pngjs";\n', "run-step.ts": 'import { compareScreenshots } from "./compare-screenshots.js";\n' });
  try {
    const problems: string[] = checkStaticImports(t.src, [/^pngjs$/, /\/compare-screenshots\.js$/], [/compare-screenshots\.ts$/]);
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(problems[0]!, /run-step\.ts imports \.\/compare-screenshots\.js/);
  } finally {
    t.done();
  }
});

test("the real tree passes node scripts/check-layers.mjs", () => {
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/check-layers.mjs")], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /folder rules hold/);
});
