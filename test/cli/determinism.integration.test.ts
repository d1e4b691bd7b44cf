/**
 * Integration: deterministic runs (`--clock`, `--seed`).
 * - Two `recipe run`s of one recipe with the same --clock/--seed write byte-identical bundles once
 *   the fields declared in HOST_VOLATILE below are taken out.
 * - An episode that creates posts, observes the front page and the REST API as admin and takes a
 *   state export replays with every digest equal (`ok: true`), through the CLI.
 * - Different seeds give different nonces and passwords (determinism is not constancy).
 * - A seed with a policy that allows outbound network, and a malformed clock, are refused before
 *   boot with exit 2.
 * - In the browser, page Date and Math.random follow the clock and seed, on the stable origin.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@wp-codebox/cli";
import { REPORT_PAGE_PATH, STABLE_SITE_ORIGIN, readReportPageData, renderReportPage, verifyArtifactBundle, type ArtifactManifest } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RECIPE = "test/fixtures/recipes/deterministic/recipe.json";
const EPISODE = "test/fixtures/episodes/deterministic-site.json";
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-determinism-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: process.env, cwd: ROOT };
  const code = await runCli(argv, { io, installSignalHandlers: () => () => undefined });
  return { code, stdout, stderr, show: () => `exit ${code}\n--- stdout ---\n${stdout.slice(0, 3000)}\n--- stderr ---\n${stderr.slice(-3000)}` };
}

/**
 * The declared volatile fields of a bundle: everything the host alone decides. Each is removed
 * (keys) or replaced (values) before two bundles are compared byte for byte.
 */
const HOST_VOLATILE = {
  keys: {
    startedAt: "host wall clock when the runtime started a command",
    finishedAt: "host wall clock when a command finished",
    durationMs: "how long the host took",
    timingMs: "how long the host took to answer an HTTP request",
    bootDurationMs: "how long the host took to boot",
    at: "host wall clock of a lifecycle event (files/events.jsonl)",
    createdAt: "host wall clock when the bundle was written (manifest.json)",
    loopbackUrl: "the free loopback port the stable origin was mapped to",
    runId: "the run id: host wall clock plus random hex (run-YYYYMMDD-HHMMSS-xxxxxx)",
    bootMode: "whether this host's cache already held the installed site",
  },
  values: [{ pattern: /\b(exec|runtime)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, reason: "execution and runtime ids are random UUIDs drawn by the host" }],
  /** In manifest.json and the reference manifest: hashes and sizes of files holding the fields above, and the bundle id derived from them (each file's hash is still checked against its bytes by verifyArtifactBundle). */
  manifestKeys: ["sha256", "bytes", "digest", "id"],
} as const;

function normalize(value: unknown, manifest: boolean): unknown {
  if (typeof value === "string") return HOST_VOLATILE.values.reduce((s, v) => s.replace(v.pattern, "{host-id}"), value);
  if (Array.isArray(value)) return value.map((v) => normalize(v, manifest));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k in HOST_VOLATILE.keys) continue;
      if (manifest && (HOST_VOLATILE.manifestKeys as readonly string[]).includes(k)) continue;
      out[k] = normalize(v, manifest);
    }
    return out;
  }
  return value;
}

function comparable(path: string, bytes: Buffer): string {
  const manifest = path === "manifest.json" || path.endsWith("runtime-reference-manifest.json");
  if (path.endsWith(".jsonl")) return bytes.toString("utf8").split("\n").map((line) => (line ? JSON.stringify(normalize(JSON.parse(line), manifest)) : line)).join("\n");
  if (path.endsWith(".json")) return JSON.stringify(normalize(JSON.parse(bytes.toString("utf8")), manifest), null, 2);
  return bytes.toString("base64");
}

function bundleFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const full = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    files.set(relative(dir, full), readFileSync(full));
  }
  return files;
}

/** The report page rendered again from the bundle's own files (what the writer renders). */
async function pageFromFiles(dir: string): Promise<string> {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
  const files = manifest.files.filter((f) => f.path !== REPORT_PAGE_PATH && f.path !== "files/runtime-reference-manifest.json");
  return renderReportPage(await readReportPageData(dir, files, { bundleId: manifest.bundle.id, verification: { state: "sealed-by-writer" } }));
}

