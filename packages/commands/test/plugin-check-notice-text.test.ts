/**
 * The check recorder's admin-notice reader (assets/plugin-check/notice-text.php), table-driven:
 * which markup is an error or warning notice, and the plain text it yields. Runs the PHP file with
 * the host's PHP (DOM and mbstring), skipped with a message where there is none.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { phpAsset } from "../src/php-source/php-assets.js";

type Notice = { type: "error" | "warning"; text: string };

const CASES: { name: string; html: string; expected: Notice[] }[] = [
  { name: "notice-error with entities and tags", html: '<div class="notice notice-error"><p><strong>Acme</strong> needs a key &amp; a &#8220;secret&#8221; &hellip;</p></div>', expected: [{ type: "error", text: "Acme needs a key & a “secret” …" }] },
  { name: "notice-warning, dismissible, whitespace collapsed", html: '<div class="notice notice-warning is-dismissible">\n  <p>Cache\n\n is   cold.</p></div>', expected: [{ type: "warning", text: "Cache is cold." }] },
  { name: "the older error class", html: '<div class="error"><p>Old style.</p></div>', expected: [{ type: "error", text: "Old style." }] },
  { name: "success and info notices are not problems", html: '<div class="notice notice-success"><p>Saved.</p></div><div class="notice notice-info"><p>FYI.</p></div><div class="updated"><p>Done.</p></div>', expected: [] },
  { name: "scripts and styles inside are not text", html: '<div class="notice notice-error"><p>Broken.</p><script>var x = "<b>no</b>";</script><style>.a{}</style></div>', expected: [{ type: "error", text: "Broken." }] },
  { name: "hidden templates (class, attribute, style, hidden ancestor) are skipped", html: '<div class="notice notice-error hidden"><p>A</p></div><div class="notice notice-error" hidden><p>B</p></div><div class="notice notice-warning" style="display: none"><p>C</p></div><div class="hidden"><div class="notice notice-error"><p>D</p></div></div>', expected: [] },
  { name: "an empty placeholder is skipped", html: '<div class="notice notice-error"><p></p></div>', expected: [] },
  { name: "a notice inside a notice is one notice", html: '<div class="notice notice-error"><p>Outer</p><div class="notice notice-warning inline"><p>inner</p></div></div>', expected: [{ type: "error", text: "Outer inner" }] },
  { name: "class names are matched whole", html: '<div class="notice-errors"><p>no</p></div><div class="my-error-box"><p>no</p></div>', expected: [] },
  { name: "UTF-8 text in a full page without a charset", html: '<html><body><div id="wpbody"><div class="notice notice-error"><p>KEKC博客 🧪 fails</p></div></div></body></html>', expected: [{ type: "error", text: "KEKC博客 🧪 fails" }] },
  { name: "several notices in page order", html: '<div class="notice notice-warning"><p>first</p></div><p>x</p><div class="notice notice-error"><p>second</p></div>', expected: [{ type: "warning", text: "first" }, { type: "error", text: "second" }] },
  { name: "long text is cut at 500 characters", html: `<div class="notice notice-error"><p>${"é".repeat(600)}</p></div>`, expected: [{ type: "error", text: "é".repeat(500) }] },
];

const hostPhp = spawnSync("php", ["-r", "echo extension_loaded('dom') && function_exists('mb_substr') ? 'ok' : 'no';"], { encoding: "utf8" });
const skip = hostPhp.stdout === "ok" ? false : "needs a host php with the dom and mbstring extensions (not found)";

test("the notice reader finds error and warning notices and gives their plain text", { skip }, () => {
  const program = `${phpAsset("plugin-check/notice-text.php")}\n$cases = json_decode(stream_get_contents(STDIN), true);\necho json_encode(array_map('wp_codebox_check_notices', $cases), JSON_UNESCAPED_UNICODE);\n`;
  const run = spawnSync("php", ["-d", "display_errors=stderr", "-r", program.replace(/^<\?php\s*/, "")], { input: JSON.stringify(CASES.map((c) => c.html)), encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const got = JSON.parse(run.stdout) as Notice[][];
  CASES.forEach((c, i) => assert.deepEqual(got[i], c.expected, c.name));
});
