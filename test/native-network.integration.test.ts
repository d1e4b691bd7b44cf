/**
 * The native sandbox's network: PHP reaches its own site (the relay to the loopback front), WP-Cron
 * runs and a command waits for it, a fatal in a cron run makes the command an error with file:line,
 * reset() after a cron run leaves the clean state; with a policy that allows some hosts, PHP's
 * requests go through the policy proxy (an HTTP server this test starts on the host stands in for
 * "outside"), and a raw socket to the host's loopback still finds no network. Real php-cgi, MariaDB,
 * bubblewrap and socat; skipped, naming the packages, without them.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from "node:net";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { NATIVE_DEBIAN_PACKAGES, nativeToolsStatus, type NativeRuntime } from "@wp-codebox/runtime-native";
import { createBackend } from "../packages/cli/src/commands/backends.js";

const status = nativeToolsStatus();
const skip = status.ok ? false : `the native backend's Debian packages are missing (${status.missingPackages.join(", ")}): apt-get install -y ${NATIVE_DEBIAN_PACKAGES.join(" ")}`;

/** A mu-plugin with a cron hook that writes an option, and one that dies of a fatal on line 4. */
const CRON_PLUGIN = `<?php
add_action('wpc_net_write', function () { update_option('wpc_net_cron', 'ran'); });
add_action('wpc_net_fatal', function () {
	wpc_net_missing_function();
});
`;

