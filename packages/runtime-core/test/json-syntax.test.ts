/** JSON syntax errors from untrusted files say where, and never quote the file. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonSyntaxMessage, parseJsonText } from "../src/json-syntax.js";

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
