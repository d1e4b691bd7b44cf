import { test } from "node:test";
import assert from "node:assert/strict";
import { REDACTED, createRedactor } from "../src/redaction.js";

test("redacts every occurrence of every secret, longest first, and counts", () => {
  const r = createRedactor(["abcd", "abcdef", "", "xy"]);
  assert.equal(r.redact("abcdef abcd xy abcdefabcd"), "[REDACTED] [REDACTED] [REDACTED] [REDACTED][REDACTED]");
  assert.equal(r.redactions, 5);
  assert.equal(r.redact("nothing here"), "nothing here");
  assert.equal(r.redactions, 5);
});

test("redacts WordPress cookies, nonces, auth headers and credential JSON fields", () => {
  const r = createRedactor([]);
  const cookie = "Cookie: wordpress_logged_in_0123abcd=admin%7C1700%7Ctok; wordpress_sec_0123abcd=admin%7Cxyz; wordpress_test_cookie=WP+Cookie+check";
  assert.equal(
    r.redact(cookie),
    "Cookie: wordpress_logged_in_0123abcd=[REDACTED]; wordpress_sec_0123abcd=[REDACTED]; wordpress_test_cookie=WP+Cookie+check",
  );
  assert.equal(r.redact("/wp-admin/post.php?action=edit&_wpnonce=9f8e7d6c5b"), "/wp-admin/post.php?action=edit&_wpnonce=[REDACTED]");
  assert.equal(r.redact("X-WP-Nonce: 9f8e7d6c5b"), "X-WP-Nonce: [REDACTED]");
  assert.equal(r.redact("Authorization: Bearer tok.en.value"), "Authorization: Bearer [REDACTED]");
  assert.equal(
    r.redact('{"user":"admin","password":"hunter2","user_pass":"p\\"w","accessToken":"t","compass":"north"}'),
    '{"user":"admin","password":"[REDACTED]","user_pass":"[REDACTED]","accessToken":"[REDACTED]","compass":"north"}',
  );
  const before = r.redactions;
  assert.equal(r.redact('{"password":"[REDACTED]"}'), '{"password":"[REDACTED]"}');
  assert.equal(r.redactions, before, "already-redacted values are not counted again");
});

test("redactValue redacts strings deep inside values", () => {
  const r = createRedactor(["s3cret-value"]);
  assert.deepEqual(r.redactValue({ a: ["x s3cret-value y", 1, null], b: { c: "s3cret-value" } }), {
    a: ["x [REDACTED] y", 1, null],
    b: { c: "[REDACTED]" },
  });
  assert.equal(r.redactions, 2);
});

test("a secret is redacted in its JSON-escaped and URL-encoded forms too", async () => {
  const { createRedactor } = await import("../src/redaction.js");
  const secret = "ab/cd+ef== €x y";
  const r = createRedactor([secret]);
  const phpJson = '{"t":"ab\\/cd+ef== \\u20acx y"}';
  for (const text of [secret, JSON.stringify({ t: secret }), phpJson, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, "+")]) {
    const out = r.redact(text);
    assert.ok(out.includes("[REDACTED]"), `${text} → ${out}`);
    assert.ok(!out.includes("cd+ef") && !out.includes("cd%2Bef"), `${text} → ${out}`);
  }
});

test("credential patterns in JSON-escaped text keep the JSON valid (a backslash before a quote is not part of the value)", () => {
  const r = createRedactor([]);
  const html = [
    '<a href="comment.php?action=approvecomment&_wpnonce=9f8e7d6c5b">',
    '<img data-cookie="wordpress_logged_in_0123abcd=admin%7C1700%7Ctok">',
    "<b>_wpnonce=1a2b3c4d5e\\</b>",
  ].join(" ");
  // Once escaped (a result line in commands.jsonl) and twice (that line inside a JSON string): both must still parse.
  for (const text of [JSON.stringify({ stdout: html }), JSON.stringify({ line: JSON.stringify({ stdout: html }) })]) {
    const redacted = r.redact(text);
    assert.doesNotThrow(() => JSON.parse(redacted), redacted);
    assert.doesNotMatch(redacted, /9f8e7d6c5b|admin%7C1700|1a2b3c4d5e/, redacted);
  }
});

// ---- Every form a printed secret can take -------------------------------------------------------

/** PHP's json_encode with default flags: `/` as `\/`, non-ASCII as lower-case `\uXXXX`. */
const phpJson = (s: string): string =>
  JSON.stringify(s)
    .replace(/\//g, "\\/")
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
const rawurlencode = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const htmlspecialchars = (s: string, apos = "&#039;"): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, apos);
/** PHP 8's strtoupper: ASCII letters only. */
const strtoupper = (s: string): string => s.replace(/[a-z]/g, (c) => c.toUpperCase());
const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");

