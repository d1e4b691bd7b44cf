import { test } from "node:test";
import assert from "node:assert/strict";
import { createRedactor } from "../src/redaction.js";

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