describe("the native sandbox's own site and WP-Cron", { skip, timeout: 300_000 }, () => {
  let runtime: NativeRuntime;
  const php = (code: string, ...args: string[]) => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, ...args] });
  before(async () => {
    runtime = (await createBackend("native", { cwd: process.cwd() }).create({})) as NativeRuntime;
    const made = await php(`<?php
      @mkdir(WP_CONTENT_DIR . '/mu-plugins');
      file_put_contents(WP_CONTENT_DIR . '/mu-plugins/wpc-net.php', ${JSON.stringify(CRON_PLUGIN).replace(/\$/g, "\\$")});
      echo 'made';`);
    assert.equal(made.stdout, "made", JSON.stringify(made.error));
  });
  after(async () => runtime?.dispose());

  it("wp_remote_get(home_url('/')) from run-php answers 200 with the site's page", async () => {
    const got = await php(`<?php $r = wp_remote_get(home_url('/')); echo is_wp_error($r) ? 'error: ' . $r->get_error_message() : wp_remote_retrieve_response_code($r) . ' ' . (str_contains(wp_remote_retrieve_body($r), '<html') ? 'html' : 'no html');`);
    assert.equal(got.status, "ok", JSON.stringify(got.error));
    assert.equal(got.stdout, "200 html");
  });

  it("spawn_cron() runs a due single event before the command's result (the hook writes an option)", async () => {
    const spawned = await php(`<?php delete_option('wpc_net_cron'); delete_transient('doing_cron'); wp_schedule_single_event(time() - 5, 'wpc_net_write'); spawn_cron(); echo 'spawned';`);
    assert.equal(spawned.status, "ok", JSON.stringify(spawned.error));
    const read = await php(`<?php echo get_option('wpc_net_cron', 'absent');`);
    assert.equal(read.stdout, "ran");
  });

  it("a fatal in a cron hook makes the command that set it off an error with file and line", async () => {
    const spawned = await php(`<?php delete_transient('doing_cron'); wp_schedule_single_event(time() - 5, 'wpc_net_fatal'); spawn_cron(); echo 'spawned';`);
    assert.equal(spawned.status, "error");
    assert.equal(spawned.error?.code, "php-fatal");
    assert.match(spawned.error?.message ?? "", /wpc_net_missing_function/);
    assert.match(spawned.error?.message ?? "", /mu-plugins\/wpc-net\.php:4/);
    assert.equal(spawned.backgroundErrors?.[0]?.line, 4);
    assert.match(spawned.backgroundErrors?.[0]?.url ?? "", /^\/wp-cron\.php/);
    // background-errors=record only lists it.
    const recorded = await php(`<?php delete_transient('doing_cron'); wp_clear_scheduled_hook('wpc_net_fatal'); wp_schedule_single_event(time() - 5, 'wpc_net_fatal'); spawn_cron(); echo 'spawned';`, "background-errors=record");
    assert.equal(recorded.status, "ok", JSON.stringify(recorded.error));
    assert.equal(recorded.backgroundErrors?.length, 1);
  });

  it("PHP still cannot reach the host's loopback ports: a redis-server the test started answers the test, not PHP", { skip: existsSync("/usr/bin/redis-server") ? false : "redis-server is not installed (apt-get install -y redis-server)" }, async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const redis: ChildProcess = spawn("/usr/bin/redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    try {
      // The host reaches it (so PHP's refusal below is the sandbox's doing).
      const pong = await new Promise<string>((resolve, reject) => {
        const tryOnce = (left: number) => {
          const s = connect(port, "127.0.0.1", () => s.write("PING\r\n"));
          s.once("data", (d) => { resolve(d.toString()); s.destroy(); });
          s.once("error", (e) => (left > 0 ? setTimeout(() => tryOnce(left - 1), 100) : reject(e)));
        };
        tryOnce(50);
      });
      assert.equal(pong, "+PONG\r\n");
      const fromRun = await php(`<?php $s = @fsockopen('127.0.0.1', ${port}, $no, $str, 2); echo $s ? 'reached' : "refused $no";`);
      assert.equal(fromRun.stdout, "refused 111");
      // A page (php-cgi) neither; the relay's port 80 leads only to the site.
      const page = await php(`<?php file_put_contents(WP_CONTENT_DIR . '/probe.php', '<?php $s = @fsockopen("127.0.0.1", ${port}, $no, $str, 2); echo $s ? "reached" : "refused";'); $r = wp_remote_get(home_url('/wp-content/probe.php')); echo wp_remote_retrieve_body($r);`);
      assert.equal(page.stdout, "refused", JSON.stringify(page.error));
    } finally {
      redis.kill("SIGKILL");
    }
  });

  it("reset() after a command that spawned cron leaves the clean state", async () => {
    const spawned = await php(`<?php delete_transient('doing_cron'); wp_schedule_single_event(time() - 5, 'wpc_net_write'); spawn_cron(); echo 'spawned';`);
    assert.equal(spawned.status, "ok", JSON.stringify(spawned.error));
    await runtime.reset();
    const read = await php(`<?php echo get_option('wpc_net_cron', 'absent'), ' ', file_exists(WP_CONTENT_DIR . '/mu-plugins/wpc-net.php') ? 'plugin' : 'no plugin';`);
    assert.equal(read.stdout, "absent no plugin");
  });
});

/** A mu-plugin whose admin-ajax action takes a while, then writes what was posted to an option. */
const SETTLE_PLUGIN = `<?php
add_action('wp_ajax_nopriv_wpc_settle', function () {
	usleep(300000);
	update_option('wpc_settle', wp_unslash($_POST['v'] ?? ''));
	wp_send_json_success();
});
`;

