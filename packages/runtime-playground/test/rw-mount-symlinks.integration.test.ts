/**
 * PHP in a read-write mount cannot plant a symlink that leads out of the mount: `symlink()` and
 * `rename()` that would do so fail (EPERM), links that stay inside work and are stored with
 * relative text, and the folder still passes the pre-boot mount check afterwards.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveMounts, type Runtime } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";

const host = mkdtempSync(join(tmpdir(), "wp-codebox-rw-links-"));
const data = join(host, "data");
mkdirSync(join(data, "a", "b"), { recursive: true });
writeFileSync(join(data, "file.txt"), "inside");
const MOUNT = { source: data, target: "/workspace/data", mode: "readwrite" as const };
let runtime: Runtime;

before(async () => {
  runtime = await createPlaygroundBackend().create({ mounts: [MOUNT] });
});
after(async () => {
  await runtime?.dispose();
  rmSync(host, { recursive: true, force: true });
});

async function php(code: string): Promise<string> {
  const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php ${code}`] });
  assert.equal(result.status, "ok", JSON.stringify(result.error));
  return result.stdout;
}

const D = "/workspace/data";
// [name, PHP that creates or moves a link (an expression), allowed?, host link to check, its expected text]
const cases: [string, string, boolean, string?, string?][] = [
  ["absolute host path outside", `symlink('/etc/passwd', '${D}/l1')`, false],
  ["sandbox path outside the mount", `symlink('/wordpress/wp-config.php', '${D}/l2')`, false],
  ["the mount's parent", `symlink('..', '${D}/l3')`, false],
  ["relative escape from a subfolder", `symlink('../../../etc', '${D}/a/l4')`, false],
  ["relative escape through the sandbox root", `symlink('../../../../../../../../etc/passwd', '${D}/a/b/l5')`, false],
  ["relative link inside", `symlink('file.txt', '${D}/ok1')`, true, "ok1", "file.txt"],
  ["absolute sandbox path inside, stored relative", `symlink('${D}/file.txt', '${D}/a/ok2')`, true, "a/ok2", "../file.txt"],
  ["relative link up into the mount", `symlink('../../file.txt', '${D}/a/b/ok3')`, true, "a/b/ok3", "../../file.txt"],
  ["moving a relative link where it would lead out", `rename('${D}/a/ok2', '${D}/moved')`, false],
  ["moving a folder whose link would then lead out", `rename('${D}/a/b', '${D}/b2')`, false],
  ["moving a folder whose links stay inside", `rename('${D}/a', '${D}/x/a')`, true],
];

for (const [name, code, allowed, link, text] of cases) {
  test(`read-write mount: ${name} is ${allowed ? "allowed" : "refused"}`, { timeout: 120_000 }, async () => {
    if (name.startsWith("moving a folder whose links stay")) await php(`mkdir('${D}/x');`);
    const out = await php(`echo json_encode(@${code});`);
    assert.equal(out, allowed ? "true" : "false", `${code} returned ${out}`);
    if (link) {
      assert.equal(readlinkSync(join(data, link)), text);
      assert.equal(await php(`echo file_get_contents('${D}/${link}');`), "inside");
    }
  });
}

test("after all of that, no link in the folder leads out and the next run would accept the mount", () => {
  for (const name of ["l1", "l2", "l3", "a/l4", "a/b/l5", "moved", "b2"]) assert.equal(existsSync(join(data, name)) || lstatSync(join(data, name), { throwIfNoEntry: false }) !== undefined, false, name);
  assert.doesNotThrow(() => resolveMounts([MOUNT], host));
});
