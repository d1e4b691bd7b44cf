/**
 * Integration: `wp-codebox serve` in one process, `run --attach`, `episode run --attach` and
 * `collect --attach` from others, against real WordPress. One serve process for the whole file
 * (one boot); the TTL path is covered in packages/live/test/live-server.test.ts. A second serve
 * (`--pool 1 --session-lease 1s`) checks that a `run --attach` killed with SIGKILL does not keep
 * the only pooled sandbox.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { REPO_ROOT, show, spawnCli } from "./spawn-cli.js";
import { CLI_ENTRY } from "../support/cli-entry.ts";
import { startServe, type ServeAddress, type ServeProcess } from "../support/serve-process.js";


let tmp: string;
let sandboxTmp: string;
let served: ServeProcess;
let address: ServeAddress & { loginUrl: string; id: string };

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wp-codebox-serve-test-"));
  sandboxTmp = join(tmp, "sandbox-tmp");
  mkdirSync(sandboxTmp);
  // A private temp dir for the sandbox, so the test can see that nothing is left behind.
  served = await startServe(["--ttl", "5m"], { env: { ...process.env, TMPDIR: sandboxTmp } });
  address = served.address as typeof address;
});

after(async () => {
  if (served?.child.exitCode === null) served.child.kill("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * Starts a CLI process from source with the serve token in its environment and resolves once its
 * stderr shows `ready` (the command is running in the sandbox).
 */