function phpValues(dir: string): Record<string, unknown> {
  const lines = readFileSync(join(dir, "files/commands.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { json?: Record<string, unknown>; args: string[] });
  return lines.find((l) => l.args[0]?.includes("random_int"))!.json!;
}

test("two recipe runs with the same --clock/--seed write byte-identical bundles outside the declared host fields; another seed changes the randomness", async () => {
  const dirs = [join(scratch, "recipe-a"), join(scratch, "recipe-b"), join(scratch, "recipe-c")];
  const seeds = ["7", "7", "8"];
  for (const [i, dir] of dirs.entries()) {
    const run = await cli(["recipe", "run", RECIPE, "--artifacts", dir, "--clock", "2025-03-01T12:00:00Z", "--seed", seeds[i]!]);
    assert.equal(run.code, 0, run.show());
    assert.equal((await verifyArtifactBundle(dir)).valid, true);
  }
  const [a, b] = [bundleFiles(dirs[0]!), bundleFiles(dirs[1]!)];
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
  const identical = [...a.keys()].filter((p) => a.get(p)!.equals(b.get(p)!));
  for (const [path, bytes] of a) {
    // The page renders durations and ids, so its bytes differ between runs; it must hold nothing
    // but what the bundle's files hold, which are compared here: it is re-rendered from them.
    if (path === REPORT_PAGE_PATH) {
      for (const dir of dirs.slice(0, 2)) assert.equal(await pageFromFiles(dir), readFileSync(join(dir, REPORT_PAGE_PATH), "utf8"), `${dir}: report.html is the page of the bundle's own files`);
      continue;
    }
    const [x, y] = [comparable(path, bytes), comparable(path, b.get(path)!)];
    let at = 0;
    while (at < x.length && x[at] === y[at]) at++;
    assert.ok(x === y, `${path} differs outside the declared volatile fields at ${at}: ${JSON.stringify(x.slice(Math.max(0, at - 120), at + 80))} vs ${JSON.stringify(y.slice(Math.max(0, at - 120), at + 80))}`);
  }
  // Most files need no normalising at all: the state export sections, the plan, …
  for (const p of ["files/observations/state-export-0001/posts.json", "files/observations/state-export-0001/summary.json", "files/recipe-plan.json"]) assert.ok(identical.includes(p), `${p} should be byte-identical`);

  const values = phpValues(dirs[0]!);
  // Work 0 boots, 1 is the setup step, 2 this step (run-php finds the administrator inside its own
  // request): it starts at T0 + 2 s.
  assert.equal(values.time, Date.parse("2025-03-01T12:00:00Z") / 1000 + 2);
  assert.equal(values.date, "2025-03-01T12:00:02+00:00");
  assert.equal(values.currentTime, "2025-03-01 12:00:02");
  assert.equal(values.home, `${STABLE_SITE_ORIGIN}/`);
  assert.deepEqual(phpValues(dirs[1]!), values);

  const other = phpValues(dirs[2]!);
  assert.equal(other.time, values.time, "the clock does not depend on the seed");
  for (const key of ["randomInt", "randomBytes", "mtRand", "uuid"]) assert.notEqual(other[key], values[key], `${key} must change with the seed`);
});

test("different seeds give different nonces and generated passwords; equal seeds equal ones", async () => {
  const backend = createPlaygroundBackend();
  // A nonce depends on the session token, itself drawn from the seeded entropy at login.
  const code =
    "code=<?php $exp = time() + DAY_IN_SECONDS; $token = WP_Session_Tokens::get_instance(1)->create($exp); $_COOKIE[LOGGED_IN_COOKIE] = wp_generate_auth_cookie(1, $exp, 'logged_in', $token); wp_set_current_user(1); echo json_encode(['password' => wp_generate_password(24), 'nonce' => wp_create_nonce('demo'), 'token' => $token]);";
  const draw = async (seed: number) => {
    const runtime = await backend.create({ clock: "2025-01-01T00:00:00Z", seed });
    try {
      const result = await runtime.execute({ command: "wordpress.run-php", args: [code] });
      assert.equal(result.status, "ok", result.stderr);
      return JSON.parse(result.stdout) as { password: string; nonce: string; token: string };
    } finally {
      await runtime.dispose();
    }
  };
  const [one, again, two] = [await draw(1), await draw(1), await draw(2)];
  assert.deepEqual(again, one);
  assert.notEqual(two.password, one.password);
  assert.notEqual(two.nonce, one.nonce);
  assert.notEqual(two.token, one.token);
});

test("an episode that creates posts, observes the front page and REST as admin and exports state replays with every digest equal", async () => {
  const dir = join(scratch, "episode");
  const run = await cli(["episode", "run", EPISODE, "--artifacts", dir, "--json"]);
  assert.equal(run.code, 0, run.show());
  const trace = JSON.parse(readFileSync(join(dir, "files/runtime-episode-trace.json"), "utf8"));
  assert.deepEqual(trace.runtime.determinism, { clock: "virtual", start: "2025-01-01T00:00:00.000Z", seed: 42, origin: "stable" });
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"));
  assert.deepEqual(metadata.runtime.determinism, trace.runtime.determinism);

  const replay = await cli(["episode", "replay", dir, "--json"]);
  assert.equal(replay.code, 0, replay.show());
  const report = JSON.parse(replay.stdout) as { ok: boolean; steps: { match: boolean; deterministic: boolean }[]; observations: { match: boolean }[]; reset: { observations: { match: boolean }[] } };
  assert.equal(report.ok, true);
  assert.equal(report.steps.length, 3);
  assert.ok(report.steps.every((s) => s.deterministic && s.match));
  assert.ok(report.observations.length === 1 && report.observations.every((o) => o.match));
  assert.ok(report.reset.observations.every((o) => o.match));
});

test("--seed with a policy that allows outbound network, and a malformed --clock, are refused before boot (exit 2)", async () => {
  const seeded = await cli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--seed", "1", "--policy", '{"commands":["wordpress.run-php"],"network":"allow"}', "--artifacts", join(scratch, "refused-1")]);
  assert.equal(seeded.code, 2, seeded.show());
  assert.match(seeded.stderr, /error\[seed-with-network\]/);
  const clock = await cli(["run", "--command", "wordpress.run-php", "--arg", "code=<?php echo 1;", "--clock", "yesterday", "--artifacts", join(scratch, "refused-2")]);
  assert.equal(clock.code, 2, clock.show());
  assert.match(clock.stderr, /error\[invalid-clock\]/);
  const recipe = await cli(["recipe", "run", RECIPE, "--seed", "-3", "--artifacts", join(scratch, "refused-3")]);
  assert.equal(recipe.code, 2, recipe.show());
  assert.match(recipe.stderr, /error\[invalid-seed\]/);
});

test("browser pages see the virtual clock, the seeded Math.random and the stable origin", async () => {
  const script = JSON.stringify([
    { kind: "navigate", url: "/" },
    { kind: "evaluate", expression: "location.origin", assert: STABLE_SITE_ORIGIN },
    { kind: "evaluate", expression: "new Date().getUTCFullYear()", assert: 2025 },
    // Every document reseeds Math.random from (seed, command): a reload draws the same numbers.
    { kind: "evaluate", expression: "(sessionStorage.setItem('r', String(Math.random())), true)", assert: true },
    { kind: "navigate", url: "/?again=1" },
    { kind: "evaluate", expression: "sessionStorage.getItem('r') === String(Math.random())", assert: true },
  ]);
  const run = await cli([
    "run", "--command", "wordpress.browser-actions", "--arg", `steps-json=${script}`,
    "--clock", "2025-01-01T00:00:00Z", "--seed", "5",
    "--policy", '{"commands":["wordpress.browser-actions","wordpress.browser-actions.evaluate"]}', "--artifacts", join(scratch, "browser"), "--json",
  ]);
  assert.equal(run.code, 0, run.show());
  const result = (JSON.parse(run.stdout) as { result: { json: { finalUrl: string; assertions: { passed: number; failed: number } } } }).result;
  assert.equal(result.json.finalUrl, `${STABLE_SITE_ORIGIN}/?again=1`);
  assert.deepEqual([result.json.assertions.passed, result.json.assertions.failed], [4, 0]);
});

test("sleep(), usleep() and time_nanosleep() move the virtual clock by the time slept, once", async () => {
  const runtime = await createPlaygroundBackend().create({ clock: "2024-01-01T00:00:00Z", seed: 7 });
  try {
    // Each microtime() read also moves the clock by 1 µs (VIRTUAL_CLOCK_READ_US).
    const result = await runtime.execute({
      command: "wordpress.run-php",
      args: ["bootstrap=none", "code=<?php $r = []; foreach ([0, 250000] as $us) { $t = microtime(true); usleep($us); $r[] = round((microtime(true) - $t) * 1e6); } $t = microtime(true); sleep(1); $r[] = round((microtime(true) - $t) * 1e6); $t = microtime(true); time_nanosleep(0, 100000000); $r[] = round((microtime(true) - $t) * 1e6); echo json_encode($r);"],
    });
    assert.equal(result.status, "ok", result.error?.message);
    // Counting Asyncify's second call into the sleep import (on rewind) doubled every sleep.
    // (A few µs either way: clock reads, and microtime()'s float seconds.)
    const slept = result.json as number[];
    [0, 250_000, 1_000_000, 100_000].forEach((us, i) => assert.ok(Math.abs(slept[i]! - us) <= 5, `sleep #${i}: ${slept[i]} µs, not ${us}`));
    // time_nanosleep() is libc's clock loop in php-wasm: the clock moves by the time slept (plus
    // the loop's last read), without the wall-time wait, so a 3 s sleep fits a 2 s deadline.
    const looped = await runtime.execute({
      command: "wordpress.run-php",
      args: ["bootstrap=none", "code=<?php $t = microtime(true); time_nanosleep(3, 0); echo round((microtime(true) - $t) * 1e6);"],
      timeoutMs: 2_000,
    });
    assert.equal(looped.status, "ok", looped.error?.message);
    assert.ok(Number(looped.stdout) >= 3_000_000 && Number(looped.stdout) <= 3_000_005, looped.stdout);
  } finally {
    await runtime.dispose();
  }
});
