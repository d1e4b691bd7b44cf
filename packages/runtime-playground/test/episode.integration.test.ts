/**
 * Integration: the "done when" episode. A script with a seeding step, a state observation,
 * an HTTP step, a snapshot and a failing step produces a bundle that verifies, whose trace
 * validates with the failed step recorded; replaying it in a fresh sandbox matches the digests of
 * the deterministic steps; an episode reset() discards the episode's changes.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRuntimeEpisode, replayEpisodeBundle, runEpisodeScript, validateRuntimeEpisodeTrace, verifyArtifactBundle, writeArtifactBundle } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend } from "@wp-codebox/runtime-playground";

const examples = fileURLToPath(new URL("../../../examples/episodes/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-episode-"));
const backend = createPlaygroundBackend();
after(() => rmSync(scratch, { recursive: true, force: true }));

test("episode script → verified bundle with the failed step recorded → replay matches", async () => {
  const script = JSON.parse(readFileSync(join(examples, "seed-and-snapshot.json"), "utf8"));
  const outcome = await runEpisodeScript(script, backend, { baseDir: examples, artifactsDir: join(scratch, "run"), allowPaths: [fileURLToPath(new URL("../../../test/fixtures/", import.meta.url))] });
  assert.equal(outcome.allOk, false);
  assert.deepEqual(outcome.steps.map((s) => s.status ?? s.kind), ["ok", "ok", "snapshot", "error"]);
  const dir = outcome.bundle.directory;
  assert.equal((await verifyArtifactBundle(dir)).valid, true);
  const trace = JSON.parse(readFileSync(join(dir, "files/runtime-episode-trace.json"), "utf8"));
  assert.equal(validateRuntimeEpisodeTrace(trace).valid, true);
  assert.equal(trace.steps[2].execution.status, "error");
  assert.equal(trace.steps[2].execution.error.code, "php-fatal");
  assert.equal(trace.steps[0].observation.type, "wordpress-state");
  assert.equal(trace.steps[1].execution.data.body.msg, "hi");
  const reference = JSON.parse(readFileSync(join(dir, "files/runtime-reference-manifest.json"), "utf8"));
  assert.equal(reference.trace.path, "files/runtime-episode-trace.json");
  assert.equal(reference.snapshots[0].replay.status, "runtime-state-artifact");
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"));
  assert.equal(metadata.artifacts.runtimeEpisodeTrace, "files/runtime-episode-trace.json");

  const report = await replayEpisodeBundle(dir, backend);
  assert.equal(report.ok, true, JSON.stringify(report.steps.map((s) => [s.id, s.execution.differences, s.observation?.differences])));
  assert.equal(report.steps.length, 3);
  assert.ok(report.steps.every((s) => s.deterministic && s.match));
  assert.equal(report.steps[2]!.replayStatus, "error");
});

test("episode reset() discards the episode's changes (fast path, no reboot)", async () => {
  const episode = createRuntimeEpisode({}, backend);
  try {
    await episode.reset();
    await episode.step({ command: "wordpress.run-php", args: ["code=<?php update_option('blogname', 'Changed'); wp_insert_post(['post_title' => 'Temp', 'post_status' => 'publish']);"] });
    await episode.reset();
    const { execution } = await episode.step({ command: "wordpress.run-php", args: ["code=<?php echo json_encode([get_option('blogname'), (int) wp_count_posts()->publish]);"] });
    assert.notEqual((execution.data as unknown[])[0], "Changed");
    assert.equal((execution.data as unknown[])[1], 1);
  } finally {
    await episode.close();
  }
});

test("the sandbox's copies keep their files' own mtimes, at boot and after reset(): PHP never sees when the sandbox booted", async () => {
  // A theme's pattern files copied with the boot's time made the theme pattern cache wait two
  // seconds before it kept anything, so how many times PHP read the virtual clock in a request
  // (and so microtime() in a seeded episode) depended on how fast the steps ran.
  const source = join(scratch, "mtime-mount");
  mkdirSync(source, { recursive: true });
  writeFileSync(join(source, "data.txt"), "data");
  utimesSync(join(source, "data.txt"), 1_500_000_000, 1_500_000_000);
  const episode = createRuntimeEpisode({ mounts: [{ source, target: "/wordpress/wp-content/uploads/mtime-mount", mode: "readonly" }] }, backend);
  const MTIMES = `code=<?php clearstatcache(); $f = glob(get_stylesheet_directory() . '/patterns/*.php'); echo json_encode(['mount' => filemtime(WP_CONTENT_DIR . '/uploads/mtime-mount/data.txt'), 'newest_pattern' => max(array_map('filemtime', $f)), 'patterns' => count($f), 'hello' => filemtime(WP_PLUGIN_DIR . '/hello.php')]);`;
  try {
    await episode.reset();
    const booted = Math.floor(Date.now() / 1000);
    const first = (await episode.step({ command: "wordpress.run-php", args: [MTIMES] })).execution.data as { mount: number; newest_pattern: number; patterns: number; hello: number };
    assert.equal(first.mount, 1_500_000_000, "a read-only mount shows its host file's mtime");
    assert.ok(first.patterns > 0);
    // The installed site was made before this test started; its files keep those mtimes.
    assert.ok(first.newest_pattern < booted - 2, `pattern mtime ${first.newest_pattern} is older than the boot (${booted})`);
    await episode.step({ command: "wordpress.run-php", args: ["code=<?php file_put_contents(WP_PLUGIN_DIR . '/hello.php', '<?php // edited'); file_put_contents(WP_CONTENT_DIR . '/uploads/mtime-mount/data.txt', 'edited');"] });
    await episode.reset();
    const after = (await episode.step({ command: "wordpress.run-php", args: [MTIMES] })).execution.data;
    assert.deepEqual(after, first, "reset() puts the files back with their mtimes");
  } finally {
    await episode.close();
  }
});

test("observe http-response: a page that dies answers its status with the fatal; a request the policy forbids is policy-denied", async () => {
  const episode = createRuntimeEpisode({}, backend);
  try {
    await episode.reset();
    await episode.step({ command: "wordpress.run-php", args: ["code=<?php file_put_contents(ABSPATH . 'dies.php', \"<?php\\nwp_codebox_no_such_function();\\n\");"] });
    const observed = (await episode.observe({ type: "http-response", path: "/dies.php", as: "anonymous" })) as { data: { status: number; error?: { code: string } } };
    assert.equal(observed.data.status, 500);
    assert.equal(observed.data.error?.code, "php-fatal");
    await assert.rejects(episode.observe({ type: "http-response", url: "http://192.0.2.1/" }), { code: "policy-denied" });
  } finally {
    await episode.close();
  }
});

test("an episode with a secret redacts every encoded form in its results, and its bundle still verifies", async () => {
  const secret = "supersecretvalue123";
  const episode = createRuntimeEpisode({ secretEnv: { MYSECRET: secret } }, backend);
  try {
    await episode.reset();
    const { execution } = await episode.step({ command: "wordpress.run-php", args: ["code=<?php $s = getenv('MYSECRET'); echo base64_encode($s), ' ', strtoupper($s), ' ', bin2hex($s), ' ', $s;"] });
    for (const form of [secret, Buffer.from(secret).toString("base64"), secret.toUpperCase(), Buffer.from(secret).toString("hex")]) assert.ok(!execution.stdout.includes(form), `${form} in ${execution.stdout}`);
    // A snapshot of a database that holds the secret: masked in the bundle, which still verifies.
    await episode.step({ command: "wordpress.run-php", args: ["code=<?php update_option('episode_secret', getenv('MYSECRET'));"] });
    await episode.snapshot();
    const dir = join(scratch, "episode-secret");
    const written = await writeArtifactBundle(dir, await episode.collectArtifacts({ includeRuntimeSnapshotBundles: true }), {});
    assert.equal((await verifyArtifactBundle(written.directory)).valid, true);
    const review = JSON.parse(readFileSync(join(written.directory, "files/review.json"), "utf8")) as { redaction: { maskedFiles?: string[] } };
    const database = review.redaction.maskedFiles?.find((path) => path.endsWith("/wp-content/database/.ht.sqlite"));
    assert.ok(database, JSON.stringify(review.redaction));
    assert.equal(readFileSync(join(written.directory, database)).indexOf(secret), -1);
  } finally {
    await episode.close();
  }
});
