/**
 * The README's "Error codes" table lists every code in runtime-core's ERROR_CODES, in the row of
 * its category (and so its exit code): the contract is declared once, and the docs cannot drift.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ERROR_CODES } from "@wp-codebox/runtime-core";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const table = readme.slice(readme.indexOf("## Error codes"), readme.indexOf("\n## ", readme.indexOf("## Error codes") + 1));
const rows: Record<string, string> = {
  input: table.split("\n").find((l) => l.startsWith("| input (exit 2)")) ?? "",
  sandbox: table.split("\n").find((l) => l.startsWith("| sandbox (exit 1)")) ?? "",
  environment: table.split("\n").find((l) => l.startsWith("| environment (exit 3)")) ?? "",
  internal: table.split("\n").find((l) => l.startsWith("| internal (exit 70)")) ?? "",
};

test("every error code is in the README's Error codes table, in its category's row", () => {
  for (const [category, row] of Object.entries(rows)) assert.notEqual(row, "", `the ${category} row`);
  const misplaced = Object.entries(ERROR_CODES).filter(([code, category]) => !rows[category]!.includes(`\`${code}\``));
  assert.deepEqual(misplaced, []);
});