async function startAttachedCli(argv: string[], ready: string, env: NodeJS.ProcessEnv = { WP_CODEBOX_TOKEN: address.token }): Promise<{ child: ReturnType<typeof spawn>; stderr: () => string; code: Promise<number | null> }> {
  const child = spawn(process.execPath, [...CLI_ENTRY, ...argv], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const code = new Promise<number | null>((resolve) => child.on("close", resolve));
  while (!stderr.includes(ready)) {
    if (child.exitCode !== null) throw new Error(stderr);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, stderr: () => stderr, code };
}

describe("wp-codebox serve + --attach from separate processes", { timeout: 240_000 }, () => {
  it("prints one JSON line with url, loginUrl, control, token and id", () => {
    assert.deepEqual(Object.keys(address).sort(), ["control", "id", "loginUrl", "token", "url"]);
    assert.match(address.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(address.control, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(address.loginUrl.startsWith(`${address.url}/`));
    assert.ok(address.token.length >= 32);
  });

  it("the site URL serves WordPress and the login URL lands in wp-admin", async () => {
    const home = await fetch(`${address.url}/`);
    assert.equal(home.status, 200);
    assert.match(await home.text(), /wp-codebox/);
    const login = await fetch(address.loginUrl, { redirect: "manual" });
    assert.equal(login.status, 302);
    assert.equal(login.headers.get("location"), `${address.url}/wp-admin/`);
    const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const admin = await fetch(`${address.url}/wp-admin/`, { headers: { cookie }, redirect: "manual" });
    assert.equal(admin.status, 200);
    const body = await admin.text();
    assert.match(body, /<title>Dashboard/);
    const forged = await fetch(address.loginUrl.replace(/key=.*/, "key=forged"), { redirect: "manual" });
    assert.equal(forged.status, 403);
    const anonymous = await fetch(`${address.url}/wp-admin/`, { redirect: "manual" });
    assert.equal(anonymous.status, 302, "wp-admin without the login cookies still redirects to wp-login");
  });

  it("run --attach executes in the live sandbox and writes a verifying bundle", async () => {
    const dir = join(tmp, "run-attach");
    const run = await spawnCli(
      ["run", "--attach", address.control, "--command", "wordpress.run-php", "--arg", "code=<?php update_option('live_marker', 'from-attach'); echo home_url();", "--json", "--artifacts", dir],
      { env: { WP_CODEBOX_TOKEN: address.token } },
    );
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout);
    assert.equal(out.result.status, "ok");
    assert.equal(out.result.stdout, address.url);
    assert.equal(out.bundle.valid, true);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
    // State persists in the live sandbox between processes.
    const again = await spawnCli(["run", "--attach", address.control, "--token", address.token, "--command", "wordpress.run-php", "--arg", "code=<?php echo get_option('live_marker');", "--artifacts", join(tmp, "run-attach-2")]);
    assert.equal(again.code, 0, show(again));
    assert.equal(again.stdout, "from-attach");
    // Each run's bundle holds that run only, not the earlier sessions' commands in the shared sandbox.
    for (const [bundle, stdout] of [[dir, address.url], [join(tmp, "run-attach-2"), "from-attach"]] as const) {
      const commands = readFileSync(join(bundle, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(commands.map((c) => c.stdout), [stdout], bundle);
      const events = readFileSync(join(bundle, "files/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).type);
      assert.ok(events.includes("runtime-booted"), events.join(","));
    }
  });

  it("refuses a wrong token (exit 2, attach-unauthorized) and runtime flags beside --attach", async () => {
    const wrong = await spawnCli(["run", "--attach", address.control, "--token", "not-the-token", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--artifacts", join(tmp, "wrong")]);
    assert.equal(wrong.code, 2, show(wrong));
    assert.match(wrong.stderr, /^error\[attach-unauthorized\]/m);
    const flags = await spawnCli(["run", "--attach", address.control, "--token", address.token, "--php", "8.2", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;"]);
    assert.equal(flags.code, 2, show(flags));
    assert.match(flags.stderr, /error\[invalid-argument\]: --php cannot be used with --attach/);
  });

  it("episode run --attach drives the live sandbox as an episode", async () => {
    const script = join(tmp, "episode.json");
    writeFileSync(
      script,
      JSON.stringify({
        schema: "wp-codebox/episode-script/v1",
        steps: [
          { name: "after reset", action: { command: "wordpress.run-php", args: { code: "<?php var_export(get_option('live_marker'));" } } },
          { name: "seed", action: { command: "wordpress.run-php", args: { code: "<?php echo wp_insert_post(['post_title' => 'Live', 'post_status' => 'publish']) > 0 ? 'ok' : 'no';" } } },
          { name: "checkpoint", snapshot: true },
        ],
      }),
    );
    const dir = join(tmp, "episode-out");
    const run = await spawnCli(["episode", "run", script, "--attach", address.control, "--artifacts", dir, "--json"], { env: { WP_CODEBOX_TOKEN: address.token } });
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout);
    assert.equal(out.bundle.valid, true);
    const trace = JSON.parse(readFileSync(join(dir, "files/runtime-episode-trace.json"), "utf8"));
    assert.equal(trace.steps[0].execution.stdout, "false", "the episode starts from a reset sandbox");
    assert.equal(trace.steps[1].execution.stdout, "ok");
    assert.equal(trace.snapshots.length, 1);
  });

  it("collect --attach writes the bundle of everything done so far; it verifies", async () => {
    const dir = join(tmp, "collected");
    const run = await spawnCli(["collect", "--attach", address.control, "--artifacts", dir, "--json"], { env: { WP_CODEBOX_TOKEN: address.token } });
    assert.equal(run.code, 0, show(run));
    const out = JSON.parse(run.stdout);
    assert.equal(out.bundle.valid, true);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
    const commands = readFileSync(join(dir, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(out.results, commands.length);
    assert.ok(commands.some((c) => c.stdout === "from-attach"), "the earlier run --attach is in the bundle");
    const verify = await spawnCli(["artifacts", "verify", dir]);
    assert.equal(verify.code, 0, show(verify));
  });

  it("Ctrl-C on run --attach stops the command in the sandbox, says so, exits 130, and the next run --attach gets the sandbox", async () => {
    const dir = join(tmp, "interrupted");
    // Ten minutes of PHP under a ten-minute timeout: if the interrupt did not stop it, the next call would queue behind it.
    const run = await startAttachedCli(["run", "--attach", address.control, "--command", "wordpress.run-php", "--timeout", "10m", "--arg", "code=<?php sleep(600);", "--artifacts", dir], "Running wordpress.run-php");
    run.child.kill("SIGINT");
    assert.equal(await run.code, 130, run.stderr());
    const stderr = run.stderr();
    assert.match(stderr, /SIGINT received: stopping the command in the attached sandbox, writing the bundle and detaching \(wp-codebox serve keeps the sandbox\)/);
    assert.match(stderr, /error\[interrupted\]: Interrupted by SIGINT: the command was stopped in the attached sandbox, which wp-codebox serve keeps running \(attach again to go on\)/);
    assert.doesNotMatch(stderr, /disposed/);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
    const next = await spawnCli(["run", "--attach", address.control, "--command", "wordpress.run-php", "--arg", "code=<?php echo 'usable';", "--artifacts", join(tmp, "after-interrupt")], { env: { WP_CODEBOX_TOKEN: address.token } });
    assert.equal(next.code, 0, show(next));
    assert.equal(next.stdout, "usable");
  });

  it("Ctrl-C on episode run --attach stops the running step in the sandbox and says the sandbox stays up", async () => {
    const script = join(tmp, "long-episode.json");
    writeFileSync(script, JSON.stringify({ schema: "wp-codebox/episode-script/v1", steps: [{ name: "long", action: { command: "wordpress.run-php", args: { code: "<?php sleep(600);" }, timeoutMs: 600_000 } }] }));
    const run = await startAttachedCli(["episode", "run", script, "--attach", address.control, "--artifacts", join(tmp, "episode-interrupted")], "Step 1: wordpress.run-php");
    run.child.kill("SIGINT");
    assert.equal(await run.code, 130, run.stderr());
    const stderr = run.stderr();
    assert.match(stderr, /SIGINT received: stopping the command in the attached sandbox/);
    assert.match(stderr, /Interrupted by SIGINT: the command was stopped in the attached sandbox, which wp-codebox serve keeps running/);
    assert.doesNotMatch(stderr, /disposed/);
    const next = await spawnCli(["run", "--attach", address.control, "--command", "wordpress.run-php", "--arg", "code=<?php echo 'usable';", "--artifacts", join(tmp, "after-episode-interrupt")], { env: { WP_CODEBOX_TOKEN: address.token } });
    assert.equal(next.code, 0, show(next));
    assert.equal(next.stdout, "usable");
  });

  it("SIGTERM disposes the sandbox: exit 0, nothing left in its temp dir; a run --attach in flight says serve went away and still writes its bundle", async () => {
    const dir = join(tmp, "serve-gone");
    const run = await startAttachedCli(["run", "--attach", address.control, "--command", "wordpress.run-php", "--timeout", "10m", "--arg", "code=<?php echo 'x'; sleep(600);", "--artifacts", dir], "Running wordpress.run-php");
    served.child.kill("SIGTERM");
    const code = await served.exited;
    // Either serve closed the connection first (it was reached, then lost: never "unreachable"), or
    // it answered with the command that its dispose stopped.
    const ran = await run.code;
    const runStderr = run.stderr();
    if (ran === 3) assert.match(runStderr, /error\[attach-connection-lost\]: The control endpoint http:\/\/127\.0\.0\.1:\d+ closed the connection before answering this call/, runStderr);
    else {
      assert.equal(ran, 1, runStderr);
      assert.match(runStderr, /runtime-disposed/, runStderr);
    }
    assert.doesNotMatch(runStderr, /attach-unreachable\]/);
    assert.deepEqual(await verifyArtifactBundle(dir), { valid: true, violations: [] });
    const recorded = readFileSync(join(dir, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { status: string; error?: { code: string } });
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.status, "error");
    assert.ok(["attach-connection-lost", "runtime-disposed"].includes(recorded[0]!.error!.code), recorded[0]!.error!.code);
    assert.equal(code, 0, served.stderr());
    const events = served.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { event: string });
    const types = events.map((e) => e.event);
    assert.ok(types.includes("signal"), types.join(","));
    assert.ok(types.indexOf("live-disposed") > types.indexOf("signal"), types.join(","));
    // --json: stderr is machine-readable too, boot progress included (no plain "wp-codebox: …" lines).
    const lines = served.stderr().split("\n").filter((l) => l !== "");
    for (const line of lines) {
      let event: { event?: unknown; at?: unknown };
      assert.doesNotThrow(() => (event = JSON.parse(line)), `stderr line is not JSON: ${line}`);
      assert.equal(typeof event!.event, "string", line);
      assert.match(String(event!.at), /^\d{4}-\d\d-\d\dT/, line);
    }
    assert.ok(events.some((e) => e.event === "progress" && typeof (e as { data?: { message?: unknown } }).data?.message === "string"), types.join(","));
    assert.deepEqual(readdirSync(sandboxTmp).filter((n) => n.startsWith("wp-codebox-")), []);
    const after = await spawnCli(["collect", "--attach", address.control, "--token", address.token, "--artifacts", join(tmp, "too-late")]);
    assert.equal(after.code, 3, show(after));
    assert.match(after.stderr, /^error\[attach-unreachable\]/m);
  });
});

describe("serve stopped while it boots", { timeout: 120_000 }, () => {
  it("SIGTERM during the boot disposes the booting sandbox: exit 143, interrupted, nothing left in its temp dir", async () => {
    const own = join(tmp, "boot-interrupted-tmp");
    mkdirSync(own);
    const booting = await startAttachedCli(["serve", "--json"], "Booting WordPress", { TMPDIR: own });
    // The sandbox's folder exists by now: what the signal must not leave behind.
    assert.equal(readdirSync(own).filter((n) => n.startsWith("wp-codebox-")).length, 1);
    booting.child.kill("SIGTERM");
    assert.equal(await booting.code, 143, booting.stderr());
    const events = booting.stderr().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { event: string; data?: { code?: string; message?: string } });
    const types = events.map((e) => e.event);
    assert.deepEqual(types.slice(types.indexOf("signal")), ["signal", "live-closing", "live-disposed", "error"], types.join(","));
    assert.equal(events.at(-1)!.data?.code, "interrupted");
    assert.match(events.at(-1)!.data?.message ?? "", /^Interrupted by SIGTERM while the sandbox booted/);
    assert.deepEqual(readdirSync(own).filter((n) => n.startsWith("wp-codebox-")), []);
  });
});

describe("serve signalled twice", { timeout: 120_000 }, () => {
  it("a second SIGTERM quits at once, and the last stderr line is an error event saying so", async () => {
    const sent: boolean[] = [];
    const run = await spawnCli(["serve", "--json"], {
      onStderr: (stderr, child) => {
        if (sent.length === 0 && stderr.includes("Booting WordPress")) sent.push(child.kill("SIGTERM"));
        else if (sent.length === 1 && stderr.includes('"event":"signal"')) sent.push(child.kill("SIGTERM"));
      },
    });
    assert.deepEqual(sent, [true, true]);
    assert.equal(run.code, 143, show(run));
    const events = run.stderr.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { event: string; data?: { code?: string; message?: string; exitCode?: number } });
    const last = events.at(-1)!;
    assert.equal(last.event, "error", show(run));
    assert.equal(last.data?.code, "interrupted");
    assert.equal(last.data?.exitCode, 143);
    assert.match(last.data?.message ?? "", /^Second SIGTERM: quitting at once/);
  });
});

describe("serve --site-request-timeout", { timeout: 60_000 }, () => {
  it("refuses a limit that is not a duration before booting (exit 2)", async () => {
    const garbage = await spawnCli(["serve", "--site-request-timeout", "soon"]);
    assert.equal(garbage.code, 2, show(garbage));
    assert.match(garbage.stderr, /^error\[invalid-argument\]: --site-request-timeout "soon": Invalid duration/m);
  });
});

describe("serve --session-lease", { timeout: 240_000 }, () => {
  it("refuses a lease that is not a duration, or shorter than 1s, before booting (exit 2)", async () => {
    const garbage = await spawnCli(["serve", "--session-lease", "soon"]);
    assert.equal(garbage.code, 2, show(garbage));
    assert.match(garbage.stderr, /^error\[invalid-argument\]: --session-lease "soon": Invalid duration/m);
    const json = await spawnCli(["serve", "--json", "--session-lease", "soon"]);
    assert.equal(json.code, 2, show(json));
    const lines = json.stderr.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { event: string; data?: { code?: string; message?: string } });
    assert.deepEqual(lines.map((l) => l.event), ["error"], show(json));
    assert.equal(lines[0]!.data?.code, "invalid-argument");
    assert.match(lines[0]!.data?.message ?? "", /^--session-lease "soon": Invalid duration/);
    assert.equal(JSON.parse(json.stdout).error.code, "invalid-argument");
    const short = await spawnCli(["serve", "--session-lease", "200ms"]);
    assert.equal(short.code, 2, show(short));
    assert.match(short.stderr, /^error\[invalid-argument\]: --session-lease "200ms": a lease must be at least 1s/m);
  });

  it("a run --attach killed mid-call gives its pooled sandbox back after the lease; the next run --attach gets it", async () => {
    const pooled = await startServe(["--pool", "1", "--session-lease", "1s", "--ttl", "5m"]);
    const { events } = pooled;
    const waitFor = (type: string): Promise<void> => pooled.waitForEvent(type);
    try {
      const pool = pooled.address;
      const env = { ...process.env, WP_CODEBOX_TOKEN: pool.token };
      const victim = spawn(process.execPath, [...CLI_ENTRY, "run", "--attach", pool.control, "--command", "wordpress.run-php", "--arg", "code=<?php usleep(10000000);", "--artifacts", join(tmp, "killed")], { cwd: REPO_ROOT, env, stdio: "ignore" });
      const victimGone = new Promise((resolve) => victim.on("close", resolve));
      await waitFor("session-opened");
      // Give the command a moment to start (mid-call is the interesting case, not a requirement).
      await new Promise((r) => setTimeout(r, 500));
      victim.kill("SIGKILL");
      await victimGone;
      await waitFor("session-expired");
      const expired = events().find((e) => e.event === "session-expired")!;
      assert.equal(expired.data?.leaseMs, 1000);
      assert.ok(!events().some((e) => e.event === "session-closed"), "the killed client never detached");
      const next = await spawnCli(["run", "--attach", pool.control, "--command", "wordpress.run-php", "--arg", "code=<?php echo 'pool is free';", "--artifacts", join(tmp, "after-kill")], { env: { WP_CODEBOX_TOKEN: pool.token } });
      assert.equal(next.code, 0, show(next));
      assert.equal(next.stdout, "pool is free");
      await waitFor("session-closed");
    } finally {
      await pooled.stop();
    }
  });
});
