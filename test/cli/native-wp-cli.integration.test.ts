/**
 * `wordpress.wp-cli` on the native backend, on real parts: the real WP-CLI phar
 * (`$WP_CODEBOX_TEST_SHARED/wp-cli/`) on Debian's PHP, confined, against the sandbox's MariaDB.
 * Skipped, naming what is missing, without the Debian packages or the shared phar.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExecutionResult, Runtime } from "@wp-codebox/runtime-core";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { createBackend } from "../../packages/cli/src/commands/backends.js";

const status = nativeToolsStatus();
const phar = process.env.WP_CODEBOX_TEST_SHARED ? join(process.env.WP_CODEBOX_TEST_SHARED, "wp-cli", "wp-cli-2.10.0.phar") : undefined;
const skip = !status.ok
  ? `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`
  : !phar || !existsSync(phar)
    ? "needs the shared WP-CLI phar: set WP_CODEBOX_TEST_SHARED to the folder holding wp-cli/wp-cli-2.10.0.phar"
    : false;

describe("wordpress.wp-cli on the native backend", { skip, timeout: 300_000 }, () => {
  let runtime: Runtime;
  const wp = (command: string): Promise<ExecutionResult> => runtime.execute({ command: "wordpress.wp-cli", args: [`command=${command}`] });

  before(async () => {
    runtime = await createBackend("native", { cwd: process.cwd() }).create({ wpCliPhar: phar! });
  });
  after(async () => runtime?.dispose());

  it("option get siteurl --format=json is the site URL in result.json", async () => {
    const r = await wp("option get siteurl --format=json");
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
    assert.equal(r.json, "http://wp-codebox.test");
  });

  it("post list --format=json is parsed into result.json and sees a post run-php made in MariaDB", async () => {
    const made = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo wp_insert_post(['post_title' => 'Native WP-CLI', 'post_status' => 'publish']);"] });
    assert.equal(made.status, "ok", JSON.stringify(made.error));
    const r = await wp("post list --format=json --fields=ID,post_title");
    assert.equal(r.status, "ok", JSON.stringify(r.error ?? r.stderr));
    const posts = r.json as { ID: number; post_title: string }[];
    assert.ok(Array.isArray(posts));
    assert.ok(posts.some((p) => String(p.ID) === made.stdout && p.post_title === "Native WP-CLI"), JSON.stringify(posts));
  });

  it("run-php after a wp-cli write sees the write (no WordPress loaded before it is reused)", async () => {
    // A run-php leaves a child with WordPress preloaded (options cached); WP-CLI then writes from outside it.
    for (const title of ["Before WP-CLI", "Written by WP-CLI"]) {
      const first = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] });
      assert.equal(first.status, "ok", JSON.stringify(first.error));
      const w = await wp(`option update blogname "${title}"`);
      assert.equal(w.status, "ok", JSON.stringify(w.error ?? w.stderr));
      const read = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] });
      assert.equal(read.stdout, title);
    }
  });

  it("a failing command is wp-cli-failed with WP-CLI's message", async () => {
    const r = await wp("option get wp_codebox_no_such_option");
    assert.equal(r.status, "error");
    assert.equal(r.error?.code, "wp-cli-failed");
    assert.match(r.error!.message, /Could not get 'wp_codebox_no_such_option' option/);
  });

  it("a phar that does not exist is wp-cli-unavailable (a result), and the sandbox lives on", async () => {
    const bare = await createBackend("native", { cwd: process.cwd() }).create({ wpCliPhar: "/nonexistent/wp-cli.phar" });
    try {
      const r = await bare.execute({ command: "wordpress.wp-cli", args: ["command=option get home"] });
      assert.equal(r.status, "error");
      assert.equal(r.error?.code, "wp-cli-unavailable");
      assert.match(r.error!.message, /--wp-cli-phar "?\/nonexistent\/wp-cli\.phar"? does not exist/);
      const alive = await bare.execute({ command: "wordpress.run-php", args: ["code=<?php echo 'alive';"] });
      assert.equal(alive.stdout, "alive");
    } finally {
      await bare.dispose();
    }
  });
});
