/**
 * The FastCGI client against Debian's real `php-cgi -b` (started here on a socket in a temporary
 * folder, unconfined, with a few scripts): status lines, repeated Set-Cookie, bodies larger than
 * one record both ways, the body cap, PHP's error log on STDERR, CGI parameters reaching
 * `$_SERVER`. Skipped, naming the package, when php-cgi is not installed.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeParams, fastCgiRequest, parseCgiHeaders, waitForSocket, type FastCgiResponse } from "../src/fastcgi-client.js";

const PHP_CGI = "/usr/bin/php-cgi";
const skip = existsSync(PHP_CGI) ? false : "needs Debian's php-cgi (apt-get install -y php-cgi)";

const SCRIPTS: Record<string, string> = {
  "hello.php": "<?php echo 'hello';",
  "status.php": "<?php http_response_code(418); header('X-One: 1'); echo 'teapot';",
  "cookies.php": "<?php setcookie('a', '1'); setcookie('b', '2', ['path' => '/x', 'httponly' => true]); header('Content-Type: application/json'); echo '{}';",
  "redirect.php": "<?php header('Location: /elsewhere'); exit;",
  "echo-body.php": "<?php $in = file_get_contents('php://input'); echo strlen($in), ':', md5($in);",
  "big.php": "<?php echo str_repeat('x', 200000);",
  "server.php": "<?php echo json_encode(['method' => $_SERVER['REQUEST_METHOD'], 'uri' => $_SERVER['REQUEST_URI'], 'host' => $_SERVER['HTTP_HOST'], 'q' => $_GET, 'post' => $_POST, 'cookie' => $_COOKIE, 'long' => strlen($_SERVER['HTTP_X_LONG'] ?? '')]);",
  "fatal.php": "<?php\necho 'before';\nmissing_function();\n",
  "empty.php": "<?php http_response_code(204);",
};

interface Case {
  name: string;
  script: string;
  method?: string;
  params?: Record<string, string>;
  body?: Buffer;
  capBytes?: number;
  check(r: FastCgiResponse): void;
}

const CASES: Case[] = [
  { name: "a plain page is 200 with PHP's default content-type", script: "hello.php", check: (r) => {
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), "hello");
    assert.match(r.headers["content-type"]?.[0] ?? "", /^text\/html/);
    assert.equal(r.appStatus, 0);
  } },
  { name: "http_response_code() becomes the status; other headers stay", script: "status.php", check: (r) => {
    assert.equal(r.status, 418);
    assert.deepEqual(r.headers["x-one"], ["1"]);
    assert.equal(r.body.toString(), "teapot");
    assert.equal(r.headers.status, undefined);
  } },
  { name: "two setcookie() calls are two set-cookie values", script: "cookies.php", check: (r) => {
    assert.equal(r.headers["set-cookie"]?.length, 2);
    assert.equal(r.headers["set-cookie"]?.[0], "a=1");
    assert.match(r.headers["set-cookie"]?.[1] ?? "", /^b=2; path=\/x; HttpOnly$/);
    assert.deepEqual(r.headers["content-type"], ["application/json"]);
  } },
  { name: "a Location header alone is a 302", script: "redirect.php", check: (r) => {
    assert.equal(r.status, 302);
    assert.deepEqual(r.headers.location, ["/elsewhere"]);
    assert.equal(r.bodyBytes, 0);
  } },
  { name: "a body over one record (200 KB) reaches php://input whole", script: "echo-body.php", method: "POST", body: Buffer.alloc(200_000, 7), check: (r) => {
    assert.equal(r.body.toString(), `200000:${createHash("md5").update(Buffer.alloc(200_000, 7)).digest("hex")}`);
  } },
  { name: "a response over one record arrives whole", script: "big.php", check: (r) => {
    assert.equal(r.bodyBytes, 200_000);
    assert.equal(r.body.length, 200_000);
    assert.equal(r.truncated, false);
  } },
  { name: "the body cap keeps the first bytes and counts the rest", script: "big.php", capBytes: 1000, check: (r) => {
    assert.equal(r.body.length, 1000);
    assert.equal(r.bodyBytes, 200_000);
    assert.equal(r.truncated, true);
  } },
  { name: "CGI parameters fill $_SERVER, $_GET, $_POST and $_COOKIE; a long header value survives", script: "server.php", method: "POST", params: { QUERY_STRING: "a=1&b[]=2", REQUEST_URI: "/server.php?a=1&b[]=2", HTTP_HOST: "wp-codebox.test", HTTP_COOKIE: "k=v; x=y%20z", CONTENT_TYPE: "application/x-www-form-urlencoded", HTTP_X_LONG: "l".repeat(300) }, body: Buffer.from("p=q"), check: (r) => {
    assert.deepEqual(JSON.parse(r.body.toString()), { method: "POST", uri: "/server.php?a=1&b[]=2", host: "wp-codebox.test", q: { a: "1", b: ["2"] }, post: { p: "q" }, cookie: { k: "v", x: "y z" }, long: 300 });
  } },
  { name: "a fatal error is a 500 with PHP's log line (file:line) on STDERR", script: "fatal.php", check: (r) => {
    assert.equal(r.status, 500);
    assert.equal(r.body.toString(), "before");
    assert.match(r.stderr, /PHP Fatal error: +Uncaught Error: Call to undefined function missing_function\(\) in \/.*fatal\.php:3/);
  } },
  { name: "a 204 with no body", script: "empty.php", check: (r) => {
    assert.equal(r.status, 204);
    assert.equal(r.bodyBytes, 0);
  } },
];

describe("FastCGI client against php-cgi", { skip }, () => {
  let dir: string;
  let child: ChildProcess;
  let socket: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "wp-codebox-fcgi-test-"));
    for (const [name, source] of Object.entries(SCRIPTS)) writeFileSync(join(dir, name), source);
    socket = join(dir, "php.sock");
    child = spawn(PHP_CGI, ["-d", "display_errors=0", "-d", "log_errors=1", "-d", "html_errors=0", "-d", "cgi.fix_pathinfo=0", "-b", socket], { stdio: "ignore", detached: true, env: { PATH: "/usr/bin:/bin", PHP_FCGI_CHILDREN: "2" } });
    await waitForSocket(socket, 10_000);
  });
  after(() => {
    // php-cgi's children outlive a killed parent: the whole process group goes.
    if (child?.pid) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  for (const c of CASES) {
    it(c.name, async () => {
      const body = c.body ?? Buffer.alloc(0);
      const params: Record<string, string> = {
        GATEWAY_INTERFACE: "CGI/1.1",
        REQUEST_METHOD: c.method ?? "GET",
        SCRIPT_FILENAME: join(dir, c.script),
        SCRIPT_NAME: `/${c.script}`,
        REQUEST_URI: `/${c.script}`,
        QUERY_STRING: "",
        SERVER_PROTOCOL: "HTTP/1.1",
        CONTENT_LENGTH: String(body.length),
        ...(c.params ?? {}),
      };
      c.check(await fastCgiRequest(socket, { params, body }, { capBytes: c.capBytes ?? 1 << 20 }));
    });
  }
  it("ten requests at once all get their own answer", async () => {
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => fastCgiRequest(socket, { params: { REQUEST_METHOD: "GET", SCRIPT_FILENAME: join(dir, "server.php"), QUERY_STRING: `a=${i}`, REQUEST_URI: "/", HTTP_HOST: "h" } }, { capBytes: 1 << 20 })));
    assert.deepEqual(all.map((r) => JSON.parse(r.body.toString()).q.a), Array.from({ length: 10 }, (_, i) => String(i)));
  });
  it("an unreachable socket rejects", async () => {
    await assert.rejects(fastCgiRequest(join(dir, "nothing.sock"), { params: {} }, { capBytes: 10 }), /ENOENT/);
  });
});

describe("FastCGI encoding", () => {
  it("name-value lengths use 1 byte below 128 and 4 bytes from 128", () => {
    const short = encodeParams({ A: "b" });
    assert.deepEqual([...short], [1, 1, 65, 98]);
    const long = encodeParams({ K: "v".repeat(200) });
    assert.deepEqual([...long.subarray(0, 5)], [1, 0x80, 0, 0, 200]);
    assert.equal(long.length, 1 + 4 + 1 + 200);
  });
  const table: [string, number, Record<string, string[]>][] = [
    ["Status: 404 Not Found\r\nContent-Type: text/html", 404, { "content-type": ["text/html"] }],
    ["Set-Cookie: a=1\r\nSet-Cookie: b=2", 200, { "set-cookie": ["a=1", "b=2"] }],
    ["Location: /x", 302, { location: ["/x"] }],
    ["Status: 301\nLocation: /y", 301, { location: ["/y"] }],
  ];
  for (const [head, status, headers] of table) {
    it(`parses ${JSON.stringify(head)}`, () => assert.deepEqual(parseCgiHeaders(head), { status, headers }));
  }
});
