/**
 * A secret's base64, base64url and hex cut into lines or groups (PHP's `chunk_split`, MIME's
 * 76-character CRLF lines, `\n` every 64) are redacted in text, in JSON-escaped text and in binary
 * content, at every base64 alignment, padded or not; unrelated text is left alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MASK_BYTE, REDACTED, WRAP_SEPARATOR_MAX_CHARS, createRedactor } from "@wp-codebox/runtime-core";

const SECRETS = ["Zq7-s3cret/Token+42", "abcdefgh", "pässwörd-€-🧪-long", "\xff\xfe~~~~~~>>>>????"];

/** PHP's `chunk_split($s, $n, $sep)`: `$sep` after every `$n` characters, and at the end. */
const chunkSplit = (s: string, n: number, sep: string): string => (s.match(new RegExp(`[\\s\\S]{1,${n}}`, "g")) ?? []).join(sep) + sep;

/**
 * The encodings of a secret a program prints, and for each the characters that depend on the
 * secret's bytes alone (what must not survive): whole base64 (padded or not, both alphabets), base64
 * of the secret inside longer text at each of the three byte alignments, and hex.
 */
function encodings(secret: string): { name: string; text: string; core: string }[] {
  const bytes = Buffer.from(secret, "utf8");
  const out: { name: string; text: string; core: string }[] = [];
  const b64 = bytes.toString("base64");
  out.push({ name: "base64", text: b64, core: b64.slice(0, Math.floor((bytes.length * 8) / 6)) });
  out.push({ name: "base64 unpadded", text: b64.replace(/=+$/, ""), core: b64.slice(0, Math.floor((bytes.length * 8) / 6)) });
  const url = bytes.toString("base64url");
  out.push({ name: "base64url", text: url, core: url.slice(0, Math.floor((bytes.length * 8) / 6)) });
  for (const prefix of ["", "k", "ke", "key"]) {
    // `base64_encode("token=" . $s . ";")`-like: the secret starts at byte offset 0, 1, 2 (mod 3).
    const whole = Buffer.concat([Buffer.from(prefix), bytes, Buffer.from(";end")]).toString("base64");
    const first = Math.ceil((prefix.length * 8) / 6);
    const last = Math.floor(((prefix.length + bytes.length) * 8) / 6);
    out.push({ name: `base64 after ${prefix.length} bytes`, text: whole, core: whole.slice(first, last) });
  }
  const hex = bytes.toString("hex");
  out.push({ name: "hex", text: hex, core: hex }, { name: "HEX", text: hex.toUpperCase(), core: hex });
  return out;
}

/** How programs wrap encoded text. */
const WRAPS: { name: string; wrap: (s: string) => string }[] = [
  { name: "chunk_split 76 CRLF (MIME)", wrap: (s) => chunkSplit(s, 76, "\r\n") },
  { name: "chunk_split 64 LF", wrap: (s) => chunkSplit(s, 64, "\n") },
  { name: "chunk_split 4 space", wrap: (s) => chunkSplit(s, 4, " ") },
  { name: "chunk_split 3 CRLF", wrap: (s) => chunkSplit(s, 3, "\r\n") },
  { name: "chunk_split 1 space", wrap: (s) => chunkSplit(s, 1, " ") },
  { name: "chunk_split 5 pipe", wrap: (s) => chunkSplit(s, 5, " | ") },
  { name: "chunk_split 2 colon", wrap: (s) => chunkSplit(s, 2, ":") },
  { name: "chunk_split 7 tab", wrap: (s) => chunkSplit(s, 7, "\t") },
  { name: "nl2br every 6", wrap: (s) => chunkSplit(s, 6, "<br />\n") },
  { name: "urlencoded lines of 8", wrap: (s) => chunkSplit(s, 8, "%0D%0A") },
  { name: "not wrapped", wrap: (s) => s },
];

/** `text` with every separator the redactor allows between characters removed (what a reader can join back). */
const joined = (text: string): string => text.replace(/\\+[rnt]|%0[ad9]|%20|<br\s*\/?>|[\s.:;,|]/gi, "");

