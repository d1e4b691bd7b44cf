/**
 * Integration: the sandbox's own site is not "network". PHP calls it under the default policy
 * (from run-php, from inside an HTTP request, nested, admin-ajax), WP-Cron runs as on a real site,
 * Site Health's loopback and REST tests pass; every other target stays refused (fixture cron-probe).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { STABLE_SITE_ORIGIN } from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, isSandboxSelf, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/plugins/", import.meta.url));

let runtime: PlaygroundRuntime;
before(async () => {
  // The default policy: every runnable command, network "deny".
  runtime = await createPlaygroundBackend().create({ plugins: [join(fixtures, "cron-probe"), join(fixtures, "self-call-probe")] });
});
after(async () => {
  await runtime?.dispose();
});

async function php(code: string) {
  const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stderr}`);
  return result;
}

test("isSandboxSelf: the site URL and the loopback listener are the sandbox; nothing else is", () => {
  const origin = { siteUrl: "http://127.0.0.1:4100", listen: { host: "127.0.0.1", port: 4100 } };
  assert.equal(isSandboxSelf(origin, "http://127.0.0.1:4100/wp-json/"), true);
  assert.equal(isSandboxSelf(origin, "http://localhost:4100/wp-cron.php"), true);
  assert.equal(isSandboxSelf(origin, { host: "127.0.0.1", port: 4100 }), true);
  assert.equal(isSandboxSelf(origin, "http://127.0.0.1:4101/"), false);
  assert.equal(isSandboxSelf(origin, "https://127.0.0.1:4100/"), true, "scheme does not change the socket");
  assert.equal(isSandboxSelf(origin, "http://example.com:4100/"), false);
  assert.equal(isSandboxSelf(origin, "ftp://127.0.0.1:4100/"), false);
  // A stable host name mapped to the loopback port: both names are the sandbox.
  const named = { siteUrl: "http://wp.test", listen: { host: "127.0.0.1", port: 4100 } };
  assert.equal(isSandboxSelf(named, "http://wp.test/wp-json/"), true);
  assert.equal(isSandboxSelf(named, { host: "wp.test", port: 80 }), true);
  assert.equal(isSandboxSelf(named, { host: "127.0.0.1", port: 4100 }), true);
  assert.equal(isSandboxSelf(named, { host: "127.0.0.1", port: 80 }), false);
});

test("self-calls from inside an HTTP request, nested two deep, and admin-ajax", async () => {
  const nested = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-json/selfcall/v1/nested?depth=2", "as=anonymous"] });
  assert.equal(nested.status, "ok", nested.stdout);
  assert.deepEqual((nested.json as { body: unknown }).body, { depth: 2, inner: { depth: 1, inner: { pong: true } } });
  const fromPhp = await php(`<?php $r = wp_remote_get(rest_url('selfcall/v1/nested?depth=1'), ['timeout' => 30]); echo is_wp_error($r) ? json_encode($r->get_error_message()) : wp_remote_retrieve_body($r);`);
  assert.deepEqual(fromPhp.json, { depth: 1, inner: { pong: true } });
  const ajax = await php(`<?php $r = wp_remote_post(admin_url('admin-ajax.php'), ['body' => ['action' => 'selfcall_probe']]); echo is_wp_error($r) ? json_encode($r->get_error_message()) : wp_remote_retrieve_body($r);`);
  assert.deepEqual(ajax.json, { success: true, data: { ajax: "ok" } });
});

test("wp_remote_get(rest_url()) from run-php returns 200 under the default policy", async () => {
  const result = await php(`<?php $r = wp_remote_get(rest_url()); echo json_encode(is_wp_error($r) ? $r->get_error_message() : [wp_remote_retrieve_response_code($r), json_decode(wp_remote_retrieve_body($r), true)['url'] ?? null]);`);
  assert.deepEqual(result.json, [200, runtime.siteUrl]);
});

test("the exemption is the sandbox's own origin only: other loopback ports and hosts stay refused", async () => {
  const other = createServer((socket) => socket.end("hello\n"));
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  const port = (other.address() as { port: number }).port;
  try {
    const result = await php(`<?php $s = @fsockopen('127.0.0.1', ${port}, $errno, $errstr, 5); echo json_encode([$s ? fgets($s) : false]);`);
    assert.deepEqual(result.json, [false], "a raw socket to another loopback port is refused");
    const { events } = await runtime.collectArtifacts();
    const denied = events.filter((e) => e.type === "policy-denied").map((e) => e.data?.port);
    assert.ok(denied.includes(port), JSON.stringify(denied));
    assert.ok(!denied.includes(new URL(runtime.siteUrl).port === "" ? 80 : Number(new URL(runtime.siteUrl).port)), "the own origin was never refused");
  } finally {
    other.close();
  }
});

test("WP-Cron: an overdue event runs after an ordinary front-page request", async () => {
  await php(`<?php wp_schedule_single_event(time() - 60, 'corpus_cron_event'); echo json_encode(get_option('corpus_cron_ran', null));`);
  const page = await runtime.execute({ command: "wordpress.http-request", args: ["path=/", "as=anonymous"] });
  assert.equal(page.status, "ok");
  const after = await php(`<?php echo json_encode([get_option('corpus_cron_ran', null), wp_next_scheduled('corpus_cron_event')]);`);
  assert.deepEqual(after.json, ["wp-cron", false]);
});

test("a blocking => false self-call is sent once the PHP that made it ends, with its method, body, cookies and headers", async () => {
  const sent = await php(`<?php $r = wp_remote_post(admin_url('admin-ajax.php'), ['blocking' => false, 'body' => ['action' => 'selfcall_record', 'v' => 'a b&c=ü 🧪 \\\\ "q"'], 'cookies' => ['probe' => 'yes'], 'headers' => ['X-Probe' => 'h1']]); echo json_encode([wp_remote_retrieve_response_code($r), get_option('selfcall_recorded', null)]);`);
  assert.deepEqual(sent.json, [false, null], "nobody waits for the answer; it has not run yet");
  const after = await php(`<?php echo json_encode(get_option('selfcall_recorded', null));`);
  assert.deepEqual(after.json, { method: "POST", v: 'a b&c=ü 🧪 \\ "q"', cookie: "yes", header: "h1", cron: false });
});

test("a self-call worker shares the primary's SQLite file locks: a write it tries while the primary holds the database locked waits and fails, never slips in", async () => {
  // The primary (a one-worker sandbox) locks a database under wp-content, then calls its own site;
  // the worker booted for that call tries to write the same database without waiting.
  const probe = `<?php $db = new PDO('sqlite:' . __DIR__ . '/lock-probe.sqlite'); $db->setAttribute(PDO::ATTR_TIMEOUT, 0); $db->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION); try { $db->exec('INSERT INTO t VALUES (2)'); echo 'written'; } catch (PDOException $e) { echo $e->getMessage(); }`;
  const result = await php(`<?php
    file_put_contents(WP_CONTENT_DIR . '/lock-probe.php', base64_decode('${Buffer.from(probe).toString("base64")}'));
    @unlink(WP_CONTENT_DIR . '/lock-probe.sqlite');
    $db = new PDO('sqlite:' . WP_CONTENT_DIR . '/lock-probe.sqlite');
    $db->exec('CREATE TABLE t (v INTEGER)');
    $db->exec('BEGIN EXCLUSIVE');
    $db->exec('INSERT INTO t VALUES (1)');
    $r = wp_remote_get(content_url('lock-probe.php'), ['timeout' => 60]);
    $db->exec('COMMIT');
    $rows = $db->query('SELECT v FROM t ORDER BY v')->fetchAll(PDO::FETCH_COLUMN);
    @unlink(WP_CONTENT_DIR . '/lock-probe.php');
    echo json_encode([is_wp_error($r) ? $r->get_error_message() : wp_remote_retrieve_body($r), array_map('intval', $rows)]);`);
  const [answer, rows] = result.json as [string, number[]];
  assert.match(answer, /database is locked/, `the self-call's write: ${answer}`);
  assert.deepEqual(rows, [1]);
});

test("Site Health: the loopback and REST availability tests pass for an administrator, as on the Site Health screen", async () => {
  const asAdmin = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-admin/admin-ajax.php?action=selfcall_site_health", "as=admin"] });
  assert.equal(asAdmin.status, "ok", asAdmin.stdout);
  assert.deepEqual((asAdmin.json as { body: unknown }).body, { success: true, data: { loopback: "good", rest: "good" } });
  // From run-php there is no logged-in browser whose cookies the REST test could forward: WordPress
  // itself then answers "recommended" (401 on context=edit), never "critical" (unreachable).
  const result = await php(`<?php
require_once ABSPATH . 'wp-admin/includes/class-wp-site-health.php';
$health = WP_Site_Health::get_instance();
echo json_encode([$health->get_test_loopback_requests()['status'], $health->get_test_rest_availability()['status']]);`);
  assert.deepEqual(result.json, ["good", "recommended"]);
});

test("deterministic sandbox (virtual clock, seed, stable origin): self-calls and WP-Cron work the same", async () => {
  const det = await createPlaygroundBackend().create({ clock: "2025-01-01T00:00:00Z", seed: 7, plugins: [join(fixtures, "cron-probe"), join(fixtures, "cron-overlap-probe")] });
  try {
    assert.equal(det.siteUrl, STABLE_SITE_ORIGIN);
    const run = async (code: string) => {
      const result = await det.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
      assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stderr}`);
      return result.json;
    };
    assert.deepEqual(await run(`<?php $r = wp_remote_get(rest_url()); echo json_encode(is_wp_error($r) ? $r->get_error_message() : [wp_remote_retrieve_response_code($r), json_decode(wp_remote_retrieve_body($r), true)['url'] ?? null]);`), [200, STABLE_SITE_ORIGIN]);
    await run(`<?php wp_schedule_single_event(time() - 60, 'corpus_cron_event'); wp_schedule_single_event(time() - 60, 'corpus_slow_cron_event'); echo json_encode(gmdate('Y', time()));`);
    // The command's first page request follows a warm-up page load, which spawns WP-Cron: the slow
    // event (one second) runs on the self-call worker, and the real request must wait for it.
    const page = await det.execute({ command: "wordpress.http-request", args: ["path=/", "as=anonymous"] });
    assert.equal(page.status, "ok");
    assert.deepEqual(
      await run(`<?php echo json_encode([get_option('corpus_cron_ran', null), wp_next_scheduled('corpus_cron_event'), gmdate('Y'), get_option('corpus_slow_cron_ran', null), get_option('corpus_cron_overlap', null), get_transient('doing_cron')]);`),
      ["wp-cron", false, "2025", "wp-cron", null, false],
      "WP-Cron ran both events, alone, and released its lock",
    );
    // Publishing schedules do_pings now: the next command's own WordPress load spawns WP-Cron, and
    // that must not wait out curl's timeout counted in virtual clock reads.
    await run(`<?php delete_option('corpus_cron_ran'); wp_insert_post(['post_title' => 'Hello', 'post_status' => 'publish']); wp_schedule_single_event(time() - 60, 'corpus_cron_event'); echo 1;`);
    assert.deepEqual(await run(`<?php echo json_encode([wp_next_scheduled('do_pings') !== false]);`), [true], "the spawn happens after this command's code ran");
    const ran = await run(`<?php echo json_encode([get_option('corpus_cron_ran', null), wp_next_scheduled('do_pings')]);`);
    const { events } = await det.collectArtifacts();
    // On failure, the background requests served and the cron lock say which step went wrong.
    const background = events.filter((e) => e.type === "deferred-request" || e.type === "self-calls-unsettled" || e.type.startsWith("php-worker"));
    const lock = await run(`<?php echo json_encode([get_transient('doing_cron'), microtime(true)]);`);
    assert.deepEqual(ran, ["wp-cron", false], JSON.stringify({ background, lock }));
    // Two WP-Cron spawns were handed over (the page load's, and the command's after publishing), each answered.
    assert.deepEqual(background.filter((e) => e.type === "deferred-request").map((e) => [e.data?.method, String(e.data?.path).split("?")[0], e.data?.status]), [["POST", "/wp-cron.php", 200], ["POST", "/wp-cron.php", 200]], JSON.stringify(background));
    assert.deepEqual(events.filter((e) => e.type === "policy-denied"), [], "the stable origin is never refused");
  } finally {
    await det.dispose();
  }
});