describe("a command waits for the requests its run sent last, and only for those", { skip, timeout: 300_000 }, () => {
  let runtime: NativeRuntime;
  const php = (code: string) => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  before(async () => {
    runtime = (await createBackend("native", { cwd: process.cwd() }).create({})) as NativeRuntime;
    const made = await php(`<?php
      @mkdir(WP_CONTENT_DIR . '/mu-plugins');
      file_put_contents(WP_CONTENT_DIR . '/mu-plugins/wpc-settle.php', ${JSON.stringify(SETTLE_PLUGIN).replace(/\$/g, "\\$")});
      echo 'made';`);
    assert.equal(made.stdout, "made", JSON.stringify(made.error));
  });
  after(async () => runtime?.dispose());

  // Each run clears the option, then its last statement sets it (directly, or through a request
  // to its own site that is still under way when the run's PHP ends).
  const cases: { name: string; last: string; value: string; relayed: number }[] = [
    { name: "a run that makes no request does not wait", last: "update_option('wpc_settle', 'direct');", value: "direct", relayed: 0 },
    {
      name: "a blocking => false wp_remote_post as the last statement is awaited",
      last: "wp_remote_post(admin_url('admin-ajax.php'), ['blocking' => false, 'timeout' => 0.01, 'body' => ['action' => 'wpc_settle', 'v' => 'api']]);",
      value: "api",
      relayed: 1,
    },
    {
      name: "a raw request written and closed as the last statement is awaited",
      last: "$u = parse_url(home_url()); $s = fsockopen($u['host'], $u['port'] ?? 80); $b = 'action=wpc_settle&v=raw'; fwrite($s, \"POST /wp-admin/admin-ajax.php HTTP/1.1\\r\\nHost: {$u['host']}\\r\\nContent-Type: application/x-www-form-urlencoded\\r\\nContent-Length: \" . strlen($b) . \"\\r\\nConnection: close\\r\\n\\r\\n$b\"); fclose($s);",
      value: "raw",
      relayed: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const ran = await php(`<?php delete_option('wpc_settle'); ${c.last}`);
      assert.equal(ran.status, "ok", JSON.stringify(ran.error));
      // The next command sees what the request wrote: the first one waited for it to end.
      const read = await php("<?php echo get_option('wpc_settle', 'absent');");
      assert.equal(read.stdout, c.value);
      const events = (await runtime.collectArtifacts()).events;
      const end = events.findIndex((e) => e.type === "command-finished" && e.data?.id === ran.id);
      const start = events.findIndex((e) => e.type === "command-started" && e.data?.id === ran.id);
      const awaited = events.slice(start, end).filter((e) => e.type === "self-calls-awaited");
      if (c.relayed === 0) {
        assert.deepEqual(awaited, [], "a run without requests waits for nothing");
      } else {
        assert.equal(awaited.length, 1, JSON.stringify(events.slice(start, end)));
        assert.equal(awaited[0]?.data?.relayed, c.relayed);
      }
    });
  }
});

describe("the native sandbox's allowed origins", { skip, timeout: 300_000 }, () => {
  let runtime: NativeRuntime;
  let outside: Server;
  let redisLike: NetServer;
  let outsidePort = 0;
  let rawPort = 0;
  const php = (code: string) => runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  before(async () => {
    outside = createServer((req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`outside ${req.headers.host ?? ""}`));
    await new Promise<void>((resolve) => outside.listen(0, "127.0.0.1", resolve));
    outsidePort = (outside.address() as AddressInfo).port;
    redisLike = createNetServer((s) => s.end("+PONG\r\n"));
    await new Promise<void>((resolve) => redisLike.listen(0, "127.0.0.1", resolve));
    rawPort = (redisLike.address() as AddressInfo).port;
    // 127.0.0.1 (the host's, reached through the proxy) stands for the allowed outside host.
    runtime = (await createBackend("native", { cwd: process.cwd() }).create({ policy: { commands: ["wordpress.run-php"], network: { allowHosts: ["127.0.0.1"] } } })) as NativeRuntime;
  });
  after(async () => {
    await runtime?.dispose();
    outside?.close();
    redisLike?.close();
  });

  const cases: { name: string; url: () => string; expect: RegExp }[] = [
    { name: "an allowed host is reachable through the proxy", url: () => `http://127.0.0.1:${outsidePort}/x`, expect: /^200 outside 127\.0\.0\.1:\d+$/ },
    { name: "another host is refused by WordPress's allow-list", url: () => `http://127.0.0.2:${outsidePort}/x`, expect: /^error: / },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const got = await php(`<?php $r = wp_remote_get(${JSON.stringify(c.url())}); echo is_wp_error($r) ? 'error: ' . $r->get_error_message() : wp_remote_retrieve_response_code($r) . ' ' . wp_remote_retrieve_body($r);`);
      assert.equal(got.status, "ok", JSON.stringify(got.error));
      assert.match(got.stdout, c.expect);
    });
  }

  it("curl past WordPress's allow-list reaches the proxy, which refuses it and records the denial", async () => {
    const got = await php(`<?php $c = curl_init(${JSON.stringify(`http://127.0.0.2:1/`)}); curl_setopt($c, CURLOPT_RETURNTRANSFER, true); $b = curl_exec($c); echo curl_getinfo($c, CURLINFO_RESPONSE_CODE), ' ', $b;`);
    assert.match(got.stdout, /^403 wp-codebox: the runtime policy does not allow network access to 127\.0\.0\.2/);
    const artifacts = await runtime.collectArtifacts();
    assert.ok(artifacts.events.some((e) => e.type === "network-denied" && e.data?.host === "127.0.0.2"), JSON.stringify(artifacts.events.map((e) => e.type)));
  });

  it("a raw socket to the host's loopback (a server the test started) finds no network", async () => {
    const got = await php(`<?php $s = @fsockopen('127.0.0.1', ${rawPort}, $no, $str, 2); echo $s ? 'reached: ' . fgets($s) : 'refused';`);
    assert.equal(got.stdout, "refused");
    // The allowed host too: only HTTP through the proxy reaches it, never a raw socket.
    const proxyRaw = await php(`<?php $s = @fsockopen('127.0.0.1', ${outsidePort}, $no, $str, 2); echo $s ? 'reached' : 'refused';`);
    assert.equal(proxyRaw.stdout, "refused");
  });
});