/** How a program prints the secret. `long`: only redacted for secrets of 8 or more characters. */
const FORMS: { name: string; long?: boolean; ascii?: boolean; print: (s: string) => string }[] = [
  { name: "raw", print: (s) => s },
  { name: "JSON.stringify", print: (s) => JSON.stringify(s) },
  { name: "json_encode", print: phpJson },
  { name: "json_encode(json_encode())", print: (s) => phpJson(phpJson(s)) },
  { name: "json_encode(json_encode()) inside commands.jsonl", print: (s) => JSON.stringify({ stdout: phpJson(phpJson(s)) }) },
  { name: "encodeURIComponent", print: encodeURIComponent },
  { name: "rawurlencode", print: rawurlencode },
  { name: "urlencode", print: (s) => rawurlencode(s).replace(/~/g, "%7E").replace(/%20/g, "+") },
  { name: "htmlspecialchars / esc_html (&#039;)", print: (s) => htmlspecialchars(s) },
  { name: "HTML escape with &#39;", print: (s) => htmlspecialchars(s, "&#39;") },
  { name: "esc_html inside JSON", print: (s) => JSON.stringify({ html: `<p>${htmlspecialchars(s)}</p>` }) },
  { name: "base64_encode / btoa", long: true, print: b64 },
  { name: "base64 without padding", long: true, print: (s) => b64(s).replace(/=+$/, "") },
  { name: "base64url", long: true, print: (s) => Buffer.from(s, "utf8").toString("base64url") },
  { name: "base64 inside JSON (slashes escaped)", long: true, print: (s) => phpJson(b64(s)) },
  { name: "base64 URL-encoded", long: true, print: (s) => encodeURIComponent(b64(s)) },
  // Inside a longer base64 text, at each of the three byte alignments: the middle depends on the secret alone.
  ...["t=", "to=", "tok="].map((prefix) => ({ name: `base64_encode("${prefix}" . $secret)`, long: true, print: (s: string) => b64(prefix + s + "&x=1") })),
  { name: "bin2hex", long: true, print: (s) => Buffer.from(s, "utf8").toString("hex") },
  { name: "strtoupper(bin2hex())", long: true, print: (s) => Buffer.from(s, "utf8").toString("hex").toUpperCase() },
  { name: "strtoupper", long: true, print: strtoupper },
  { name: "strtolower", long: true, print: (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase()) },
  { name: "ucfirst", long: true, print: (s) => strtoupper(s.slice(0, 1)) + s.slice(1) },
  { name: "strtoupper inside json_encode", long: true, print: (s) => phpJson(strtoupper(s)) },
  { name: "mb_strtoupper", long: true, print: (s) => s.toUpperCase() },
  { name: "mb_strtoupper inside json_encode", long: true, print: (s) => phpJson(s.toUpperCase()) },
  { name: "mb_strtolower URL-encoded", long: true, print: (s) => rawurlencode(s.toLowerCase()) },
  { name: "strrev (ASCII) / characters reversed", long: true, print: (s) => [...s].reverse().join("") },
  { name: "mb_convert_encoding(…, 'UTF-16LE')", long: true, ascii: true, print: (s) => [...s].map((c) => `${c}\0`).join("") },
  { name: "mb_convert_encoding(…, 'UTF-16BE')", long: true, ascii: true, print: (s) => [...s].map((c) => `\0${c}`).join("") },
  { name: "UTF-16LE inside json_encode", long: true, ascii: true, print: (s) => phpJson([...s].map((c) => `${c}\0`).join("")) },
  { name: "quoted_printable_encode", long: true, print: quotedPrintable },
  { name: "htmlentities", long: true, print: htmlentities },
  { name: "numeric character references (decimal)", long: true, print: (s) => htmlspecialchars(s).replace(/[^\x00-\x7f]/gu, (c) => `&#${c.codePointAt(0)};`) },
  { name: "numeric character references (hex)", long: true, print: (s) => htmlspecialchars(s).replace(/[^\x00-\x7f]/gu, (c) => `&#x${c.codePointAt(0)!.toString(16)};`) },
];

