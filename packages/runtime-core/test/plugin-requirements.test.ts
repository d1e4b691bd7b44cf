/**
 * Plugin and theme requirements, read on the host as WordPress reads file headers: every place a
 * requirement can be declared (plugin main file, readme.txt, single-file plugin, theme style.css)
 * and every comparison, table-driven.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WpCodeboxError, assertRequirementsMet, exitCodeForCategory, fileHeader, readDeclaredRequirements, unmetRequirements, versionMeets } from "@wp-codebox/runtime-core";
import { scratchDir } from "../../../test/support/scratch-dir.js";

const root = scratchDir("wp-codebox-requirements-");
function make(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, "input-"));
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), body);
  }
  return dir;
}

test("versionMeets compares numerically and only the parts the sandbox knows", () => {
  const table: [string, string, boolean, boolean?][] = [
    ["6.5.5", "6.5", true],
    ["6.5.5", "6.6", false],
    ["7.0.4", "7.0", true],
    ["7.0", "7.0.1", false],
    ["7.0", "7.0.0", true],
    ["6.10", "6.9", true],
    ["6.9.4", "6.10", false],
    ["6.5.5", "99.0", false],
    ["8.3", "8.3.5", true, true], // PHP: the patch level of the sandbox's PHP is not known
    ["8.3", "8.3.5", false],
    ["8.3", "8.4", false, true],
    ["8.3", "7.4", true, true],
    ["7.0.4", "7.0-RC1", true],
    ["6.5.5", "", true],
    ["6.5.5", "any", true],
  ];
  for (const [actual, required, meets, partial] of table) assert.equal(versionMeets(actual, required, { partial: partial === true }), meets, `${actual} vs ${required}`);
});

test("fileHeader reads a header like get_file_data(): any comment style, case-insensitive, trailing */ dropped", () => {
  const table: [string, string | undefined][] = [
    ["<?php\n/**\n * Plugin Name: X\n * Requires at least: 7.0\n */", "7.0"],
    ["<?php\n/*\nRequires at least: 6.4 */", "6.4"],
    ["<?php\n// Requires at least: 6.3", "6.3"],
    ["<?php\n# requires AT LEAST:   6.2   ", "6.2"],
    ["=== Readme ===\nRequires at least: 5.9\n", "5.9"],
    ["<?php\n/* Requires at least: */", undefined],
    ["<?php\n/* Plugin Name: X */", undefined],
  ];
  for (const [text, value] of table) assert.equal(fileHeader(text, "Requires at least"), value, text);
});

test("every place a requirement is declared is read; the plugin header wins over readme.txt", () => {
  const cases: { name: string; kind: "plugin" | "theme"; files: Record<string, string>; single?: string; wordpress?: string; php?: string }[] = [
    { name: "plugin header", kind: "plugin", files: { "p.php": "<?php\n/**\n * Plugin Name: P\n * Requires at least: 7.0\n * Requires PHP: 8.1\n */" }, wordpress: "7.0", php: "8.1" },
    { name: "readme only", kind: "plugin", files: { "p.php": "<?php\n/* Plugin Name: P */", "readme.txt": "=== P ===\nRequires at least: 6.6\nRequires PHP: 7.4\n" }, wordpress: "6.6", php: "7.4" },
    { name: "header wins", kind: "plugin", files: { "p.php": "<?php\n/* Plugin Name: P\nRequires at least: 7.0 */", "readme.txt": "Requires at least: 5.0\nRequires PHP: 8.2\n" }, wordpress: "7.0", php: "8.2" },
    { name: "a php file without a plugin header is not the main file", kind: "plugin", files: { "a-helper.php": "<?php\n// Requires at least: 99.0", "main.php": "<?php\n/* Plugin Name: P */" } },
    { name: "single-file plugin", kind: "plugin", files: { "solo.php": "<?php\n/* Plugin Name: Solo\nRequires PHP: 8.4 */" }, single: "solo.php", php: "8.4" },
    { name: "theme style.css", kind: "theme", files: { "style.css": "/*\nTheme Name: T\nRequires at least: 6.9\nRequires PHP: 8.0\n*/" }, wordpress: "6.9", php: "8.0" },
    { name: "nothing declared", kind: "theme", files: { "style.css": "/*\nTheme Name: T\n*/" } },
  ];
  for (const c of cases) {
    const dir = make(c.files);
    const declared = readDeclaredRequirements(c.kind, c.single ? join(dir, c.single) : dir);
    assert.deepEqual({ wordpress: declared.wordpress, php: declared.php }, { wordpress: c.wordpress, php: c.php }, c.name);
  }
});

test("unmet requirements name the versions and the flag that fixes them; met or unknown versions pass", () => {
  const plugin = make({ "p.php": "<?php\n/* Plugin Name: P\nRequires at least: 7.0\nRequires PHP: 8.4 */" });
  const theme = make({ "style.css": "/*\nTheme Name: T\nRequires at least: 99.0\n*/" });
  const phpVersions = ["8.5", "8.4", "8.3", "8.2"];
  assert.deepEqual(unmetRequirements({ plugins: [plugin], themes: [theme] }, { wordpress: "99.1", php: "8.4", phpVersions }), []);
  // latest and custom builds are compared once they are known (by the backend), not here.
  assert.deepEqual(unmetRequirements({ plugins: [plugin] }, { wordpress: "latest", php: "8.4" }), []);
  assert.deepEqual(unmetRequirements({ plugins: [plugin] }, { wordpress: "custom:/x", php: "8.4" }), []);
  const unmet = unmetRequirements({ plugins: [plugin], themes: [theme] }, { wordpress: "6.5.5", php: "8.3", phpVersions });
  assert.deepEqual(
    unmet.map((u) => [u.kind, u.requirement, u.required, u.actual, u.fix]),
    [
      ["plugin", "wordpress", "7.0", "6.5.5", "--wp 7.0"],
      ["plugin", "php", "8.4", "8.3", "--php 8.4"],
      ["theme", "wordpress", "99.0", "6.5.5", "--wp 99.0"],
    ],
  );
  assert.throws(
    () => assertRequirementsMet({ plugins: [plugin] }, { wordpress: "6.5.5", php: "8.3", phpVersions }),
    (error: unknown) =>
      error instanceof WpCodeboxError &&
      error.code === "plugin-requirements" &&
      exitCodeForCategory(error.category) === 2 &&
      error.message.includes("requires WordPress 7.0") &&
      error.message.includes("runs WordPress 6.5.5: pass --wp 7.0") &&
      error.message.includes("pass --php 8.4"),
  );
  const impossible = make({ "p.php": "<?php\n/* Plugin Name: P\nRequires PHP: 99.0 */" });
  assert.throws(() => assertRequirementsMet({ plugins: [impossible] }, { wordpress: "6.5.5", php: "8.3", phpVersions }), /no PHP version available here meets it/);
});