describe("the native sandbox's own site on the loopback origin", { skip, timeout: 300_000 }, () => {
  let runtime: NativeRuntime;
  before(async () => {
    runtime = (await createBackend("native", { cwd: process.cwd() }).create({ origin: "loopback" })) as NativeRuntime;
  });
  after(async () => runtime?.dispose());

  it("wp_remote_get(home_url('/')) answers 200 on http://127.0.0.1:PORT", async () => {
    assert.match(runtime.siteUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const got = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php $r = wp_remote_get(home_url('/')); echo home_url('/'), ' ', is_wp_error($r) ? 'error: ' . $r->get_error_message() : wp_remote_retrieve_response_code($r);`] });
    assert.equal(got.stdout, `${runtime.siteUrl}/ 200`, JSON.stringify(got.error));
  });
});

describe("the native sandbox with network: \"allow\"", { skip, timeout: 300_000 }, () => {
  let runtime: NativeRuntime;
  let outside: Server;
  let port = 0;
  before(async () => {
    outside = createServer((_req, res) => res.writeHead(200).end("host service"));
    await new Promise<void>((resolve) => outside.listen(0, "127.0.0.1", resolve));
    port = (outside.address() as AddressInfo).port;
    runtime = (await createBackend("native", { cwd: process.cwd() }).create({ policy: { commands: ["wordpress.run-php"], network: "allow" } })) as NativeRuntime;
  });
  after(async () => {
    await runtime?.dispose();
    outside?.close();
  });

  it("does not open the host's own loopback: the proxy refuses it (403) and records the denial", async () => {
    const got = await runtime.execute({ command: "wordpress.run-php", args: [`code=<?php $r = wp_remote_get('http://127.0.0.1:${port}/'); echo is_wp_error($r) ? 'error: ' . $r->get_error_message() : wp_remote_retrieve_response_code($r) . ' ' . wp_remote_retrieve_body($r);`] });
    assert.match(got.stdout, /^403 wp-codebox: the runtime policy does not allow network access to 127\.0\.0\.1/, JSON.stringify(got.error));
    const events = (await runtime.collectArtifacts()).events;
    assert.ok(events.some((e) => e.type === "network-denied" && e.data?.host === "127.0.0.1"));
    // The site itself is still reached directly (never through the proxy).
    const self = await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo wp_remote_retrieve_response_code(wp_remote_get(home_url('/')));"] });
    assert.equal(self.stdout, "200");
  });
});