for (const secret of SECRETS) {
  const redactor = createRedactor([secret]);
  for (const encoding of encodings(secret)) {
    test(`${JSON.stringify(secret)}: ${encoding.name}, wrapped every way, is redacted in text, JSON and bytes`, () => {
      for (const { name, wrap } of WRAPS) {
        const wrapped = wrap(encoding.text);
        const text = `BEFORE ${wrapped} AFTER`;
        const out = redactor.redact(text);
        const caseOf = (s: string) => (encoding.name.toLowerCase() === "hex" ? s.toLowerCase() : s);
        assert.ok(!caseOf(joined(out)).includes(encoding.core), `${name}: ${JSON.stringify(out)}`);
        assert.ok(out.startsWith("BEFORE ") && out.endsWith(" AFTER"), `${name}: the text around stays: ${JSON.stringify(out)}`);
        assert.ok(out.includes(REDACTED), name);

        // JSON-escaped once (commands.jsonl) and twice (a JSON string printed inside JSON).
        for (const json of [JSON.stringify({ stdout: text }), JSON.stringify({ stdout: JSON.stringify({ out: text }) })]) {
          const redacted = redactor.redact(json);
          assert.doesNotThrow(() => JSON.parse(redacted), `${name}: still JSON: ${redacted}`);
          assert.ok(!caseOf(joined(redacted)).includes(encoding.core), `${name} (JSON): ${redacted}`);
        }

        // Bytes: masked with as many `*`, the length kept, in the middle of binary noise.
        const bytes = Buffer.concat([Buffer.from([0, 1, 2, 0xff]), Buffer.from(text, "utf8"), Buffer.from([0xfe, 0])]);
        const masked = Buffer.from(redactor.redactBytes(bytes));
        assert.equal(masked.byteLength, bytes.byteLength);
        assert.ok(!caseOf(joined(masked.toString("latin1"))).includes(encoding.core), `${name} (bytes): ${masked.toString("latin1")}`);
        assert.ok(masked.includes(Buffer.from("*".repeat(4))), name);
        assert.deepEqual([...masked.subarray(0, 11)], [...bytes.subarray(0, 11)], `${name}: the bytes before stay`);
      }
    });
  }
}

test("separators are bounded: encoded text spread over long gaps, or another value's base64, is left alone", () => {
  const secret = "Zq7-s3cret/Token+42";
  const redactor = createRedactor([secret]);
  const b64 = Buffer.from(secret).toString("base64");
  const farApart = chunkSplit(b64, 4, " ".repeat(WRAP_SEPARATOR_MAX_CHARS + 1));
  assert.equal(redactor.redact(farApart), farApart);
  const justNear = chunkSplit(b64, 4, " ".repeat(WRAP_SEPARATOR_MAX_CHARS));
  assert.ok(!redactor.redact(justNear).includes(b64.slice(4, 8)));
  const other = chunkSplit(Buffer.from("Zq7-s3cret/Token+4z").toString("base64"), 4, "\n");
  // The same bytes but the last: the common part alone is not the secret's form.
  assert.equal(redactor.redact(other), other);
  const prose = "The quick brown fox, jumps: over; the lazy | dog.\r\n".repeat(50);
  assert.equal(redactor.redact(prose), prose);
  assert.equal(redactor.redactions, 1);
});

test("a wrapped form that crosses a 1 MiB window of a binary file is masked", () => {
  const secret = "Zq7-s3cret/Token+42";
  const wrapped = chunkSplit(Buffer.from(secret).toString("base64"), 2, "\r\n");
  for (const offset of [(1 << 20) - 10, (1 << 20) - 1, 1 << 20, 3 << 20]) {
    const bytes = Buffer.alloc((4 << 20) + 64, 0x41);
    bytes.fill(0, 0, 16);
    bytes.write(wrapped, offset, "latin1");
    const masked = Buffer.from(createRedactor([secret]).redactBytes(bytes));
    assert.equal(masked.byteLength, bytes.byteLength);
    assert.equal(masked.indexOf(Buffer.from(wrapped)), -1, `offset ${offset}`);
    assert.equal(masked[offset], MASK_BYTE, `offset ${offset}`);
  }
});

test("several MB of output full of separators and base64-like text: every wrapped secret in it is redacted", () => {
  const secret = "Zq7-s3cret/Token+42";
  const redactor = createRedactor([secret]);
  const wrapped = chunkSplit(Buffer.from(secret).toString("base64"), 4, " ");
  // Base64-alphabet noise, separators everywhere: the worst case for a search that could backtrack.
  const noise = "QUJD RE VG R0g, SUpL: TE1O; T1BR | UlNU\r\n".repeat(100_000);
  const text = `${wrapped}${noise}${wrapped}${noise}${wrapped}`;
  assert.ok(text.length > 8_000_000);
  const out = redactor.redact(text);
  assert.equal(out.split(REDACTED).length - 1, 3);
  assert.equal(out.length, text.length - 3 * (wrapped.trimEnd().length - REDACTED.length));
});
