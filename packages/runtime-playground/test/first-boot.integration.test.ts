/**
 * A first boot on an empty cache starts the installer's worker before the release is unpacked and
 * the sandbox's first worker while WordPress installs (both wait for the site: `awaitSite`). The
 * sandbox boots on the installed site and says it installed it; a failing install fails the boot
 * with the installer's answer and leaves no sandbox folder behind.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
import { extractZip } from "../src/site/zip.js";
import { sharedWordPressReleasesDir, WORDPRESS_MIRROR_SKIP } from "../../../test/support/wordpress-mirror.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-first-boot-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const releases = sharedWordPressReleasesDir();
const zip = releases
  ? readdirSync(releases)
      .filter((f) => /^wordpress-\d+\.\d+(?:\.\d+)?\.zip$/.test(f))
      .sort((x, y) => x.localeCompare(y, "en", { numeric: true }))
      .map((f) => join(releases, f))
      .pop()
  : undefined;
const skip = zip ? {} : { skip: WORDPRESS_MIRROR_SKIP };

/** An unpacked copy of the release, changed by `edit`, as a `--wordpress PATH` tree. */
function releaseTree(name: string, edit: (root: string) => void = () => undefined): string {
  const dir = join(scratch, name);
  extractZip(zip!, dir);
  const root = join(dir, "wordpress");
  edit(root);
  return root;
}

/** A scratch folder for sandbox folders, to see what a boot leaves there. */
function sandboxTemp(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  process.env.WP_CODEBOX_TMPDIR = dir;
  return dir;
}

test("a first boot installs the site, boots on it and says so; the next boot reuses it", { timeout: 600_000, ...skip }, async () => {
  const root = releaseTree("good");
  const temp = sandboxTemp("good-sandboxes");
  const backend = createPlaygroundBackend({ cacheDir: join(scratch, "good-cache"), offline: true });
  const code = "<?php require_once '/wordpress/wp-load.php'; echo get_option('blogname'), ' ', get_option('permalink_structure');";
  for (const expected of ["installed", "cached"]) {
    const runtime = await backend.create({ wordpress: { path: root } });
    try {
      assert.equal(runtime.info().bootMode, expected);
      const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, "bootstrap=none"] });
      assert.equal(result.stdout, "wp-codebox /%postname%/", result.stderr);
    } finally {
      await runtime.dispose();
    }
  }
  assert.deepEqual(readdirSync(temp), [], "no sandbox folder is left");
});

test("a first boot whose install fails is boot-failed with the installer's answer; no sandbox folder is left", { timeout: 600_000, ...skip }, async () => {
  const root = releaseTree("broken", (dir) => writeFileSync(join(dir, "wp-admin", "install.php"), "<?php http_response_code(500); echo 'this installer is broken';"));
  const temp = sandboxTemp("broken-sandboxes");
  const cacheDir = join(scratch, "broken-cache");
  await assert.rejects(createPlaygroundBackend({ cacheDir, offline: true }).create({ wordpress: { path: root } }), (error: unknown) => {
    assert.ok(error instanceof WpCodeboxError, String(error));
    assert.equal(error.code, "boot-failed");
    assert.match(error.message, /answered 500: this installer is broken/);
    return true;
  });
  assert.deepEqual(readdirSync(temp), [], "no sandbox folder is left");
  assert.ok(!existsSync(join(cacheDir, "sites")) || readdirSync(join(cacheDir, "sites")).every((name) => name.endsWith(".lock") === false && !name.includes("staging")), "no half-installed site is left");
});
