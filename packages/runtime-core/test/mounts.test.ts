import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseMountFlag, pluginMount, resolveMounts, themeMount } from "../src/mounts.js";
import { scratchDir } from "../../../test/support/scratch-dir.js";

async function fixture() {
  const dir = await realpath(scratchDir("wpcb-mounts-"));
  await mkdir(join(dir, "plugin", "inc"), { recursive: true });
  await writeFile(join(dir, "plugin", "plugin.php"), "<?php // plugin");
  await writeFile(join(dir, "secret.txt"), "host secret");
  return dir;
}

test("resolveMounts resolves sources and normalises targets", async () => {
  const dir = await fixture();
  await symlink("../plugin.php", join(dir, "plugin", "inc", "inside-link.php")); // stays inside: allowed
  const [m, f, w] = resolveMounts(
    [
      { source: "plugin", target: "/wordpress/wp-content/plugins/plugin/", mode: "readonly" },
      { source: join(dir, "secret.txt"), target: "/workspace//data/secret.txt", mode: "readwrite" },
      { source: "plugin", target: "/workspace", mode: "readonly" },
    ],
    dir,
  );
  assert.deepEqual(m, { source: join(dir, "plugin"), target: "/wordpress/wp-content/plugins/plugin", mode: "readonly", kind: "directory" });
  assert.equal(f!.kind, "file");
  assert.equal(f!.target, "/workspace/data/secret.txt");
  assert.equal(w!.target, "/workspace");
});

test("mount-escape: a .. segment in the target", async () => {
  const dir = await fixture();
  assert.throws(
    () => resolveMounts([{ source: "plugin", target: "/wordpress/wp-content/plugins/../../wp-config.php", mode: "readonly" }], dir),
    (e: any) => e.code === "mount-escape" && e.message.includes(".."),
  );
});

test("mount-target-outside-sandbox: target not under wp-content or /workspace", async () => {
  const dir = await fixture();
  for (const target of ["/etc/passwd", "/wordpress/wp-config.php", "/workspaces/x", "workspace/x", "/tmp"]) {
    assert.throws(
      () => resolveMounts([{ source: "plugin", target, mode: "readonly" }], dir),
      (e: any) => e.code === "mount-target-outside-sandbox" && e.message.includes(target),
      target,
    );
  }
});

test("mount-source-missing: source does not exist", async () => {
  const dir = await fixture();
  assert.throws(
    () => resolveMounts([{ source: "nope", target: "/workspace/nope", mode: "readonly" }], dir),
    (e: any) => e.code === "mount-source-missing" && e.message.includes(join(dir, "nope")),
  );
});

test("mount-symlink-escape: a symlink inside the source points outside (names the link)", async () => {
  const dir = await fixture();
  await symlink(join(dir, "secret.txt"), join(dir, "plugin", "inc", "leak.txt"));
  assert.throws(
    () => resolveMounts([{ source: "plugin", target: "/wordpress/wp-content/plugins/plugin", mode: "readonly" }], dir),
    (e: any) => e.code === "mount-symlink-escape" && e.data.link === join(dir, "plugin", "inc", "leak.txt") && e.message.includes("leak.txt"),
  );
  // A relative, dangling link that climbs out is refused too.
  const dir2 = await fixture();
  await symlink("../../../nowhere", join(dir2, "plugin", "inc", "dangling"));
  assert.throws(() => resolveMounts([{ source: "plugin", target: "/workspace/p", mode: "readonly" }], dir2), { code: "mount-symlink-escape" });
});

test("invalid-mount: bad mode and duplicate targets", async () => {
  const dir = await fixture();
  assert.throws(() => resolveMounts([{ source: "plugin", target: "/workspace/p", mode: "rw" as never }], dir), { code: "invalid-mount" });
  assert.throws(
    () =>
      resolveMounts(
        [
          { source: "plugin", target: "/workspace/p", mode: "readonly" },
          { source: "secret.txt", target: "/workspace/p/", mode: "readonly" },
        ],
        dir,
      ),
    (e: any) => e.code === "invalid-mount" && e.message.includes("/workspace/p"),
  );
});

// The whole /workspace may be a read-write host folder; then nothing may be mounted inside it, and
// a file can never be the /workspace folder.
const wholeWorkspaceCases: [string, { source: string; target: string; mode: "readonly" | "readwrite" }[], string | null][] = [
  ["read-write /workspace alone", [{ source: "plugin", target: "/workspace", mode: "readwrite" }], null],
  ["read-write /workspace/ (trailing slash)", [{ source: "plugin", target: "/workspace/", mode: "readwrite" }], null],
  ["read-only /workspace with a read-write mount inside", [{ source: "plugin", target: "/workspace", mode: "readonly" }, { source: "secret.txt", target: "/workspace/s", mode: "readwrite" }], null],
  ["read-write /workspace with a read-only mount inside", [{ source: "plugin", target: "/workspace", mode: "readwrite" }, { source: "secret.txt", target: "/workspace/s", mode: "readonly" }], "invalid-mount"],
  ["a read-write mount inside, listed first", [{ source: "secret.txt", target: "/workspace/s", mode: "readwrite" }, { source: "plugin", target: "/workspace", mode: "readwrite" }], "invalid-mount"],
  ["a file at /workspace", [{ source: "secret.txt", target: "/workspace", mode: "readonly" }], "invalid-mount"],
  ["read-write /workspace beside a wp-content mount", [{ source: "plugin", target: "/workspace", mode: "readwrite" }, { source: "plugin", target: "/wordpress/wp-content/plugins/p", mode: "readwrite" }], null],
];
for (const [name, mounts, code] of wholeWorkspaceCases) {
  test(`whole /workspace: ${name} → ${code ?? "accepted"}`, async () => {
    const dir = await fixture();
    if (code === null) {
      assert.equal(resolveMounts(mounts, dir).length, mounts.length);
      return;
    }
    assert.throws(() => resolveMounts(mounts, dir), (e: any) => e.code === code && /\/workspace/.test(e.message));
  });
}

test("parseMountFlag and plugin/theme helpers", () => {
  assert.deepEqual(parseMountFlag("./data:/workspace/data:ro"), { source: "./data", target: "/workspace/data", mode: "readonly" });
  assert.deepEqual(parseMountFlag("./data:/workspace/data"), { source: "./data", target: "/workspace/data", mode: "readwrite" });
  assert.deepEqual(parseMountFlag("C:/x:y:/workspace/d:rw"), { source: "C:/x:y", target: "/workspace/d", mode: "readwrite" });
  assert.throws(() => parseMountFlag("./data"), { code: "invalid-mount" });
  assert.throws(() => parseMountFlag(":/workspace"), { code: "invalid-mount" });
  assert.deepEqual(pluginMount("./my-plugin/", "/home/u"), { source: "./my-plugin/", target: "/wordpress/wp-content/plugins/my-plugin", mode: "readonly" });
  assert.equal(themeMount("/src/themes/tt4").target, "/wordpress/wp-content/themes/tt4");
});

test("--mount with an unknown mode suffix is refused instead of becoming a read-write mount", async () => {
  const { parseMountFlag } = await import("../src/mounts.js");
  for (const flag of ["/tmp/x:/workspace/c:RO", "/tmp/x:/workspace/c:rx"]) {
    assert.throws(() => parseMountFlag(flag), (e: unknown) => (e as { code?: string }).code === "invalid-mount");
  }
  assert.equal(parseMountFlag("/tmp/x:/workspace/c:ro").mode, "readonly");
  assert.equal(parseMountFlag("/tmp/x:/workspace/c").mode, "readwrite");
});
