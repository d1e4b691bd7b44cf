/**
 * Integration: `wp-codebox run` really boots WordPress (about 2 s per boot from the cached
 * installed site; the first run ever installs it, a few seconds). Uses the default cache directory so
 * runs share the installed site. The CLI paths that boot nothing are in `test/cli/cli.integration.test.ts`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { show, spawnCli } from "./spawn-cli.js";

let tmp: string;
const env = { WP_CODEBOX_CACHE_DIR: undefined } as unknown as NodeJS.ProcessEnv;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-cli-run-"));
  delete process.env.WP_CODEBOX_CACHE_DIR;
});
after(() => rmSync(tmp, { recursive: true, force: true }));

describe("wp-codebox run (boots WordPress)", { timeout: 180_000 }, () => {
  it("runs PHP, prints the result as JSON and writes a bundle that verifies", async () => {
    const dir = join(tmp, "version");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", 'code=<?php echo get_bloginfo("version");', "--json", "--artifacts", dir], { env });
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout);
    assert.equal(out.result.status, "ok");
    assert.equal(out.result.stdout, "6.5.5");
    assert.equal(out.bundle.directory, dir);
    assert.match(out.bundle.id, /^artifact-bundle-sha256-[0-9a-f]{64}$/);
    assert.equal(out.bundle.valid, true);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
    const commands = readFileSync(join(dir, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(commands.length, 1);
    assert.equal(commands[0].stdout, "6.5.5");
    assert.match(run.stderr, /Booted WordPress 6\.5\.5/);
    const verify = await spawnCli(["artifacts", "verify", dir]);
    assert.equal(verify.code, 0, show(verify));
  });

  it("human output: command stdout on stdout, summary on stderr", async () => {
    const dir = join(tmp, "human");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 'hello ' . PHP_VERSION;", "--php", "8.3", "--artifacts", dir], { env });
    assert.equal(run.code, 0, show(run));
    assert.match(run.stdout, /^hello 8\.3\.\d+$/);
    assert.match(run.stderr, /^status: +ok /m);
    assert.match(run.stderr, /^verify: +valid$/m);
  });

  it("a PHP fatal exits 1 with php-fatal, and the bundle is still written", async () => {
    const dir = join(tmp, "fatal");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php no_such_function();", "--artifacts", dir], { env });
    assert.equal(run.code, 1, show(run));
    assert.match(run.stderr, /^error\[php-fatal\]: /m);
    assert.match(run.stderr, /^status: +error \(command exit code 255\) /m);
    assert.equal((await verifyArtifactBundle(dir)).valid, true);
    const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8"));
    assert.equal(review.status, "error");
    assert.equal(review.commands[0].error.code, "php-fatal");
  });

  it("--timeout 3s on an endless loop exits 1 with timed-out at the 3 s deadline", async () => {
    const dir = join(tmp, "timeout");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php while (true) {}", "--timeout", "3s", "--json", "--artifacts", dir], { env });
    assert.equal(run.code, 1, show(run));
    const out = JSON.parse(run.stdout);
    assert.equal(out.result.status, "timed-out");
    // The deadline that stopped it is the one asked for (an event, not a wall-clock measurement).
    assert.equal(out.result.error.data.timeoutMs, 3000);
    assert.equal(out.bundle.valid, true);
    assert.match(run.stderr, /^status: +timed-out /m);
    assert.equal((await verifyArtifactBundle(dir)).valid, true);
  });

  it("a policy without the command: invalid-policy before boot, exit 2, no bundle", async () => {
    const dir = join(tmp, "denied");
    const run = await spawnCli(
      ["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--policy", '{"commands":["wordpress.rest-request"]}', "--json", "--artifacts", dir],
      { env },
    );
    assert.equal(run.code, 2, show(run));
    assert.match(run.stderr, /^error\[invalid-policy\]: The policy does not grant the capability "wordpress\.run-php"/m);
    assert.doesNotMatch(run.stderr, /Booting/);
    assert.equal(existsSync(dir), false);
  });

  it("a mount target with .. exits 2 with mount-escape, before boot", async () => {
    const dir = join(tmp, "escape");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--mount", `${tmp}:/workspace/../etc`, "--artifacts", dir], { env });
    assert.equal(run.code, 2, show(run));
    assert.match(run.stderr, /^error\[mount-escape\]: /m);
    assert.doesNotMatch(run.stderr, /Booting/);
    assert.equal(existsSync(dir), false);
  });

  it("--secret-env: PHP prints the secret encoded every way, and no bundle byte holds it in any form", async () => {
    const dir = join(tmp, "secret-forms");
    // Slash, plus, equals, quotes, ampersand, angle brackets, non-ASCII: every encoding differs from the value.
    const secret = `wpcb/Sé+cr"e't&<x>=${Math.random().toString(36).slice(2, 10)}`;
    const code = [
      "<?php $s = getenv('WPCB_FORMS_SECRET');",
      'echo "raw:", $s, "\n";',
      'echo "base64:", base64_encode($s), "\n";',
      'echo "base64-nopad:", rtrim(base64_encode($s), "="), "\n";',
      'echo "base64url:", rtrim(strtr(base64_encode($s), "+/", "-_"), "="), "\n";',
      'echo "base64-inside:", base64_encode("token=" . $s . "&more"), "\n";',
      'echo "hex:", bin2hex($s), "\n";',
      'echo "HEX:", strtoupper(bin2hex($s)), "\n";',
      'echo "upper:", strtoupper($s), "\n";',
      'echo "esc_html:", esc_html($s), "\n";',
      'echo "htmlspecialchars:", htmlspecialchars($s), "\n";',
      'echo "json2:", json_encode(json_encode($s)), "\n";',
      'echo "url:", rawurlencode($s), "\n";',
      'error_log("log: " . base64_encode($s));',
    ].join(" ");
    const run = await spawnCli(["run", "--command", "wordpress.run-php", "--arg", `code=${code}`, "--secret-env", "WPCB_FORMS_SECRET", "--json", "--artifacts", dir], {
      env: { ...env, WPCB_FORMS_SECRET: secret },
    });
    assert.equal(run.code, 0, show(run));

    // What PHP printed, computed here the way PHP computes it.
    const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");
    const hex = Buffer.from(secret, "utf8").toString("hex");
    const html = secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#039;");
    const phpJson = (s: string): string => JSON.stringify(s).replace(/\//g, "\\/").replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    const printed = [
      secret,
      b64(secret),
      b64(secret).replace(/=+$/, ""),
      Buffer.from(secret, "utf8").toString("base64url"),
      b64(`token=${secret}`).slice(8, -8), // the middle of the longer base64: the secret's bytes alone
      hex,
      hex.toUpperCase(),
      secret.replace(/[a-z]/g, (c) => c.toUpperCase()),
      html,
      phpJson(phpJson(secret)).slice(3, -3),
      encodeURIComponent(secret).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    ];
    // Each as printed, and as it would sit inside a JSON artifact (escaped once more).
    const needles = [...new Set(printed.flatMap((p) => [p, JSON.stringify(p).slice(1, -1)]))];

    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    assert.ok(files.length >= 5, files.join(", "));
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const needle of needles) assert.ok(!bytes.includes(Buffer.from(needle)), `${needle} found in ${file}`);
    }
    for (const needle of needles) assert.ok(!run.stdout.includes(needle), `${needle} found in the CLI's stdout`);

    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
    const commands = readFileSync(join(dir, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const lines = (commands[0].stdout as string).trim().split("\n");
    assert.equal(lines.length, 12, commands[0].stdout);
    for (const line of lines) assert.match(line, /^[\w-]+:.*\[REDACTED\]/, commands[0].stdout);
    const review = JSON.parse(readFileSync(join(dir, "files/review.json"), "utf8"));
    assert.equal(review.redaction.applied, true);
    assert.ok(review.redaction.count >= 12, JSON.stringify(review.redaction));
  });

});
