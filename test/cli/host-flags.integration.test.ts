/**
 * Integration: the host process's Node flags do not leak into the PHP worker
 * threads. The Node API boots real WordPress and runs PHP from processes started the ways people
 * start scripts: `node --input-type=module -e`, with `--import tsx`, with `--inspect`, and from
 * TypeScript sources. Each case is a separate Node process (about 3 s each with the cached site);
 * the published build (`dist/`, built by `npm test`) is what `-e` imports unless `--conditions=source`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./spawn-cli.js";

const SCRIPT = `
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";
const runtime = await createPlaygroundBackend().create({});
try {
  const r = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_bloginfo('version'), ' ', class_exists('Collator') ? 'intl' : 'no-intl';"] });
  console.log(JSON.stringify({ status: r.status, stdout: r.stdout, error: r.error, extensions: runtime.info().phpExtensions }));
} finally {
  await runtime.dispose();
}
`;

function node(flags: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, "--input-type=module", "-e", SCRIPT], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const built = existsSync(join(REPO_ROOT, "packages/runtime-playground/dist/index.js"));

const cases: [string, string[], boolean][] = [
  ["node --input-type=module -e (the published build)", [], built],
  ["node --import tsx --input-type=module -e", ["--import", "tsx"], built],
  ["node --inspect=127.0.0.1:0 --input-type=module -e", ["--inspect=127.0.0.1:0"], built],
  ["node --conditions=source --import tsx --input-type=module -e (TypeScript sources)", ["--conditions=source", "--import", "tsx"], true],
];

for (const [name, flags, runnable] of cases) {
  test(`the Node API boots WordPress from ${name}`, { skip: runnable ? false : "no dist/ build: run npm run build", timeout: 180_000 }, async () => {
    const run = await node(flags);
    const show = `exit ${run.code}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr.slice(-3000)}`;
    assert.equal(run.code, 0, show);
    const line = run.stdout.trim().split("\n").at(-1)!;
    const out = JSON.parse(line) as { status: string; stdout: string; extensions: string[] };
    assert.equal(out.status, "ok", show);
    assert.match(out.stdout, /^\d+\.\d+(\.\d+)? intl$/);
    assert.deepEqual(out.extensions, ["intl"]);
  });
}
