/**
 * The native backend's web-server and reset steps against what a sandbox's PHP leaves in the
 * folders it shares with the host (which runs as root): a static file name holding a link to a
 * host canary, a FIFO, a link to /dev/zero, a link to a host folder; PHP trying to swap php-cgi's
 * socket for a link; links left for reset() to give back to the sandbox's uid. Each host step ends
 * (a FIFO never blocks it), the canary keeps its content and owner, and no result carries it.
 * Skipped, naming the packages, without the native backend's Debian packages.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionResult, Runtime } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { createBackend } from "../packages/cli/src/commands/backends.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

const CANARY = "HOST-CANARY-7f3a";

/** What PHP leaves at a static file's name in wp-content (`$p`; `$host` the host folder). */
const STATIC_PLANTS: { name: string; php: string }[] = [
  { name: "a link to a host file", php: "symlink($host . '/canary.css', $p);" },
  { name: "a FIFO", php: "posix_mkfifo($p, 0666);" },
  { name: "a link to /dev/zero", php: "symlink('/dev/zero', $p);" },
  { name: "a folder in place of the file", php: "mkdir($p);" },
];

describe("the host's web and reset steps leave host files alone", { skip, timeout: 600_000 }, () => {
  let root: string;
  let host: string;
  let runtime: Runtime;
  const results: ExecutionResult[] = [];
  const run = async (command: string, args: string[]) => {
    const result = await runtime.execute({ command, args, timeoutMs: 20_000 });
    results.push(result);
    return result;
  };
  const php = (code: string) => run("wordpress.run-php", [`code=<?php ${code}`]);
  const hostUnchanged = () => {
    assert.deepEqual(readdirSync(host).sort(), ["canary.css", "sub"]);
    assert.equal(readFileSync(join(host, "canary.css"), "utf8"), CANARY);
    assert.equal(readFileSync(join(host, "sub", "canary.css"), "utf8"), CANARY);
    for (const path of [host, join(host, "canary.css"), join(host, "sub"), join(host, "sub", "canary.css")]) assert.equal(statSync(path).uid, process.getuid!(), `${path} changed owner`);
    for (const r of results) assert.doesNotMatch(JSON.stringify(r), new RegExp(CANARY), "the canary's content reached a result");
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "wp-codebox-hostfs-"));
    host = join(root, "host");
    mkdirSync(join(host, "sub"), { recursive: true });
    writeFileSync(join(host, "canary.css"), CANARY);
    writeFileSync(join(host, "sub", "canary.css"), CANARY);
    runtime = await createBackend("native", { cwd: process.cwd() }).create({ siteRequestTimeoutMs: 8_000 });
  });
  after(async () => {
    await runtime?.dispose();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  for (const plant of STATIC_PLANTS) {
    it(`${plant.name} at a static file's name: the request ends without the canary`, async () => {
      const made = await php(`$host = ${JSON.stringify(host)}; $p = WP_CONTENT_DIR . '/planted.css'; @unlink($p); @rmdir($p); ${plant.php} echo 'made';`);
      assert.equal(made.stdout, "made", JSON.stringify(made.error));
      const got = await run("wordpress.http-request", ["path=/wp-content/planted.css", "as=anonymous"]);
      assert.notEqual((got.json as { status?: number } | undefined)?.status, 200, JSON.stringify(got.json));
      hostUnchanged();
    });
  }

  it("a link to a host folder in place of a wp-content folder: its files are not served", async () => {
    const made = await php(`symlink(${JSON.stringify(join(host, "sub"))}, WP_CONTENT_DIR . '/linked'); echo 'made';`);
    assert.equal(made.stdout, "made", JSON.stringify(made.error));
    const got = await run("wordpress.http-request", ["path=/wp-content/linked/canary.css", "as=anonymous"]);
    assert.notEqual((got.json as { status?: number } | undefined)?.status, 200);
    hostUnchanged();
  });

  it("a page cannot swap php-cgi's socket for a link: the next pages are still served", async () => {
    const made = await php(
      `file_put_contents(WP_CONTENT_DIR . '/swap-sock.php', '<?php $s = "/run/wp-codebox-fcgi/php.sock"; echo json_encode([@unlink($s), @symlink(${JSON.stringify(join(host, "canary.css")).replace(/'/g, "\\'")}, $s), is_link($s)]);'); echo 'made';`,
    );
    assert.equal(made.stdout, "made", JSON.stringify(made.error));
    const swapped = await run("wordpress.http-request", ["path=/wp-content/swap-sock.php", "as=anonymous"]);
    assert.equal(swapped.stdout, "[false,false,false]", JSON.stringify(swapped.json));
    const next = await run("wordpress.http-request", ["path=/", "as=anonymous"]);
    assert.equal((next.json as { status?: number }).status, 200, JSON.stringify(next.error));
    hostUnchanged();
  });

  it("links to host files and folders left in wp-content: reset() removes them and gives nothing of the host to the sandbox", async () => {
    const made = await php(
      `$host = ${JSON.stringify(host)}; mkdir(WP_CONTENT_DIR . '/deep/er', 0777, true); symlink($host . '/canary.css', WP_CONTENT_DIR . '/deep/er/file-link'); symlink($host . '/sub', WP_CONTENT_DIR . '/deep/dir-link'); posix_mkfifo(WP_CONTENT_DIR . '/deep/fifo', 0666); echo 'made';`,
    );
    assert.equal(made.stdout, "made", JSON.stringify(made.error));
    await runtime.reset!();
    hostUnchanged();
    const after = await php("echo json_encode([file_exists(WP_CONTENT_DIR . '/deep'), is_link(WP_CONTENT_DIR . '/linked'), file_exists(WP_CONTENT_DIR . '/planted.css')]);");
    assert.equal(after.stdout, "[false,false,false]", JSON.stringify(after.error));
    const page = await run("wordpress.http-request", ["path=/", "as=anonymous"]);
    assert.equal((page.json as { status?: number }).status, 200, JSON.stringify(page.error));
    hostUnchanged();
  });
});
