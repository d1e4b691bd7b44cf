/**
 * Integration: a sandbox past its evidence memory budget (a long-lived `serve` or MCP sandbox)
 * keeps large output in files of its own directory, and the bundle it writes holds every byte of
 * it, redacted like any other, exactly as the commands returned it.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRedactor, verifyArtifactBundle, writeArtifactBundle, type ExecutionResult } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const SECRET = "Lk9-spilled/Secret+7";
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-long-lived-"));
let runtime: PlaygroundRuntime;

before(async () => {
  // A budget of 64 KB: the third large output is already past it.
  runtime = await createPlaygroundBackend({ evidenceMemoryBytes: 64 * 1024 }).create({ secretEnv: { TOKEN: SECRET } });
});

after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

test("large outputs past the budget leave memory for files, and the bundle has them all", { timeout: 120_000 }, async () => {
  const results: ExecutionResult[] = [];
  for (let i = 0; i < 12; i++) {
    // 40 KB each, different per call, with the secret in the middle.
    results.push(await runtime.execute({ command: "wordpress.run-php", args: ["bootstrap=none", `code=<?php echo str_repeat("call ${i} ", 2500), getenv("TOKEN"), str_repeat(".", 10000);`] }));
  }
  results.push(await runtime.execute({ command: "wordpress.http-request", args: ["path=/"] }));
  for (const r of results) assert.equal(r.status, "ok", r.error?.message);

  // The runtime's own folder for moved evidence (private: read here only to prove the move).
  const evidenceDir = join((runtime as unknown as { sandboxDir: string }).sandboxDir, "evidence");
  assert.ok(existsSync(evidenceDir) && readdirSync(evidenceDir).length >= 10, "large outputs were moved to files");

  const bundle = await writeArtifactBundle(join(scratch, "bundle"), await runtime.collectArtifacts());
  assert.deepEqual(await verifyArtifactBundle(bundle.directory), { valid: true, violations: [] });
  const recorded = readFileSync(join(bundle.directory, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as ExecutionResult);
  assert.equal(recorded.length, results.length);
  // What the bundle writer makes of each output kept in memory: the secret and credential-like values (a page's nonces) redacted.
  const redactor = createRedactor([SECRET]);
  recorded.forEach((r, i) => {
    assert.equal(r.stdout, redactor.redact(results[i]!.stdout), `call ${i}`);
    if (i < 12) assert.match(r.stdout, new RegExp(`^(call ${i} ){2500}\\[REDACTED\\]\\.{10000}$`), `call ${i}`);
  });
  assert.doesNotMatch(readFileSync(join(bundle.directory, "files/commands.jsonl"), "utf8"), new RegExp(SECRET.replace(/[/+]/g, "\\$&")));
  assert.deepEqual((recorded.at(-1)!.json as { status: number }).status, 200);
});
