/**
 * Unit: the one PHP value encoder, and a guard that no source file splices values into PHP
 * source again (the fault this guards against: JSON inside a PHP double-quoted string, where
 * `$name` and `{${expr}}` are expanded or executed).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { WpCodeboxError, loneSurrogateIndex } from "@wp-codebox/runtime-core";
import { phpValue } from "../src/php-source/php-value.js";

test("phpValue carries hostile strings only as base64: no quote, dollar or brace reaches PHP's parser", () => {
  const hostile = "price $HOME {$x} {${update_option('blogname','X')}} \\ \"q\" 'q' \0 🧪";
  const expr = phpValue(hostile);
  assert.match(expr, /^json_decode\(base64_decode\('[A-Za-z0-9+/=]+'\), true\)$/);
  const b64 = /'([^']+)'/.exec(expr)![1]!;
  assert.equal(JSON.parse(Buffer.from(b64, "base64").toString("utf8")), hostile);
});

test("phpValue refuses what PHP could not receive unchanged, naming where", () => {
  const cases: [unknown, RegExp][] = [
    ["a\ud800b", /lone UTF-16 surrogate \(U\+D800 at index 1\)/],
    [{ title: "\udc00" }, /at \/title/],
    [{ ["k\ud800"]: 1 }, /\(key\)/],
    [[1, Number.NaN], /at \/1 is NaN/],
    [undefined, /undefined/],
    [() => 1, /function/],
    [new Date(0), /object; only JSON data/],
  ];
  for (const [value, message] of cases) {
    assert.throws(
      () => phpValue(value, "body-json"),
      (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-argument" && message.test(e.message) && e.message.startsWith("body-json"),
      String(message),
    );
  }
  assert.equal(loneSurrogateIndex("🧪 ok"), -1, "a surrogate pair is fine");
});

/** Every TypeScript source file of the repository's packages. */
function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === "node_modules" || name === "dist") continue;
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

/**
 * The interpolations of every template literal that starts a PHP program (`` `<?php `` …), with
 * the line each starts on. Handles nested `${…}` and template literals inside them.
 */
function phpTemplateInterpolations(source: string): { expr: string; line: number }[] {
  const found: { expr: string; line: number }[] = [];
  let at = source.indexOf("`<?php");
  while (at >= 0) {
    let i = at + 1;
    while (i < source.length && source[i] !== "`") {
      if (source[i] === "\\") i += 2;
      else if (source[i] === "$" && source[i + 1] === "{") {
        let depth = 1;
        const start = i + 2;
        i = start;
        while (i < source.length && depth > 0) {
          if (source[i] === "{") depth++;
          else if (source[i] === "}") depth--;
          i++;
        }
        found.push({ expr: source.slice(start, i - 1).trim(), line: source.slice(0, start).split("\n").length });
      } else i++;
    }
    at = source.indexOf("`<?php", i + 1);
  }
  return found;
}

/** Interpolations allowed in a PHP program: encoded values, PHP fragments named in CONSTANT_CASE, and the program text itself. */
const ALLOWED_INTERPOLATION = /^(phpValue\(.*\)|[A-Z][A-Z0-9_]*|code|source)$/s;

test("no source file splices a value into PHP source: every value goes through php-value.ts", () => {
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const offences: string[] = [];
  const files = [...sources(join(root, "packages")), ...sources(join(root, "src"))].filter((f) => !/[/\\]test[/\\]/.test(f));
  assert.ok(files.length > 20, "the scan found the sources");
  let scanned = 0;
  for (const file of files) {
    if (file.endsWith(join("commands", "src", "php-source", "php-value.ts"))) continue;
    const text = readFileSync(file, "utf8");
    text.split("\n").forEach((line, i) => {
      const where = `${relative(root, file)}:${i + 1}: ${line.trim()}`;
      // JSON placed in a PHP string literal (the old phpJson / phpStringArray helpers).
      if (/JSON\.stringify\(\s*JSON\.stringify/.test(line)) offences.push(where);
      // A PHP json_decode of something interpolated into the source.
      if (/json_decode\(\s*\$\{/.test(line)) offences.push(where);
      // phpVar used directly instead of through the project encoder.
      if (/\bphpVars?\(/.test(line)) offences.push(where);
    });
    for (const { expr, line } of phpTemplateInterpolations(text)) {
      scanned++;
      if (!ALLOWED_INTERPOLATION.test(expr)) offences.push(`${relative(root, file)}:${line}: \${${expr}} inside a <?php template`);
    }
  }
  assert.ok(scanned > 5, "the scan saw the PHP templates");
  assert.deepEqual(offences, [], "splice values with phpValue() from commands/src/php-source/php-value.ts");
});

test("the scan itself catches the old splice patterns", () => {
  const bad = "const code = `<?php\n$ref = ${JSON.stringify(ref)}; $id = ${actor.userId}; $ok = ${phpValue(x)}; ${FATAL_RECORDER}`;";
  const exprs = phpTemplateInterpolations(bad).map((f) => f.expr);
  assert.deepEqual(exprs, ["JSON.stringify(ref)", "actor.userId", "phpValue(x)", "FATAL_RECORDER"]);
  assert.deepEqual(exprs.filter((e) => !ALLOWED_INTERPOLATION.test(e)), ["JSON.stringify(ref)", "actor.userId"]);
});
