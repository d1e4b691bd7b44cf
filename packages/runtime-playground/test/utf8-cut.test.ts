/**
 * Unit: capped output is cut at the last complete UTF-8 character, so the text never ends in a
 * U+FFFD the program did not print. Table-driven over 2-, 3- and 4-byte characters straddling the cap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { completeUtf8Length, cutAtCharacter } from "../src/worker/utf8-cut.js";

const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

// Every cap that falls inside the character keeps "ab" and nothing of it.
const STRADDLING = [
  { char: "é", size: 2 },
  { char: "€", size: 3 },
  { char: "😀", size: 4 },
].flatMap(({ char, size }) => Array.from({ length: size - 1 }, (_, i) => ({ char, size, inside: i + 1 })));

for (const { char, size, inside } of STRADDLING) {
  test(`a ${size}-byte character (${char}) cut after ${inside} of its bytes is dropped whole`, () => {
    const full = encode(`ab${char}cd`);
    const capped = full.subarray(0, 2 + inside);
    assert.equal(completeUtf8Length(capped), 2);
    const kept = cutAtCharacter(capped, true);
    assert.equal(decode(kept), "ab");
    assert.ok(!decode(kept).includes("\uFFFD"));
  });
}

test("a cap right after a complete character keeps it (1- to 4-byte characters)", () => {
  for (const text of ["abc", "abé", "ab€", "ab😀", "😀😀"]) assert.equal(completeUtf8Length(encode(text)), encode(text).length, text);
});

test("bytes that are not UTF-8 are kept: only a character the cut broke is dropped", () => {
  const table: Array<{ name: string; bytes: number[]; length: number }> = [
    { name: "empty", bytes: [], length: 0 },
    { name: "stray continuation bytes only", bytes: [0x80, 0x80], length: 2 },
    { name: "four continuation bytes after a lead byte", bytes: [0x61, 0xf0, 0x80, 0x80, 0x80, 0x80], length: 6 },
    { name: "invalid lead byte 0xff", bytes: [0x61, 0xff], length: 2 },
    { name: "invalid lead byte 0xf8 then a continuation", bytes: [0x61, 0xf8, 0x80], length: 3 },
    { name: "4-byte lead alone", bytes: [0x61, 0xf0], length: 1 },
    { name: "3-byte lead alone", bytes: [0x61, 0xe2], length: 1 },
  ];
  for (const { name, bytes, length } of table) assert.equal(completeUtf8Length(new Uint8Array(bytes)), length, name);
});

test("output that was not truncated is returned as it is, even when it ends in a broken character", () => {
  const printed = encode("ab€").subarray(0, 4);
  assert.equal(cutAtCharacter(printed, false), printed);
  assert.equal(cutAtCharacter(printed, true).byteLength, 2);
});
