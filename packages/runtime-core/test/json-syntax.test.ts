/** JSON syntax errors from untrusted files say where, and never quote the file. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonSyntaxMessage, MAX_JSON_DEPTH, parseJsonText } from "../src/json-syntax.js";

const SECRET = "sk_live_0123456789abcdef";

const cases: { name: string; text: string; message: RegExp }[] = [
  { name: "text that is not JSON at all", text: `${SECRET} and more`, message: /^unexpected token$/ },
  { name: "a bare word after a secret value", text: `{"key": "${SECRET}", oops}`, message: /^expected double-quoted property name at line 1, column \d+$/ },
  { name: "a trailing comma on line 3", text: `{\n  "a": "${SECRET}",\n}`, message: /^expected double-quoted property name at line 3, column 1$/ },
  { name: "a missing colon", text: `{"${SECRET}" 1}`, message: /^expected ':' after property name at line 1, column \d+$|^expected/ },
  { name: "an unterminated string", text: `"${SECRET}`, message: /^unterminated string at line 1, column \d+$/ },
  { name: "text after the document", text: `[1] ${SECRET}`, message: /^unexpected non-whitespace character after JSON at line 1, column 5$/ },
  { name: "a cut-off document", text: `{"a": "${SECRET}"`, message: /^expected|^unexpected end of the text$/ },
  { name: "empty input", text: "", message: /^unexpected end of the text$/ },
];

for (const c of cases) {
  test(`JSON syntax error: ${c.name}`, () => {
    assert.throws(() => parseJsonText(c.text), (error: unknown) => {
      assert.ok(error instanceof SyntaxError);
      assert.match(error.message, c.message);
      assert.ok(!error.message.includes(SECRET.slice(0, 6)), error.message);
      return true;
    });
  });
}

test("a message without a position is passed through without its quoted part", () => {
  assert.equal(jsonSyntaxMessage(new SyntaxError(`Unexpected token 's', "${SECRET}" is not valid JSON`), SECRET), "unexpected token");
});

test("valid JSON parses", () => {
  assert.deepEqual(parseJsonText('{"a":[1,"x"]}'), { a: [1, "x"] });
});

const nest = (open: string, close: string, n: number, inner = "1") => `${open.repeat(n)}${inner}${close.repeat(n)}`;
const arrays = (n: number) => nest("[", "]", n);
const objects = (n: number) => `${'{"k":'.repeat(n)}1${"}".repeat(n)}`;
const depthCases: { name: string; text: string; refused: boolean }[] = [
  { name: "arrays at the limit", text: arrays(MAX_JSON_DEPTH), refused: false },
  { name: "arrays one past the limit", text: arrays(MAX_JSON_DEPTH + 1), refused: true },
  { name: "arrays 100,000 deep", text: arrays(100_000), refused: true },
  { name: "objects at the limit", text: objects(MAX_JSON_DEPTH), refused: false },
  { name: "objects 100,000 deep", text: objects(100_000), refused: true },
  { name: "arrays and objects mixed, past the limit", text: `${'[{"k":'.repeat(MAX_JSON_DEPTH)}1${"}]".repeat(MAX_JSON_DEPTH)}`, refused: true },
  { name: "brackets inside strings do not count", text: JSON.stringify({ s: "[".repeat(10_000), t: '\\"{'.repeat(1000) }), refused: false },
  { name: "many siblings, shallow", text: `[${Array.from({ length: 10_000 }, () => "[1]").join(",")}]`, refused: false },
];

for (const c of depthCases) {
  test(`JSON nesting: ${c.name}`, () => {
    if (!c.refused) {
      assert.deepEqual(parseJsonText(c.text), JSON.parse(c.text));
      return;
    }
    assert.throws(() => parseJsonText(c.text), (error: unknown) => {
      assert.ok(error instanceof SyntaxError);
      assert.match(error.message, new RegExp(`^arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels at line 1, column \\d+$`));
      return true;
    });
  });
}