/** PHP's quoted_printable_encode for a short line: `=`, controls and non-ASCII bytes as `=XX`. */
function quotedPrintable(s: string): string {
  return [...Buffer.from(s, "utf8")].map((b) => (b === 0x3d || b < 0x20 || b > 0x7e ? `=${b.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(b))).join("");
}

/** PHP's htmlentities (ENT_QUOTES, HTML 4.01) for the characters the test secrets hold. */
function htmlentities(s: string): string {
  const named: Record<string, string> = { "ä": "auml", "ö": "ouml", "€": "euro" };
  return htmlspecialchars(s).replace(/[^\x00-\x7f]/gu, (c) => (named[c] ? `&${named[c]};` : c));
}

/** Hostile secrets: `/`, `+`, `=`, quotes, `&`, `<>`, a backslash, non-ASCII and astral characters; 8 characters and more. */
const LONG_SECRETS = ["ab/cd+ef==", `p"a'ss&<w>rd`, "pässwörd€🔑", "back\\slash/+=~!*", "n0t-A-r3al-T0k3n"];
/** 1–3 characters: only the value and its escaped forms are redacted (the minimum-length rule). */
const SHORT_SECRETS = ["x", "é&", `/"+`];

for (const secret of [...LONG_SECRETS, ...SHORT_SECRETS]) {
  const long = [...secret].length >= 8;
  test(`secret ${JSON.stringify(secret)}: redacted in every form${long ? "" : " that applies below 8 characters"}`, () => {
    for (const form of FORMS.filter((f) => (long || !f.long) && (!f.ascii || /^[\x00-\x7f]*$/.test(secret)))) {
      const printed = form.print(secret);
      const text = `before ${printed} after`;
      const r = createRedactor([secret]);
      const out = r.redact(text);
      assert.ok(out.includes("[REDACTED]"), `${form.name}: ${text} → ${out}`);
      assert.ok(!out.includes(printed), `${form.name}: ${text} → ${out}`);
      assert.ok(out.startsWith("before ") && out.endsWith(" after"), `${form.name}: surroundings kept: ${out}`);
      if (!form.name.startsWith("base64_encode(")) assert.ok(!out.includes(secret), `${form.name}: ${out}`);
      if (printed.startsWith("{")) assert.doesNotThrow(() => JSON.parse(out.slice("before ".length, -" after".length)), `${form.name}: ${out}`);
    }
  });
}

test("below 8 characters, base64, hex and other letter cases are left alone: they occur by chance", () => {
  const r = createRedactor(["abc"]);
  assert.equal(r.redact("YWJj 616263 ABC Abc"), "YWJj 616263 ABC Abc");
  assert.equal(r.redact("xabcx"), "x[REDACTED]x", "the value itself is redacted at any length");
  assert.equal(r.redactions, 1);
});

test("from 8 characters, a secret is redacted in any letter case, and overlapping forms become one [REDACTED]", () => {
  const r = createRedactor(["Hunter2Hunter2"]);
  assert.equal(r.redact("HUNTER2HUNTER2 hunter2hunter2 hUnTeR2hUnTeR2"), "[REDACTED] [REDACTED] [REDACTED]");
  assert.equal(r.redactions, 3);
  const overlapping = createRedactor(["abcdefgh", "efghijkl"]);
  assert.equal(overlapping.redact("abcdefghijkl"), "[REDACTED]");
  const marker = createRedactor(["redacted"]);
  assert.equal(marker.redact("[REDACTED] redacted"), "[REDACTED] [REDACTED]", "the marker itself is not redacted again");
  assert.equal(marker.redactions, 1);
});

test("a match that starts or ends inside a JSON escape takes the whole escape, so the JSON still parses", () => {
  // "nabcdefgh" occurs in the escaped text of "\nabcdefgh" (the n of \n); "abcdefg\\" ends in half of a \\ pair.
  for (const [secret, value] of [
    ["nabcdefgh", "x\nabcdefgh"],
    ["abcdefg\\", "abcdefg\\\\y"],
    ["u20acabcd", "€abcd x\\u20acabcd"],
    ["abcdefgh\\", 'abcdefgh\\"'],
  ] as const) {
    const r = createRedactor([secret]);
    const out = r.redact(JSON.stringify({ v: value }));
    assert.doesNotThrow(() => JSON.parse(out), `${secret}: ${out}`);
    assert.ok(!out.includes(secret), `${secret}: ${out}`);
  }
});

test("redactJson: always valid JSON, even for a secret that is a number or JSON punctuation", () => {
  const pin = createRedactor(["12345678"]);
  assert.deepEqual(JSON.parse(pin.redactJson({ id: 12345678, n: 1, s: "pin 12345678" })), { id: "[REDACTED]", n: 1, s: "pin [REDACTED]" });
  for (const secret of ['","', '":', "true", '"abc', 'abc"']) {
    const r = createRedactor([secret]);
    const value = { stdout: `x${secret}y`, ok: true, [`k${secret}`]: 1, list: ["abc", "a"] };
    const out = r.redactJson(value);
    assert.doesNotThrow(() => JSON.parse(out), `${secret}: ${out}`);
    assert.ok(!JSON.stringify(JSON.parse(out)).includes(JSON.stringify(`x${secret}y`).slice(1, -1)), `${secret}: ${out}`);
  }
});

test("header patterns: at a line start inside JSON-escaped text, and with quoted names and values", () => {
  const r = createRedactor([]);
  const headers = "HTTP/1.1 200\nX-WP-Nonce: 9f8e7d6c5b\nAuthorization: Bearer tok.en.value\n_wpnonce=1a2b3c4d5e\nwordpress_logged_in_ab12=admin%7Ctok";
  for (const text of [JSON.stringify({ raw: headers }), JSON.stringify({ line: JSON.stringify({ raw: headers }) })]) {
    const out = r.redact(text);
    assert.doesNotMatch(out, /9f8e7d6c5b|tok\.en\.value|1a2b3c4d5e|admin%7Ctok/, out);
    assert.doesNotThrow(() => JSON.parse(out), out);
  }
  const quoted: [string, string][] = [
    [`'X-WP-Nonce': "9f8e7d6c5b"`, `'X-WP-Nonce': "[REDACTED]"`],
    [`"x-wp-nonce":"9f8e7d6c5b"`, `"x-wp-nonce":"[REDACTED]"`],
    [`'X-WP-Nonce' => '9f8e7d6c5b'`, `'X-WP-Nonce' => '[REDACTED]'`],
    [`"Authorization": "Bearer tok.en"`, `"Authorization": "Bearer [REDACTED]"`],
    [`'Authorization' => 'Basic dXNlcjpwYXNz'`, `'Authorization' => 'Basic [REDACTED]'`],
    [`"Authorization": "tok.en"`, `"Authorization": "[REDACTED]"`],
    [String.raw`{\"Authorization\": \"Bearer tok.en\", \"X-WP-Nonce\": \"9f8e7d6c5b\"}`, String.raw`{\"Authorization\": \"Bearer [REDACTED]\", \"X-WP-Nonce\": \"[REDACTED]\"}`],
  ];
  for (const [text, expected] of quoted) assert.equal(r.redact(text), expected);
  assert.equal(r.redact("the authorization: header"), "the authorization: header", "prose without a scheme is left alone");
});

test("a secret of a megabyte is redacted in every letter case without overflowing a RegExp", () => {
  const secret = `${"aB3/".repeat(1 << 18)}ä`;
  const redactor = createRedactor([secret]);
  const base64 = Buffer.from(secret, "utf8").toString("base64");
  const hex = Buffer.from(secret, "utf8").toString("hex");
  // Past SECRET_ALL_FORMS_MAX_CHARS the common forms are still redacted: as is, any case, JSON-escaped once, base64, hex, URL-encoded.
  for (const printed of [secret, secret.toUpperCase(), secret.toLowerCase(), JSON.stringify(secret).slice(1, -1), base64, hex, hex.toUpperCase(), encodeURIComponent(secret)]) {
    assert.equal(redactor.redact(`before ${printed} after`), `before ${REDACTED} after`);
  }
});

test("redactBytes masks every form of a secret in binary content with as many `*` bytes, and counts", async () => {
  const { maskBinaryContent } = await import("../src/artifact-bundle/binary-mask.js");
  const { deflateRawSync } = await import("node:zlib");
  const secret = "Zq7-s3cret/Token+42";
  const redactor = createRedactor([secret]);
  const forms = [secret, secret.toUpperCase(), Buffer.from(secret).toString("base64"), Buffer.from(secret).toString("hex")];
  for (const form of forms) {
    const bytes = Buffer.concat([Buffer.from([0, 1, 2, 0xff]), Buffer.from(form), Buffer.from([0xfe, 0])]);
    const masked = redactor.redactBytes(bytes);
    assert.equal(masked.byteLength, bytes.byteLength, form);
    assert.deepEqual([...masked.subarray(0, 4)], [0, 1, 2, 0xff]);
    assert.equal(Buffer.from(masked.subarray(4, 4 + form.length)).toString(), "*".repeat(form.length), form);
    assert.deepEqual([...masked.subarray(4 + form.length)], [0xfe, 0]);
  }
  const clean = Buffer.from("nothing secret here");
  assert.equal(redactor.redactBytes(clean), clean, "unchanged content is returned as is");
  // A deflated zip entry is masked inside, and the archive stays a zip (stored-only header fields rewritten).
  const text = Buffer.from(`before ${secret} after `.repeat(20));
  const data = deflateRawSync(text);
  const name = Buffer.from("a.txt");
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(text.length, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(text.length, 24);
  central.writeUInt16LE(name.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(local.length + name.length + data.length, 16);
  const zip = Buffer.concat([local, name, data, central, name, end]);
  assert.equal(zip.indexOf(secret), -1, "the deflated entry does not show the secret as bytes");
  const { unzipSync } = await import("fflate");
  const masked = maskBinaryContent(zip, createRedactor([secret]));
  const entry = Buffer.from(unzipSync(masked)["a.txt"]!).toString();
  assert.equal(entry, `before ${"*".repeat(secret.length)} after `.repeat(20));
});
